//! The built-in workspace tools, one file each, in the registry's fixed order.
//!
//! ```
//! # #![allow(clippy::unwrap_used)]
//! use sidenote_tools::builtin::{SemanticSlot, register_builtin_with};
//! use sidenote_tools::{Registry, ToolCtx};
//! # let dir = tempfile::tempdir().unwrap();
//! let store = sidenote_store::Store::open(dir.path()).unwrap();
//! let registry = Registry::new();
//! // `register_builtin(&registry, store)` is the same with an empty slot
//! let slot = SemanticSlot::new();
//! register_builtin_with(&registry, store, slot.clone()).unwrap();
//! assert_eq!(registry.list().len(), 11);
//! // a later issue plugs the semantic index in at any time:
//! // slot.set(Some(Arc::new(my_index)));
//! assert!(!slot.is_available());
//! ```

pub mod bench_fixture;
mod common;
pub mod create_note;
pub mod create_notebook;
pub mod delete_note;
pub mod list_notebooks;
pub mod list_tags;
pub mod manage_tags;
pub mod read_image;
pub mod read_note;
pub mod search_notes;
pub mod semantic_search_notes;
pub mod update_note;

pub use semantic_search_notes::{
    Relevance, SemanticHit, SemanticQuery, SemanticScope, SemanticSearch, SemanticSlot,
    SemanticStatus, SemanticText,
};

use crate::{Registry, Tool, ToolError, ToolSource};
use sidenote_store::Store;
use std::sync::Arc;

/// The ids of the built-in tools, in registry order.
pub const BUILTIN_IDS: [&str; 11] = [
    "search_notes",
    "semantic_search_notes",
    "read_note",
    "list_notebooks",
    "list_tags",
    "create_note",
    "update_note",
    "delete_note",
    "manage_tags",
    "create_notebook",
    "read_image",
];

/// Every built-in tool, in order (not yet registered).
pub fn builtin_tools(store: Store, semantic: SemanticSlot) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(search_notes::SearchNotes::new(store.clone())),
        Arc::new(semantic_search_notes::SemanticSearchNotes::new(
            store.clone(),
            semantic,
        )),
        Arc::new(read_note::ReadNote::new(store.clone())),
        Arc::new(list_notebooks::ListNotebooks::new(store.clone())),
        Arc::new(list_tags::ListTags::new(store.clone())),
        Arc::new(create_note::CreateNote::new(store.clone())),
        Arc::new(update_note::UpdateNote::new(store.clone())),
        Arc::new(delete_note::DeleteNote::new(store.clone())),
        Arc::new(manage_tags::ManageTags::new(store.clone())),
        Arc::new(create_notebook::CreateNotebook::new(store.clone())),
        Arc::new(read_image::ReadImage::new(store)),
    ]
}

/// Register every built-in tool, in order: search_notes, semantic_search_notes, read_note,
/// list_notebooks, list_tags, create_note, update_note, delete_note, manage_tags,
/// create_notebook, read_image. `semantic_search_notes` answers "semantic index not
/// available" (use [`register_builtin_with`] to plug an index in).
pub fn register_builtin(registry: &Registry, store: Store) -> Result<(), ToolError> {
    register_builtin_with(registry, store, SemanticSlot::new())
}

/// [`register_builtin`] with a semantic-index slot the caller can fill at any time.
pub fn register_builtin_with(
    registry: &Registry,
    store: Store,
    semantic: SemanticSlot,
) -> Result<(), ToolError> {
    for tool in builtin_tools(store, semantic) {
        registry.add(tool, ToolSource::Builtin)?;
    }
    Ok(())
}
