//! `create_notebook`: a new notebook, at the root or under an existing one.

use super::common::{blocking, opt_nonblank, required_str, short};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct CreateNotebook {
    store: Store,
    schema: Value,
}

impl CreateNotebook {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "parent_id": {"type": "string", "description": "Parent notebook id; omit for a top-level notebook."}
            },
            "required": ["title"]
        });
        CreateNotebook { store, schema }
    }
}

#[async_trait::async_trait]
impl Tool for CreateNotebook {
    fn id(&self) -> &str {
        "create_notebook"
    }
    fn description(&self) -> &str {
        "Create a notebook. Pass parent_id to nest it under an existing notebook."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Write
    }

    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let title = required_str(&input, "title")?.trim().to_string();
        let parent = opt_nonblank(&input, "parent_id").map(|s| s.trim().to_string());
        let store = self.store.clone();
        let actor = ctx.actor.clone();
        blocking(move || {
            if let Some(p) = &parent
                && store.notebook(p)?.is_none()
            {
                return Err(ToolError::recoverable(format!(
                    "Parent notebook not found: {p}"
                )));
            }
            let nb = store.create_notebook(&actor, &title, parent.as_deref())?;
            Ok(ToolOutput::Json(json!({
                "id": nb.id,
                "title": nb.title,
                "parent_id": nb.parent_id,
            })))
        })
        .await
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => format!(
                "Created notebook: {}",
                v.get("title").and_then(Value::as_str).unwrap_or("")
            ),
            _ => format!(
                "Creating notebook: {}",
                short(input.get("title").and_then(Value::as_str).unwrap_or(""))
            ),
        }
    }
}
