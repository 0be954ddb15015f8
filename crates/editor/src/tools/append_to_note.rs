//! `append_to_note(text)`: adds `text` at the end of the note, separated by a blank line: no
//! separator when the note is empty or already ends with a blank line (`\n\n`), one `\n` when it
//! ends with a single line break, otherwise `\n\n`.

use super::{
    SessionTool, SessionToolError, SessionToolOutput, require_no_selection, str_arg,
    string_object_schema, validate, words,
};
use crate::session::{EditorSession, PlannedEdit};
use crate::text::word_count;
use serde_json::Value;
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct AppendToNote;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

/// The separator to put between `body` and appended text.
pub fn separator(body: &str) -> &'static str {
    if body.is_empty() || body.ends_with("\n\n") {
        ""
    } else if body.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    }
}

impl SessionTool for AppendToNote {
    fn id(&self) -> &'static str {
        "append_to_note"
    }

    fn description(&self) -> &'static str {
        "Add `text` at the end of the note as a new paragraph (no anchor needed)."
    }

    fn input_schema(&self) -> Value {
        string_object_schema(&[("text", "Markdown to add.")])
    }

    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError> {
        validate(&VALIDATOR, || self.input_schema(), args)?;
        require_no_selection(session, self.id())?;
        let text = str_arg(args, "text")?;
        if text.is_empty() {
            return Err(SessionToolError::NoChange);
        }
        let w = session.working_doc();
        let end = w.len_chars();
        let inserted = format!("{}{text}", separator(w.as_str()));
        let summary = format!("{} at the end of the note", words('+', word_count(text)));
        let proposal = session.submit(PlannedEdit {
            tool: self.id(),
            arguments: args.clone(),
            range: end..end,
            text: inserted,
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

    fn append(body: &str, text: &str) -> String {
        let mut s = EditorSession::new("n", body);
        AppendToNote.call(&mut s, &json!({"text": text})).unwrap();
        s.working_text().to_owned()
    }

    #[test]
    fn blank_line_separation() {
        assert_eq!(append("", "Test."), "Test.");
        assert_eq!(append("a", "Test."), "a\n\nTest.");
        assert_eq!(append("a\n", "Test."), "a\n\nTest.");
        assert_eq!(append("a\n\n", "Test."), "a\n\nTest.");
    }

    #[test]
    fn chained_appends_merge_into_one_proposal() {
        let mut s = EditorSession::new("n", "Title");
        let first = AppendToNote.call(&mut s, &json!({"text": "One."})).unwrap();
        assert_eq!(first.message, "proposed #1: +1 word at the end of the note");
        let second = AppendToNote
            .call(&mut s, &json!({"text": "Two words."}))
            .unwrap();
        assert_eq!(second.proposal.supersedes, vec![1]);
        assert_eq!(second.proposal.after, "\n\nOne.\n\nTwo words.");
        assert_eq!(s.pending().len(), 1);
        s.accept_all();
        assert_eq!(s.text(), "Title\n\nOne.\n\nTwo words.");
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", "Title");
        assert_eq!(
            AppendToNote.call(&mut s, &json!({"text": ""})).unwrap_err(),
            SessionToolError::NoChange
        );
        assert!(matches!(
            AppendToNote.call(&mut s, &json!({"txt": "x"})).unwrap_err(),
            SessionToolError::InvalidArguments(_)
        ));
        s.set_selection(Some(0..2));
        assert!(matches!(
            AppendToNote
                .call(&mut s, &json!({"text": "x"}))
                .unwrap_err(),
            SessionToolError::NotAvailable(_)
        ));
    }
}
