//! Export every non-trashed note as Markdown with YAML front matter, one folder per
//! notebook, attachments in `_resources/` (with `index.json`). Importing the result gives
//! back the same notes (ids, titles, bodies, times, to-do state, source URLs), notebooks
//! and tags.

use crate::import::{NOTEBOOK_META, NotebookMeta, RESOURCES_DIR, RESOURCES_INDEX, format_time};
use crate::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExportReport {
    pub notes: usize,
    pub notebooks: usize,
    pub resources: usize,
}

#[derive(Serialize)]
struct FrontMatter<'a> {
    id: &'a str,
    title: &'a str,
    created: String,
    updated: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(rename = "completed?", skip_serializing_if = "Option::is_none")]
    completed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    todo_completed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    due: Option<String>,
    #[serde(skip_serializing_if = "str::is_empty")]
    source: &'a str,
}

/// A file-system-safe name: no path separators or control chars, not hidden, not empty,
/// at most 100 chars.
pub(crate) fn safe_name(title: &str) -> String {
    let mut s: String = title
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .take(100)
        .collect();
    s = s.trim().trim_start_matches('.').trim().to_string();
    if s.is_empty() { "Untitled".into() } else { s }
}

/// `name`, or `name (2)`, `name (3)`… so that it is unique (case-insensitively) in `used`.
fn unique(used: &mut HashSet<String>, name: String) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while used.contains(&candidate.to_lowercase()) {
        candidate = format!("{name} ({n})");
        n += 1;
    }
    used.insert(candidate.to_lowercase());
    candidate
}

/// `.notebook.yaml` keeps what a folder name cannot: the exact title, the id and times.
fn write_notebook_meta(folder: &Path, nb: &Notebook) -> Result<()> {
    let meta = NotebookMeta {
        id: nb.id.clone(),
        title: nb.title.clone(),
        created: format_time(nb.created_time),
        updated: format_time(nb.updated_time),
    };
    let yaml = serde_yaml::to_string(&meta)
        .map_err(|e| StoreError::Invalid(format!("cannot write notebook metadata: {e}")))?;
    std::fs::write(folder.join(NOTEBOOK_META), yaml)?;
    Ok(())
}

impl Store {
    /// Export into `dir` (created if missing; must be empty if it exists).
    pub fn export_markdown(&self, dir: &Path) -> Result<ExportReport> {
        if dir.exists() {
            if !dir.is_dir() {
                return Err(StoreError::Invalid(format!(
                    "{} is not a directory",
                    dir.display()
                )));
            }
            if std::fs::read_dir(dir)?.next().is_some() {
                return Err(StoreError::Invalid(format!(
                    "export directory {} is not empty",
                    dir.display()
                )));
            }
        }
        std::fs::create_dir_all(dir)?;
        let mut report = ExportReport::default();

        // notebook folders, parents first
        let notebooks = self.all_notebooks()?;
        let by_id: HashMap<&str, &Notebook> =
            notebooks.iter().map(|n| (n.id.as_str(), n)).collect();
        let mut path_of: HashMap<String, PathBuf> = HashMap::new();
        let mut used: HashMap<PathBuf, HashSet<String>> = HashMap::new();
        used.entry(dir.to_path_buf())
            .or_default()
            .insert(RESOURCES_DIR.to_lowercase());
        let mut remaining: Vec<&Notebook> = notebooks.iter().collect();
        while !remaining.is_empty() {
            let before = remaining.len();
            let mut next = Vec::new();
            for nb in remaining {
                let parent_path = match nb.parent_id.as_deref() {
                    None => Some(dir.to_path_buf()),
                    Some(p) if !by_id.contains_key(p) => Some(dir.to_path_buf()),
                    Some(p) => path_of.get(p).cloned(),
                };
                let Some(parent_path) = parent_path else {
                    next.push(nb);
                    continue;
                };
                let name = unique(
                    used.entry(parent_path.clone()).or_default(),
                    safe_name(&nb.title),
                );
                let p = parent_path.join(name);
                std::fs::create_dir_all(&p)?;
                write_notebook_meta(&p, nb)?;
                path_of.insert(nb.id.clone(), p);
                report.notebooks += 1;
            }
            if next.len() == before {
                // unreachable parents (a cycle): put them at the top
                for nb in &next {
                    let name = unique(
                        used.entry(dir.to_path_buf()).or_default(),
                        safe_name(&nb.title),
                    );
                    let p = dir.join(name);
                    std::fs::create_dir_all(&p)?;
                    write_notebook_meta(&p, nb)?;
                    path_of.insert(nb.id.clone(), p);
                    report.notebooks += 1;
                }
                break;
            }
            remaining = next;
        }

        for note in self.all_notes(false)? {
            let folder = path_of
                .get(&note.parent_id)
                .cloned()
                .unwrap_or_else(|| dir.to_path_buf());
            let name = unique(
                used.entry(folder.clone()).or_default(),
                safe_name(&note.title),
            );
            let tags = self
                .note_tags(&note.id)?
                .into_iter()
                .map(|t| t.title)
                .collect();
            let fm = FrontMatter {
                id: &note.id,
                title: &note.title,
                created: format_time(note.created_time),
                updated: format_time(note.updated_time),
                tags,
                completed: note.is_todo.then_some(note.todo_completed > 0),
                todo_completed: (note.todo_completed > 0).then(|| format_time(note.todo_completed)),
                due: (note.todo_due > 0).then(|| format_time(note.todo_due)),
                source: &note.source_url,
            };
            let yaml = serde_yaml::to_string(&fm)
                .map_err(|e| StoreError::Invalid(format!("cannot write front matter: {e}")))?;
            let text = format!("---\n{yaml}---\n\n{}", note.body);
            let path = folder.join(format!("{name}.md"));
            std::fs::write(&path, text)?;
            if let Ok(f) = std::fs::File::options().write(true).open(&path)
                && let Some(t) = u64::try_from(note.updated_time)
                    .ok()
                    .map(|ms| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
            {
                let _ = f.set_modified(t);
            }
            report.notes += 1;
        }

        let resources = self.all_resources()?;
        if !resources.is_empty() {
            let rdir = dir.join(RESOURCES_DIR);
            std::fs::create_dir_all(&rdir)?;
            for r in &resources {
                let src = self.resource_path(r);
                if let Some(name) = src.file_name() {
                    std::fs::copy(&src, rdir.join(name))?;
                    report.resources += 1;
                }
            }
            let index = serde_json::to_vec_pretty(&resources)
                .map_err(|e| StoreError::Invalid(format!("cannot write attachment index: {e}")))?;
            std::fs::write(rdir.join(RESOURCES_INDEX), index)?;
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_and_unique() {
        assert_eq!(safe_name("a/b:c"), "a_b_c");
        assert_eq!(safe_name("  ..hidden "), "hidden");
        assert_eq!(safe_name(""), "Untitled");
        let mut used = HashSet::new();
        assert_eq!(unique(&mut used, "X".into()), "X");
        assert_eq!(unique(&mut used, "x".into()), "x (2)");
        assert_eq!(unique(&mut used, "X".into()), "X (3)");
    }
}
