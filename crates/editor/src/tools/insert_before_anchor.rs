//! `insert_before_anchor(anchor, text)`: inserts `text` immediately before `anchor` (verbatim
//! text from the note; several matches → the one nearest the cursor).

use super::{
    SessionTool, SessionToolError, SessionToolOutput, locate, occurrence_note, quote,
    require_no_selection, str_arg, string_object_schema, validate, words,
};
use crate::session::{EditorSession, PlannedEdit};
use crate::text::word_count;
use serde_json::Value;
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct InsertBeforeAnchor;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

impl SessionTool for InsertBeforeAnchor {
    fn id(&self) -> &'static str {
        "insert_before_anchor"
    }

    fn description(&self) -> &'static str {
        "Insert `text` immediately before `anchor`."
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
        insert(self.id(), session, args, Side::Before)
    }
}

/// Which side of the anchor an insertion goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Before,
    After,
}

/// Shared by the two insertion tools (arguments already validated).
pub(crate) fn insert(
    id: &'static str,
    session: &mut EditorSession,
    args: &Value,
    side: Side,
) -> Result<SessionToolOutput, SessionToolError> {
    require_no_selection(session, id)?;
    let anchor = str_arg(args, "anchor")?;
    let text = str_arg(args, "text")?;
    let hit = locate(session, anchor)?;
    if text.is_empty() {
        return Err(SessionToolError::NoChange);
    }
    let w = session.working_doc();
    let at = w.byte_to_char(match side {
        Side::Before => hit.range.start,
        Side::After => hit.range.end,
    });
    let summary = format!(
        "{} {} {}{}",
        words('+', word_count(text)),
        if side == Side::Before {
            "before"
        } else {
            "after"
        },
        quote(anchor),
        occurrence_note(&hit)
    );
    let proposal = session.submit(PlannedEdit {
        tool: id,
        arguments: args.clone(),
        range: at..at,
        text: text.to_owned(),
        anchor_match: Some(hit.matched),
        summary,
    });
    Ok(SessionToolOutput {
        message: proposal.summary.clone(),
        proposal,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn inserts_before_the_anchor() {
        let mut s = EditorSession::new("n", "Packing: Gear, food.");
        let out = InsertBeforeAnchor
            .call(&mut s, &json!({"anchor": "Gear", "text": "Tent, "}))
            .unwrap();
        assert_eq!(out.message, "proposed #1: +1 word before 'Gear'");
        assert_eq!(out.proposal.range, 9..9);
        assert_eq!(out.proposal.before, "");
        assert_eq!(s.working_text(), "Packing: Tent, Gear, food.");
        assert_eq!(s.text(), "Packing: Gear, food.");
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", "Packing: Gear");
        let call = |s: &mut EditorSession, a: &str, t: &str| {
            InsertBeforeAnchor.call(s, &json!({"anchor": a, "text": t}))
        };
        assert_eq!(
            call(&mut s, "gear", "x").unwrap_err(),
            SessionToolError::AnchorNotFound
        );
        assert_eq!(
            call(&mut s, "", "x").unwrap_err(),
            SessionToolError::EmptyAnchor
        );
        assert_eq!(
            call(&mut s, "Gear", "").unwrap_err(),
            SessionToolError::NoChange
        );
        assert!(matches!(
            InsertBeforeAnchor
                .call(&mut s, &json!({"anchor": "Gear", "text": null}))
                .unwrap_err(),
            SessionToolError::InvalidArguments(_)
        ));
        assert!(s.proposals().is_empty());
    }
}
