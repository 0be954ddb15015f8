//! `semantic_search_notes`: search by meaning over the semantic (embedding) index.
//!
//! Query by text (`query`) or by an existing note (`note_id`: notes like it, itself left
//! out); scope to the whole workspace, a notebook, a tag or one note (`in_note_id`: the
//! relevant passages of a long note); `hybrid` turns keyword fusion on or off (default: the
//! workspace setting). The output carries the index's progress (`"index"`, plus a
//! `"message"` while it is still being built) when the index reports it.
//!
//! The tool talks to the index through the [`SemanticSearch`] trait, held in a
//! [`SemanticSlot`] that can be filled (or emptied) at any time — e.g. once the index has
//! been opened — without re-registering the tool:
//!
//! ```text
//! let slot = SemanticSlot::new();
//! register_builtin_with(&registry, store, slot.clone())?;
//! // ... later, when the index is ready:
//! slot.set(Some(Arc::new(my_index)));
//! ```
//!
//! While the slot is empty the tool answers a recoverable `semantic index not available`
//! error that points the model at `search_notes`.

use super::common::{
    blocking, live_note, opt_bool, opt_nonblank, plural, short, strip_link_prefix,
};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sidenote_store::Store;
use std::sync::{Arc, RwLock};

/// How strict the similarity cut-off is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relevance {
    Strict,
    #[default]
    Normal,
    Loose,
}

/// Restrict a semantic search to part of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SemanticScope {
    All,
    /// Notes directly in this notebook.
    Notebook(String),
    /// Notes carrying this tag (by tag id).
    Tag(String),
    /// Only this note (finds the relevant passage of a long note).
    Note(String),
}

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SemanticText {
    /// A natural-language query (trimmed, non-blank).
    Text(String),
    /// Notes similar to this (live) note; its stored vectors are reused. The source note
    /// must be left out of the results (the tool also drops it).
    LikeNote(String),
}

/// One semantic query, already checked by the tool (exactly one of text / source note,
/// non-blank, the source note and the scope exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticQuery {
    pub query: SemanticText,
    pub scope: SemanticScope,
    pub relevance: Relevance,
    /// Fuse keyword ranks in (reciprocal-rank fusion with `search_notes`); `None` means the
    /// workspace default (setting `ai.embeddings.hybrid`, default on).
    pub hybrid: Option<bool>,
}

impl SemanticQuery {
    /// A text query over the whole workspace with the default relevance and hybrid setting.
    pub fn text(q: impl Into<String>) -> Self {
        SemanticQuery {
            query: SemanticText::Text(q.into()),
            scope: SemanticScope::All,
            relevance: Relevance::Normal,
            hybrid: None,
        }
    }
    /// Notes like this one, over the whole workspace, with the default settings.
    pub fn like_note(id: impl Into<String>) -> Self {
        SemanticQuery {
            query: SemanticText::LikeNote(id.into()),
            ..SemanticQuery::text("")
        }
    }
}

/// One ranked chunk. The tool adds the note's title and notebook from the store and drops
/// hits whose note is gone or trashed (the index may lag behind the store).
#[derive(Debug, Clone, PartialEq)]
pub struct SemanticHit {
    pub note_id: String,
    pub chunk_index: u32,
    pub chunk_text: String,
    /// Similarity, higher is better (rounded to 3 decimals in the output).
    pub score: f32,
}

/// How far the index has got, shown to the model as `"index": {...}` in the tool output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SemanticStatus {
    /// Live notes indexed with the current model.
    pub indexed_notes: usize,
    /// Live notes in the store.
    pub total_notes: usize,
    /// The embedding model id.
    pub model: String,
    /// Caught up with the store (results cover every note).
    pub complete: bool,
}

/// What the semantic index must provide. Return hits best first. Errors: `Recoverable` for
/// conditions the model should hear about (e.g. "no embedder configured"), `Internal` for
/// failures.
#[async_trait::async_trait]
pub trait SemanticSearch: Send + Sync {
    async fn search(&self, query: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError>;

    /// The index's progress, if known. May block briefly (a few cheap SQL counts): the tool
    /// calls it off the async executor, after `search`. `None` leaves `"index"` out of the
    /// output.
    fn status(&self) -> Option<SemanticStatus> {
        None
    }
}

/// A shared, swappable handle to the semantic index (empty until one is plugged in).
#[derive(Clone, Default)]
pub struct SemanticSlot(Arc<RwLock<Option<Arc<dyn SemanticSearch>>>>);

impl SemanticSlot {
    /// An empty slot: the tool reports "semantic index not available".
    pub fn new() -> Self {
        Self::default()
    }
    /// A slot that already holds an index.
    pub fn with(index: Arc<dyn SemanticSearch>) -> Self {
        let slot = Self::new();
        slot.set(Some(index));
        slot
    }
    /// Plug in (or, with `None`, remove) the index.
    pub fn set(&self, index: Option<Arc<dyn SemanticSearch>>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = index;
    }
    pub fn get(&self) -> Option<Arc<dyn SemanticSearch>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
    pub fn is_available(&self) -> bool {
        self.get().is_some()
    }
}

pub const NOT_AVAILABLE: &str = "semantic index not available: search by meaning is not set up \
in this workspace yet. Use search_notes (keyword search) instead.";

pub struct SemanticSearchNotes {
    store: Store,
    slot: SemanticSlot,
    schema: Value,
}

impl SemanticSearchNotes {
    pub fn new(store: Store, slot: SemanticSlot) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in natural language."},
                "note_id": {"type": "string", "description": "Find notes similar to this note. Use instead of query."},
                "notebook_id": {"type": "string", "description": "Only notes in this notebook."},
                "tag_id": {"type": "string", "description": "Only notes with this tag."},
                "in_note_id": {"type": "string", "description": "Only passages of this note."},
                "relevance": {
                    "type": "string",
                    "enum": ["strict", "normal", "loose"],
                    "default": "normal"
                },
                "hybrid": {"type": "boolean", "description": "false = rank by meaning only, not exact keywords."}
            }
        });
        SemanticSearchNotes {
            store,
            slot,
            schema,
        }
    }
}

/// Check the arguments that need no store: exactly one of `query` / `note_id`, at most one
/// scope, the relevance and hybrid options.
fn parse(input: &Value) -> Result<SemanticQuery, ToolError> {
    let text = opt_nonblank(input, "query").map(|q| q.trim().to_string());
    let like = opt_nonblank(input, "note_id").map(|id| strip_link_prefix(id).to_string());
    let query = match (text, like) {
        (Some(_), Some(_)) => {
            return Err(ToolError::recoverable(
                "Pass either \"query\" or \"note_id\", not both",
            ));
        }
        (Some(q), None) => SemanticText::Text(q),
        (None, Some(id)) => SemanticText::LikeNote(id),
        (None, None) => {
            return Err(ToolError::recoverable(
                "Missing \"query\" parameter (or pass \"note_id\" to find similar notes)",
            ));
        }
    };
    let mut scopes: Vec<(&str, SemanticScope)> = Vec::new();
    if let Some(id) = opt_nonblank(input, "notebook_id") {
        scopes.push((
            "notebook_id",
            SemanticScope::Notebook(id.trim().to_string()),
        ));
    }
    if let Some(id) = opt_nonblank(input, "tag_id") {
        scopes.push(("tag_id", SemanticScope::Tag(id.trim().to_string())));
    }
    if let Some(id) = opt_nonblank(input, "in_note_id") {
        let id = strip_link_prefix(id).to_string();
        if query == SemanticText::LikeNote(id.clone()) {
            return Err(ToolError::recoverable(
                "\"note_id\" and \"in_note_id\" are the same note: pass a different \"in_note_id\" \
                 or leave it out",
            ));
        }
        scopes.push(("in_note_id", SemanticScope::Note(id)));
    }
    let scope = match scopes.len() {
        0 => SemanticScope::All,
        1 => scopes.remove(0).1,
        2 => {
            return Err(ToolError::recoverable(format!(
                "Pass either \"{}\" or \"{}\", not both",
                scopes[0].0, scopes[1].0
            )));
        }
        _ => {
            return Err(ToolError::recoverable(
                "Pass only one of \"notebook_id\", \"tag_id\" and \"in_note_id\"",
            ));
        }
    };
    let relevance = match input.get("relevance").and_then(Value::as_str) {
        Some("strict") => Relevance::Strict,
        Some("loose") => Relevance::Loose,
        _ => Relevance::Normal,
    };
    Ok(SemanticQuery {
        query,
        scope,
        relevance,
        hybrid: opt_bool(input, "hybrid"),
    })
}

/// What the model is told when the index has not caught up with the store.
fn incomplete_message(status: &SemanticStatus, found: usize) -> String {
    let progress = format!(
        "the semantic index is still being built ({}/{} notes indexed)",
        status.indexed_notes, status.total_notes
    );
    if found == 0 {
        format!(
            "No passages found yet: {progress}. Try again shortly, or use search_notes \
             (keyword search)."
        )
    } else {
        format!("Results may be incomplete: {progress}.")
    }
}

#[async_trait::async_trait]
impl Tool for SemanticSearchNotes {
    fn id(&self) -> &str {
        "semantic_search_notes"
    }
    fn description(&self) -> &str {
        "Search notes by meaning (e.g. \"the note about pet sitters for my dog\") or find notes \
         similar to note_id. Returns ranked text chunks with note_id and score; use read_note \
         for full context."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let query = parse(&input)?;
        let Some(index) = self.slot.get() else {
            return Err(ToolError::recoverable(NOT_AVAILABLE));
        };
        let store = self.store.clone();
        let check = query.clone();
        blocking(move || {
            if let SemanticText::LikeNote(id) = &check.query {
                live_note(&store, id)?;
            }
            match &check.scope {
                SemanticScope::All => {}
                SemanticScope::Notebook(id) => {
                    if store.notebook(id)?.is_none() {
                        return Err(ToolError::recoverable(format!("Notebook not found: {id}")));
                    }
                }
                SemanticScope::Tag(id) => {
                    if store.tag(id)?.is_none() {
                        return Err(ToolError::recoverable(format!("Tag not found: {id}")));
                    }
                }
                SemanticScope::Note(id) => {
                    live_note(&store, id)?;
                }
            }
            Ok(())
        })
        .await?;

        let source = match &query.query {
            SemanticText::LikeNote(id) => Some(id.clone()),
            SemanticText::Text(_) => None,
        };
        let hits = index.search(query).await?;
        let status = blocking(move || Ok(index.status())).await?;

        let store = self.store.clone();
        let results = blocking(move || {
            let mut out = Vec::with_capacity(hits.len());
            for h in hits {
                if source.as_deref() == Some(h.note_id.as_str()) {
                    continue;
                }
                let Some(note) = store.note(&h.note_id)?.filter(|n| !n.is_trashed()) else {
                    continue;
                };
                let score = (f64::from(h.score) * 1000.0).round() / 1000.0;
                out.push(json!({
                    "note_id": h.note_id,
                    "title": note.title,
                    "notebook_id": note.parent_id,
                    "chunk_index": h.chunk_index,
                    "chunk_text": h.chunk_text,
                    "score": score,
                }));
            }
            Ok(out)
        })
        .await?;
        let total = results.len();
        let mut out = json!({ "results": results, "total": total });
        if let Some(status) = status {
            if !status.complete {
                out["message"] = Value::String(incomplete_message(&status, total));
            }
            out["index"] = json!({
                "indexed_notes": status.indexed_notes,
                "total_notes": status.total_notes,
                "model": status.model,
                "complete": status.complete,
            });
        }
        Ok(ToolOutput::Json(out))
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => {
                let total = v.get("total").and_then(Value::as_u64).unwrap_or(0);
                let found = format!(
                    "Found {}",
                    plural(usize::try_from(total).unwrap_or(0), "passage", "passages")
                );
                match v.pointer("/index/complete").and_then(Value::as_bool) {
                    Some(false) => format!("{found} (index still being built)"),
                    _ => found,
                }
            }
            _ => match opt_nonblank(input, "query") {
                Some(q) => format!("Searching notes by meaning for \"{}\"", short(q)),
                None => match opt_nonblank(input, "note_id") {
                    Some(id) => format!("Finding notes similar to {}", short(id)),
                    None => "Searching notes by meaning".to_string(),
                },
            },
        }
    }
}
