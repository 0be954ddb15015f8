//! `rewrite_paragraph(anchor, text)`: replaces the paragraph(s) containing `anchor` (verbatim
//! text from the note) with `text`. A paragraph is a run of non-blank lines; a fenced block is one
//! paragraph. Trailing line breaks of `text` are dropped (the paragraph's own line break stays);
//! an empty `text` deletes the paragraph together with one blank-line separator. Refused when it
//! would replace more than half of a long note.

use super::{
    SessionTool, SessionToolError, SessionToolOutput, locate, occurrence_note, quote,
    require_no_selection, str_arg, string_object_schema, validate, words,
};
use crate::engine::guard;
use crate::engine::paragraph::{paragraphs_covering, with_separator};
use crate::session::{EditorSession, PlannedEdit};
use crate::text::word_count;
use serde_json::Value;
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct RewriteParagraph;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

impl SessionTool for RewriteParagraph {
    fn id(&self) -> &'static str {
        "rewrite_paragraph"
    }

    fn description(&self) -> &'static str {
        "Replace the whole paragraph containing `anchor` with `text` (empty text deletes it)."
    }

    fn input_schema(&self) -> Value {
        string_object_schema(&[
            ("anchor", "A few words copied verbatim from the paragraph."),
            ("text", "The new paragraph."),
        ])
    }

    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError> {
        validate(&VALIDATOR, || self.input_schema(), args)?;
        require_no_selection(session, self.id())?;
        let anchor = str_arg(args, "anchor")?;
        let text = str_arg(args, "text")?.trim_end_matches(['\n', '\r']);
        let hit = locate(session, anchor)?;
        let w = session.working_doc();
        let mut span = paragraphs_covering(w.as_str(), w.fences(), hit.range.clone())
            .ok_or(SessionToolError::EmptyAnchor)?;
        if text.is_empty() {
            span = with_separator(w.as_str(), span);
        }
        let range = w.char_range(&span);
        guard::check(range.len(), w.len_chars())
            .map_err(|(replaced, total)| SessionToolError::TooDestructive { replaced, total })?;
        let before = &w.as_str()[span];
        if before == text {
            return Err(SessionToolError::NoChange);
        }
        let summary = format!(
            "rewrite the paragraph containing {} ({}, {}){}",
            quote(anchor),
            words('-', word_count(before)),
            words('+', word_count(text)),
            occurrence_note(&hit)
        );
        let proposal = session.submit(PlannedEdit {
            tool: self.id(),
            arguments: args.clone(),
            range,
            text: text.to_owned(),
            anchor_match: Some(hit.matched),
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
    use crate::engine::anchor::AnchorMatch;
    use serde_json::json;

    fn call(
        s: &mut EditorSession,
        anchor: &str,
        text: &str,
    ) -> Result<SessionToolOutput, SessionToolError> {
        RewriteParagraph.call(s, &json!({"anchor": anchor, "text": text}))
    }

    #[test]
    fn replaces_the_containing_paragraph() {
        let mut s = EditorSession::new("n", "# Title\n\nOld first line\nold second.\n\nKeep me.\n");
        let out = call(&mut s, "second", "New paragraph.\n").unwrap();
        assert_eq!(
            out.message,
            "proposed #1: rewrite the paragraph containing 'second' (-5 words, +2 words)"
        );
        assert_eq!(out.proposal.before, "Old first line\nold second.");
        assert_eq!(out.proposal.range, 9..35);
        assert_eq!(
            out.proposal.anchor_match,
            Some(AnchorMatch {
                occurrence: 0,
                total: 1
            })
        );
        assert_eq!(s.working_text(), "# Title\n\nNew paragraph.\n\nKeep me.\n");
        assert_eq!(
            out.proposal.unified_diff(),
            "@@ -1,6 +1,5 @@\n # Title\n \n-Old first line\n-old second.\n+New paragraph.\n \n Keep me.\n"
        );
    }

    #[test]
    fn anchor_spanning_paragraphs_and_fenced_blocks() {
        let t = "a\n\nb one\n\n```\ncode\n\nmore\n```\n\nc";
        let mut s = EditorSession::new("n", t);
        let out = call(&mut s, "one\n\n```\ncode", "merged").unwrap();
        assert_eq!(out.proposal.before, "b one\n\n```\ncode\n\nmore\n```");
        assert_eq!(s.working_text(), "a\n\nmerged\n\nc");
    }

    #[test]
    fn empty_text_deletes_paragraph_and_separator() {
        let mut s = EditorSession::new("n", "a\n\nb\n\nc");
        call(&mut s, "b", "").unwrap();
        assert_eq!(s.working_text(), "a\n\nc");
        let mut s = EditorSession::new("n", "a\n\nc\n");
        call(&mut s, "c", "").unwrap();
        assert_eq!(s.working_text(), "a");
    }

    #[test]
    fn nearest_occurrence_to_the_cursor_is_recorded() {
        let mut s = EditorSession::new("n", "Gear list\n\nGear for winter\n\nEnd");
        s.set_cursor(20);
        let out = call(&mut s, "Gear", "Winter kit").unwrap();
        assert_eq!(
            out.proposal.anchor_match,
            Some(AnchorMatch {
                occurrence: 1,
                total: 2
            })
        );
        assert!(
            out.message
                .ends_with("(occurrence 2 of 2, nearest the cursor)"),
            "{}",
            out.message
        );
        assert_eq!(s.working_text(), "Gear list\n\nWinter kit\n\nEnd");
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", "Some text.");
        assert_eq!(
            call(&mut s, "missing", "x").unwrap_err(),
            SessionToolError::AnchorNotFound
        );
        assert!(
            call(&mut s, "missing", "x")
                .unwrap_err()
                .to_string()
                .contains("quote a shorter passage copied verbatim")
        );
        assert_eq!(
            call(&mut s, "", "x").unwrap_err(),
            SessionToolError::EmptyAnchor
        );
        assert_eq!(
            call(&mut s, " \n", "x").unwrap_err(),
            SessionToolError::EmptyAnchor
        );
        assert_eq!(
            call(&mut s, "some", "x").unwrap_err(),
            SessionToolError::AnchorNotFound,
            "case-sensitive"
        );
        assert_eq!(
            call(&mut s, "Some", "Some text.").unwrap_err(),
            SessionToolError::NoChange
        );
        s.set_selection(Some(0..4));
        assert!(matches!(
            call(&mut s, "Some", "x").unwrap_err(),
            SessionToolError::NotAvailable(_)
        ));
        assert!(s.proposals().is_empty());
    }

    #[test]
    fn guard_refuses_more_than_half_of_a_long_note() {
        let big = "word ".repeat(300);
        let t = format!("{big}\n\nshort tail");
        let mut s = EditorSession::new("n", t.as_str());
        let e = call(&mut s, "word word", "x").unwrap_err();
        assert!(
            matches!(
                e,
                SessionToolError::TooDestructive {
                    replaced: 1500,
                    total: 1512
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("one paragraph at a time"));
        // the short paragraph is fine, and so is rewriting most of a short note
        assert!(call(&mut s, "tail", "end").is_ok());
        let mut small = EditorSession::new("n", "only paragraph");
        assert!(call(&mut small, "only", "all new").is_ok());
    }
}
