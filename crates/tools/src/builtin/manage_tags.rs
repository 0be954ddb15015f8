//! `manage_tags`: add and remove tags (by title) on a note.
//!
//! All arguments are checked before the first change, so a bad call changes nothing. The
//! store has no multi-tag transaction yet, so each link is its own journal row (requested
//! in `.tmp/requests-for-store.md`).

use super::common::{blocking, live_note, required_str, strip_link_prefix};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct ManageTags {
    store: Store,
    schema: Value,
}

impl ManageTags {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "note_id": {"type": "string"},
                "add": {"type": "array", "items": {"type": "string"}, "description": "Tag titles to add; created if missing."},
                "remove": {"type": "array", "items": {"type": "string"}, "description": "Tag titles to remove; ignored if not on the note."}
            },
            "required": ["note_id"]
        });
        ManageTags { store, schema }
    }
}

/// Trimmed, non-empty titles without case-insensitive duplicates, in input order.
fn titles(input: &Value, key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in input
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let t = t.trim();
        if !t.is_empty() && !out.iter().any(|o| o.to_lowercase() == t.to_lowercase()) {
            out.push(t.to_string());
        }
    }
    out
}

fn joined(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[async_trait::async_trait]
impl Tool for ManageTags {
    fn id(&self) -> &str {
        "manage_tags"
    }
    fn description(&self) -> &str {
        "Add or remove tags on a note, by tag title. Unknown tags in add are created."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Write
    }

    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let note_id = strip_link_prefix(required_str(&input, "note_id")?).to_string();
        let add = titles(&input, "add");
        let remove = titles(&input, "remove");
        if add.is_empty() && remove.is_empty() {
            return Err(ToolError::recoverable(
                "Pass at least one of \"add\" or \"remove\"",
            ));
        }
        if let Some(both) = add
            .iter()
            .find(|a| remove.iter().any(|r| r.to_lowercase() == a.to_lowercase()))
        {
            return Err(ToolError::recoverable(format!(
                "Tag \"{both}\" is in both \"add\" and \"remove\"; pass it in only one"
            )));
        }
        let store = self.store.clone();
        let actor = ctx.actor.clone();
        blocking(move || {
            live_note(&store, &note_id)?;
            let before: Vec<String> = store
                .note_tags(&note_id)?
                .into_iter()
                .map(|t| t.title.to_lowercase())
                .collect();
            let add_refs: Vec<&str> = add.iter().map(String::as_str).collect();
            let remove_refs: Vec<&str> = remove.iter().map(String::as_str).collect();
            // One transaction: either every change lands or none does.
            let (added, removed) = store.change_tags(&actor, &note_id, &add_refs, &remove_refs)?;
            let added: Vec<String> = added.into_iter().map(|t| t.title).collect();
            // Report only the tags the note really had.
            let removed: Vec<String> = removed
                .into_iter()
                .filter(|t| before.contains(&t.title.to_lowercase()))
                .map(|t| t.title)
                .collect();
            let tags: Vec<String> = store
                .note_tags(&note_id)?
                .into_iter()
                .map(|t| t.title)
                .collect();
            Ok(ToolOutput::Json(json!({
                "note_id": note_id,
                "added": added,
                "removed": removed,
                "tags": tags,
            })))
        })
        .await
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        let Some(ToolOutput::Json(v)) = output else {
            return "Changing tags".to_string();
        };
        let mut parts = Vec::new();
        for (key, one, many) in [
            ("added", "Added tag", "Added tags"),
            ("removed", "Removed tag", "Removed tags"),
        ] {
            let t = joined(v, key);
            match t.len() {
                0 => {}
                1 => parts.push(format!("{one}: {}", t[0])),
                _ => parts.push(format!("{many}: {}", t.join(", "))),
            }
        }
        if parts.is_empty() {
            "Tags unchanged".to_string()
        } else {
            parts.join("; ")
        }
    }
}
