//! The built-in workspace tools, one file each, in the registry's fixed order.

use crate::{Registry, ToolError};
use sidenote_store::Store;

/// Register every built-in tool, in order: search_notes, semantic_search_notes, read_note,
/// list_notebooks, list_tags, create_note, update_note, delete_note, manage_tags,
/// create_notebook, read_image.
pub fn register_builtin(registry: &Registry, store: Store) -> Result<(), ToolError> {
    let _ = (registry, store);
    Err(ToolError::internal("built-in tools are not implemented yet"))
}
