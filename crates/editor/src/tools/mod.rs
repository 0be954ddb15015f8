//! The six session tools (Tier 1 of the seed): in-process, with direct access to the
//! [`EditorSession`]. They are not in the workspace-tool registry and not exposed over MCP.
//!
//! Availability (the seed's table), see [`available_tools`]:
//!
//! | state | tools |
//! |---|---|
//! | selection present | `edit_selection` only |
//! | note focused, no selection | `rewrite_paragraph`, `insert_before_anchor`, `insert_after_anchor`, `append_to_note` (+ `replace_structured_block` when a `mermaid`/`jsoncanvas`/`abc`/`fountain` fenced block exists) |
//!
//! [`dispatch`] is the gate the agent uses: it rejects a tool that is not available in the
//! session's current state, validates the arguments against the tool's JSON schema, then runs
//! it. Every failure is a [`SessionToolError`] whose text tells the model what to do next.

mod append_to_note;
mod edit_selection;
mod insert_after_anchor;
mod insert_before_anchor;
mod replace_structured_block;
mod rewrite_paragraph;

pub use append_to_note::AppendToNote;
pub use edit_selection::EditSelection;
pub use insert_after_anchor::InsertAfterAnchor;
pub use insert_before_anchor::InsertBeforeAnchor;
pub use replace_structured_block::ReplaceStructuredBlock;
pub use rewrite_paragraph::RewriteParagraph;

use crate::engine::anchor::{AnchorHit, find_anchor};
use crate::engine::blocks::is_structured;
use crate::engine::fence::scan_fences;
use crate::proposal::EditProposal;
use crate::session::EditorSession;
use serde_json::Value;
use std::sync::OnceLock;

/// What a successful session-tool call returns.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionToolOutput {
    /// The short confirmation for the model, e.g. `proposed #2: +12 words after 'Gear'`.
    pub message: String,
    /// The proposal that was queued (for the panel / CLI).
    pub proposal: EditProposal,
}

/// A session-tool failure. All but `Internal` are recoverable: send the text to the model as the
/// tool result (an error result) and let it try again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionToolError {
    /// Arguments failed the tool's JSON schema (the text names the field and the rule).
    #[error("Invalid arguments: {0}. Fix the arguments and call the tool again.")]
    InvalidArguments(String),
    /// The tool is not offered in the session's current state.
    #[error("{0}")]
    NotAvailable(String),
    /// The anchor is empty or only whitespace.
    #[error(
        "the anchor is empty: copy a short passage of visible text (a few words) verbatim from the note as the anchor"
    )]
    EmptyAnchor,
    /// The anchor does not occur in the note.
    #[error(
        "anchor not found in the note: quote a shorter passage copied verbatim from the note (exact spelling, case and punctuation)"
    )]
    AnchorNotFound,
    /// No fenced block with that tag.
    #[error("{0}")]
    BlockNotFound(String),
    /// The new block content would close the fence early.
    #[error(
        "the text contains the line `{0}`, which would end the block early: send only the block's inner content, without fence lines"
    )]
    BadBlockContent(String),
    /// The edit would replace more than half of a long note.
    #[error(
        "refused: this would replace {replaced} of the note's {total} characters (more than half). Rewrite one paragraph at a time: use an anchor from a single paragraph"
    )]
    TooDestructive {
        /// Chars the edit would replace.
        replaced: usize,
        /// Chars in the note.
        total: usize,
    },
    /// The edit would leave the note unchanged.
    #[error("no change: the note already reads exactly like that at this place")]
    NoChange,
    /// A bug (e.g. a tool's schema does not compile). Not the model's fault.
    #[error("internal error in session tool: {0}")]
    Internal(String),
}

impl SessionToolError {
    /// Whether the model can recover (everything but `Internal`).
    pub fn is_recoverable(&self) -> bool {
        !matches!(self, SessionToolError::Internal(_))
    }
}

/// A session tool. The agent lists and dispatches them without knowing each one.
pub trait SessionTool: Send + Sync {
    /// The tool name the model calls.
    fn id(&self) -> &'static str;
    /// A compact description for the model.
    fn description(&self) -> &'static str;
    /// JSON Schema of the arguments object.
    fn input_schema(&self) -> Value;
    /// Validates `args` against the schema, then proposes the edit.
    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError>;
}

static EDIT_SELECTION: EditSelection = EditSelection;
static REWRITE_PARAGRAPH: RewriteParagraph = RewriteParagraph;
static INSERT_BEFORE_ANCHOR: InsertBeforeAnchor = InsertBeforeAnchor;
static INSERT_AFTER_ANCHOR: InsertAfterAnchor = InsertAfterAnchor;
static APPEND_TO_NOTE: AppendToNote = AppendToNote;
static REPLACE_STRUCTURED_BLOCK: ReplaceStructuredBlock = ReplaceStructuredBlock;

/// All six tools, in the seed's order.
pub fn all_tools() -> [&'static dyn SessionTool; 6] {
    [
        &EDIT_SELECTION,
        &REWRITE_PARAGRAPH,
        &INSERT_BEFORE_ANCHOR,
        &INSERT_AFTER_ANCHOR,
        &APPEND_TO_NOTE,
        &REPLACE_STRUCTURED_BLOCK,
    ]
}

/// A tool by id (whether or not it is available right now).
pub fn find_tool(id: &str) -> Option<&'static dyn SessionTool> {
    all_tools().into_iter().find(|t| t.id() == id)
}

/// Whether `text` holds a fenced block `replace_structured_block` can edit.
pub fn has_structured_block(text: &str) -> bool {
    scan_fences(text).iter().any(is_structured)
}

/// The seed's availability table as a pure function of the note's state: with a selection only
/// `edit_selection`; otherwise the anchor and append tools, plus `replace_structured_block` when
/// `body` holds a supported fenced block.
pub fn available_tools_for(body: &str, has_selection: bool) -> Vec<&'static dyn SessionTool> {
    tools_when(has_selection, || has_structured_block(body))
}

/// The tools available in the session's current state (judged on the working copy, so a block
/// proposed earlier in the turn counts).
pub fn available_tools(session: &EditorSession) -> Vec<&'static dyn SessionTool> {
    tools_when(session.selection().is_some(), || {
        session.working_doc().fences().iter().any(is_structured)
    })
}

/// The availability table itself; `has_block` is only asked when there is no selection.
fn tools_when(
    has_selection: bool,
    has_block: impl FnOnce() -> bool,
) -> Vec<&'static dyn SessionTool> {
    if has_selection {
        return vec![&EDIT_SELECTION];
    }
    let mut v: Vec<&'static dyn SessionTool> = vec![
        &REWRITE_PARAGRAPH,
        &INSERT_BEFORE_ANCHOR,
        &INSERT_AFTER_ANCHOR,
        &APPEND_TO_NOTE,
    ];
    if has_block() {
        v.push(&REPLACE_STRUCTURED_BLOCK);
    }
    v
}

/// The dispatcher gate: rejects a tool absent from [`available_tools`], then calls it (which
/// validates the arguments first).
pub fn dispatch(
    session: &mut EditorSession,
    id: &str,
    args: &Value,
) -> Result<SessionToolOutput, SessionToolError> {
    let available = available_tools(session);
    match available.iter().find(|t| t.id() == id) {
        Some(tool) => tool.call(session, args),
        None => {
            let names: Vec<&str> = available.iter().map(|t| t.id()).collect();
            let why = if find_tool(id).is_none() {
                format!("unknown session tool `{id}`")
            } else if session.selection().is_some() {
                format!(
                    "`{id}` is not available: the user selected text, so only edit_selection may change the note"
                )
            } else {
                format!("`{id}` is not available for this note")
            };
            Err(SessionToolError::NotAvailable(format!(
                "{why}. Available tools: {}",
                names.join(", ")
            )))
        }
    }
}

// ----- shared helpers for the tool files -----

/// Validates `args` against a tool's schema with a compiled validator cached in `cell`.
pub(crate) fn validate(
    cell: &'static OnceLock<Result<jsonschema::Validator, String>>,
    schema: impl FnOnce() -> Value,
    args: &Value,
) -> Result<(), SessionToolError> {
    let validator = cell
        .get_or_init(|| jsonschema::validator_for(&schema()).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| SessionToolError::Internal(format!("schema does not compile: {e}")))?;
    // same shape as the workspace registry's errors: the field (dotted path, or `arguments`
    // for the top level), then the rule that failed
    let problems: Vec<String> = validator
        .iter_errors(args)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            let field = if path.is_empty() {
                "arguments".to_owned()
            } else {
                format!("'{}'", path.trim_start_matches('/').replace('/', "."))
            };
            format!("{field}: {e}")
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SessionToolError::InvalidArguments(problems.join("; ")))
    }
}

/// A string argument (present after validation).
pub(crate) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, SessionToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| SessionToolError::InvalidArguments(format!("`{name}` must be a string")))
}

/// Anchored tools edit the whole note, so they refuse while a selection exists.
pub(crate) fn require_no_selection(
    session: &EditorSession,
    id: &str,
) -> Result<(), SessionToolError> {
    if session.selection().is_some() {
        return Err(SessionToolError::NotAvailable(format!(
            "`{id}` is not available: the user selected text, so only edit_selection may change the note"
        )));
    }
    Ok(())
}

/// Finds an anchor in the working copy, nearest the cursor.
pub(crate) fn locate(session: &EditorSession, anchor: &str) -> Result<AnchorHit, SessionToolError> {
    if anchor.trim().is_empty() {
        return Err(SessionToolError::EmptyAnchor);
    }
    find_anchor(session.working_doc(), anchor, session.working_cursor())
        .ok_or(SessionToolError::AnchorNotFound)
}

/// `'anchor'` shortened for a confirmation message.
pub(crate) fn quote(s: &str) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 40 {
        let head: String = one_line.chars().take(37).collect();
        format!("'{head}…'")
    } else {
        format!("'{one_line}'")
    }
}

/// ` (occurrence 2 of 3, nearest the cursor)` when an anchor matched more than once.
pub(crate) fn occurrence_note(hit: &AnchorHit) -> String {
    if hit.matched.total > 1 {
        format!(
            " (occurrence {} of {}, nearest the cursor)",
            hit.matched.occurrence + 1,
            hit.matched.total
        )
    } else {
        String::new()
    }
}

/// `+N words` / `-N words` with the right plural.
pub(crate) fn words(sign: char, n: usize) -> String {
    format!("{sign}{n} word{}", if n == 1 { "" } else { "s" })
}

/// The standard object schema with string properties, all required, nothing else allowed.
pub(crate) fn string_object_schema(props: &[(&str, &str)]) -> Value {
    let mut properties = serde_json::Map::new();
    for (name, desc) in props {
        properties.insert(
            (*name).to_owned(),
            serde_json::json!({"type": "string", "description": desc}),
        );
    }
    let required: Vec<&str> = props.iter().map(|(n, _)| *n).collect();
    serde_json::json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn ids(v: &[&'static dyn SessionTool]) -> Vec<&'static str> {
        v.iter().map(|t| t.id()).collect()
    }

    #[test]
    fn availability_table() {
        assert_eq!(ids(&available_tools_for("x", true)), ["edit_selection"]);
        assert_eq!(
            ids(&available_tools_for("plain\n```rust\nfn\n```\n", false)),
            [
                "rewrite_paragraph",
                "insert_before_anchor",
                "insert_after_anchor",
                "append_to_note"
            ]
        );
        assert_eq!(
            ids(&available_tools_for("a\n```mermaid\ngraph\n```\n", false)),
            [
                "rewrite_paragraph",
                "insert_before_anchor",
                "insert_after_anchor",
                "append_to_note",
                "replace_structured_block"
            ]
        );
        assert_eq!(
            ids(&available_tools_for("```mermaid\ngraph\n```\n", true)),
            ["edit_selection"]
        );
    }

    #[test]
    fn dispatch_rejects_unavailable_and_unknown_tools() {
        let mut s = EditorSession::new("n", "hello world");
        s.set_selection(Some(0..5));
        let e = dispatch(&mut s, "append_to_note", &json!({"text": "x"})).unwrap_err();
        assert!(e.to_string().contains("only edit_selection"), "{e}");
        let e = dispatch(&mut s, "nope", &json!({})).unwrap_err();
        assert!(
            e.to_string().starts_with("unknown session tool `nope`"),
            "{e}"
        );
        s.set_selection(None);
        let e = dispatch(&mut s, "edit_selection", &json!({"text": "x"})).unwrap_err();
        assert!(matches!(e, SessionToolError::NotAvailable(_)));
        let e = dispatch(
            &mut s,
            "replace_structured_block",
            &json!({"tag": "mermaid", "text": "x"}),
        )
        .unwrap_err();
        assert!(matches!(e, SessionToolError::NotAvailable(_)));
        assert!(s.proposals().is_empty());
        let out = dispatch(&mut s, "append_to_note", &json!({"text": "Bye."})).unwrap();
        assert_eq!(out.message, "proposed #1: +1 word at the end of the note");
    }

    #[test]
    fn validation_names_field_and_rule() {
        let mut s = EditorSession::new("n", "hello world");
        let e = dispatch(&mut s, "insert_after_anchor", &json!({"anchor": "hello"})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid arguments: arguments: \"text\" is a required property. Fix the arguments and call the tool again."
        );
        let e = dispatch(
            &mut s,
            "insert_after_anchor",
            &json!({"anchor": 3, "text": "x"}),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("'anchor': 3 is not of type \"string\""),
            "{e}"
        );
        let e = dispatch(&mut s, "append_to_note", &json!({"text": "x", "extra": 1})).unwrap_err();
        assert!(e.to_string().contains("extra"), "{e}");
        let e = dispatch(&mut s, "append_to_note", &json!("x")).unwrap_err();
        assert!(matches!(e, SessionToolError::InvalidArguments(_)));
        assert!(e.is_recoverable());
    }

    #[test]
    fn schemas_and_descriptions_are_compact() {
        let total: usize = all_tools()
            .iter()
            .map(|t| t.id().len() + t.description().len() + t.input_schema().to_string().len())
            .sum();
        // roughly 4 chars per token: the six tools stay well under 1,000 tokens
        assert!(total < 2600, "session tool list is {total} chars");
        for t in all_tools() {
            assert!(
                jsonschema::validator_for(&t.input_schema()).is_ok(),
                "{}",
                t.id()
            );
            assert_eq!(find_tool(t.id()).map(|f| f.id()), Some(t.id()));
        }
    }
}
