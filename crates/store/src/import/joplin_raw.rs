//! Joplin RAW export (a directory of `<id>.md` items plus `resources/`) and `.jex` (a tar of
//! the same). Each item is a title line, a blank line, the body, a blank line and then
//! `key: value` metadata lines ending with `type_: N` (1 note, 2 notebook, 4 resource,
//! 5 tag, 6 note–tag link). Ids and times are kept.

use super::{ImportProgress, ImportReport, decode_text, parse_time};
use crate::db;
use crate::store::{add_tag_tx, create_note_tx, get_note, get_notebook, insert_notebook};
use crate::*;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The files of an export: item files (`<name>.md`) and resource files by name.
pub(crate) struct Source {
    /// Where the export came from, for report paths.
    origin: PathBuf,
    items: Vec<(String, std::result::Result<Vec<u8>, String>)>,
    resources: HashMap<String, Vec<u8>>,
    /// Problems found while reading the container itself.
    problems: Vec<(PathBuf, String)>,
}

pub(crate) fn looks_like_raw_dir(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    for e in rd.flatten().take(200) {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".md")
            && is_id(stem)
            && let Ok(text) = std::fs::read_to_string(e.path())
            && text.lines().rev().any(|l| l.starts_with("type_: "))
        {
            return true;
        }
    }
    false
}

impl Source {
    pub(crate) fn from_dir(dir: &Path) -> Result<Source> {
        let mut src = Source {
            origin: dir.to_path_buf(),
            items: Vec::new(),
            resources: HashMap::new(),
            problems: Vec::new(),
        };
        let mut names: Vec<_> = std::fs::read_dir(dir)?.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && e.path().is_file() {
                let bytes = std::fs::read(e.path()).map_err(|e| format!("cannot read: {e}"));
                src.items.push((name, bytes));
            }
        }
        let rdir = dir.join("resources");
        if let Ok(rd) = std::fs::read_dir(&rdir) {
            for e in rd.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                match std::fs::read(e.path()) {
                    Ok(b) => {
                        src.resources.insert(name, b);
                    }
                    Err(err) => src.problems.push((e.path(), format!("cannot read: {err}"))),
                }
            }
        }
        Ok(src)
    }

    pub(crate) fn from_jex(file: &Path) -> Result<Source> {
        let f = std::fs::File::open(file)?;
        let mut src = Source {
            origin: file.to_path_buf(),
            items: Vec::new(),
            resources: HashMap::new(),
            problems: Vec::new(),
        };
        let mut archive = tar::Archive::new(f);
        let entries = archive.entries().map_err(|e| {
            StoreError::Invalid(format!(
                "{} is not a .jex (tar) archive: {e}",
                file.display()
            ))
        })?;
        let mut count = 0usize;
        for entry in entries {
            let mut entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    src.problems.push((
                        file.to_path_buf(),
                        format!("archive is damaged after {count} entries: {e}"),
                    ));
                    break;
                }
            };
            count += 1;
            let path = match entry.path() {
                Ok(p) => p.to_string_lossy().replace('\\', "/"),
                Err(_) => continue,
            };
            let path = path.trim_start_matches("./").to_string();
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let mut bytes = Vec::new();
            if let Err(e) = entry.read_to_end(&mut bytes) {
                src.problems
                    .push((file.join(&path), format!("cannot read from archive: {e}")));
                continue;
            }
            if let Some(name) = path.strip_prefix("resources/") {
                src.resources.insert(name.to_string(), bytes);
            } else if path.ends_with(".md") && !path.contains('/') {
                src.items.push((path, Ok(bytes)));
            }
        }
        if count == 0 && src.problems.is_empty() {
            return Err(StoreError::Invalid(format!(
                "{} is not a .jex archive (no entries)",
                file.display()
            )));
        }
        src.items.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(src)
    }
}

/// One parsed item.
#[derive(Debug, Default)]
pub(crate) struct Item {
    pub title: String,
    pub body: String,
    pub props: HashMap<String, String>,
}

impl Item {
    fn get(&self, k: &str) -> &str {
        self.props.get(k).map(String::as_str).unwrap_or("")
    }
    fn int(&self, k: &str) -> i64 {
        let v = self.get(k);
        v.parse::<i64>().ok().or_else(|| parse_time(v)).unwrap_or(0)
    }
    fn time(&self, k: &str) -> Option<i64> {
        parse_time(self.get(k))
    }
    fn id(&self) -> Option<String> {
        let id = self.get("id");
        is_id(id).then(|| id.to_string())
    }
}

fn unescape(v: &str) -> String {
    v.replace("\\n", "\n")
}

pub(crate) fn parse_item(text: &str) -> std::result::Result<Item, String> {
    let text = text.replace("\r\n", "\n");
    let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
    let mut props = HashMap::new();
    let mut i = lines.len();
    while i > 0 {
        let line = lines[i - 1];
        if line.trim().is_empty() {
            break;
        }
        let Some((k, v)) = line.split_once(':') else {
            return Err(format!("not a Joplin item: bad metadata line '{line}'"));
        };
        if k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!("not a Joplin item: bad metadata line '{line}'"));
        }
        props.insert(k.to_string(), unescape(v.strip_prefix(' ').unwrap_or(v)));
        i -= 1;
    }
    if !props.contains_key("type_") {
        return Err("not a Joplin item: no 'type_' line".into());
    }
    // lines[..i] hold title and body; lines[i] (if any) is the separating blank line
    let head: &[&str] = if i > 0 { &lines[..i - 1] } else { &[] };
    let mut item = Item {
        props,
        ..Default::default()
    };
    if let Some((title, rest)) = head.split_first() {
        item.title = title.to_string();
        let rest = rest.strip_prefix(&[""][..]).unwrap_or(rest);
        item.body = rest.join("\n");
    }
    Ok(item)
}

pub(crate) fn import(
    store: &Store,
    src: Source,
    actor: &Actor,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport> {
    let actor_s = actor.to_string();
    let mut report = ImportReport::default();
    for (p, why) in src.problems {
        report.skip(p, why);
    }
    let total = src.items.len();
    let mut done = 0usize;
    progress(ImportProgress { done, total });

    // parse everything first, then insert in dependency order
    let mut folders = Vec::new();
    let mut notes = Vec::new();
    let mut resources = Vec::new();
    let mut tags: HashMap<String, String> = HashMap::new();
    let mut links = Vec::new();
    for (name, bytes) in src.items {
        let path = src.origin.join(&name);
        let parsed = bytes.and_then(decode_text).and_then(|t| parse_item(&t));
        match parsed {
            Err(e) => report.skip(path, e),
            Ok(item) => match item.get("type_") {
                "1" => notes.push((path, item)),
                "2" => folders.push((path, item)),
                "4" => resources.push((path, item)),
                "5" => {
                    if let Some(id) = item.id() {
                        tags.insert(id, item.title.clone());
                    }
                    done += 1;
                }
                "6" => links.push((path, item)),
                _ => done += 1, // other item kinds (revisions, settings…) are not ours
            },
        }
    }
    progress(ImportProgress { done, total });

    // notebooks: parents first; a parent that never appears makes it a root notebook
    let ids: std::collections::HashSet<String> =
        folders.iter().filter_map(|(_, f)| f.id()).collect();
    let mut pending = folders;
    let mut placed: std::collections::HashSet<String> = std::collections::HashSet::new();
    while !pending.is_empty() {
        let before = pending.len();
        let mut next = Vec::new();
        for (path, f) in pending {
            let parent = f.get("parent_id").to_string();
            let ready = parent.is_empty() || !ids.contains(&parent) || placed.contains(&parent);
            if !ready {
                next.push((path, f));
                continue;
            }
            let Some(id) = f.id() else {
                report.skip(path, "notebook without a valid id");
                done += 1;
                continue;
            };
            let nb = Notebook {
                id: id.clone(),
                title: if f.title.trim().is_empty() {
                    "Untitled".into()
                } else {
                    f.title.clone()
                },
                parent_id: (!parent.is_empty() && placed.contains(&parent)).then_some(parent),
                created_time: f.time("created_time").unwrap_or_else(now_ms),
                updated_time: f.time("updated_time").unwrap_or_else(now_ms),
            };
            let r = store.write(|tx| {
                if get_notebook(tx, &nb.id)?.is_some() {
                    return Ok(false);
                }
                insert_notebook(tx, &nb)?;
                db::journal_append(
                    tx,
                    &actor_s,
                    JournalKind::NotebookCreate,
                    &nb.id,
                    &Value::Null,
                    &db::to_json(&nb),
                )?;
                Ok(true)
            });
            match r {
                Ok(created) => {
                    placed.insert(id);
                    if created {
                        report.notebooks += 1;
                    }
                }
                Err(e) => report.skip(path, format!("cannot import notebook: {e}")),
            }
            done += 1;
        }
        if next.len() == before {
            // a parent cycle: break it by placing the rest at the root
            for (path, _) in &next {
                report.skip(path, "notebook is part of a parent cycle");
                done += 1;
            }
            break;
        }
        pending = next;
        progress(ImportProgress { done, total });
    }

    for (path, r) in resources {
        let Some(id) = r.id() else {
            report.skip(path, "resource without a valid id");
            done += 1;
            continue;
        };
        let ext = r.get("file_extension");
        let file = if ext.is_empty() {
            id.clone()
        } else {
            format!("{id}.{ext}")
        };
        let bytes = src
            .resources
            .get(&file)
            .or_else(|| src.resources.get(&id))
            .or_else(|| {
                src.resources
                    .iter()
                    .find(|(k, _)| k.starts_with(&format!("{id}.")))
                    .map(|(_, v)| v)
            });
        let outcome = match bytes {
            None => Err(format!("attachment file resources/{file} is missing")),
            Some(_) if store.resource(&id)?.is_some() => Ok(false),
            Some(bytes) => {
                let filename = if r.get("filename").is_empty() {
                    if ext.is_empty() {
                        r.title.clone()
                    } else {
                        format!("{}.{ext}", r.title)
                    }
                } else {
                    r.get("filename").to_string()
                };
                let res = Resource {
                    id: id.clone(),
                    title: r.title.clone(),
                    mime: if r.get("mime").is_empty() {
                        "application/octet-stream".into()
                    } else {
                        r.get("mime").to_string()
                    },
                    filename,
                    size: bytes.len() as i64,
                    created_time: r.time("created_time").unwrap_or_else(now_ms),
                    updated_time: r.time("updated_time").unwrap_or_else(now_ms),
                };
                store
                    .insert_resource(&actor_s, res, bytes)
                    .map(|_| true)
                    .map_err(|e| e.to_string())
            }
        };
        match outcome {
            Ok(true) => report.resources += 1,
            Ok(false) => {}
            Err(e) => report.skip(path, e),
        }
        done += 1;
    }
    progress(ImportProgress { done, total });

    let default_nb = store.default_notebook_id()?;
    for (path, n) in notes {
        done += 1;
        let Some(id) = n.id() else {
            report.skip(path, "note without a valid id");
            continue;
        };
        let parent = n.get("parent_id");
        let new = NewNote {
            id: Some(id.clone()),
            parent_id: Some(if placed.contains(parent) {
                parent.to_string()
            } else {
                default_nb.clone()
            }),
            title: n.title.clone(),
            body: n.body.clone(),
            is_todo: n.get("is_todo") == "1",
            todo_completed: n.int("todo_completed"),
            todo_due: n.int("todo_due"),
            source_url: n.get("source_url").to_string(),
            created_time: n.time("created_time"),
            updated_time: n.time("updated_time"),
        };
        let deleted = n.int("deleted_time");
        let r = store.write(|tx| {
            if get_note(tx, &id)?.is_some() {
                return Err(StoreError::Invalid(format!(
                    "a note with id {id} already exists (already imported?)"
                )));
            }
            let note = create_note_tx(tx, &actor_s, new)?;
            if deleted > 0 {
                tx.execute(
                    "UPDATE notes SET deleted_time = ?2 WHERE id = ?1",
                    rusqlite::params![note.id, deleted],
                )?;
                let mut after = note.clone();
                after.deleted_time = deleted;
                db::journal_append(
                    tx,
                    &actor_s,
                    JournalKind::NoteTrash,
                    &note.id,
                    &db::to_json(&note),
                    &db::to_json(&after),
                )?;
            }
            Ok(())
        });
        match r {
            Ok(()) => report.imported += 1,
            Err(e) => report.skip(path, format!("cannot import note: {e}")),
        }
        if done.is_multiple_of(64) {
            progress(ImportProgress { done, total });
        }
    }

    let tags_before = store.list_tags(false)?.len();
    for (path, l) in links {
        let (note_id, tag_id) = (l.get("note_id").to_string(), l.get("tag_id").to_string());
        let Some(title) = tags.get(&tag_id) else {
            report.skip(path, format!("tag link to unknown tag {tag_id}"));
            continue;
        };
        let r = store.write(|tx| {
            if get_note(tx, &note_id)?.is_none() {
                return Ok(());
            }
            add_tag_tx(tx, &actor_s, &note_id, title, Some(&tag_id)).map(|_| ())
        });
        if let Err(e) = r {
            report.skip(path, format!("cannot link tag: {e}"));
        }
    }
    report.tags = store.list_tags(false)?.len().saturating_sub(tags_before);
    progress(ImportProgress { done: total, total });
    Ok(report)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_items() {
        let t = "My title\n\nline 1\n\nline 3\n\nid: 0123456789abcdef0123456789abcdef\nparent_id: \ntype_: 1";
        let i = parse_item(t).unwrap();
        assert_eq!(i.title, "My title");
        assert_eq!(i.body, "line 1\n\nline 3");
        assert_eq!(i.get("type_"), "1");
        assert_eq!(i.get("parent_id"), "");
        let f = parse_item("Folder\n\nid: 0123456789abcdef0123456789abcdef\ntype_: 2\n").unwrap();
        assert_eq!((f.title.as_str(), f.body.as_str()), ("Folder", ""));
        let l = parse_item("note_id: a\ntag_id: b\ntype_: 6").unwrap();
        assert_eq!(l.title, "");
        assert_eq!(l.get("tag_id"), "b");
        assert!(parse_item("just text\n\nno metadata here").is_err());
        assert!(parse_item("x\n\nid: 1").unwrap_err().contains("type_"));
    }
}
