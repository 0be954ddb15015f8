//! `create_note`: a new note (or to-do) in a notebook, or in the default notebook.

use super::common::{blocking, opt_bool, opt_nonblank, opt_str, short};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::{NewNote, Store};

pub struct CreateNote {
    store: Store,
    schema: Value,
}

impl CreateNote {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "body": {"type": "string", "description": "Markdown body. Default empty."},
                "notebook_id": {"type": "string", "description": "Notebook id (see list_notebooks). Default: the default notebook."},
                "is_todo": {"type": "boolean", "description": "Create a to-do instead of a plain note."}
            },
            "required": ["title"]
        });
        CreateNote { store, schema }
    }
}

#[async_trait::async_trait]
impl Tool for CreateNote {
    fn id(&self) -> &str {
        "create_note"
    }
    fn description(&self) -> &str {
        "Create a note and return its id. Without notebook_id it goes to the default notebook."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Write
    }

    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let title = opt_nonblank(&input, "title")
            .ok_or_else(|| ToolError::recoverable("Missing or invalid \"title\" parameter"))?
            .trim()
            .to_string();
        let new = NewNote {
            parent_id: opt_nonblank(&input, "notebook_id").map(|s| s.trim().to_string()),
            title,
            body: opt_str(&input, "body").unwrap_or("").to_string(),
            is_todo: opt_bool(&input, "is_todo").unwrap_or(false),
            ..NewNote::default()
        };
        let store = self.store.clone();
        let actor = ctx.actor.clone();
        let note = blocking(move || Ok(store.create_note(&actor, new)?)).await?;
        Ok(ToolOutput::Json(json!({
            "id": note.id,
            "title": note.title,
            "notebook_id": note.parent_id,
        })))
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => format!(
                "Created note: {}",
                v.get("title").and_then(Value::as_str).unwrap_or("")
            ),
            _ => format!(
                "Creating note: {}",
                short(input.get("title").and_then(Value::as_str).unwrap_or(""))
            ),
        }
    }
}
