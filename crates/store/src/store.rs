//! The `Store` handle. API CONTRACT: these signatures are what `tools`, `mcp`, `cli`,
//! `agent` and `index` code against. Bodies marked `todo!` are being implemented.

use crate::*;
use std::path::{Path, PathBuf};

/// Cheap to clone (`Arc` inside); `Send + Sync`.
#[derive(Clone)]
pub struct Store {
    #[allow(dead_code)]
    inner: std::sync::Arc<()>,
}

#[allow(unused_variables)]
impl Store {
    /// Open (creating if needed) the workspace at `dir`: `dir/sidenote.db` (WAL, migrated
    /// from empty), `dir/resources/`. Creates a default notebook when there is none.
    pub fn open(dir: &Path) -> Result<Store> {
        todo!()
    }
    /// The workspace directory.
    pub fn root(&self) -> &Path {
        todo!()
    }

    // ---- notebooks ----
    pub fn create_notebook(
        &self,
        actor: &Actor,
        title: &str,
        parent_id: Option<&str>,
    ) -> Result<Notebook> {
        todo!()
    }
    pub fn notebook(&self, id: &str) -> Result<Option<Notebook>> {
        todo!()
    }
    /// All notebooks with direct note counts, ordered by title.
    pub fn list_notebooks(&self) -> Result<Vec<NotebookInfo>> {
        todo!()
    }
    /// The notebook new notes go to when none is given.
    pub fn default_notebook_id(&self) -> Result<String> {
        todo!()
    }

    // ---- notes ----
    pub fn create_note(&self, actor: &Actor, new: NewNote) -> Result<Note> {
        todo!()
    }
    /// Any note, trashed or not (check `is_trashed()`).
    pub fn note(&self, id: &str) -> Result<Option<Note>> {
        todo!()
    }
    /// One transaction, one journal row. Errors leave the note unchanged.
    pub fn update_note(&self, actor: &Actor, id: &str, patch: NotePatch) -> Result<Note> {
        todo!()
    }
    pub fn trash_note(&self, actor: &Actor, id: &str) -> Result<Note> {
        todo!()
    }
    pub fn restore_note(&self, actor: &Actor, id: &str) -> Result<Note> {
        todo!()
    }
    /// Notes, newest `updated_time` first; `notebook_id` restricts to direct children.
    pub fn list_notes(
        &self,
        notebook_id: Option<&str>,
        include_trashed: bool,
        limit: usize,
    ) -> Result<Vec<NoteSummary>> {
        todo!()
    }

    // ---- tags ----
    /// `with_notes_only`: only tags linked to at least one non-trashed note.
    pub fn list_tags(&self, with_notes_only: bool) -> Result<Vec<Tag>> {
        todo!()
    }
    pub fn note_tags(&self, note_id: &str) -> Result<Vec<Tag>> {
        todo!()
    }
    /// Creates the tag if missing (case-insensitive title match), links it. Idempotent.
    pub fn add_tag(&self, actor: &Actor, note_id: &str, title: &str) -> Result<Tag> {
        todo!()
    }
    /// Returns false when the note did not have that tag.
    pub fn remove_tag(&self, actor: &Actor, note_id: &str, title: &str) -> Result<bool> {
        todo!()
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
        todo!()
    }
    pub fn resource(&self, id: &str) -> Result<Option<Resource>> {
        todo!()
    }
    pub fn resource_path(&self, resource: &Resource) -> PathBuf {
        todo!()
    }

    // ---- search ----
    /// Joplin query grammar. A malformed query is `StoreError::Query` naming the bad part.
    pub fn search(&self, query: &str, limit: usize) -> Result<SearchResults> {
        todo!()
    }

    // ---- journal ----
    pub fn journal(&self, q: &JournalQuery) -> Result<Vec<JournalEntry>> {
        todo!()
    }
    /// Highest journal seq (0 when empty).
    pub fn journal_head(&self) -> Result<i64> {
        todo!()
    }

    // ---- settings (Joplin-style keys) ----
    pub fn setting(&self, key: &str) -> Result<Option<String>> {
        todo!()
    }
    pub fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        todo!()
    }
    pub fn settings(&self) -> Result<Vec<(String, String)>> {
        todo!()
    }
}
