//! Plain data types the store hands out. Serde field names are the wire names the tools use.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who made a write. Recorded in the journal as a string: `panel`, `cli`, `import`,
/// `mcp:<client>`, `agent:<turn id>`, `plugin:<id>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Actor {
    Panel,
    Cli,
    Import,
    Mcp(String),
    Agent(String),
    Plugin(String),
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Panel => f.write_str("panel"),
            Actor::Cli => f.write_str("cli"),
            Actor::Import => f.write_str("import"),
            Actor::Mcp(c) => write!(f, "mcp:{c}"),
            Actor::Agent(t) => write!(f, "agent:{t}"),
            Actor::Plugin(p) => write!(f, "plugin:{p}"),
        }
    }
}

impl From<Actor> for String {
    fn from(a: Actor) -> String {
        a.to_string()
    }
}

impl TryFrom<String> for Actor {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl std::str::FromStr for Actor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "panel" => Actor::Panel,
            "cli" => Actor::Cli,
            "import" => Actor::Import,
            _ => match s.split_once(':') {
                Some(("mcp", c)) => Actor::Mcp(c.to_string()),
                Some(("agent", t)) => Actor::Agent(t.to_string()),
                Some(("plugin", p)) => Actor::Plugin(p.to_string()),
                _ => return Err(format!("unknown actor '{s}'")),
            },
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notebook {
    pub id: String,
    pub title: String,
    /// `None` for a root notebook.
    pub parent_id: Option<String>,
    pub created_time: i64,
    pub updated_time: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotebookInfo {
    pub id: String,
    pub title: String,
    pub parent_id: Option<String>,
    /// Non-trashed notes directly in this notebook (not in sub-notebooks).
    pub note_count: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub id: String,
    /// The notebook id.
    pub parent_id: String,
    pub title: String,
    pub body: String,
    pub is_todo: bool,
    /// Unix ms when completed, 0 when not.
    pub todo_completed: i64,
    /// Unix ms, 0 when none.
    pub todo_due: i64,
    pub source_url: String,
    pub created_time: i64,
    pub updated_time: i64,
    /// Unix ms when moved to trash, 0 when not trashed.
    pub deleted_time: i64,
}

impl Note {
    pub fn is_trashed(&self) -> bool {
        self.deleted_time > 0
    }
}

/// A note without its body, for listings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteSummary {
    pub id: String,
    pub parent_id: String,
    pub title: String,
    pub is_todo: bool,
    pub todo_completed: i64,
    pub updated_time: i64,
    pub deleted_time: i64,
}

/// Fields for a new note. `id`, `created_time`, `updated_time` are for import (keep the
/// original values); `None` means "generate" / "now".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewNote {
    pub id: Option<String>,
    /// Notebook id; `None` = the default notebook.
    pub parent_id: Option<String>,
    pub title: String,
    pub body: String,
    pub is_todo: bool,
    pub todo_completed: i64,
    pub todo_due: i64,
    pub source_url: String,
    pub created_time: Option<i64>,
    pub updated_time: Option<i64>,
}

/// A partial update; only `Some` fields change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePatch {
    pub title: Option<String>,
    pub body: Option<String>,
    pub parent_id: Option<String>,
    pub is_todo: Option<bool>,
    pub todo_completed: Option<i64>,
    pub todo_due: Option<i64>,
    pub source_url: Option<String>,
    /// Keep this `updated_time` instead of "now" (import).
    pub updated_time: Option<i64>,
    /// Optimistic concurrency: fail with `StoreError::Conflict` unless the note's current
    /// `updated_time` equals this.
    pub if_updated_time: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tag {
    pub id: String,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    pub id: String,
    pub title: String,
    pub mime: String,
    pub filename: String,
    pub size: i64,
    pub created_time: i64,
    pub updated_time: i64,
}

/// One keyword-search hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub id: String,
    pub title: String,
    pub notebook_id: String,
    pub updated_time: i64,
    /// ~240 chars of the body around the first keyword found.
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    pub results: Vec<SearchHit>,
    /// Number of matching notes before `limit` was applied.
    pub total: usize,
}

/// What kind of write a journal row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalKind {
    NoteCreate,
    NoteUpdate,
    NoteTrash,
    NoteRestore,
    TagAdd,
    TagRemove,
    NotebookCreate,
    NotebookUpdate,
    ResourceCreate,
}

/// One row of the write journal. `before`/`after` are the JSON of the item (a `Note` for
/// note writes; `{"note_id","tag"}` for tag links; a `Notebook`; a `Resource`), `null` when
/// absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Monotonic sequence number (the change-feed cursor).
    pub seq: i64,
    pub time: i64,
    pub actor: String,
    pub kind: JournalKind,
    /// The note id for note and tag-link writes; the notebook/resource id otherwise.
    pub item_id: String,
    pub before: serde_json::Value,
    pub after: serde_json::Value,
}

/// Filter for reading the journal. All fields optional; results ordered by `seq` ascending.
#[derive(Debug, Clone, Default)]
pub struct JournalQuery {
    pub actor: Option<String>,
    /// Only actors starting with this (e.g. `agent:`).
    pub actor_prefix: Option<String>,
    pub item_id: Option<String>,
    pub after_seq: Option<i64>,
    pub limit: Option<usize>,
}
