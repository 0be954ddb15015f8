//! `delete_note`: move a note to the trash (never a permanent delete).

use super::common::{blocking, live_note, required_str, strip_link_prefix};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct DeleteNote {
    store: Store,
    schema: Value,
}

impl DeleteNote {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The note id."}
            },
            "required": ["id"]
        });
        DeleteNote { store, schema }
    }
}

#[async_trait::async_trait]
impl Tool for DeleteNote {
    fn id(&self) -> &str {
        "delete_note"
    }
    fn description(&self) -> &str {
        "Move a note to the trash. It is not permanently removed; the user can restore it."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Write
    }

    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let id = strip_link_prefix(required_str(&input, "id")?).to_string();
        let store = self.store.clone();
        let actor = ctx.actor.clone();
        blocking(move || {
            // a note already in the trash is "not found", like a missing one
            live_note(&store, &id)?;
            let note = store.trash_note(&actor, &id)?;
            Ok(ToolOutput::Json(json!({
                "id": note.id,
                "title": note.title,
                "trashed": true,
            })))
        })
        .await
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => format!(
                "Moved note to trash: {}",
                v.get("title").and_then(Value::as_str).unwrap_or("")
            ),
            _ => "Moving note to trash".to_string(),
        }
    }
}
