//! `search_notes`: keyword search with the Joplin query grammar.

use super::common::{blocking, plural, required_str, short};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 100;

pub struct SearchNotes {
    store: Store,
    schema: Value,
}

impl SearchNotes {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "Keywords and filters (see the tool description)."
                },
                "limit": {
                    "type": "integer",
                    "description": "Maximum number of results.",
                    "minimum": 1,
                    "maximum": MAX_LIMIT,
                    "default": DEFAULT_LIMIT
                }
            },
            "required": ["query"]
        });
        SearchNotes { store, schema }
    }
}

const DESCRIPTION: &str = "Keyword search over notes. Returns ranked matches (id, title, \
notebook_id, updated_time) with a snippet that often answers without read_note. Words are ANDed; \
-word excludes; \"quoted phrase\"; word*. Filters: notebook:\"Name\" tag:Name title:x body:x \
any:1 type:note|todo iscompleted:0|1 created:|updated:|due:YYYYMMDD or day-7/week-1/month-1 \
sourceurl:URL resource:image/png. Example: tag:idea -tag:archived";

#[async_trait::async_trait]
impl Tool for SearchNotes {
    fn id(&self) -> &str {
        "search_notes"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let query = required_str(&input, "query")?.to_string();
        let limit = input
            .get("limit")
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(MAX_LIMIT))
            .unwrap_or(DEFAULT_LIMIT)
            .clamp(1, MAX_LIMIT);
        let store = self.store.clone();
        let found = blocking(move || Ok(store.search(&query, limit)?)).await?;
        let results: Vec<Value> = found
            .results
            .into_iter()
            .map(|h| {
                json!({
                    "id": h.id,
                    "title": h.title,
                    "notebook_id": h.notebook_id,
                    "updated_time": h.updated_time,
                    "snippet": h.snippet,
                })
            })
            .collect();
        Ok(ToolOutput::Json(
            json!({ "results": results, "total": found.total }),
        ))
    }

    fn activity(&self, input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => {
                let total = v.get("total").and_then(Value::as_u64).unwrap_or(0);
                format!(
                    "Found {}",
                    plural(usize::try_from(total).unwrap_or(0), "note", "notes")
                )
            }
            _ => {
                let q = input.get("query").and_then(Value::as_str).unwrap_or("");
                format!("Searching notes for \"{}\"", short(q))
            }
        }
    }
}
