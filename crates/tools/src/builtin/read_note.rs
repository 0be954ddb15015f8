//! `read_note`: one note with its notebook, tags and a page of its body.
//!
//! Paging unit: `offset`, `max_chars`, `body_length`, `body_returned_chars` and
//! `next_offset` count Unicode scalar values (Rust `char`s), never bytes, so a page never
//! splits a character. (Joplin counts UTF-16 units; for text without astral characters
//! such as emoji the two agree.)

use super::common::{blocking, live_note, opt_usize, required_str, strip_link_prefix};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::Store;

pub struct ReadNote {
    store: Store,
    schema: Value,
}

impl ReadNote {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The note id (32-character hex)."},
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "First character of the body to return, in characters (Unicode scalar values). Default 0."
                },
                "max_chars": {
                    "type": "integer",
                    "minimum": 0,
                    "description": "Most characters of the body to return; omit or 0 for the rest of the body."
                }
            },
            "required": ["id"]
        });
        ReadNote { store, schema }
    }
}

/// Byte index of the `n`th char of `s` (or `s.len()` when `n` is past the end).
fn byte_at_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// The page `[offset, offset+max_chars)` of `body` in chars (`max_chars` 0 = to the end).
/// Returns (page, total chars, page chars, end char index).
pub(crate) fn page(body: &str, offset: usize, max_chars: usize) -> (&str, usize, usize, usize) {
    let total = body.chars().count();
    let start = offset.min(total);
    let end = if max_chars > 0 {
        start.saturating_add(max_chars).min(total)
    } else {
        total
    };
    let from = byte_at_char(body, start);
    let to = from + byte_at_char(&body[from..], end - start);
    (&body[from..to], total, end - start, end)
}

#[async_trait::async_trait]
impl Tool for ReadNote {
    fn id(&self) -> &str {
        "read_note"
    }
    fn description(&self) -> &str {
        "Read a note by id: title, markdown body, notebook, tags and timestamps. For long notes, \
         page through the body with offset and max_chars (counted in characters)."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }

    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let id = strip_link_prefix(required_str(&input, "id")?).to_string();
        let offset = opt_usize(&input, "offset").unwrap_or(0);
        let max_chars = opt_usize(&input, "max_chars").unwrap_or(0);
        let store = self.store.clone();
        blocking(move || {
            let note = live_note(&store, &id)?;
            let notebook_title = store.notebook(&note.parent_id)?.map(|nb| nb.title);
            let tags: Vec<String> = store
                .note_tags(&note.id)?
                .into_iter()
                .map(|t| t.title)
                .collect();
            let (body, total, returned, end) = page(&note.body, offset, max_chars);
            let has_more = end < total;
            Ok(ToolOutput::Json(json!({
                "id": note.id,
                "title": note.title,
                "body": body,
                "body_length": total,
                "body_offset": offset.min(total),
                "body_returned_chars": returned,
                "has_more": has_more,
                "next_offset": if has_more { Some(end) } else { None },
                "notebook_id": note.parent_id,
                "notebook_title": notebook_title,
                "tags": tags,
                "is_todo": note.is_todo,
                "todo_completed": note.todo_completed > 0,
                "created_time": note.created_time,
                "updated_time": note.updated_time,
            })))
        })
        .await
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => format!(
                "Read note: {}",
                v.get("title").and_then(Value::as_str).unwrap_or("")
            ),
            _ => "Reading note".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::page;

    #[test]
    fn pages_count_chars_not_bytes() {
        let s = "héllo wörld ✓";
        assert_eq!(page(s, 0, 0), (s, 13, 13, 13));
        assert_eq!(page(s, 1, 4), ("éllo", 13, 4, 5));
        assert_eq!(page(s, 12, 5), ("✓", 13, 1, 13));
        assert_eq!(page(s, 40, 5), ("", 13, 0, 13));
        assert_eq!(page("", 0, 3), ("", 0, 0, 0));
        assert_eq!(page(s, 2, usize::MAX), ("llo wörld ✓", 13, 11, 13));
    }
}
