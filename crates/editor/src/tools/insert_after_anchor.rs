//! `insert_after_anchor(anchor, text)`: inserts `text` immediately after `anchor` (verbatim text
//! from the note; several matches → the one nearest the cursor).

use super::insert_before_anchor::{Side, insert};
use super::{SessionTool, SessionToolError, SessionToolOutput, string_object_schema, validate};
use crate::session::EditorSession;
use serde_json::Value;
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct InsertAfterAnchor;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

impl SessionTool for InsertAfterAnchor {
    fn id(&self) -> &'static str {
        "insert_after_anchor"
    }

    fn description(&self) -> &'static str {
        "Insert `text` immediately after `anchor`."
    }

    fn input_schema(&self) -> Value {
        string_object_schema(&[
            ("anchor", "Text copied verbatim from the note."),
            (
                "text",
                "Text to insert (include any line breaks or spaces needed).",
            ),
        ])
    }

    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError> {
        validate(&VALIDATOR, || self.input_schema(), args)?;
        insert(self.id(), session, args, Side::After)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn inserts_after_the_anchor_and_chains() {
        let mut s = EditorSession::new("n", "Packing: Gear.\n\nGear again.");
        let out = InsertAfterAnchor
            .call(&mut s, &json!({"anchor": "Gear", "text": " and twelve more words to check the plural count right here ok"}))
            .unwrap();
        assert_eq!(
            out.message,
            "proposed #1: +12 words after 'Gear' (occurrence 1 of 2, nearest the cursor)"
        );
        assert_eq!(out.proposal.range, 13..13);
        // a chained call sees the first proposal applied
        let out2 = InsertAfterAnchor
            .call(&mut s, &json!({"anchor": "ok", "text": "!"}))
            .unwrap();
        assert_eq!(out2.proposal.supersedes, vec![1], "touching edits merge");
        assert_eq!(
            s.working_text(),
            "Packing: Gear and twelve more words to check the plural count right here ok!.\n\nGear again."
        );
        let out3 = InsertAfterAnchor
            .call(&mut s, &json!({"anchor": "again", "text": " (2)"}))
            .unwrap();
        assert!(out3.proposal.supersedes.is_empty());
        assert_eq!(
            out3.proposal.range,
            26..26,
            "recorded against the note text"
        );
        let outcome = s.accept_all();
        assert_eq!(outcome.accepted, vec![2, 3]);
        assert_eq!(s.text(), s.working_text());
        assert!(s.text().ends_with("Gear again (2)."));
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", "abc");
        let e = InsertAfterAnchor
            .call(&mut s, &json!({"anchor": "zzz", "text": "x"}))
            .unwrap_err();
        assert_eq!(e, SessionToolError::AnchorNotFound);
        let e = InsertAfterAnchor
            .call(&mut s, &json!({"text": "x"}))
            .unwrap_err();
        assert!(
            e.to_string().contains("\"anchor\" is a required property"),
            "{e}"
        );
        s.set_selection(Some(0..1));
        let e = InsertAfterAnchor
            .call(&mut s, &json!({"anchor": "abc", "text": "x"}))
            .unwrap_err();
        assert!(matches!(e, SessionToolError::NotAvailable(_)));
    }
}
