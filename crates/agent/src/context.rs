//! What the panel knows when the user sends a message: which note is focused (if any), its
//! text and the selection. [`crate::build_tool_list`] and the system prompt are pure
//! functions of it.

use serde::{Deserialize, Serialize};
use sidenote_editor::EditorSession;
use sidenote_store::{Store, StoreError};
use std::ops::Range;

/// The note open in the editor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FocusedNote {
    pub id: String,
    pub title: String,
    pub notebook_id: String,
    /// The notebook's title (`None` when unknown).
    pub notebook: Option<String>,
    /// The text the session tools edit (the editor's working copy).
    pub body: String,
    /// The selection as a char range (Unicode scalar values) of `body`; `None` or empty = none.
    pub selection: Option<Range<usize>>,
}

impl FocusedNote {
    /// The selected text, when there is a (non-empty) selection.
    pub fn selected_text(&self) -> Option<&str> {
        let r = self.selection.as_ref().filter(|r| r.start < r.end)?;
        let start = byte_at_char(&self.body, r.start);
        let end = byte_at_char(&self.body, r.end);
        self.body.get(start..end)
    }

    pub fn has_selection(&self) -> bool {
        self.selected_text().is_some_and(|s| !s.is_empty())
    }

    /// Take body and selection from a live editor session (its working copy).
    pub fn from_session(
        session: &EditorSession,
        title: impl Into<String>,
        notebook_id: impl Into<String>,
        notebook: Option<String>,
    ) -> Self {
        FocusedNote {
            id: session.note_id().to_string(),
            title: title.into(),
            notebook_id: notebook_id.into(),
            notebook,
            body: session.working_text().to_string(),
            selection: session.selection(),
        }
    }

    /// Load a note (not trashed) and its notebook title from the store.
    pub fn load(store: &Store, note_id: &str) -> Result<FocusedNote, StoreError> {
        Self::load_versioned(store, note_id).map(|(note, _)| note)
    }

    /// [`FocusedNote::load`], plus the note's `updated_time` as read (for a later
    /// `if_updated_time` save that must not overwrite a newer version).
    pub fn load_versioned(store: &Store, note_id: &str) -> Result<(FocusedNote, i64), StoreError> {
        let note = match store.note(note_id)? {
            Some(n) if !n.is_trashed() => n,
            _ => {
                return Err(StoreError::NotFound {
                    kind: "Note",
                    id: note_id.to_string(),
                });
            }
        };
        let notebook = store.notebook(&note.parent_id)?.map(|nb| nb.title);
        let focused = FocusedNote {
            id: note.id,
            title: note.title,
            notebook_id: note.parent_id,
            notebook,
            body: note.body,
            selection: None,
        };
        Ok((focused, note.updated_time))
    }
}

/// The context of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteContext {
    /// `None`: no note focused (workspace tools only).
    pub note: Option<FocusedNote>,
    /// Today's date as `YYYY-MM-DD` for the prompt; `None` = the local date now.
    #[serde(default)]
    pub today: Option<String>,
}

impl NoteContext {
    /// No note focused.
    pub fn workspace() -> Self {
        NoteContext::default()
    }
    pub fn with_note(note: FocusedNote) -> Self {
        NoteContext {
            note: Some(note),
            today: None,
        }
    }
    pub fn has_selection(&self) -> bool {
        self.note.as_ref().is_some_and(FocusedNote::has_selection)
    }
}

/// Byte index of char `n` of `s` (the end when past it).
pub(crate) fn byte_at_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}
