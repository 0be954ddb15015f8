//! `replace_structured_block(tag, text)`: replaces the inner content of a fenced block tagged
//! `mermaid`, `jsoncanvas`, `abc` or `fountain` (the block nearest the cursor when there are
//! several). Never creates a block. A copy of the block's fence lines around `text` is tolerated;
//! a line in `text` that would close the fence is refused.

use super::{
    SessionTool, SessionToolError, SessionToolOutput, require_no_selection, str_arg, validate,
};
use crate::engine::anchor::AnchorMatch;
use crate::engine::blocks::{SUPPORTED_TAGS, find_block, inner_content, is_structured};
use crate::session::{EditorSession, PlannedEdit};
use serde_json::{Value, json};
use std::sync::OnceLock;

/// See the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplaceStructuredBlock;

static VALIDATOR: OnceLock<Result<jsonschema::Validator, String>> = OnceLock::new();

fn lines(s: &str) -> usize {
    s.lines().count()
}

impl SessionTool for ReplaceStructuredBlock {
    fn id(&self) -> &'static str {
        "replace_structured_block"
    }

    fn description(&self) -> &'static str {
        "Replace the content inside the note's ```<tag> fenced block. Cannot create a block (use append_to_note)."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "tag": {"type": "string", "enum": SUPPORTED_TAGS},
                "text": {"type": "string", "description": "New block content, without the ``` fence lines."},
            },
            "required": ["tag", "text"],
            "additionalProperties": false,
        })
    }

    fn call(
        &self,
        session: &mut EditorSession,
        args: &Value,
    ) -> Result<SessionToolOutput, SessionToolError> {
        validate(&VALIDATOR, || self.input_schema(), args)?;
        require_no_selection(session, self.id())?;
        let tag = str_arg(args, "tag")?;
        let text = str_arg(args, "text")?;
        let w = session.working_doc();
        let fences = w.fences();
        let Some((fence, occurrence, total)) = find_block(w, fences, tag, session.working_cursor())
        else {
            let present: Vec<String> = fences
                .iter()
                .filter(|f| is_structured(f))
                .map(|f| f.tag().to_ascii_lowercase())
                .collect();
            let hint = if present.is_empty() {
                "the note has no structured block".to_owned()
            } else {
                format!("blocks present: {}", present.join(", "))
            };
            return Err(SessionToolError::BlockNotFound(format!(
                "the note has no ```{tag} block ({hint}). This tool only edits an existing block: to add one, call append_to_note with the whole fenced block"
            )));
        };
        let mut inner = inner_content(fence, text).map_err(SessionToolError::BadBlockContent)?;
        let span = fence.inner();
        if fence.open_line_end == w.len_bytes() && !inner.is_empty() {
            inner.insert(0, '\n');
        }
        let old = &w.as_str()[span.clone()];
        if old == inner {
            return Err(SessionToolError::NoChange);
        }
        let which = if total > 1 {
            format!(" (block {} of {total}, nearest the cursor)", occurrence + 1)
        } else {
            String::new()
        };
        let summary = format!(
            "update the {tag} block ({} → {} lines){which}",
            lines(old),
            lines(&inner)
        );
        let range = w.char_range(&span);
        let proposal = session.submit(PlannedEdit {
            tool: self.id(),
            arguments: args.clone(),
            range,
            text: inner,
            anchor_match: Some(AnchorMatch { occurrence, total }),
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

    const NOTE: &str = "# Flow\n\n```mermaid\ngraph TD\n  A-->B\n```\n\nAfter.\n";

    #[test]
    fn replaces_inner_content_only() {
        let mut s = EditorSession::new("n", NOTE);
        let out = ReplaceStructuredBlock
            .call(
                &mut s,
                &json!({"tag": "mermaid", "text": "graph LR\n  A-->C"}),
            )
            .unwrap();
        assert_eq!(
            out.message,
            "proposed #1: update the mermaid block (2 → 2 lines)"
        );
        assert_eq!(out.proposal.before, "graph TD\n  A-->B\n");
        assert_eq!(
            s.working_text(),
            "# Flow\n\n```mermaid\ngraph LR\n  A-->C\n```\n\nAfter.\n"
        );
    }

    #[test]
    fn tolerates_fence_lines_and_picks_nearest_block() {
        let t = "```abc\nX:1\n```\n\ntext\n\n```abc\nX:2\n```\n";
        let mut s = EditorSession::new("n", t);
        s.set_cursor(t.chars().count());
        let out = ReplaceStructuredBlock
            .call(&mut s, &json!({"tag": "abc", "text": "```abc\nX:3\n```"}))
            .unwrap();
        assert_eq!(
            out.proposal.anchor_match,
            Some(AnchorMatch {
                occurrence: 1,
                total: 2
            })
        );
        assert_eq!(
            s.working_text(),
            "```abc\nX:1\n```\n\ntext\n\n```abc\nX:3\n```\n"
        );
    }

    #[test]
    fn errors() {
        let mut s = EditorSession::new("n", NOTE);
        let e = ReplaceStructuredBlock
            .call(&mut s, &json!({"tag": "abc", "text": "x"}))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the note has no ```abc block (blocks present: mermaid). This tool only edits an existing block: to add one, call append_to_note with the whole fenced block"
        );
        let e = ReplaceStructuredBlock
            .call(&mut s, &json!({"tag": "python", "text": "x"}))
            .unwrap_err();
        assert!(matches!(e, SessionToolError::InvalidArguments(_)), "{e}");
        assert!(
            e.to_string().contains("'tag': \"python\" is not one of"),
            "{e}"
        );
        let e = ReplaceStructuredBlock
            .call(&mut s, &json!({"tag": "mermaid", "text": "a\n```\nb"}))
            .unwrap_err();
        assert_eq!(e, SessionToolError::BadBlockContent("```".to_owned()));
        let e = ReplaceStructuredBlock
            .call(
                &mut s,
                &json!({"tag": "mermaid", "text": "graph TD\n  A-->B"}),
            )
            .unwrap_err();
        assert_eq!(e, SessionToolError::NoChange);
        let mut plain = EditorSession::new("n", "```python\nx\n```\n");
        let e = ReplaceStructuredBlock
            .call(&mut plain, &json!({"tag": "mermaid", "text": "x"}))
            .unwrap_err();
        assert!(e.to_string().contains("no structured block"), "{e}");
        assert!(s.proposals().is_empty() && plain.proposals().is_empty());
    }
}
