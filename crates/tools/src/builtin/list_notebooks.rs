//! `list_notebooks`: every notebook, flat, with parent ids and direct note counts.

use super::common::{blocking, plural};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct ListNotebooks {
    store: Store,
    schema: Value,
}

impl ListNotebooks {
    pub fn new(store: Store) -> Self {
        ListNotebooks {
            store,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ListNotebooks {
    fn id(&self) -> &str {
        "list_notebooks"
    }
    fn description(&self) -> &str {
        "List all notebooks (flat) with id, title, parent_id (null at the root; use it to rebuild \
         the tree) and note_count (notes directly inside)."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, _input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let store = self.store.clone();
        let notebooks = blocking(move || Ok(store.list_notebooks()?)).await?;
        let notebooks: Vec<Value> = notebooks
            .into_iter()
            .map(|nb| {
                json!({
                    "id": nb.id,
                    "title": nb.title,
                    "parent_id": nb.parent_id,
                    "note_count": nb.note_count,
                })
            })
            .collect();
        Ok(ToolOutput::Json(json!({ "notebooks": notebooks })))
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => {
                let n = v
                    .get("notebooks")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                format!("Listed {}", plural(n, "notebook", "notebooks"))
            }
            _ => "Listing notebooks".to_string(),
        }
    }
}
