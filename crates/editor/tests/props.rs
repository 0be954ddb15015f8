//! Property tests: accept-all then undo restores the original byte for byte; reject leaves it
//! unchanged; text outside a proposal's range never changes; rebasing keeps the user's edits;
//! UTF-16 conversion round-trips; the session's invariants hold under any interleaving.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::json;
use sidenote_editor::{EditorSession, ProposalStatus, char_to_utf16, dispatch, utf16_to_char};

const TOKENS: &[&str] = &[
    "a",
    "b",
    "ab",
    "Gear",
    "\r\n",
    "~~~\n",
    "```abc\n",
    "é",
    "😀",
    " ",
    " ",
    "\n",
    "\n\n",
    "```mermaid\n",
    "```\n",
    "x.",
];
const TOOLS: &[&str] = &[
    "edit_selection",
    "rewrite_paragraph",
    "insert_before_anchor",
    "insert_after_anchor",
    "append_to_note",
    "replace_structured_block",
];

fn text_strategy(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..max).prop_map(|v| v.concat())
}

fn chars_slice(s: &str, start: usize, len: usize) -> String {
    s.chars().skip(start).take(len).collect()
}

#[derive(Debug, Clone)]
struct ToolCall {
    tool: usize,
    at: usize,
    len: usize,
    text: String,
    select: Option<(usize, usize)>,
    cursor: usize,
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        0..TOOLS.len(),
        any::<usize>(),
        1usize..10,
        text_strategy(6),
        prop::option::weighted(0.2, (any::<usize>(), 1usize..8)),
        any::<usize>(),
    )
        .prop_map(|(tool, at, len, text, select, cursor)| ToolCall {
            tool,
            at,
            len,
            text,
            select,
            cursor,
        })
}

/// Runs one tool call with an anchor cut from the working text; errors are fine.
fn run(s: &mut EditorSession, c: &ToolCall) {
    let n = s.len_chars();
    s.set_cursor(c.cursor % (n + 1));
    s.set_selection(c.select.map(|(a, l)| {
        let a = a % (n + 1);
        a..a + l
    }));
    let w = s.working_text().to_owned();
    let wn = w.chars().count();
    let anchor = if wn == 0 {
        String::new()
    } else {
        chars_slice(&w, c.at % wn, c.len)
    };
    let tool = TOOLS[c.tool];
    let args = match tool {
        "edit_selection" | "append_to_note" => json!({"text": c.text}),
        "replace_structured_block" => {
            json!({"tag": if c.len.is_multiple_of(2) { "mermaid" } else { "abc" }, "text": c.text})
        }
        _ => json!({"anchor": anchor, "text": c.text}),
    };
    let _ = dispatch(s, tool, &args);
    s.set_selection(None);
}

/// Applies disjoint `(start, end, replacement)` char ranges to `text` (sorted, stable).
fn apply_all(text: &str, mut edits: Vec<(usize, usize, usize, String)>) -> String {
    edits.sort_by_key(|e| (e.0, e.1, e.2));
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    for (s, e, _, t) in edits {
        assert!(at <= s, "edits overlap");
        out.extend(&chars[at..s]);
        out.push_str(&t);
        at = e;
    }
    out.extend(&chars[at..]);
    out
}

fn pending_edits(s: &EditorSession) -> Vec<(usize, usize, usize, String)> {
    s.pending()
        .iter()
        .map(|p| (p.range.start, p.range.end, 1, p.after.clone()))
        .collect()
}

fn check_invariants(s: &EditorSession) {
    let pending = s.pending();
    for p in &pending {
        assert_eq!(
            chars_slice(s.text(), p.range.start, p.range.len()),
            p.before
        );
        assert_eq!(p.status, ProposalStatus::Pending);
    }
    for w in pending.windows(2) {
        assert!(
            w[0].range.end <= w[1].range.start,
            "pending proposals overlap"
        );
        assert!(
            !(w[0].range.is_empty()
                && w[1].range.is_empty()
                && w[0].range.start == w[1].range.start),
            "two insertions at one point"
        );
    }
    assert_eq!(s.working_text(), apply_all(s.text(), pending_edits(s)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn accept_all_then_undo_restores_the_original(text in text_strategy(40), calls in prop::collection::vec(tool_call(), 1..8)) {
        let mut s = EditorSession::new("n", text.as_str());
        for c in &calls {
            run(&mut s, c);
            check_invariants(&s);
        }
        let working = s.working_text().to_owned();
        let out = s.accept_all();
        prop_assert_eq!(s.text(), working.as_str());
        if out.changed {
            prop_assert!(s.undo());
            prop_assert_eq!(s.text().as_bytes(), text.as_bytes());
            prop_assert!(!s.can_undo(), "the batch was one step");
            prop_assert!(s.redo());
            prop_assert_eq!(s.text(), working.as_str());
        } else {
            prop_assert_eq!(s.text(), text.as_str());
        }
    }

    #[test]
    fn reject_leaves_the_text_unchanged(text in text_strategy(40), calls in prop::collection::vec(tool_call(), 1..8), one_by_one in any::<bool>()) {
        let mut s = EditorSession::new("n", text.as_str());
        for c in &calls {
            run(&mut s, c);
        }
        if one_by_one {
            let ids: Vec<u64> = s.pending().iter().map(|p| p.id).collect();
            for id in ids {
                prop_assert!(s.reject(id).unwrap());
            }
        } else {
            s.reject_all();
        }
        prop_assert_eq!(s.text().as_bytes(), text.as_bytes());
        prop_assert_eq!(s.working_text(), text.as_str());
        prop_assert!(!s.can_undo());
    }

    #[test]
    fn text_outside_accepted_ranges_never_changes(text in text_strategy(40), calls in prop::collection::vec(tool_call(), 1..8), pick in prop::collection::vec(any::<bool>(), 8)) {
        let mut s = EditorSession::new("n", text.as_str());
        for c in &calls {
            run(&mut s, c);
        }
        let chosen: Vec<(u64, (usize, usize, usize, String))> = s
            .pending()
            .iter()
            .zip(pick.iter().cycle())
            .filter(|(_, keep)| **keep)
            .map(|(p, _)| (p.id, (p.range.start, p.range.end, 1, p.after.clone())))
            .collect();
        let ids: Vec<u64> = chosen.iter().map(|c| c.0).collect();
        let expected = apply_all(&text, chosen.into_iter().map(|c| c.1).collect());
        let out = s.accept_many(&ids);
        prop_assert_eq!(out.accepted.len(), ids.len());
        prop_assert_eq!(s.text(), expected.as_str());
        check_invariants(&s);
    }

    #[test]
    fn rebase_keeps_user_edits(text in text_strategy(40), calls in prop::collection::vec(tool_call(), 1..8), u in any::<usize>(), del in 0usize..6, typed in text_strategy(4)) {
        let mut s = EditorSession::new("n", text.as_str());
        for c in &calls {
            run(&mut s, c);
        }
        let n = s.len_chars();
        let u = u % (n + 1);
        let v = (u + del).min(n);
        let snapshot: Vec<(u64, usize, usize, String)> = s
            .pending()
            .iter()
            .map(|p| (p.id, p.range.start, p.range.end, p.after.clone()))
            .collect();
        let conflicts_expected: Vec<u64> = snapshot
            .iter()
            .filter(|(_, ps, pe, _)| {
                if ps < pe {
                    !(v <= *ps || u >= *pe)
                } else {
                    u < v && u <= *ps && *ps <= v
                }
            })
            .map(|p| p.0)
            .collect();
        let mut conflicts_expected = conflicts_expected;
        conflicts_expected.sort_unstable();
        let mut conflicts = s.user_edit(u..v, &typed).unwrap();
        conflicts.sort_unstable();
        if chars_slice(&text, u, v - u) == typed {
            prop_assert!(conflicts.is_empty(), "a no-op edit conflicts with nothing");
            return Ok(());
        }
        prop_assert_eq!(&conflicts, &conflicts_expected);
        let mut edits: Vec<(usize, usize, usize, String)> = snapshot
            .iter()
            .filter(|p| !conflicts_expected.contains(&p.0))
            .map(|p| (p.1, p.2, 1, p.3.clone()))
            .collect();
        edits.push((u, v, 0, typed.clone()));
        let expected = apply_all(&text, edits);
        check_invariants(&s);
        s.accept_all();
        prop_assert_eq!(s.text(), expected.as_str());
        for id in conflicts_expected {
            prop_assert_eq!(s.proposal(id).unwrap().status, ProposalStatus::Conflict);
        }
    }

    #[test]
    fn invariants_hold_under_any_interleaving(text in text_strategy(30), ops in prop::collection::vec((0u8..8, tool_call(), any::<usize>(), text_strategy(3)), 1..25)) {
        let mut s = EditorSession::new("n", text.as_str());
        for (kind, call, x, typed) in &ops {
            match kind {
                0 | 1 => run(&mut s, call),
                2 => {
                    let n = s.len_chars();
                    let a = x % (n + 1);
                    let b = (a + call.len % 4).min(n);
                    s.user_edit(a..b, typed).unwrap();
                }
                3 => {
                    let ids: Vec<u64> = s.pending().iter().map(|p| p.id).collect();
                    if !ids.is_empty() {
                        s.accept(ids[x % ids.len()]).unwrap();
                    }
                }
                4 => { s.undo(); }
                5 => { s.redo(); }
                6 => {
                    // the browser sends the whole body: a splice somewhere
                    let chars: Vec<char> = s.text().chars().collect();
                    let a = x % (chars.len() + 1);
                    let b = (a + call.len % 4).min(chars.len());
                    let new: String = chars[..a].iter().copied().chain(typed.chars()).chain(chars[b..].iter().copied()).collect();
                    s.set_text(&new);
                    prop_assert_eq!(s.text(), new.as_str());
                }
                _ => { s.reject_all(); }
            }
            check_invariants(&s);
        }
        // everything the session did can be undone back to the start
        while s.undo() {}
        prop_assert_eq!(s.text().as_bytes(), text.as_bytes());
    }

    #[test]
    fn utf16_round_trips(text in "\\PC{0,40}", c in 0usize..50, u in 0usize..100) {
        let n = text.chars().count();
        let c = c.min(n);
        prop_assert_eq!(utf16_to_char(&text, char_to_utf16(&text, c)), c);
        let back = char_to_utf16(&text, utf16_to_char(&text, u));
        prop_assert!(back <= u.min(text.encode_utf16().count()));
        prop_assert!(utf16_to_char(&text, u) <= n);
        let many = [c, u, 0, n + 3];
        let expect: Vec<usize> = many.iter().map(|x| char_to_utf16(&text, *x)).collect();
        prop_assert_eq!(sidenote_editor::chars_to_utf16(&text, &many), expect);
    }
}
