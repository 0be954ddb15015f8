//! `edit_selection(text)`: replaces the user's selection. Offered only while a selection exists
//! (and then it is the only session tool).

use super::{
    SessionTool, SessionToolError, SessionToolOutput, str_arg, string_object_schema, validate,
    words,
};
use crate::session::{EditorSession, PlannedEdit};
use crate::text::word_count;
use serde_json::Value;
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditSelection;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

impl SessionTool for EditSelection {
    fn id(&self) -> &'static str {
        "edit_selection"
    }

    fn description(&self) -> &'static str {
        "Replace the user's selected text with `text`. The only way to edit while text is selected."
    }

    fn input_schema(&self) -> Value {
        string_object_schema(&[("text", "Replacement for the selected text.")])
    }

    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError> {
        validate(&VALIDATOR, || self.input_schema(), args)?;
        let text = str_arg(args, "text")?;
        let range = session.working_selection().ok_or_else(|| {
            SessionToolError::NotAvailable(
                "no text is selected: edit the note with rewrite_paragraph, insert_before_anchor, insert_after_anchor or append_to_note".to_owned(),
            )
        })?;
        let before = session.working_doc().slice_chars(&range);
        if before == text {
            return Err(SessionToolError::NoChange);
        }
        let summary = format!(
            "replace the selection ({}, {})",
            words('-', word_count(before)),
            words('+', word_count(text))
        );
        let proposal = session.submit(PlannedEdit {
            tool: self.id(),
            arguments: args.clone(),
            range,
            text: text.to_owned(),
            anchor_match: None,
            summary,
        });
        Ok(SessionToolOutput {
            message: proposal.summary.clone(),
            proposal,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn replaces_the_selection_as_a_proposal() {
        let mut s = EditorSession::new("n", "Hello brave world");
        s.set_selection(Some(6..11));
        let out = EditSelection.call(&mut s, &json!({"text": "new"})).unwrap();
        assert_eq!(
            out.message,
            "proposed #1: replace the selection (-1 word, +1 word)"
        );
        assert_eq!(out.proposal.range, 6..11);
        assert_eq!(out.proposal.before, "brave");
        assert_eq!(s.text(), "Hello brave world", "a proposal is not a write");
        assert_eq!(s.working_text(), "Hello new world");
        // a second call on the same selection replaces the first proposal
        let out2 = EditSelection
            .call(&mut s, &json!({"text": "bold"}))
            .unwrap();
        assert_eq!(out2.proposal.supersedes, vec![1]);
        assert_eq!(out2.proposal.before, "brave");
        assert_eq!(s.working_text(), "Hello bold world");
        s.accept_all();
        assert_eq!(s.text(), "Hello bold world");
        assert_eq!(
            s.selection(),
            Some(6..10),
            "the selection follows the new text"
        );
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", "Hello");
        let e = EditSelection
            .call(&mut s, &json!({"text": "x"}))
            .unwrap_err();
        assert!(e.to_string().starts_with("no text is selected"), "{e}");
        s.set_selection(Some(0..5));
        let e = EditSelection
            .call(&mut s, &json!({"text": "Hello"}))
            .unwrap_err();
        assert_eq!(e, SessionToolError::NoChange);
        let e = EditSelection.call(&mut s, &json!({})).unwrap_err();
        assert!(matches!(e, SessionToolError::InvalidArguments(_)));
        assert!(s.proposals().is_empty());
    }
}
