//! `semantic_search_notes`: search by meaning over the semantic (embedding) index.
//!
//! The index is a later issue. This tool talks to it through the [`SemanticSearch`] trait,
//! held in a [`SemanticSlot`] that can be filled (or emptied) at any time — e.g. once the
//! index has been built in the background — without re-registering the tool:
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

use super::common::{blocking, plural, required_str, short};
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
}

/// One semantic query, already checked by the tool (non-blank query, scope exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemanticQuery {
    pub query: String,
    pub scope: SemanticScope,
    pub relevance: Relevance,
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

/// What the semantic index must provide. Return hits best first. Errors: `Recoverable` for
/// conditions the model should hear about (e.g. "the index is still being built"),
/// `Internal` for failures.
#[async_trait::async_trait]
pub trait SemanticSearch: Send + Sync {
    async fn search(&self, query: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError>;
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
                "notebook_id": {"type": "string", "description": "Only notes in this notebook."},
                "tag_id": {"type": "string", "description": "Only notes with this tag."},
                "relevance": {
                    "type": "string",
                    "enum": ["strict", "normal", "loose"],
                    "default": "normal"
                }
            },
            "required": ["query"]
        });
        SemanticSearchNotes {
            store,
            slot,
            schema,
        }
    }
}

#[async_trait::async_trait]
impl Tool for SemanticSearchNotes {
    fn id(&self) -> &str {
        "semantic_search_notes"
    }
    fn description(&self) -> &str {
        "Search notes by meaning (e.g. \"the note about pet sitters for my dog\"). Returns ranked \
         text chunks with note_id and score; use read_note for full context."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let query = required_str(&input, "query")?.trim().to_string();
        let notebook_id = super::common::opt_nonblank(&input, "notebook_id").map(str::to_string);
        let tag_id = super::common::opt_nonblank(&input, "tag_id").map(str::to_string);
        let scope = match (notebook_id, tag_id) {
            (Some(_), Some(_)) => {
                return Err(ToolError::recoverable(
                    "Pass either \"notebook_id\" or \"tag_id\", not both",
                ));
            }
            (Some(n), None) => SemanticScope::Notebook(n),
            (None, Some(t)) => SemanticScope::Tag(t),
            (None, None) => SemanticScope::All,
        };
        let relevance = match input.get("relevance").and_then(Value::as_str) {
            Some("strict") => Relevance::Strict,
            Some("loose") => Relevance::Loose,
            _ => Relevance::Normal,
        };
        let Some(index) = self.slot.get() else {
            return Err(ToolError::recoverable(NOT_AVAILABLE));
        };
        let store = self.store.clone();
        let scope_check = scope.clone();
        blocking(move || {
            match &scope_check {
                SemanticScope::Notebook(id) if store.notebook(id)?.is_none() => {
                    return Err(ToolError::recoverable(format!("Notebook not found: {id}")));
                }
                SemanticScope::Tag(id) if store.tag(id)?.is_none() => {
                    return Err(ToolError::recoverable(format!("Tag not found: {id}")));
                }
                _ => {}
            }
            Ok(())
        })
        .await?;

        let hits = index
            .search(SemanticQuery {
                query,
                scope,
                relevance,
            })
            .await?;

        let store = self.store.clone();
        let results = blocking(move || {
            let mut out = Vec::with_capacity(hits.len());
            for h in hits {
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
        Ok(ToolOutput::Json(
            json!({ "results": results, "total": total }),
        ))
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => {
                let total = v.get("total").and_then(Value::as_u64).unwrap_or(0);
                format!(
                    "Found {}",
                    plural(usize::try_from(total).unwrap_or(0), "passage", "passages")
                )
            }
            _ => {
                let q = input.get("query").and_then(Value::as_str).unwrap_or("");
                format!("Searching notes by meaning for \"{}\"", short(q))
            }
        }
    }
}
