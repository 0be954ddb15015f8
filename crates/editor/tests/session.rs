//! Accept / reject / undo / redo / concurrent typing on an `EditorSession`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use sidenote_editor::{EditorError, EditorSession, ProposalStatus, dispatch};

const NOTE: &str = "# Trip\n\nGear: tent, stove.\n\nFood: rice.\n\nNotes end.";

fn session() -> EditorSession {
    EditorSession::new("0123456789abcdef0123456789abcdef", NOTE)
}

fn call(s: &mut EditorSession, tool: &str, args: serde_json::Value) -> u64 {
    dispatch(s, tool, &args).unwrap().proposal.id
}

#[test]
fn accept_one_then_undo_and_redo() {
    let mut s = session();
    let id = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "stove", "text": ", pot"}),
    );
    let out = s.accept(id).unwrap();
    assert_eq!(out.accepted, vec![id]);
    assert!(out.changed);
    assert_eq!(
        s.text(),
        "# Trip\n\nGear: tent, stove, pot.\n\nFood: rice.\n\nNotes end."
    );
    assert_eq!(s.proposal(id).unwrap().status, ProposalStatus::Accepted);
    assert!(s.undo());
    assert_eq!(s.text(), NOTE);
    assert!(s.redo());
    assert_eq!(
        s.text(),
        "# Trip\n\nGear: tent, stove, pot.\n\nFood: rice.\n\nNotes end."
    );
    assert!(!s.redo());
}

#[test]
fn a_batch_is_one_undo_step() {
    let mut s = session();
    s.set_turn(Some("turn-1".to_owned()));
    call(
        &mut s,
        "rewrite_paragraph",
        json!({"anchor": "rice", "text": "Food: pasta."}),
    );
    call(
        &mut s,
        "insert_before_anchor",
        json!({"anchor": "Gear", "text": "Packing\n\n"}),
    );
    call(&mut s, "append_to_note", json!({"text": "PS."}));
    assert_eq!(s.text(), NOTE, "nothing written before accept");
    let out = s.accept_all();
    assert_eq!(out.accepted, vec![2, 1, 3], "text order");
    assert_eq!(out.turns, vec!["turn-1".to_owned()]);
    let expected = "# Trip\n\nPacking\n\nGear: tent, stove.\n\nFood: pasta.\n\nNotes end.\n\nPS.";
    assert_eq!(s.text(), expected);
    assert!(s.undo());
    assert_eq!(s.text(), NOTE, "one undo restores the whole batch");
    assert!(!s.can_undo());
    assert!(s.redo());
    assert_eq!(s.text(), expected);
}

#[test]
fn reject_leaves_text_untouched() {
    let mut s = session();
    let a = call(&mut s, "append_to_note", json!({"text": "x"}));
    let b = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "tent", "text": "!"}),
    );
    assert!(s.reject(a).unwrap());
    assert!(!s.reject(a).unwrap(), "already rejected");
    assert_eq!(
        s.working_text(),
        "# Trip\n\nGear: tent!, stove.\n\nFood: rice.\n\nNotes end."
    );
    assert_eq!(s.reject_all(), vec![b]);
    assert_eq!(s.text(), NOTE);
    assert_eq!(s.working_text(), NOTE);
    assert!(!s.can_undo());
    let out = s.accept_all();
    assert!(out.accepted.is_empty() && !out.changed);
}

#[test]
fn accept_api_errors_and_skips() {
    let mut s = session();
    assert_eq!(s.accept(42), Err(EditorError::UnknownProposal(42)));
    assert_eq!(s.reject(42), Err(EditorError::UnknownProposal(42)));
    let id = call(&mut s, "append_to_note", json!({"text": "x"}));
    s.reject(id).unwrap();
    let out = s.accept(id).unwrap();
    assert_eq!(out.skipped, vec![id]);
    assert!(!out.changed);
    assert_eq!(
        s.user_edit(5..999, "x"),
        Err(EditorError::BadRange {
            start: 5,
            end: 999,
            len: NOTE.chars().count()
        })
    );
}

#[test]
fn typing_elsewhere_rebases_the_proposal() {
    let mut s = session();
    let id = call(
        &mut s,
        "rewrite_paragraph",
        json!({"anchor": "rice", "text": "Food: pasta."}),
    );
    // the user types at the top of the note, before the proposal
    let conflicts = s.user_edit(2..2, "Summer ").unwrap();
    assert!(conflicts.is_empty());
    assert_eq!(s.proposal(id).unwrap().range, 35..46);
    // and after it
    let end = s.len_chars();
    s.user_edit(end..end, "!").unwrap();
    let out = s.accept(id).unwrap();
    assert_eq!(out.accepted, vec![id]);
    assert_eq!(
        s.text(),
        "# Summer Trip\n\nGear: tent, stove.\n\nFood: pasta.\n\nNotes end.!"
    );
    assert_eq!(
        s.proposal(id).unwrap().hunks[0].old_start,
        2,
        "hunk lines follow the text"
    );
}

#[test]
fn typing_inside_the_proposal_is_a_conflict_not_a_clobber() {
    let mut s = session();
    let id = call(
        &mut s,
        "rewrite_paragraph",
        json!({"anchor": "rice", "text": "Food: pasta."}),
    );
    let at = NOTE.find("rice").unwrap();
    let conflicts = s.user_edit(at..at + 4, "beans").unwrap();
    assert_eq!(conflicts, vec![id]);
    let out = s.accept(id).unwrap();
    assert!(out.accepted.is_empty());
    assert_eq!(out.skipped, vec![id]);
    assert_eq!(s.proposal(id).unwrap().status, ProposalStatus::Conflict);
    assert!(
        s.text().contains("Food: beans."),
        "the user's edit survives"
    );
    assert_eq!(s.working_text(), s.text());
}

#[test]
fn deleting_the_anchor_of_an_insertion_is_a_conflict() {
    let mut s = session();
    let id = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "tent", "text": " (2p)"}),
    );
    let at = NOTE.find("tent").unwrap();
    assert_eq!(s.user_edit(at..at + 4, "").unwrap(), vec![id]);
    // typing exactly at the insertion point only shifts it
    let mut s = session();
    let id = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "tent", "text": " (2p)"}),
    );
    assert!(s.user_edit(at + 4..at + 4, "s").unwrap().is_empty());
    s.accept(id).unwrap();
    assert!(
        s.text().contains("Gear: tents (2p), stove."),
        "{}",
        s.text()
    );
}

#[test]
fn set_text_derives_the_edit() {
    let mut s = session();
    let keep = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "Notes", "text": " here"}),
    );
    let lose = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "stove", "text": ", pan"}),
    );
    let conflicts = s.set_text(&NOTE.replace(", stove", ""));
    assert_eq!(conflicts, vec![lose]);
    let out = s.accept_all();
    assert_eq!(out.accepted, vec![keep]);
    assert_eq!(
        s.text(),
        NOTE.replace(", stove", "").replace("Notes", "Notes here")
    );
    // undo twice: the accept, then the user's edit
    assert!(s.undo() && s.undo());
    assert_eq!(s.text(), NOTE);
}

#[test]
fn undo_of_user_edit_rebases_pending_proposals() {
    let mut s = session();
    s.user_edit(0..0, "XX").unwrap();
    let id = call(&mut s, "append_to_note", json!({"text": "tail"}));
    assert!(s.undo());
    assert_eq!(s.text(), NOTE);
    s.accept(id).unwrap();
    assert_eq!(s.text(), format!("{NOTE}\n\ntail"));
}

#[test]
fn chained_edits_on_the_same_paragraph_compose() {
    let mut s = session();
    let a = call(
        &mut s,
        "rewrite_paragraph",
        json!({"anchor": "rice", "text": "Food: pasta."}),
    );
    let b = call(
        &mut s,
        "insert_after_anchor",
        json!({"anchor": "pasta", "text": " and sauce"}),
    );
    assert_eq!(s.proposal(a).unwrap().status, ProposalStatus::Superseded);
    assert_eq!(s.proposal(a).unwrap().superseded_by, Some(b));
    let p = s.proposal(b).unwrap();
    assert_eq!(p.before, "Food: rice.");
    assert_eq!(p.after, "Food: pasta and sauce.");
    assert_eq!(p.supersedes, vec![a]);
    s.accept(b).unwrap();
    assert!(s.text().contains("Food: pasta and sauce."));
}

#[test]
fn unicode_offsets_and_utf16_edges() {
    let mut s = EditorSession::new("n", "😀 héllo wörld\n\nnext");
    // "wörld" starts at char 8, UTF-16 offset 9 (the emoji is two units)
    s.set_selection_utf16(Some(9..14));
    assert_eq!(s.selection(), Some(8..13));
    let out = dispatch(&mut s, "edit_selection", &json!({"text": "wereld"})).unwrap();
    assert_eq!(out.proposal.range, 8..13);
    assert_eq!(out.proposal.before, "wörld");
    s.accept_all();
    assert_eq!(s.text(), "😀 héllo wereld\n\nnext");
    assert_eq!(s.to_utf16(8), 9);
    // a user edit given in UTF-16 that lands inside the surrogate pair rounds down
    s.user_edit_utf16(1..2, "").unwrap();
    assert_eq!(s.text(), " héllo wereld\n\nnext");
}

#[test]
fn proposals_serialise_for_the_panel() {
    let mut s = session();
    s.set_turn(Some("t1".to_owned()));
    let out = dispatch(
        &mut s,
        "insert_after_anchor",
        &json!({"anchor": "tent", "text": "!"}),
    )
    .unwrap();
    let v = serde_json::to_value(&out.proposal).unwrap();
    assert_eq!(v["id"], 1);
    assert_eq!(v["tool"], "insert_after_anchor");
    assert_eq!(v["status"], "pending");
    assert_eq!(v["range"], json!({"start": 18, "end": 18}));
    assert_eq!(v["anchor_match"], json!({"occurrence": 0, "total": 1}));
    assert_eq!(v["turn"], "t1");
    assert_eq!(
        v["hunks"][0]["lines"][2],
        json!({"op": "-", "text": "Gear: tent, stove."})
    );
    let back: sidenote_editor::EditProposal = serde_json::from_value(v).unwrap();
    assert_eq!(back, out.proposal);
}

#[test]
fn dirty_tracking_and_state() {
    let mut s = session();
    assert!(!s.is_dirty());
    let id = call(&mut s, "append_to_note", json!({"text": "x"}));
    assert!(!s.is_dirty(), "a proposal is not a change");
    let st = s.state();
    assert_eq!(st.pending.len(), 1);
    assert_eq!(st.pending[0].id, id);
    assert!(!st.can_undo);
    s.accept(id).unwrap();
    assert!(s.is_dirty());
    s.mark_saved();
    assert!(!s.is_dirty());
    s.undo();
    assert!(s.is_dirty());
    let v = serde_json::to_value(s.state()).unwrap();
    assert_eq!(v["can_redo"], true);
    assert_eq!(v["pending"], json!([]));
}

#[test]
fn a_block_appended_earlier_in_the_turn_can_be_replaced() {
    let mut s = session();
    assert!(
        !sidenote_editor::available_tools(&s)
            .iter()
            .any(|t| t.id() == "replace_structured_block")
    );
    call(
        &mut s,
        "append_to_note",
        json!({"text": "```mermaid\ngraph TD\n```"}),
    );
    assert!(
        sidenote_editor::available_tools(&s)
            .iter()
            .any(|t| t.id() == "replace_structured_block")
    );
    let id = call(
        &mut s,
        "replace_structured_block",
        json!({"tag": "mermaid", "text": "graph LR"}),
    );
    assert_eq!(
        s.pending().len(),
        1,
        "the block edit merged into the append"
    );
    s.accept(id).unwrap();
    assert_eq!(s.text(), format!("{NOTE}\n\n```mermaid\ngraph LR\n```"));
}

#[test]
fn the_session_can_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<EditorSession>();
    send_sync::<sidenote_editor::EditProposal>();
}

#[test]
fn state_reports_utf16_positions_for_the_browser() {
    let mut s = EditorSession::new("n", "😀 ab 😀 cd");
    s.set_cursor(3);
    let id = dispatch(
        &mut s,
        "insert_after_anchor",
        &json!({"anchor": "cd", "text": "!"}),
    )
    .unwrap()
    .proposal
    .id;
    s.set_selection(Some(2..4));
    let st = s.state();
    assert_eq!(st.pending[0].id, id);
    assert_eq!(st.pending[0].range, 9..9);
    assert_eq!(st.utf16.pending, vec![11..11]);
    assert_eq!(st.utf16.selection, Some(3..5));
    assert_eq!(st.utf16.cursor, 4);
    assert_eq!(st.utf16.len, 11);
}
