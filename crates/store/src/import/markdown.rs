//! A folder of Markdown files: sub-folders become notebooks (an existing notebook with the
//! same title under the same parent is reused); files at the top go to the default notebook.
//! Optional YAML front matter: `id`, `title`, `created`, `updated`, `tags`, `completed?`,
//! `todo_completed`, `due`, `source` (also `source_url`). Without it the title is the file
//! name and the times are the file's.

use super::{ImportProgress, ImportReport, decode_text, parse_time};
use crate::db;
use crate::store::{add_tag_tx, create_note_tx, get_note, insert_notebook};
use crate::*;
use rusqlite::Transaction;
use serde_yaml::Value as Yaml;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The folder that holds exported attachments (see `export`).
pub(crate) const RESOURCES_DIR: &str = "_resources";
pub(crate) const RESOURCES_INDEX: &str = "index.json";
/// Per-folder notebook metadata written by `export` (exact title, id, times).
pub(crate) const NOTEBOOK_META: &str = ".notebook.yaml";

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct NotebookMeta {
    pub id: String,
    pub title: String,
    pub created: String,
    pub updated: String,
}

fn read_notebook_meta(dir: &Path) -> Option<NotebookMeta> {
    let text = std::fs::read_to_string(dir.join(NOTEBOOK_META)).ok()?;
    let m: NotebookMeta = serde_yaml::from_str(&text).ok()?;
    (!m.title.trim().is_empty()).then_some(m)
}

/// A parsed Markdown note, ready to insert.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ParsedNote {
    pub new: NewNote,
    pub tags: Vec<String>,
}

fn is_hidden(name: &std::ffi::OsStr) -> bool {
    name.to_string_lossy().starts_with('.')
}

fn is_markdown(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"))
}

fn file_ms(t: std::io::Result<SystemTime>) -> Option<i64> {
    let t = t.ok()?;
    let d = t.duration_since(SystemTime::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

pub(crate) fn import(
    store: &Store,
    root: &Path,
    actor: &Actor,
    progress: &mut dyn FnMut(ImportProgress),
) -> Result<ImportReport> {
    let actor_s = actor.to_string();
    let mut report = ImportReport::default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let walker = walkdir::WalkDir::new(root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(is_hidden(e.file_name())
                || (e.depth() == 1 && e.file_type().is_dir() && e.file_name() == RESOURCES_DIR))
        });
    for entry in walker {
        match entry {
            Ok(e) if e.file_type().is_dir() => dirs.push(e.into_path()),
            Ok(e) => files.push(e.into_path()),
            Err(e) => {
                let p = e
                    .path()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| root.to_path_buf());
                report.skip(p, format!("cannot read: {e}"));
            }
        }
    }
    let res_index = root.join(RESOURCES_DIR).join(RESOURCES_INDEX);
    let resources: Vec<Resource> = if res_index.is_file() {
        match std::fs::read(&res_index)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice::<Vec<Resource>>(&b).map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                report.skip(&res_index, format!("bad attachment index: {e}"));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    let total = files.len() + resources.len();
    let mut done = 0;
    progress(ImportProgress { done, total });

    for res in resources {
        let file = store.resource_path(&res);
        let name = file.file_name().map(PathBuf::from).unwrap_or_default();
        let src = root.join(RESOURCES_DIR).join(&name);
        let outcome = if store.resource(&res.id)?.is_some() {
            Ok(false)
        } else {
            std::fs::read(&src)
                .map_err(|e| format!("cannot read attachment: {e}"))
                .and_then(|bytes| {
                    store
                        .insert_resource(&actor_s, res, &bytes)
                        .map(|_| true)
                        .map_err(|e| e.to_string())
                })
        };
        match outcome {
            Ok(true) => report.resources += 1,
            Ok(false) => {}
            Err(e) => report.skip(src, e),
        }
        done += 1;
        progress(ImportProgress { done, total });
    }

    // notebooks, parents first (walkdir yields a directory before its contents)
    let default_nb = store.default_notebook_id()?;
    let mut nb_of: HashMap<PathBuf, String> = HashMap::new();
    nb_of.insert(root.to_path_buf(), default_nb.clone());
    for dir in dirs {
        let parent = dir
            .parent()
            .and_then(|p| nb_of.get(p))
            .filter(|id| **id != default_nb || dir.parent() != Some(root))
            .cloned();
        let meta = read_notebook_meta(&dir);
        let title = match &meta {
            Some(m) => m.title.clone(),
            None => dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let outcome = store.write(|tx| {
            if let Some(m) = &meta
                && is_id(&m.id)
            {
                if crate::store::get_notebook(tx, &m.id)?.is_some() {
                    return Ok((m.id.clone(), false));
                }
                if find_notebook(tx, &title, parent.as_deref())?.is_none() {
                    let now = now_ms();
                    let nb = Notebook {
                        id: m.id.clone(),
                        title: title.clone(),
                        parent_id: parent.clone(),
                        created_time: parse_time(&m.created).unwrap_or(now),
                        updated_time: parse_time(&m.updated).unwrap_or(now),
                    };
                    create_notebook_tx(tx, &actor_s, &nb)?;
                    return Ok((nb.id, true));
                }
            }
            notebook_for(tx, &actor_s, &title, parent.as_deref())
        });
        match outcome {
            Ok((id, created)) => {
                if created {
                    report.notebooks += 1;
                }
                nb_of.insert(dir, id);
            }
            Err(e) => report.skip(&dir, format!("cannot create notebook: {e}")),
        }
    }

    for file in files {
        let notebook = file.parent().and_then(|p| nb_of.get(p)).cloned();
        match import_file(store, &actor_s, &file, notebook) {
            Ok(Some((n_tags_created, _))) => {
                report.imported += 1;
                report.tags += n_tags_created;
            }
            Ok(None) => {}
            Err(reason) => report.skip(&file, reason),
        }
        done += 1;
        progress(ImportProgress { done, total });
    }
    Ok(report)
}

/// Find a notebook titled `title` (case-insensitive) under `parent`, or create it.
pub(crate) fn notebook_for(
    tx: &Transaction<'_>,
    actor: &str,
    title: &str,
    parent: Option<&str>,
) -> Result<(String, bool)> {
    if let Some(id) = find_notebook(tx, title, parent)? {
        return Ok((id, false));
    }
    let now = now_ms();
    let nb = Notebook {
        id: new_id(),
        title: title.to_string(),
        parent_id: parent.map(str::to_string),
        created_time: now,
        updated_time: now,
    };
    create_notebook_tx(tx, actor, &nb)?;
    Ok((nb.id, true))
}

/// A notebook titled `title` (case-insensitive) directly under `parent`.
fn find_notebook(
    tx: &Transaction<'_>,
    title: &str,
    parent: Option<&str>,
) -> Result<Option<String>> {
    let mut st = tx.prepare_cached(
        "SELECT id, title FROM folders WHERE parent_id IS ?1 ORDER BY created_time, id",
    )?;
    let key = db::tag_key(title);
    let rows = st.query_map([parent], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (id, t) = row?;
        if db::tag_key(&t) == key {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

fn create_notebook_tx(tx: &Transaction<'_>, actor: &str, nb: &Notebook) -> Result<()> {
    insert_notebook(tx, nb)?;
    db::journal_append(
        tx,
        actor,
        JournalKind::NotebookCreate,
        &nb.id,
        &serde_json::Value::Null,
        &db::to_json(nb),
    )?;
    Ok(())
}

/// `Ok(None)`: not an item (ignored). `Err`: the reason it was skipped.
fn import_file(
    store: &Store,
    actor: &str,
    file: &Path,
    notebook: Option<String>,
) -> std::result::Result<Option<(usize, String)>, String> {
    if !is_markdown(file) {
        return Err("not a Markdown file (.md)".into());
    }
    let Some(notebook) = notebook else {
        return Err("its folder could not be imported".into());
    };
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read: {e}"))?;
    let text = decode_text(bytes)?;
    let meta = std::fs::metadata(file).ok();
    let mtime = meta.as_ref().and_then(|m| file_ms(m.modified()));
    let ctime = meta.as_ref().and_then(|m| file_ms(m.created())).or(mtime);
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut parsed = parse_markdown(&text, &stem)?;
    parsed.new.parent_id = Some(notebook);
    if parsed.new.created_time.is_none() {
        parsed.new.created_time = ctime;
    }
    if parsed.new.updated_time.is_none() {
        parsed.new.updated_time = mtime.or(parsed.new.created_time);
    }
    store
        .write(|tx| {
            // an id that is taken (e.g. importing the same export twice) gets a fresh one
            if let Some(id) = &parsed.new.id
                && get_note(tx, id)?.is_some()
            {
                parsed.new.id = None;
            }
            let before: i64 = tx.query_row("SELECT COUNT(*) FROM tags", [], |r| r.get(0))?;
            let note = create_note_tx(tx, actor, std::mem::take(&mut parsed.new))?;
            for t in &parsed.tags {
                if !t.trim().is_empty() {
                    add_tag_tx(tx, actor, &note.id, t, None)?;
                }
            }
            let after: i64 = tx.query_row("SELECT COUNT(*) FROM tags", [], |r| r.get(0))?;
            Ok(Some((
                usize::try_from(after - before).unwrap_or(0),
                note.id,
            )))
        })
        .map_err(|e| format!("cannot import: {e}"))
}

/// Split optional front matter from the body and read its fields.
pub(crate) fn parse_markdown(text: &str, stem: &str) -> std::result::Result<ParsedNote, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = ParsedNote::default();
    out.new.title = stem.to_string();
    let first_line_end = text.find('\n').map_or(text.len(), |i| i + 1);
    if text[..first_line_end].trim_end() != "---" {
        out.new.body = text.to_string();
        return Ok(out);
    }
    // find the closing fence line
    let mut pos = first_line_end;
    let mut close: Option<(usize, usize)> = None;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        let line = text[pos..end].trim_end();
        if line == "---" || line == "..." {
            close = Some((pos, end));
            break;
        }
        pos = end;
    }
    let Some((yaml_end, body_start)) = close else {
        return Err("invalid front matter: no closing '---' line".into());
    };
    let yaml = &text[first_line_end..yaml_end];
    let mut body = &text[body_start..];
    // the blank line after the fence is decoration
    body = body
        .strip_prefix("\r\n")
        .or_else(|| body.strip_prefix('\n'))
        .unwrap_or(body);
    out.new.body = body.to_string();
    if yaml.trim().is_empty() {
        return Ok(out);
    }
    let value: Yaml =
        serde_yaml::from_str(yaml).map_err(|e| format!("invalid front matter: {e}"))?;
    let map = match value {
        Yaml::Mapping(m) => m,
        Yaml::Null => return Ok(out),
        _ => return Err("invalid front matter: expected `key: value` lines".into()),
    };
    let bad = |k: &str, v: &Yaml| format!("invalid front matter: bad '{k}' value {}", show(v));
    for (k, v) in &map {
        let Some(k) = k.as_str() else { continue };
        match k {
            "id" => {
                let s = scalar(v).ok_or_else(|| bad(k, v))?;
                if is_id(&s) {
                    out.new.id = Some(s);
                }
            }
            "title" => out.new.title = scalar(v).unwrap_or_default(),
            "created" | "created_time" => {
                out.new.created_time = Some(time_of(v).ok_or_else(|| bad(k, v))?)
            }
            "updated" | "updated_time" => {
                out.new.updated_time = Some(time_of(v).ok_or_else(|| bad(k, v))?)
            }
            "due" | "todo_due" if !v.is_null() => {
                out.new.todo_due = time_of(v).ok_or_else(|| bad(k, v))?;
                out.new.is_todo = true;
            }
            "completed?" => {
                out.new.is_todo = true;
                let done = match v {
                    Yaml::Bool(b) => *b,
                    Yaml::String(s) => match s.to_ascii_lowercase().as_str() {
                        "yes" | "true" | "y" | "1" => true,
                        "no" | "false" | "n" | "0" | "" => false,
                        _ => return Err(bad(k, v)),
                    },
                    Yaml::Null => false,
                    _ => return Err(bad(k, v)),
                };
                if done && out.new.todo_completed == 0 {
                    out.new.todo_completed = -1; // filled in below
                }
            }
            "todo_completed" if !v.is_null() => {
                out.new.todo_completed = time_of(v).ok_or_else(|| bad(k, v))?;
            }
            "source" | "source_url" => out.new.source_url = scalar(v).unwrap_or_default(),
            "tags" => {
                out.tags = match v {
                    Yaml::Sequence(items) => items
                        .iter()
                        .map(|i| scalar(i).ok_or_else(|| bad(k, v)))
                        .collect::<std::result::Result<Vec<_>, _>>()?,
                    Yaml::String(s) => s.split(',').map(|t| t.trim().to_string()).collect(),
                    Yaml::Null => Vec::new(),
                    _ => return Err(bad(k, v)),
                };
                out.tags.retain(|t| !t.trim().is_empty());
            }
            _ => {}
        }
    }
    if out.new.todo_completed == -1 {
        out.new.todo_completed = out.new.updated_time.unwrap_or_else(now_ms);
    }
    Ok(out)
}

fn scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        Yaml::Bool(b) => Some(b.to_string()),
        Yaml::Null => Some(String::new()),
        _ => None,
    }
}

fn time_of(v: &Yaml) -> Option<i64> {
    match v {
        Yaml::Number(n) => n.as_i64().map(|n| {
            if n.abs() < 100_000_000_000 {
                n * 1000
            } else {
                n
            }
        }),
        Yaml::String(s) => parse_time(s),
        _ => None,
    }
}

fn show(v: &Yaml) -> String {
    serde_yaml::to_string(v)
        .map(|s| format!("'{}'", s.trim()))
        .unwrap_or_else(|_| "?".into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn no_front_matter() {
        let p = parse_markdown("# Hi\nbody", "file").unwrap();
        assert_eq!(p.new.title, "file");
        assert_eq!(p.new.body, "# Hi\nbody");
    }

    #[test]
    fn front_matter_fields() {
        let t = "---\ntitle: \"A: b\"\ncreated: 2024-03-15T12:00:00.000Z\nupdated: 1710504000500\ntags: [x, \"y z\"]\ncompleted?: yes\ndue: 2024-04-01T00:00:00Z\nsource: https://e.com\nextra: ignored\n---\n\n\nBody\n";
        let p = parse_markdown(t, "f").unwrap();
        assert_eq!(p.new.title, "A: b");
        assert_eq!(p.new.created_time, Some(1_710_504_000_000));
        assert_eq!(p.new.updated_time, Some(1_710_504_000_500));
        assert_eq!(p.tags, vec!["x", "y z"]);
        assert!(p.new.is_todo);
        assert_eq!(p.new.todo_completed, 1_710_504_000_500);
        assert_eq!(p.new.todo_due, 1_711_929_600_000);
        assert_eq!(p.new.source_url, "https://e.com");
        assert_eq!(p.new.body, "\nBody\n");
        let p = parse_markdown("---\ntags: a, b\n---\nx", "f").unwrap();
        assert_eq!(p.tags, vec!["a", "b"]);
    }

    #[test]
    fn broken_front_matter() {
        assert!(
            parse_markdown("---\ntitle: x\nno end", "f")
                .unwrap_err()
                .contains("no closing")
        );
        assert!(
            parse_markdown("---\ntitle: [unclosed\n---\n", "f")
                .unwrap_err()
                .contains("invalid front matter")
        );
        assert!(
            parse_markdown("---\n- a\n- b\n---\n", "f")
                .unwrap_err()
                .contains("key: value")
        );
        assert!(
            parse_markdown("---\ncreated: someday\n---\n", "f")
                .unwrap_err()
                .contains("'created'")
        );
        // a body that merely contains a rule is not front matter
        assert_eq!(
            parse_markdown("text\n---\nmore", "f").unwrap().new.body,
            "text\n---\nmore"
        );
    }
}
