//! Schema migrations, row mapping and text normalisation shared by the store modules.

use crate::*;
use rusqlite::{Connection, Row, Transaction, params};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Each entry migrates the schema from version `i` to `i + 1`. Never edit a released entry;
/// append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    CREATE TABLE folders (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT NOT NULL,
        parent_id TEXT,
        created_time INTEGER NOT NULL,
        updated_time INTEGER NOT NULL
    );
    CREATE INDEX folders_parent ON folders(parent_id);

    -- bodies live in their own table, so the notes table stays narrow: filters, sorts and
    -- joins over thousands of notes touch few pages
    CREATE TABLE notes (
        rid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT NOT NULL,
        is_todo INTEGER NOT NULL DEFAULT 0,
        todo_completed INTEGER NOT NULL DEFAULT 0,
        todo_due INTEGER NOT NULL DEFAULT 0,
        created_time INTEGER NOT NULL,
        updated_time INTEGER NOT NULL,
        deleted_time INTEGER NOT NULL DEFAULT 0,
        source_url TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE note_bodies (
        rid INTEGER PRIMARY KEY,
        body TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX notes_parent ON notes(parent_id);
    CREATE INDEX notes_updated ON notes(updated_time);

    CREATE VIRTUAL TABLE notes_fts USING fts5(
        title, body,
        content = '', contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2'
    );

    CREATE TABLE tags (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT NOT NULL,
        title_key TEXT NOT NULL UNIQUE,
        created_time INTEGER NOT NULL,
        updated_time INTEGER NOT NULL
    );
    CREATE TABLE note_tags (
        note_id TEXT NOT NULL,
        tag_id TEXT NOT NULL,
        created_time INTEGER NOT NULL,
        PRIMARY KEY (note_id, tag_id)
    );
    CREATE INDEX note_tags_tag ON note_tags(tag_id);

    CREATE TABLE resources (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT NOT NULL,
        mime TEXT NOT NULL,
        filename TEXT NOT NULL,
        size INTEGER NOT NULL,
        created_time INTEGER NOT NULL,
        updated_time INTEGER NOT NULL
    );
    -- resources a note body links to (`:/<id>`), kept in sync by the write path
    CREATE TABLE note_resources (
        note_id TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        PRIMARY KEY (note_id, resource_id)
    );
    CREATE INDEX note_resources_res ON note_resources(resource_id);

    CREATE TABLE settings (
        key TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    );

    CREATE TABLE journal (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        time INTEGER NOT NULL,
        actor TEXT NOT NULL,
        kind TEXT NOT NULL,
        item_id TEXT NOT NULL,
        before TEXT NOT NULL,
        after TEXT NOT NULL
    );
    CREATE INDEX journal_item ON journal(item_id, seq);
    CREATE INDEX journal_actor ON journal(actor, seq);
    "#,
];

pub(crate) fn schema_version() -> usize {
    MIGRATIONS.len()
}

/// Bring the schema to the newest version, one transaction per step.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let current = usize::try_from(current).unwrap_or(0);
    if current > MIGRATIONS.len() {
        return Err(StoreError::Invalid(format!(
            "the workspace database has schema version {current}, newer than this sidenote \
             understands ({}); upgrade sidenote",
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}

/// `SELECT` of every note column (alias `n`), in [`note_from_row`] order; append a `WHERE`.
pub(crate) const NOTE_SELECT: &str = "SELECT n.id, n.parent_id, n.title, b.body, n.is_todo, \
    n.todo_completed, n.todo_due, n.source_url, n.created_time, n.updated_time, n.deleted_time \
    FROM notes n JOIN note_bodies b ON b.rid = n.rid";

pub(crate) fn note_from_row(r: &Row<'_>) -> rusqlite::Result<Note> {
    Ok(Note {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        title: r.get(2)?,
        body: r.get(3)?,
        is_todo: r.get::<_, i64>(4)? != 0,
        todo_completed: r.get(5)?,
        todo_due: r.get(6)?,
        source_url: r.get(7)?,
        created_time: r.get(8)?,
        updated_time: r.get(9)?,
        deleted_time: r.get(10)?,
    })
}

pub(crate) const FOLDER_COLS: &str = "id, title, parent_id, created_time, updated_time";

pub(crate) fn folder_from_row(r: &Row<'_>) -> rusqlite::Result<Notebook> {
    Ok(Notebook {
        id: r.get(0)?,
        title: r.get(1)?,
        parent_id: r.get(2)?,
        created_time: r.get(3)?,
        updated_time: r.get(4)?,
    })
}

pub(crate) const RESOURCE_COLS: &str =
    "id, title, mime, filename, size, created_time, updated_time";

pub(crate) fn resource_from_row(r: &Row<'_>) -> rusqlite::Result<Resource> {
    Ok(Resource {
        id: r.get(0)?,
        title: r.get(1)?,
        mime: r.get(2)?,
        filename: r.get(3)?,
        size: r.get(4)?,
        created_time: r.get(5)?,
        updated_time: r.get(6)?,
    })
}

/// Text as the search index sees it: compatibility-decomposed, diacritics removed,
/// lowercased.
pub(crate) fn normalize(s: &str) -> String {
    s.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The key a tag title is matched on (case-insensitive).
pub(crate) fn tag_key(title: &str) -> String {
    title.trim().nfc().flat_map(char::to_lowercase).collect()
}

/// Write (or rewrite) the search-index row of a note.
pub(crate) fn fts_put(tx: &Transaction<'_>, note_id: &str, title: &str, body: &str) -> Result<()> {
    let rid: i64 = tx.query_row("SELECT rid FROM notes WHERE id = ?1", [note_id], |r| {
        r.get(0)
    })?;
    tx.execute("DELETE FROM notes_fts WHERE rowid = ?1", [rid])?;
    tx.execute(
        "INSERT INTO notes_fts(rowid, title, body) VALUES (?1, ?2, ?3)",
        params![rid, normalize(title), normalize(body)],
    )?;
    Ok(())
}

/// Resource ids a body links to as `:/<32 hex>`.
pub(crate) fn linked_resource_ids(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    while let Some(pos) = body[i..].find(":/") {
        let start = i + pos + 2;
        let end = start + 32;
        if end <= bytes.len() {
            let cand = &bytes[start..end];
            let next_is_hex = bytes.get(end).is_some_and(|b| b.is_ascii_hexdigit());
            if !next_is_hex
                && cand
                    .iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
            {
                let id = String::from_utf8_lossy(cand).into_owned();
                if !out.contains(&id) {
                    out.push(id);
                }
            }
        }
        i = start;
        if i >= body.len() {
            break;
        }
    }
    out
}

pub(crate) fn sync_note_resources(tx: &Transaction<'_>, note_id: &str, body: &str) -> Result<()> {
    tx.execute("DELETE FROM note_resources WHERE note_id = ?1", [note_id])?;
    for rid in linked_resource_ids(body) {
        tx.execute(
            "INSERT OR IGNORE INTO note_resources(note_id, resource_id) VALUES (?1, ?2)",
            params![note_id, rid],
        )?;
    }
    Ok(())
}

/// Append one journal row inside the caller's transaction.
pub(crate) fn journal_append(
    tx: &Transaction<'_>,
    actor: &str,
    kind: JournalKind,
    item_id: &str,
    before: &serde_json::Value,
    after: &serde_json::Value,
) -> Result<i64> {
    let kind = kind_str(kind);
    tx.execute(
        "INSERT INTO journal(time, actor, kind, item_id, before, after) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![now_ms(), actor, kind, item_id, before.to_string(), after.to_string()],
    )?;
    Ok(tx.last_insert_rowid())
}

pub(crate) fn kind_str(kind: JournalKind) -> &'static str {
    match kind {
        JournalKind::NoteCreate => "note_create",
        JournalKind::NoteUpdate => "note_update",
        JournalKind::NoteTrash => "note_trash",
        JournalKind::NoteRestore => "note_restore",
        JournalKind::TagAdd => "tag_add",
        JournalKind::TagRemove => "tag_remove",
        JournalKind::NotebookCreate => "notebook_create",
        JournalKind::NotebookUpdate => "notebook_update",
        JournalKind::ResourceCreate => "resource_create",
    }
}

pub(crate) fn kind_from_str(s: &str) -> Option<JournalKind> {
    Some(match s {
        "note_create" => JournalKind::NoteCreate,
        "note_update" => JournalKind::NoteUpdate,
        "note_trash" => JournalKind::NoteTrash,
        "note_restore" => JournalKind::NoteRestore,
        "tag_add" => JournalKind::TagAdd,
        "tag_remove" => JournalKind::TagRemove,
        "notebook_create" => JournalKind::NotebookCreate,
        "notebook_update" => JournalKind::NotebookUpdate,
        "resource_create" => JournalKind::ResourceCreate,
        _ => return None,
    })
}

pub(crate) fn to_json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_folds_case_and_diacritics() {
        assert_eq!(normalize("Crème BRÛLÉE"), "creme brulee");
        assert_eq!(normalize("ﬁle"), "file");
    }

    #[test]
    fn finds_linked_resources() {
        let a = "0123456789abcdef0123456789abcdef";
        let body = format!("![x](:/{a}) and [n](:/{a}) and :/notanid and :/{a}0");
        assert_eq!(linked_resource_ids(&body), vec![a.to_string()]);
    }
}
