//! Import: a folder of Markdown files (optional YAML front matter), a Joplin RAW export
//! directory, or a Joplin `.jex` archive (a tar of a RAW export).
//!
//! Every item is imported in its own transaction; a bad item is reported in
//! [`ImportReport::skipped`] with its path and the reason, and the rest carries on.

mod joplin_raw;
mod markdown;

pub(crate) use markdown::{NOTEBOOK_META, NotebookMeta, RESOURCES_DIR, RESOURCES_INDEX};

use crate::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Notes imported.
    pub imported: usize,
    /// Notebooks created (existing ones that matched by title were reused, not counted).
    pub notebooks: usize,
    pub tags: usize,
    pub resources: usize,
    /// Items left out, each with its path and why.
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

impl ImportReport {
    /// `N imported, M skipped`.
    pub fn summary(&self) -> String {
        format!("{} imported, {} skipped", self.imported, self.skipped.len())
    }
    pub(crate) fn skip(&mut self, path: impl Into<PathBuf>, reason: impl Into<String>) {
        self.skipped.push(Skipped {
            path: path.into(),
            reason: reason.into(),
        });
    }
}

/// Progress of an import: `done` of `total` items processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportProgress {
    pub done: usize,
    pub total: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportFormat {
    Markdown,
    JoplinRaw,
    Jex,
}

impl ImportFormat {
    /// Guess the format of `path`: a file is a `.jex` archive; a directory whose `.md` files
    /// are Joplin items (`<32 hex>.md` ending in `type_: N`) is a RAW export; any other
    /// directory is a Markdown folder.
    pub fn detect(path: &Path) -> Result<ImportFormat> {
        let meta = std::fs::metadata(path)
            .map_err(|e| StoreError::Invalid(format!("cannot read {}: {e}", path.display())))?;
        if meta.is_file() {
            return Ok(ImportFormat::Jex);
        }
        if joplin_raw::looks_like_raw_dir(path) {
            Ok(ImportFormat::JoplinRaw)
        } else {
            Ok(ImportFormat::Markdown)
        }
    }
}

impl Store {
    /// Import `path` (format detected with [`ImportFormat::detect`]). `progress` is called as
    /// items are processed (first with `done = 0`). Fails only when `path` cannot be read at
    /// all; bad items are reported in the result.
    pub fn import(
        &self,
        path: &Path,
        actor: &Actor,
        progress: &mut dyn FnMut(ImportProgress),
    ) -> Result<ImportReport> {
        match ImportFormat::detect(path)? {
            ImportFormat::Markdown => markdown::import(self, path, actor, progress),
            ImportFormat::JoplinRaw => {
                let src = joplin_raw::Source::from_dir(path)?;
                joplin_raw::import(self, src, actor, progress)
            }
            ImportFormat::Jex => {
                let src = joplin_raw::Source::from_jex(path)?;
                joplin_raw::import(self, src, actor, progress)
            }
        }
    }
}

/// Parse a time: RFC 3339, `YYYY-MM-DD HH:MM[:SS]` / `YYYY-MM-DD` (local time), or a number
/// (Unix ms; values below 10^11 are taken as seconds).
pub fn parse_time(s: &str) -> Option<i64> {
    use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone};
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<i64>() {
        return Some(if n.abs() < 100_000_000_000 {
            n * 1000
        } else {
            n
        });
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    for fmt in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S%.f",
    ] {
        if let Ok(n) = NaiveDateTime::parse_from_str(s, fmt) {
            return Local
                .from_local_datetime(&n)
                .earliest()
                .map(|t| t.timestamp_millis());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let n = d.and_hms_opt(0, 0, 0)?;
        return Local
            .from_local_datetime(&n)
            .earliest()
            .map(|t| t.timestamp_millis());
    }
    None
}

/// RFC 3339 UTC with milliseconds (lossless for Unix ms).
pub fn format_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| ms.to_string())
}

/// Describe why bytes are not importable text, or give the text.
pub(crate) fn decode_text(bytes: Vec<u8>) -> std::result::Result<String, String> {
    if bytes.contains(&0) {
        return Err("binary file (contains NUL bytes)".into());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(
            parse_time("2024-03-15T12:00:00.123Z"),
            Some(1_710_504_000_123)
        );
        assert_eq!(parse_time("1710504000123"), Some(1_710_504_000_123));
        assert_eq!(parse_time("1710504000"), Some(1_710_504_000_000));
        assert!(parse_time("2024-03-15").is_some());
        assert!(parse_time("2024-03-15 10:11").is_some());
        assert_eq!(parse_time("soon"), None);
        assert_eq!(format_time(1_710_504_000_123), "2024-03-15T12:00:00.123Z");
        assert_eq!(parse_time(&format_time(-5)), Some(-5));
    }
}
