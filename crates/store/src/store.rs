//! The `Store` handle. API CONTRACT: these signatures are what `tools`, `mcp`, `cli`,
//! `agent` and `index` code against.

use crate::db::{self, FOLDER_COLS, NOTE_SELECT, RESOURCE_COLS};
use crate::*;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Setting key holding the default notebook id.
const DEFAULT_NOTEBOOK_KEY: &str = "notebook.default";

pub(crate) struct Inner {
    root: PathBuf,
    conn: Mutex<Connection>,
}

/// Cheap to clone (`Arc` inside); `Send + Sync`.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl Store {
    /// Open (creating if needed) the workspace at `dir`: `dir/sidenote.db` (WAL, migrated
    /// from empty), `dir/resources/`. Creates a default notebook when there is none.
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir.join("resources"))?;
        let mut conn = Connection::open(dir.join("sidenote.db"))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // keep hot pages in memory: 64 MiB page cache, reads through mmap (256 MiB window)
        conn.pragma_update(None, "cache_size", -65_536)?;
        conn.pragma_update(None, "mmap_size", 268_435_456)?;
        db::migrate(&mut conn)?;
        let store = Store {
            inner: Arc::new(Inner {
                root: dir.to_path_buf(),
                conn: Mutex::new(conn),
            }),
        };
        store.default_notebook_id()?;
        Ok(store)
    }

    /// The workspace directory.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The schema version this build migrates to.
    pub fn schema_version() -> usize {
        db::schema_version()
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite inconsistent (transactions roll
        // back on drop), so a poisoned lock is safe to reuse.
        self.inner
            .conn
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Run `f` in one IMMEDIATE transaction; commit on `Ok`, roll back on `Err`.
    pub(crate) fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    // ---- notebooks ----
    pub fn create_notebook(
        &self,
        actor: &Actor,
        title: &str,
        parent_id: Option<&str>,
    ) -> Result<Notebook> {
        let now = now_ms();
        let nb = Notebook {
            id: new_id(),
            title: title.to_string(),
            parent_id: parent_id.map(str::to_string),
            created_time: now,
            updated_time: now,
        };
        self.write(|tx| {
            insert_notebook(tx, &nb)?;
            db::journal_append(
                tx,
                &actor.to_string(),
                JournalKind::NotebookCreate,
                &nb.id,
                &Value::Null,
                &db::to_json(&nb),
            )?;
            Ok(nb.clone())
        })
    }

    /// Rename and/or move a notebook. `parent_id: Some(None)` moves it to the root.
    /// Moving a notebook under itself or one of its descendants is refused.
    pub fn update_notebook(
        &self,
        actor: &Actor,
        id: &str,
        title: Option<&str>,
        parent_id: Option<Option<&str>>,
    ) -> Result<Notebook> {
        self.write(|tx| {
            let before = get_notebook(tx, id)?.ok_or_else(|| not_found("Notebook", id))?;
            let mut after = before.clone();
            if let Some(t) = title {
                if t.trim().is_empty() {
                    return Err(StoreError::Invalid(
                        "notebook title must not be empty".into(),
                    ));
                }
                after.title = t.to_string();
            }
            if let Some(p) = parent_id {
                if let Some(p) = p {
                    if get_notebook(tx, p)?.is_none() {
                        return Err(StoreError::Invalid(format!(
                            "Parent notebook not found: {p}"
                        )));
                    }
                    // walk up from the new parent; meeting `id` means a cycle
                    let mut cur = Some(p.to_string());
                    while let Some(c) = cur {
                        if c == id {
                            return Err(StoreError::Invalid(format!(
                                "cannot move notebook {id} inside itself"
                            )));
                        }
                        cur = get_notebook(tx, &c)?.and_then(|n| n.parent_id);
                    }
                }
                after.parent_id = p.map(str::to_string);
            }
            after.updated_time = now_ms().max(before.updated_time);
            tx.execute(
                "UPDATE folders SET title = ?2, parent_id = ?3, updated_time = ?4 WHERE id = ?1",
                params![id, after.title, after.parent_id, after.updated_time],
            )?;
            db::journal_append(
                tx,
                &actor.to_string(),
                JournalKind::NotebookUpdate,
                id,
                &db::to_json(&before),
                &db::to_json(&after),
            )?;
            Ok(after)
        })
    }

    pub fn notebook(&self, id: &str) -> Result<Option<Notebook>> {
        let conn = self.conn();
        get_notebook(&conn, id)
    }

    /// Every notebook (no counts), ordered by title.
    pub fn all_notebooks(&self) -> Result<Vec<Notebook>> {
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "SELECT {FOLDER_COLS} FROM folders ORDER BY title COLLATE NOCASE, id"
        ))?;
        let rows = st.query_map([], db::folder_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// All notebooks with direct note counts, ordered by title.
    pub fn list_notebooks(&self) -> Result<Vec<NotebookInfo>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT f.id, f.title, f.parent_id,
                    (SELECT COUNT(*) FROM notes n WHERE n.parent_id = f.id AND n.deleted_time = 0)
             FROM folders f ORDER BY f.title COLLATE NOCASE, f.id",
        )?;
        let rows = st.query_map([], |r| {
            Ok(NotebookInfo {
                id: r.get(0)?,
                title: r.get(1)?,
                parent_id: r.get(2)?,
                note_count: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The notebook new notes go to when none is given.
    pub fn default_notebook_id(&self) -> Result<String> {
        self.write(default_notebook_tx)
    }

    /// Make `id` the default notebook.
    pub fn set_default_notebook(&self, id: &str) -> Result<()> {
        self.write(|tx| {
            get_notebook(tx, id)?.ok_or_else(|| not_found("Notebook", id))?;
            set_setting_tx(tx, DEFAULT_NOTEBOOK_KEY, id)
        })
    }

    /// `id` and the ids of all notebooks below it.
    pub fn notebook_subtree(&self, id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "WITH RECURSIVE sub(id) AS (SELECT ?1 UNION SELECT f.id FROM folders f JOIN sub ON f.parent_id = sub.id)
             SELECT id FROM sub",
        )?;
        let rows = st.query_map([id], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    // ---- notes ----
    pub fn create_note(&self, actor: &Actor, new: NewNote) -> Result<Note> {
        self.write(|tx| create_note_tx(tx, &actor.to_string(), new))
    }

    /// Create many notes in ONE transaction (one journal row each). For bulk loads and
    /// benchmarks; all-or-nothing.
    pub fn create_notes_bulk(&self, actor: &Actor, notes: Vec<NewNote>) -> Result<Vec<Note>> {
        let actor = actor.to_string();
        self.write(|tx| {
            notes
                .into_iter()
                .map(|n| create_note_tx(tx, &actor, n))
                .collect()
        })
    }

    /// Any note, trashed or not (check `is_trashed()`).
    pub fn note(&self, id: &str) -> Result<Option<Note>> {
        let conn = self.conn();
        get_note(&conn, id)
    }

    /// One transaction, one journal row. Errors leave the note unchanged.
    pub fn update_note(&self, actor: &Actor, id: &str, patch: NotePatch) -> Result<Note> {
        self.write(|tx| {
            let before = get_note(tx, id)?.ok_or_else(|| not_found("Note", id))?;
            if let Some(expected) = patch.if_updated_time
                && expected != before.updated_time
            {
                return Err(StoreError::Conflict { id: id.to_string() });
            }
            let mut after = before.clone();
            if let Some(p) = &patch.parent_id {
                if get_notebook(tx, p)?.is_none() {
                    return Err(not_found("Notebook", p));
                }
                after.parent_id = p.clone();
            }
            if let Some(t) = patch.title {
                after.title = t;
            }
            if let Some(b) = patch.body {
                after.body = b;
            }
            if let Some(v) = patch.is_todo {
                after.is_todo = v;
            }
            if let Some(v) = patch.todo_completed {
                after.todo_completed = v.max(0);
            }
            if let Some(v) = patch.todo_due {
                after.todo_due = v.max(0);
            }
            if let Some(v) = patch.source_url {
                after.source_url = v;
            }
            after.updated_time = match patch.updated_time {
                Some(t) => t,
                // strictly increasing, so `if_updated_time` always sees a change
                None => now_ms().max(before.updated_time + 1),
            };
            tx.execute(
                "UPDATE notes SET parent_id = ?2, title = ?3, is_todo = ?4,
                    todo_completed = ?5, todo_due = ?6, source_url = ?7, updated_time = ?8
                 WHERE id = ?1",
                params![
                    id,
                    after.parent_id,
                    after.title,
                    after.is_todo as i64,
                    after.todo_completed,
                    after.todo_due,
                    after.source_url,
                    after.updated_time
                ],
            )?;
            if after.body != before.body {
                tx.execute(
                    "UPDATE note_bodies SET body = ?2 WHERE rid = (SELECT rid FROM notes WHERE id = ?1)",
                    params![id, after.body],
                )?;
            }
            if after.title != before.title || after.body != before.body {
                db::fts_put(tx, id, &after.title, &after.body)?;
            }
            if after.body != before.body {
                db::sync_note_resources(tx, id, &after.body)?;
            }
            db::journal_append(
                tx,
                &actor.to_string(),
                JournalKind::NoteUpdate,
                id,
                &db::to_json(&before),
                &db::to_json(&after),
            )?;
            Ok(after)
        })
    }

    pub fn trash_note(&self, actor: &Actor, id: &str) -> Result<Note> {
        self.write(|tx| {
            let before = get_note(tx, id)?.ok_or_else(|| not_found("Note", id))?;
            if before.is_trashed() {
                return Err(StoreError::Invalid(format!(
                    "note {id} is already in the trash"
                )));
            }
            let mut after = before.clone();
            after.deleted_time = now_ms();
            tx.execute(
                "UPDATE notes SET deleted_time = ?2 WHERE id = ?1",
                params![id, after.deleted_time],
            )?;
            db::journal_append(
                tx,
                &actor.to_string(),
                JournalKind::NoteTrash,
                id,
                &db::to_json(&before),
                &db::to_json(&after),
            )?;
            Ok(after)
        })
    }

    pub fn restore_note(&self, actor: &Actor, id: &str) -> Result<Note> {
        self.write(|tx| {
            let before = get_note(tx, id)?.ok_or_else(|| not_found("Note", id))?;
            if !before.is_trashed() {
                return Err(StoreError::Invalid(format!(
                    "note {id} is not in the trash"
                )));
            }
            let mut after = before.clone();
            after.deleted_time = 0;
            // a note whose notebook vanished comes back in the default notebook
            if get_notebook(tx, &after.parent_id)?.is_none() {
                after.parent_id = default_notebook_tx(tx)?;
            }
            tx.execute(
                "UPDATE notes SET deleted_time = 0, parent_id = ?2 WHERE id = ?1",
                params![id, after.parent_id],
            )?;
            db::journal_append(
                tx,
                &actor.to_string(),
                JournalKind::NoteRestore,
                id,
                &db::to_json(&before),
                &db::to_json(&after),
            )?;
            Ok(after)
        })
    }

    /// Notes, newest `updated_time` first; `notebook_id` restricts to direct children.
    pub fn list_notes(
        &self,
        notebook_id: Option<&str>,
        include_trashed: bool,
        limit: usize,
    ) -> Result<Vec<NoteSummary>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT id, parent_id, title, is_todo, todo_completed, updated_time, deleted_time
             FROM notes
             WHERE (?1 IS NULL OR parent_id = ?1) AND (?2 OR deleted_time = 0)
             ORDER BY updated_time DESC, id LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = st.query_map(params![notebook_id, include_trashed, limit], |r| {
            Ok(NoteSummary {
                id: r.get(0)?,
                parent_id: r.get(1)?,
                title: r.get(2)?,
                is_todo: r.get::<_, i64>(3)? != 0,
                todo_completed: r.get(4)?,
                updated_time: r.get(5)?,
                deleted_time: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Every note (trashed included when asked), oldest first; for export.
    pub fn all_notes(&self, include_trashed: bool) -> Result<Vec<Note>> {
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "{NOTE_SELECT} WHERE (?1 OR n.deleted_time = 0) ORDER BY n.created_time, n.id"
        ))?;
        let rows = st.query_map([include_trashed], db::note_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    // ---- tags ----
    /// `with_notes_only`: only tags linked to at least one non-trashed note.
    pub fn list_tags(&self, with_notes_only: bool) -> Result<Vec<Tag>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT t.id, t.title FROM tags t
             WHERE NOT ?1 OR EXISTS (SELECT 1 FROM note_tags nt JOIN notes n ON n.id = nt.note_id
                                     WHERE nt.tag_id = t.id AND n.deleted_time = 0)
             ORDER BY t.title_key, t.id",
        )?;
        let rows = st.query_map([with_notes_only], tag_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The tag with this title (case-insensitive), if any.
    pub fn tag_by_title(&self, title: &str) -> Result<Option<Tag>> {
        let conn = self.conn();
        tag_by_title_tx(&conn, title)
    }

    pub fn note_tags(&self, note_id: &str) -> Result<Vec<Tag>> {
        let conn = self.conn();
        note_tags_tx(&conn, note_id)
    }

    /// Creates the tag if missing (case-insensitive title match), links it. Idempotent.
    pub fn add_tag(&self, actor: &Actor, note_id: &str, title: &str) -> Result<Tag> {
        self.write(|tx| add_tag_tx(tx, &actor.to_string(), note_id, title, None))
    }

    /// Returns false when the note did not have that tag.
    pub fn remove_tag(&self, actor: &Actor, note_id: &str, title: &str) -> Result<bool> {
        self.write(|tx| {
            get_note(tx, note_id)?.ok_or_else(|| not_found("Note", note_id))?;
            match tag_by_title_tx(tx, title)? {
                Some(tag) => unlink_tag_tx(tx, &actor.to_string(), note_id, &tag),
                None => Ok(false),
            }
        })
    }

    /// The tag with this id, if any.
    pub fn tag(&self, id: &str) -> Result<Option<Tag>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                "SELECT id, title FROM tags WHERE id = ?1",
                [id],
                tag_from_row,
            )
            .optional()?)
    }

    /// Add and remove several tags on a note in ONE transaction (one journal row per link
    /// actually changed); all or nothing. Titles are trimmed and matched case-insensitively;
    /// unknown tags in `add` are created. Returns `(added, removed)`: `added` holds the tag of
    /// every `add` title (already-attached ones included), `removed` every `remove` title that
    /// names an existing tag (whether or not it was on the note), as `manage_tags` reports
    /// them. Errors: the note is missing (`NotFound`), a blank title, or a title in both lists
    /// (`Invalid`).
    pub fn change_tags(
        &self,
        actor: &Actor,
        note_id: &str,
        add: &[&str],
        remove: &[&str],
    ) -> Result<(Vec<Tag>, Vec<Tag>)> {
        let actor = actor.to_string();
        for t in add.iter().chain(remove) {
            if t.trim().is_empty() {
                return Err(StoreError::Invalid("tag title must not be empty".into()));
            }
        }
        if let Some(both) = add
            .iter()
            .find(|a| remove.iter().any(|r| db::tag_key(r) == db::tag_key(a)))
        {
            return Err(StoreError::Invalid(format!(
                "tag '{}' is both added and removed",
                both.trim()
            )));
        }
        self.write(|tx| {
            get_note(tx, note_id)?.ok_or_else(|| not_found("Note", note_id))?;
            let mut added = Vec::new();
            for t in add {
                let tag = add_tag_tx(tx, &actor, note_id, t, None)?;
                if !added.contains(&tag) {
                    added.push(tag);
                }
            }
            let mut removed = Vec::new();
            for t in remove {
                let Some(tag) = tag_by_title_tx(tx, t)? else {
                    continue;
                };
                unlink_tag_tx(tx, &actor, note_id, &tag)?;
                if !removed.contains(&tag) {
                    removed.push(tag);
                }
            }
            Ok((added, removed))
        })
    }

    // ---- resources ----
    pub fn add_resource(
        &self,
        actor: &Actor,
        title: &str,
        filename: &str,
        mime: &str,
        bytes: &[u8],
    ) -> Result<Resource> {
        let now = now_ms();
        let res = Resource {
            id: new_id(),
            title: title.to_string(),
            mime: mime.to_string(),
            filename: filename.to_string(),
            size: bytes.len() as i64,
            created_time: now,
            updated_time: now,
        };
        self.insert_resource(&actor.to_string(), res, bytes)
    }

    /// Write the bytes, then the row and its journal entry; removes the file again when the
    /// row cannot be written.
    pub(crate) fn insert_resource(
        &self,
        actor: &str,
        res: Resource,
        bytes: &[u8],
    ) -> Result<Resource> {
        if !is_id(&res.id) {
            return Err(StoreError::Invalid(format!("bad resource id '{}'", res.id)));
        }
        if res.mime.trim().is_empty() {
            return Err(StoreError::Invalid(
                "resource mime type must not be empty".into(),
            ));
        }
        let path = self.resource_path(&res);
        std::fs::write(&path, bytes)?;
        let out = self.write(|tx| {
            tx.execute(
                &format!(
                    "INSERT INTO resources({RESOURCE_COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                ),
                params![
                    res.id,
                    res.title,
                    res.mime,
                    res.filename,
                    res.size,
                    res.created_time,
                    res.updated_time
                ],
            )?;
            db::journal_append(
                tx,
                actor,
                JournalKind::ResourceCreate,
                &res.id,
                &Value::Null,
                &db::to_json(&res),
            )?;
            Ok(res.clone())
        });
        if out.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        out
    }

    pub fn resource(&self, id: &str) -> Result<Option<Resource>> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {RESOURCE_COLS} FROM resources WHERE id = ?1"),
                [id],
                db::resource_from_row,
            )
            .optional()?)
    }

    /// Every resource, oldest first.
    pub fn all_resources(&self) -> Result<Vec<Resource>> {
        let conn = self.conn();
        let mut st = conn.prepare(&format!(
            "SELECT {RESOURCE_COLS} FROM resources ORDER BY created_time, id"
        ))?;
        let rows = st.query_map([], db::resource_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// `resources/<id>` plus the file name's extension when it has a simple one.
    pub fn resource_path(&self, resource: &Resource) -> PathBuf {
        let ext = Path::new(&resource.filename)
            .extension()
            .and_then(|e| e.to_str())
            .filter(|e| {
                !e.is_empty() && e.len() <= 10 && e.chars().all(|c| c.is_ascii_alphanumeric())
            })
            .map(|e| e.to_ascii_lowercase());
        let name = match ext {
            Some(e) => format!("{}.{e}", resource.id),
            None => resource.id.clone(),
        };
        self.inner.root.join("resources").join(name)
    }

    // ---- search ----
    /// Joplin query grammar. A malformed query is `StoreError::Query` naming the bad part.
    pub fn search(&self, query: &str, limit: usize) -> Result<SearchResults> {
        crate::search::run(self, query, limit)
    }

    // ---- journal ----
    pub fn journal(&self, q: &JournalQuery) -> Result<Vec<JournalEntry>> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT seq, time, actor, kind, item_id, before, after FROM journal
             WHERE (?1 IS NULL OR actor = ?1)
               AND (?2 IS NULL OR substr(actor, 1, length(?2)) = ?2)
               AND (?3 IS NULL OR item_id = ?3)
               AND (?4 IS NULL OR seq > ?4)
             ORDER BY seq LIMIT ?5",
        )?;
        let limit = q
            .limit
            .map(|l| i64::try_from(l).unwrap_or(i64::MAX))
            .unwrap_or(-1);
        let rows = st.query_map(
            params![q.actor, q.actor_prefix, q.item_id, q.after_seq, limit],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            },
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, time, actor, kind, item_id, before, after) = row?;
            let kind = db::kind_from_str(&kind).ok_or_else(|| {
                StoreError::Invalid(format!("journal row {seq} has unknown kind '{kind}'"))
            })?;
            out.push(JournalEntry {
                seq,
                time,
                actor,
                kind,
                item_id,
                before: serde_json::from_str(&before).unwrap_or(Value::Null),
                after: serde_json::from_str(&after).unwrap_or(Value::Null),
            });
        }
        Ok(out)
    }

    /// Highest journal seq (0 when empty).
    pub fn journal_head(&self) -> Result<i64> {
        let conn = self.conn();
        Ok(
            conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM journal", [], |r| {
                r.get(0)
            })?,
        )
    }

    // ---- settings (Joplin-style keys) ----
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        let conn = self.conn();
        Ok(conn
            .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }
    pub fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        if key.trim().is_empty() {
            return Err(StoreError::Invalid("setting key must not be empty".into()));
        }
        self.write(|tx| set_setting_tx(tx, key, value))
    }
    /// Remove a setting; returns false when it was not set.
    pub fn unset_setting(&self, key: &str) -> Result<bool> {
        self.write(|tx| Ok(tx.execute("DELETE FROM settings WHERE key = ?1", [key])? > 0))
    }
    pub fn settings(&self) -> Result<Vec<(String, String)>> {
        let conn = self.conn();
        let mut st = conn.prepare("SELECT key, value FROM settings ORDER BY key")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

// ---- transaction-level helpers (shared with import) ----

pub(crate) fn not_found(kind: &'static str, id: &str) -> StoreError {
    StoreError::NotFound {
        kind,
        id: id.to_string(),
    }
}

fn tag_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Tag> {
    Ok(Tag {
        id: r.get(0)?,
        title: r.get(1)?,
    })
}

pub(crate) fn get_notebook(conn: &Connection, id: &str) -> Result<Option<Notebook>> {
    Ok(conn
        .query_row(
            &format!("SELECT {FOLDER_COLS} FROM folders WHERE id = ?1"),
            [id],
            db::folder_from_row,
        )
        .optional()?)
}

pub(crate) fn get_note(conn: &Connection, id: &str) -> Result<Option<Note>> {
    Ok(conn
        .query_row(
            &format!("{NOTE_SELECT} WHERE n.id = ?1"),
            [id],
            db::note_from_row,
        )
        .optional()?)
}

pub(crate) fn note_tags_tx(conn: &Connection, note_id: &str) -> Result<Vec<Tag>> {
    let mut st = conn.prepare(
        "SELECT t.id, t.title FROM note_tags nt JOIN tags t ON t.id = nt.tag_id
         WHERE nt.note_id = ?1 ORDER BY t.title_key, t.id",
    )?;
    let rows = st.query_map([note_id], tag_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

fn set_setting_tx(tx: &Transaction<'_>, key: &str, value: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO settings(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// Validates and inserts a notebook row (no journal).
pub(crate) fn insert_notebook(tx: &Transaction<'_>, nb: &Notebook) -> Result<()> {
    if nb.title.trim().is_empty() {
        return Err(StoreError::Invalid(
            "notebook title must not be empty".into(),
        ));
    }
    if !is_id(&nb.id) {
        return Err(StoreError::Invalid(format!("bad notebook id '{}'", nb.id)));
    }
    if let Some(p) = &nb.parent_id
        && get_notebook(tx, p)?.is_none()
    {
        return Err(StoreError::Invalid(format!(
            "Parent notebook not found: {p}"
        )));
    }
    tx.execute(
        &format!("INSERT INTO folders({FOLDER_COLS}) VALUES (?1, ?2, ?3, ?4, ?5)"),
        params![
            nb.id,
            nb.title,
            nb.parent_id,
            nb.created_time,
            nb.updated_time
        ],
    )
    .map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Invalid(format!("a notebook with id {} already exists", nb.id))
        }
        e => e.into(),
    })?;
    Ok(())
}

/// The default notebook id, repairing the setting (or creating "Notes") when needed. Not
/// journaled: it is the workspace's own bootstrap, not a write by an actor.
pub(crate) fn default_notebook_tx(tx: &Transaction<'_>) -> Result<String> {
    let cur: Option<String> = tx
        .query_row(
            "SELECT value FROM settings WHERE key = ?1",
            [DEFAULT_NOTEBOOK_KEY],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(id) = cur
        && get_notebook(tx, &id)?.is_some()
    {
        return Ok(id);
    }
    let first: Option<String> = tx
        .query_row(
            "SELECT id FROM folders WHERE parent_id IS NULL ORDER BY created_time, id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let id = match first {
        Some(id) => id,
        None => {
            let now = now_ms();
            let nb = Notebook {
                id: new_id(),
                title: "Notes".into(),
                parent_id: None,
                created_time: now,
                updated_time: now,
            };
            insert_notebook(tx, &nb)?;
            nb.id
        }
    };
    set_setting_tx(tx, DEFAULT_NOTEBOOK_KEY, &id)?;
    Ok(id)
}

/// Insert a note row (+ index, + resource links, + journal). Honours `new.id` and times.
pub(crate) fn create_note_tx(tx: &Transaction<'_>, actor: &str, new: NewNote) -> Result<Note> {
    let id = match new.id {
        Some(id) => {
            if !is_id(&id) {
                return Err(StoreError::Invalid(format!(
                    "bad note id '{id}': expected 32 lowercase hex characters"
                )));
            }
            if get_note(tx, &id)?.is_some() {
                return Err(StoreError::Invalid(format!(
                    "a note with id {id} already exists"
                )));
            }
            id
        }
        None => new_id(),
    };
    let parent_id = match new.parent_id {
        Some(p) => {
            if get_notebook(tx, &p)?.is_none() {
                return Err(not_found("Notebook", &p));
            }
            p
        }
        None => default_notebook_tx(tx)?,
    };
    let now = now_ms();
    let created_time = new.created_time.unwrap_or(now);
    let updated_time = new.updated_time.unwrap_or(created_time.max(now));
    let note = Note {
        id,
        parent_id,
        title: new.title,
        body: new.body,
        is_todo: new.is_todo,
        todo_completed: new.todo_completed.max(0),
        todo_due: new.todo_due.max(0),
        source_url: new.source_url,
        created_time,
        updated_time,
        deleted_time: 0,
    };
    tx.execute(
        "INSERT INTO notes(id, parent_id, title, is_todo, todo_completed, todo_due, source_url,
                           created_time, updated_time, deleted_time)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            note.id,
            note.parent_id,
            note.title,
            note.is_todo as i64,
            note.todo_completed,
            note.todo_due,
            note.source_url,
            note.created_time,
            note.updated_time,
            note.deleted_time
        ],
    )?;
    tx.execute(
        "INSERT INTO note_bodies(rid, body) VALUES (?1, ?2)",
        params![tx.last_insert_rowid(), note.body],
    )?;
    db::fts_put(tx, &note.id, &note.title, &note.body)?;
    db::sync_note_resources(tx, &note.id, &note.body)?;
    db::journal_append(
        tx,
        actor,
        JournalKind::NoteCreate,
        &note.id,
        &Value::Null,
        &db::to_json(&note),
    )?;
    Ok(note)
}

/// Link a tag (creating it when missing) to a note; `tag_id` is the id to give a new tag
/// (import). Journals only when the link is new.
pub(crate) fn add_tag_tx(
    tx: &Transaction<'_>,
    actor: &str,
    note_id: &str,
    title: &str,
    tag_id: Option<&str>,
) -> Result<Tag> {
    let title = title.trim();
    if title.is_empty() {
        return Err(StoreError::Invalid("tag title must not be empty".into()));
    }
    get_note(tx, note_id)?.ok_or_else(|| not_found("Note", note_id))?;
    let key = db::tag_key(title);
    let now = now_ms();
    let tag = match tag_by_title_tx(tx, title)? {
        Some(t) => t,
        None => {
            let id = match tag_id {
                Some(id) if is_id(id) && !tag_id_exists(tx, id)? => id.to_string(),
                _ => new_id(),
            };
            tx.execute(
                "INSERT INTO tags(id, title, title_key, created_time, updated_time) VALUES (?1, ?2, ?3, ?4, ?4)",
                params![id, title, key, now],
            )?;
            Tag {
                id,
                title: title.to_string(),
            }
        }
    };
    let n = tx.execute(
        "INSERT OR IGNORE INTO note_tags(note_id, tag_id, created_time) VALUES (?1, ?2, ?3)",
        params![note_id, tag.id, now],
    )?;
    if n > 0 {
        db::journal_append(
            tx,
            actor,
            JournalKind::TagAdd,
            note_id,
            &Value::Null,
            &json!({"note_id": note_id, "tag": tag.title}),
        )?;
    }
    Ok(tag)
}

/// The tag with this title (case-insensitive), if any.
fn tag_by_title_tx(conn: &Connection, title: &str) -> Result<Option<Tag>> {
    Ok(conn
        .query_row(
            "SELECT id, title FROM tags WHERE title_key = ?1",
            [db::tag_key(title)],
            tag_from_row,
        )
        .optional()?)
}

/// Unlink a tag from a note; journals and returns true only when the link existed.
fn unlink_tag_tx(tx: &Transaction<'_>, actor: &str, note_id: &str, tag: &Tag) -> Result<bool> {
    let n = tx.execute(
        "DELETE FROM note_tags WHERE note_id = ?1 AND tag_id = ?2",
        params![note_id, tag.id],
    )?;
    if n > 0 {
        db::journal_append(
            tx,
            actor,
            JournalKind::TagRemove,
            note_id,
            &json!({"note_id": note_id, "tag": tag.title}),
            &Value::Null,
        )?;
    }
    Ok(n > 0)
}

fn tag_id_exists(tx: &Transaction<'_>, id: &str) -> Result<bool> {
    Ok(tx
        .query_row("SELECT 1 FROM tags WHERE id = ?1", [id], |_| Ok(()))
        .optional()?
        .is_some())
}
