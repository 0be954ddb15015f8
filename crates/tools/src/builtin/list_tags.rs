//! `list_tags`: the tags attached to at least one (non-trashed) note.

use super::common::{blocking, plural};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct ListTags {
    store: Store,
    schema: Value,
}

impl ListTags {
    pub fn new(store: Store) -> Self {
        ListTags {
            store,
            schema: json!({"type": "object", "properties": {}}),
        }
    }
}

#[async_trait::async_trait]
impl Tool for ListTags {
    fn id(&self) -> &str {
        "list_tags"
    }
    fn description(&self) -> &str {
        "List the tags that are on at least one note, with their ids and titles."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, _input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let store = self.store.clone();
        let tags = blocking(move || Ok(store.list_tags(true)?)).await?;
        let tags: Vec<Value> = tags
            .into_iter()
            .map(|t| json!({"id": t.id, "title": t.title}))
            .collect();
        Ok(ToolOutput::Json(json!({ "tags": tags })))
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => {
                let n = v.get("tags").and_then(Value::as_array).map_or(0, Vec::len);
                format!("Listed {}", plural(n, "tag", "tags"))
            }
            _ => "Listing tags".to_string(),
        }
    }
}
