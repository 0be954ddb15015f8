//! `update_note`: change a note's title, body (whole or by partial edits), notebook or
//! to-do state in ONE store write (one journal row; all or nothing).
//!
//! Body edits apply in this order to the current body: `prepend`, `append` (no separator
//! added), then `replace_text` (its `find` must match exactly once, counting overlapping
//! matches). `body` replaces the whole body and cannot be combined with the partial edits.

use super::common::strip_link_prefix;
use super::common::{blocking, live_note, opt_bool, opt_nonblank, opt_str, required_str};
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde_json::{Value, json};
use sidenote_store::{NotePatch, Store, StoreError, now_ms};

/// How often the read-modify-write is retried when another writer changed the note in between.
const ATTEMPTS: usize = 3;

pub struct UpdateNote {
    store: Store,
    schema: Value,
}

impl UpdateNote {
    pub fn new(store: Store) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "The note id."},
                "title": {"type": "string"},
                "body": {"type": "string", "description": "New full body (full rewrites only)."},
                "append": {"type": "string", "description": "Text added at the end of the body (include any newline)."},
                "prepend": {"type": "string", "description": "Text added at the start of the body."},
                "replace_text": {
                    "type": "object",
                    "description": "Replace the one exact occurrence of find with replace.",
                    "properties": {
                        "find": {"type": "string"},
                        "replace": {"type": "string"}
                    },
                    "required": ["find", "replace"]
                },
                "notebook_id": {"type": "string", "description": "Move the note to this notebook."},
                "todo_completed": {"type": "boolean", "description": "Mark a to-do done or not done."}
            },
            "required": ["id"]
        });
        UpdateNote { store, schema }
    }
}

/// What the caller asked to change, checked before the note is read.
struct Edit {
    title: Option<String>,
    body: Option<String>,
    prepend: Option<String>,
    append: Option<String>,
    replace: Option<(String, String)>,
    notebook_id: Option<String>,
    todo_completed: Option<bool>,
}

impl Edit {
    fn parse(input: &Value) -> Result<Edit, ToolError> {
        let nonempty = |k: &str| {
            opt_str(input, k)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let replace = match input.get("replace_text").filter(|v| !v.is_null()) {
            None => None,
            Some(rt) => {
                let find = rt.get("find").and_then(Value::as_str).unwrap_or("");
                if find.is_empty() {
                    return Err(ToolError::recoverable(
                        "\"replace_text.find\" must not be empty",
                    ));
                }
                let replace = rt.get("replace").and_then(Value::as_str).unwrap_or("");
                Some((find.to_string(), replace.to_string()))
            }
        };
        let edit = Edit {
            title: opt_str(input, "title").map(|s| s.trim().to_string()),
            body: opt_str(input, "body").map(str::to_string),
            prepend: nonempty("prepend"),
            append: nonempty("append"),
            replace,
            notebook_id: opt_nonblank(input, "notebook_id").map(|s| s.trim().to_string()),
            todo_completed: opt_bool(input, "todo_completed"),
        };
        let partial = edit.prepend.is_some() || edit.append.is_some() || edit.replace.is_some();
        if edit.body.is_some() && partial {
            return Err(ToolError::recoverable(
                "Pass either \"body\" (a full rewrite) or the partial edits \"append\", \"prepend\" \
                 and \"replace_text\", not both",
            ));
        }
        if edit.title.is_none()
            && edit.body.is_none()
            && !partial
            && edit.notebook_id.is_none()
            && edit.todo_completed.is_none()
        {
            return Err(ToolError::recoverable(
                "Nothing to update: pass at least one of \"title\", \"body\", \"append\", \
                 \"prepend\", \"replace_text\", \"notebook_id\" or \"todo_completed\"",
            ));
        }
        Ok(edit)
    }

    /// The new body, or `None` when the body is not touched.
    fn new_body(&self, current: &str) -> Result<Option<String>, ToolError> {
        if let Some(b) = &self.body {
            return Ok(Some(b.clone()));
        }
        if self.prepend.is_none() && self.append.is_none() && self.replace.is_none() {
            return Ok(None);
        }
        let mut body = current.to_string();
        if let Some(p) = &self.prepend {
            body.insert_str(0, p);
        }
        if let Some(a) = &self.append {
            body.push_str(a);
        }
        if let Some((find, replace)) = &self.replace {
            let (count, first) = occurrences(&body, find);
            match (count, first) {
                (1, Some(at)) => body.replace_range(at..at + find.len(), replace),
                (0, _) => {
                    return Err(ToolError::recoverable(
                        "replace_text: \"find\" string not found in body. Read the note and copy \
                         the exact text to replace (it is case- and whitespace-sensitive).",
                    ));
                }
                (n, _) => {
                    return Err(ToolError::recoverable(format!(
                        "replace_text: \"find\" string appears {n} times in body; include more \
                         surrounding text so it matches exactly once."
                    )));
                }
            }
        }
        Ok(Some(body))
    }
}

/// Number of (possibly overlapping) occurrences of `needle` in `hay`, and the first one's
/// byte index.
fn occurrences(hay: &str, needle: &str) -> (usize, Option<usize>) {
    let mut count = 0;
    let mut first = None;
    let mut from = 0;
    while let Some(i) = hay.get(from..).and_then(|h| h.find(needle)) {
        let at = from + i;
        first.get_or_insert(at);
        count += 1;
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
    }
    (count, first)
}

#[async_trait::async_trait]
impl Tool for UpdateNote {
    fn id(&self) -> &str {
        "update_note"
    }
    fn description(&self) -> &str {
        "Update a note; only the fields you pass change. For body edits prefer append, prepend or \
         replace_text (find must match exactly once); pass body only for a full rewrite."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Write
    }

    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        let id = strip_link_prefix(required_str(&input, "id")?).to_string();
        let edit = Edit::parse(&input)?;
        let store = self.store.clone();
        let actor = ctx.actor.clone();
        blocking(move || {
            let mut last = None;
            for _ in 0..ATTEMPTS {
                let note = live_note(&store, &id)?;
                if let Some(nb) = &edit.notebook_id
                    && store.notebook(nb)?.is_none()
                {
                    return Err(ToolError::recoverable(format!("Notebook not found: {nb}")));
                }
                let patch = NotePatch {
                    title: edit.title.clone(),
                    body: edit.new_body(&note.body)?,
                    parent_id: edit.notebook_id.clone(),
                    todo_completed: edit
                        .todo_completed
                        .map(|done| if done { now_ms() } else { 0 }),
                    if_updated_time: Some(note.updated_time),
                    ..NotePatch::default()
                };
                match store.update_note(&actor, &id, patch) {
                    Ok(after) => {
                        return Ok(ToolOutput::Json(json!({
                            "id": after.id,
                            "title": after.title,
                            "updated_time": after.updated_time,
                        })));
                    }
                    // changed by someone else since we read it: recompute from the new state
                    Err(e @ StoreError::Conflict { .. }) => last = Some(e),
                    Err(e) => return Err(e.into()),
                }
            }
            Err(last.map_or_else(
                || ToolError::internal("update_note made no attempt"),
                ToolError::from,
            ))
        })
        .await
    }

    fn activity(&self, _input: &Value, output: Option<&ToolOutput>) -> String {
        match output {
            Some(ToolOutput::Json(v)) => format!(
                "Updated note: {}",
                v.get("title").and_then(Value::as_str).unwrap_or("")
            ),
            _ => "Updating note".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::occurrences;

    #[test]
    fn counts_overlapping_matches() {
        assert_eq!(occurrences("aaa", "aa"), (2, Some(0)));
        assert_eq!(occurrences("xéyéz", "é"), (2, Some(1)));
        assert_eq!(occurrences("abc", "d"), (0, None));
        assert_eq!(occurrences("ab✓cd", "cd"), (1, Some(5)));
    }
}
