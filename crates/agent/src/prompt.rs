//! The system prompt: compact, because small local models have a 4096-token context.

use crate::context::{FocusedNote, NoteContext, byte_at_char};

/// Joplin-Markdown rules the model must keep.
pub const MARKDOWN_RULES: &str = "Joplin Markdown: checkboxes `- [ ] item` / `- [x] done`; \
note links `[Title](:/NOTE_ID)` and attachments `![alt](:/RESOURCE_ID)` use ids you have seen — \
never invent an id; math `$...$` / `$$...$$` (KaTeX); diagrams are fenced blocks (mermaid, abc, \
fountain, jsoncanvas) — keep them intact. Keep the note's own formatting.";

/// How the prompt is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptOptions {
    /// A focused note's body is included whole up to this many chars; longer bodies get an
    /// outline and paging instructions.
    pub body_budget_chars: usize,
}

impl Default for PromptOptions {
    fn default() -> Self {
        PromptOptions {
            body_budget_chars: 6000,
        }
    }
}

/// The system prompt for `ctx`.
pub fn system_prompt(ctx: &NoteContext, opts: &PromptOptions) -> String {
    let today = ctx
        .today
        .clone()
        .unwrap_or_else(|| chrono::Local::now().format("%Y-%m-%d").to_string());
    let mut p = String::with_capacity(1024);
    p.push_str(
        "You are the assistant in sidenote, a local notes app. Use the tools to search, read, \
         create and change the user's notes; never guess a note's content or id. Search with a \
         few key words (e.g. `packing list`), not the whole request. When the task is done, \
         answer briefly in plain text.\n",
    );
    p.push_str(&format!("Today is {today}.\n"));
    match &ctx.note {
        None => p.push_str("No note is open.\n"),
        Some(note) => focused(&mut p, note, opts),
    }
    p.push_str(MARKDOWN_RULES);
    p
}

fn focused(p: &mut String, note: &FocusedNote, opts: &PromptOptions) {
    let title = if note.title.trim().is_empty() {
        "(untitled)"
    } else {
        note.title.as_str()
    };
    p.push_str(&format!("Open note: \"{title}\" (id {}", note.id));
    if let Some(nb) = &note.notebook {
        p.push_str(&format!(", notebook \"{nb}\""));
    }
    p.push_str(").\n");
    if let Some(sel) = note.selected_text() {
        p.push_str(
            "The user selected this text in the open note. Change only the selection, with \
             edit_selection (its text replaces the selection):\n<selection>\n",
        );
        p.push_str(sel);
        p.push_str("\n</selection>\n");
        return;
    }
    p.push_str(
        "To change the open note use append_to_note, insert_after_anchor, insert_before_anchor \
         or rewrite_paragraph (the user reviews these edits), not update_note; anchors are short \
         exact quotes from the note.\n",
    );
    let total = note.body.chars().count();
    if total <= opts.body_budget_chars {
        p.push_str("<note>\n");
        p.push_str(&note.body);
        p.push_str("\n</note>\n");
    } else {
        let head_chars = opts.body_budget_chars / 2;
        let head = &note.body[..byte_at_char(&note.body, head_chars)];
        p.push_str(&format!(
            "The note is long ({total} characters); its start and outline follow. Read more \
             with read_note (id {}, offset, max_chars).\n<note-start>\n",
            note.id
        ));
        p.push_str(head);
        p.push_str("\n</note-start>\nOutline (character offset: heading):\n");
        for (offset, heading) in outline(&note.body).into_iter().take(40) {
            p.push_str(&format!("{offset}: {heading}\n"));
        }
    }
}

/// Markdown headings outside fenced blocks, with their char offsets.
pub fn outline(body: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    let mut fence: Option<&str> = None;
    for line in body.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        let trimmed = t.trim_start();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
        } else if trimmed.starts_with("```") {
            fence = Some("```");
        } else if trimmed.starts_with("~~~") {
            fence = Some("~~~");
        } else if trimmed.starts_with('#') {
            let hashes = trimmed.chars().take_while(|c| *c == '#').count();
            let rest = &trimmed[hashes..];
            if hashes <= 6 && (rest.is_empty() || rest.starts_with(' ')) {
                out.push((offset, trimmed.to_string()));
            }
        }
        offset += line.chars().count();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn note(body: &str, selection: Option<std::ops::Range<usize>>) -> FocusedNote {
        FocusedNote {
            id: "0123456789abcdef0123456789abcdef".into(),
            title: "Packing".into(),
            notebook_id: "nb".into(),
            notebook: Some("Travel".into()),
            body: body.into(),
            selection,
        }
    }

    #[test]
    fn prompt_names_the_note_and_rules() {
        let ctx = NoteContext {
            note: Some(note("- [ ] tent\n", None)),
            today: Some("2026-11-29".into()),
        };
        let p = system_prompt(&ctx, &PromptOptions::default());
        assert!(
            p.contains("\"Packing\" (id 0123456789abcdef0123456789abcdef, notebook \"Travel\")")
        );
        assert!(p.contains("<note>\n- [ ] tent\n\n</note>"), "{p}");
        assert!(p.contains("Today is 2026-11-29."));
        assert!(p.contains("never invent an id"));
        assert!(p.contains("mermaid"));
        assert!(!p.contains("edit_selection"));
    }

    #[test]
    fn selection_is_quoted_and_scoped() {
        let ctx = NoteContext {
            note: Some(note("héllo wörld", Some(6..11))),
            today: Some("2026-01-01".into()),
        };
        let p = system_prompt(&ctx, &PromptOptions::default());
        assert!(p.contains("<selection>\nwörld\n</selection>"), "{p}");
        assert!(p.contains("Change only the selection"));
        assert!(!p.contains("<note>"));
    }

    #[test]
    fn long_bodies_get_an_outline() {
        let body = format!(
            "# Top\n{}\n```\n# not a heading\n```\n## Second\n{}",
            "a".repeat(100),
            "b".repeat(100)
        );
        let ctx = NoteContext {
            note: Some(note(&body, None)),
            today: Some("2026-01-01".into()),
        };
        let p = system_prompt(
            &ctx,
            &PromptOptions {
                body_budget_chars: 50,
            },
        );
        assert!(p.contains("read_note"), "{p}");
        assert!(p.contains("0: # Top"), "{p}");
        assert!(!p.contains("# not a heading"), "{p}");
        let second = body.find("## Second").unwrap();
        assert!(p.contains(&format!("{second}: ## Second")), "{p}");
        assert!(!p.contains(&"b".repeat(100)));
        let ws = system_prompt(&NoteContext::workspace(), &PromptOptions::default());
        assert!(ws.contains("No note is open."));
    }
}
