//! The editor session: the open note's text, selection, cursor, undo/redo and the pending-diff
//! queue.
//!
//! # Offsets
//! Char offsets (Unicode scalar values) everywhere; see [`crate::text`] for the UTF-16 helpers.
//!
//! # Proposals and the working copy
//! Session tools never write the text. Each successful call adds an [`EditProposal`] to the
//! queue. Tools read the **working copy**: the session text with every pending proposal applied,
//! so a model can chain edits within a turn. Each proposal is recorded against the session text
//! itself (not the working copy): a tool's edit is mapped back through the pending proposals. If
//! the new edit touches the text of earlier pending proposals (overlaps it or is directly
//! adjacent to it), they are merged into the new proposal, which covers their union, and the
//! earlier ones become [`ProposalStatus::Superseded`]. So pending proposals are always disjoint
//! in the session text, and any subset can be accepted or rejected independently.
//!
//! # Concurrent typing
//! [`EditorSession::user_edit`] (or [`EditorSession::set_text`], which derives the edit from the
//! common prefix and suffix) rebases every pending proposal at once: an edit entirely before a
//! proposal shifts it, one after leaves it, and one that overlaps its `before` text (or, for a
//! pure insertion, touches the insertion point) turns it into [`ProposalStatus::Conflict`]; it
//! will not be applied. On accept the proposal's `before` text is checked once more at its
//! (rebased) position; a mismatch is a conflict too. Nothing is ever silently clobbered.
//!
//! # Undo
//! Each accept call (one proposal or a batch) is **one** undo step; so is each user edit.
//! Undo and redo restore the text byte for byte. Undo/redo rebase pending proposals like a user
//! edit.
//!
//! # Saving (the contract with the caller)
//! This crate does not depend on the store. When an accept, undo, redo or user edit reports a
//! change (`AcceptOutcome::changed`, or `true` from undo/redo), the caller writes
//! [`EditorSession::text`] through the store **once**, with the journal actor taken from
//! `AcceptOutcome::turns` (the agent turn that proposed the edits), so a whole AI batch is one
//! revision.

use crate::engine::anchor::AnchorMatch;
use crate::engine::diff;
use crate::proposal::{EditProposal, ProposalId, ProposalStatus};
use crate::text::{Doc, char_to_utf16, utf16_to_char};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ops::Range;
use std::sync::OnceLock;

/// Misuse of the session API by its caller (not a model error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditorError {
    /// No proposal has this id.
    #[error("no proposal with id {0}")]
    UnknownProposal(ProposalId),
    /// A range is reversed or past the end of the text.
    #[error("range {start}..{end} is not within the note (length {len} chars)")]
    BadRange {
        /// Range start.
        start: usize,
        /// Range end.
        end: usize,
        /// Text length in chars.
        len: usize,
    },
}

/// What an accept call did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptOutcome {
    /// Proposals applied (in text order).
    pub accepted: Vec<ProposalId>,
    /// Proposals that turned out to conflict and were not applied.
    pub conflicts: Vec<ProposalId>,
    /// Ids that were not pending (already resolved), or unknown.
    pub skipped: Vec<ProposalId>,
    /// Whether the text changed: if so, save [`EditorSession::text`] once.
    pub changed: bool,
    /// Distinct turns of the accepted proposals (the journal actor for the save).
    pub turns: Vec<String>,
}

/// The session's state as JSON for the panel / CLI (the text itself is not included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    /// The note id.
    pub note_id: String,
    /// Text version (increments on every change).
    pub version: u64,
    /// Text length in chars.
    pub len_chars: usize,
    /// Selection (char range).
    pub selection: Option<Range<usize>>,
    /// Cursor (char offset).
    pub cursor: usize,
    /// Pending proposals in text order.
    pub pending: Vec<EditProposal>,
    /// Whether undo is possible.
    pub can_undo: bool,
    /// Whether redo is possible.
    pub can_redo: bool,
    /// Whether the text changed since the last save.
    pub dirty: bool,
    /// The same positions in UTF-16 code units, for the browser.
    pub utf16: Utf16Positions,
}

/// [`SessionState`]'s positions in UTF-16 code units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Utf16Positions {
    /// Text length.
    pub len: usize,
    /// Selection.
    pub selection: Option<Range<usize>>,
    /// Cursor.
    pub cursor: usize,
    /// Each pending proposal's range, parallel to [`SessionState::pending`].
    pub pending: Vec<Range<usize>>,
}

/// One primitive text change, in char offsets: `removed` at `start` was replaced by `inserted`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TextChange {
    start: usize,
    removed: String,
    inserted: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct UndoStep {
    /// Applied in order; undone in reverse.
    changes: Vec<TextChange>,
}

/// A tool's planned edit against the working copy (char offsets in the working copy).
#[derive(Debug, Clone)]
pub(crate) struct PlannedEdit {
    pub tool: &'static str,
    pub arguments: Value,
    pub range: Range<usize>,
    pub text: String,
    pub anchor_match: Option<AnchorMatch>,
    /// Confirmation text without the `proposed #N: ` prefix.
    pub summary: String,
}

/// How a position moves when text is inserted exactly at it, or when it falls inside a region
/// being replaced.
#[derive(Debug, Clone, Copy)]
struct Bias {
    /// Skip over pending insertions sitting exactly at the position.
    after_insertions: bool,
    /// Inside a replaced region: go to its end (else its start).
    inside_to_end: bool,
}

/// The open note.
#[derive(Debug, Clone)]
pub struct EditorSession {
    note_id: String,
    doc: Doc,
    selection: Option<Range<usize>>,
    cursor: usize,
    undo: Vec<UndoStep>,
    redo: Vec<UndoStep>,
    proposals: Vec<EditProposal>,
    next_id: ProposalId,
    version: u64,
    turn: Option<String>,
    /// `version` when the caller last saved the text ([`Self::mark_saved`]).
    saved_version: u64,
    /// The working copy, built on first use after a change; unused (the session text is the
    /// working copy) when nothing is pending.
    working: OnceLock<Doc>,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn newlines(s: &str) -> isize {
    memchr::memchr_iter(b'\n', s.as_bytes()).count() as isize
}

impl EditorSession {
    /// Opens a session on a note's text (cursor at 0, no selection).
    pub fn new(note_id: impl Into<String>, text: impl Into<String>) -> Self {
        EditorSession {
            note_id: note_id.into(),
            doc: Doc::new(text.into()),
            selection: None,
            cursor: 0,
            undo: Vec::new(),
            redo: Vec::new(),
            proposals: Vec::new(),
            next_id: 1,
            version: 0,
            turn: None,
            saved_version: 0,
            working: OnceLock::new(),
        }
    }

    // ----- state -----

    /// The note id.
    pub fn note_id(&self) -> &str {
        &self.note_id
    }

    /// The note's text (what the user sees; pending proposals not applied).
    pub fn text(&self) -> &str {
        self.doc.as_str()
    }

    /// Text length in chars.
    pub fn len_chars(&self) -> usize {
        self.doc.len_chars()
    }

    /// The text with every pending proposal applied (what session tools read).
    pub fn working_text(&self) -> &str {
        self.working_doc().as_str()
    }

    pub(crate) fn working_doc(&self) -> &Doc {
        if !self.has_pending() {
            return &self.doc;
        }
        self.working.get_or_init(|| self.build_working())
    }

    fn has_pending(&self) -> bool {
        self.proposals
            .iter()
            .any(|p| p.status == ProposalStatus::Pending)
    }

    /// Increments on every change of [`Self::text`].
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The selection (char range), if any. An empty range counts as no selection.
    pub fn selection(&self) -> Option<Range<usize>> {
        self.selection.clone()
    }

    /// The cursor (char offset).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Sets the selection (clamped to the text; empty → none). Does not move the cursor.
    pub fn set_selection(&mut self, selection: Option<Range<usize>>) {
        let n = self.len_chars();
        self.selection = selection
            .map(|r| r.start.min(n)..r.end.min(n))
            .filter(|r| r.start < r.end);
    }

    /// Sets the cursor (clamped to the text).
    pub fn set_cursor(&mut self, cursor: usize) {
        self.cursor = cursor.min(self.len_chars());
    }

    /// Sets the selection from UTF-16 offsets (the browser's unit).
    pub fn set_selection_utf16(&mut self, selection: Option<Range<usize>>) {
        let sel = selection.map(|r| {
            utf16_to_char(self.doc.as_str(), r.start)..utf16_to_char(self.doc.as_str(), r.end)
        });
        self.set_selection(sel);
    }

    /// Sets the cursor from a UTF-16 offset.
    pub fn set_cursor_utf16(&mut self, cursor: usize) {
        let c = utf16_to_char(self.doc.as_str(), cursor);
        self.set_cursor(c);
    }

    /// A char offset of this text as UTF-16.
    pub fn to_utf16(&self, char_offset: usize) -> usize {
        char_to_utf16(self.doc.as_str(), char_offset)
    }

    /// The turn that subsequent proposals belong to (the journal actor when they are saved).
    pub fn set_turn(&mut self, turn: Option<String>) {
        self.turn = turn;
    }

    /// Every proposal made in this session, in creation order.
    pub fn proposals(&self) -> &[EditProposal] {
        &self.proposals
    }

    /// One proposal.
    pub fn proposal(&self, id: ProposalId) -> Option<&EditProposal> {
        self.proposals.iter().find(|p| p.id == id)
    }

    /// Pending proposals in text order.
    pub fn pending(&self) -> Vec<&EditProposal> {
        self.pending_sorted()
            .into_iter()
            .map(|i| &self.proposals[i])
            .collect()
    }

    /// Records that the caller saved [`Self::text`] (so [`Self::is_dirty`] becomes false).
    pub fn mark_saved(&mut self) {
        self.saved_version = self.version;
    }

    /// Whether the text changed since it was opened or last [`Self::mark_saved`].
    pub fn is_dirty(&self) -> bool {
        self.saved_version != self.version
    }

    /// A serialisable summary for the panel and the CLI.
    pub fn state(&self) -> SessionState {
        let pending: Vec<EditProposal> = self.pending().into_iter().cloned().collect();
        let mut offsets = vec![self.len_chars(), self.cursor];
        if let Some(sel) = &self.selection {
            offsets.extend([sel.start, sel.end]);
        }
        for p in &pending {
            offsets.extend([p.range.start, p.range.end]);
        }
        let u = if self.doc.is_ascii() {
            offsets
        } else {
            crate::text::chars_to_utf16(self.doc.as_str(), &offsets)
        };
        let mut rest = u.get(2..).unwrap_or(&[]).chunks(2);
        let selection = if self.selection.is_some() {
            rest.next().map(|c| c[0]..c[c.len() - 1])
        } else {
            None
        };
        let utf16 = Utf16Positions {
            len: u.first().copied().unwrap_or(0),
            cursor: u.get(1).copied().unwrap_or(0),
            selection,
            pending: rest.map(|c| c[0]..c[c.len() - 1]).collect(),
        };
        SessionState {
            utf16,
            note_id: self.note_id.clone(),
            version: self.version,
            len_chars: self.len_chars(),
            selection: self.selection.clone(),
            cursor: self.cursor,
            pending,
            can_undo: self.can_undo(),
            can_redo: self.can_redo(),
            dirty: self.is_dirty(),
        }
    }

    /// Whether an undo step is available.
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Whether a redo step is available.
    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty()
    }

    // ----- internals: pending order, working copy, position mapping -----

    fn pending_sorted(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.proposals.len())
            .filter(|i| self.proposals[*i].status == ProposalStatus::Pending)
            .collect();
        v.sort_by_key(|i| (self.proposals[*i].range.start, self.proposals[*i].range.end));
        v
    }

    /// Forgets the working copy (rebuilt on next use).
    fn rebuild_working(&mut self) {
        self.working = OnceLock::new();
    }

    fn build_working(&self) -> Doc {
        let order = self.pending_sorted();
        let base = self.doc.as_str();
        let mut out = String::with_capacity(base.len() + 64);
        let mut at = 0usize;
        for i in order {
            let p = &self.proposals[i];
            let br = self.doc.byte_range(&p.range);
            out.push_str(&base[at..br.start.max(at)]);
            out.push_str(&p.after);
            at = br.end.max(at);
        }
        out.push_str(&base[at..]);
        Doc::new(out)
    }

    /// Maps a position in the session text to the working copy.
    fn to_working(&self, pos: usize, bias: Bias) -> usize {
        let mut delta: isize = 0;
        for i in self.pending_sorted() {
            let p = &self.proposals[i];
            let (s, e) = (p.range.start, p.range.end);
            let after = chars(&p.after) as isize;
            let d = after - (e - s) as isize;
            if e < pos || (e == pos && s < e) || (s == e && s == pos && bias.after_insertions) {
                delta += d;
            } else if s < pos && pos < e {
                let start = (s as isize + delta) as usize;
                return if bias.inside_to_end {
                    start + after as usize
                } else {
                    start
                };
            } else {
                break;
            }
        }
        (pos as isize + delta).max(0) as usize
    }

    /// The cursor in working-copy coordinates.
    pub(crate) fn working_cursor(&self) -> usize {
        self.to_working(
            self.cursor,
            Bias {
                after_insertions: false,
                inside_to_end: false,
            },
        )
    }

    /// The selection in working-copy coordinates.
    pub(crate) fn working_selection(&self) -> Option<Range<usize>> {
        let sel = self.selection.as_ref()?;
        let s = self.to_working(
            sel.start,
            Bias {
                after_insertions: true,
                inside_to_end: false,
            },
        );
        let e = self.to_working(
            sel.end,
            Bias {
                after_insertions: false,
                inside_to_end: true,
            },
        );
        Some(s..e.max(s))
    }

    // ----- proposing -----

    /// Records a tool's edit (planned against the working copy) as a proposal.
    pub(crate) fn submit(&mut self, plan: PlannedEdit) -> EditProposal {
        struct Region {
            idx: usize,
            bs: usize,
            be: usize,
            ws: usize,
            we: usize,
        }
        let mut regions = Vec::new();
        let mut delta: isize = 0;
        for idx in self.pending_sorted() {
            let p = &self.proposals[idx];
            let after = chars(&p.after);
            let ws = (p.range.start as isize + delta) as usize;
            regions.push(Region {
                idx,
                bs: p.range.start,
                be: p.range.end,
                ws,
                we: ws + after,
            });
            delta += after as isize - p.range.len() as isize;
        }
        let (ps, pe) = (plan.range.start, plan.range.end);
        let touching: Vec<&Region> = regions
            .iter()
            .filter(|r| r.ws <= pe && ps <= r.we)
            .collect();
        let (base_range, after) = match (touching.first(), touching.last()) {
            (Some(first), Some(last)) => {
                let bs = if ps < first.ws {
                    first.bs - (first.ws - ps)
                } else {
                    first.bs
                };
                let be = if pe > last.we {
                    last.be + (pe - last.we)
                } else {
                    last.be
                };
                let w = self.working_doc();
                let mut after = w.slice_chars(&(first.ws.min(ps)..ps)).to_owned();
                after.push_str(&plan.text);
                after.push_str(w.slice_chars(&(pe..last.we.max(pe))));
                (bs..be, after)
            }
            _ => {
                let before_delta: isize = regions
                    .iter()
                    .filter(|r| r.we < ps)
                    .map(|r| (r.we - r.ws) as isize - (r.be - r.bs) as isize)
                    .sum();
                let bs = (ps as isize - before_delta).max(0) as usize;
                (bs..bs + (pe - ps), plan.text.clone())
            }
        };
        let superseded: Vec<usize> = touching.iter().map(|r| r.idx).collect();
        let id = self.next_id;
        self.next_id += 1;
        for i in &superseded {
            self.proposals[*i].status = ProposalStatus::Superseded;
            self.proposals[*i].superseded_by = Some(id);
        }
        let before = self.doc.slice_chars(&base_range).to_owned();
        let byte_range = self.doc.byte_range(&base_range);
        let hunks = diff::hunks(self.doc.as_str(), byte_range, &after);
        let proposal = EditProposal {
            id,
            tool: plan.tool.to_owned(),
            arguments: plan.arguments,
            turn: self.turn.clone(),
            range: base_range,
            before,
            after,
            hunks,
            status: ProposalStatus::Pending,
            anchor_match: plan.anchor_match,
            summary: format!("proposed #{id}: {}", plan.summary),
            supersedes: superseded.iter().map(|i| self.proposals[*i].id).collect(),
            superseded_by: None,
            conflict: None,
        };
        self.proposals.push(proposal.clone());
        // keep a built working copy up to date in place; otherwise it is built when needed
        if let Some(w) = self.working.get_mut() {
            w.replace_chars(&plan.range, &plan.text);
        }
        proposal
    }

    // ----- accept / reject -----

    /// Accepts one proposal. Unknown id → error; a proposal that is not pending is reported in
    /// `skipped`.
    pub fn accept(&mut self, id: ProposalId) -> Result<AcceptOutcome, EditorError> {
        if self.proposal(id).is_none() {
            return Err(EditorError::UnknownProposal(id));
        }
        Ok(self.accept_many(&[id]))
    }

    /// Accepts every pending proposal: one undo step.
    pub fn accept_all(&mut self) -> AcceptOutcome {
        let ids: Vec<ProposalId> = self
            .proposals
            .iter()
            .filter(|p| p.status == ProposalStatus::Pending)
            .map(|p| p.id)
            .collect();
        self.accept_many(&ids)
    }

    /// Accepts the given proposals as one batch: one undo step.
    pub fn accept_many(&mut self, ids: &[ProposalId]) -> AcceptOutcome {
        let mut out = AcceptOutcome::default();
        let mut batch = Vec::new();
        for id in ids {
            match self.proposals.iter().position(|p| p.id == *id) {
                Some(i) if self.proposals[i].status == ProposalStatus::Pending => {
                    if !batch.contains(&i) {
                        batch.push(i);
                    }
                }
                _ => out.skipped.push(*id),
            }
        }
        // apply from the end of the text backwards so earlier ranges stay valid
        batch.sort_by_key(|i| {
            let r = &self.proposals[*i].range;
            (std::cmp::Reverse(r.start), std::cmp::Reverse(r.end))
        });
        let mut step = UndoStep::default();
        for i in batch {
            let range = self.proposals[i].range.clone();
            if self.doc.slice_chars(&range) != self.proposals[i].before {
                let p = &mut self.proposals[i];
                p.status = ProposalStatus::Conflict;
                p.conflict = Some("the text it would replace has changed".to_owned());
                out.conflicts.push(p.id);
                continue;
            }
            self.proposals[i].status = ProposalStatus::Accepted;
            let after = self.proposals[i].after.clone();
            let change = TextChange {
                start: range.start,
                removed: self.proposals[i].before.clone(),
                inserted: after,
            };
            self.apply_change(&change, false);
            let p = &self.proposals[i];
            out.accepted.push(p.id);
            if let Some(t) = &p.turn
                && !out.turns.contains(t)
            {
                out.turns.push(t.clone());
            }
            if change.removed != change.inserted {
                step.changes.push(change);
            }
        }
        out.accepted.reverse();
        out.changed = !step.changes.is_empty();
        if out.changed {
            self.undo.push(step);
            self.redo.clear();
        }
        self.rebuild_working();
        out
    }

    /// Rejects one proposal (the text is untouched). Returns whether it was pending.
    pub fn reject(&mut self, id: ProposalId) -> Result<bool, EditorError> {
        let p = self
            .proposals
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or(EditorError::UnknownProposal(id))?;
        if p.status != ProposalStatus::Pending {
            return Ok(false);
        }
        p.status = ProposalStatus::Rejected;
        self.rebuild_working();
        Ok(true)
    }

    /// Rejects every pending proposal; returns their ids.
    pub fn reject_all(&mut self) -> Vec<ProposalId> {
        let mut ids = Vec::new();
        for p in &mut self.proposals {
            if p.status == ProposalStatus::Pending {
                p.status = ProposalStatus::Rejected;
                ids.push(p.id);
            }
        }
        self.rebuild_working();
        ids
    }

    // ----- user edits, undo, redo -----

    /// The user replaced the chars in `range` with `text` (concurrent typing). One undo step.
    /// Returns the ids of proposals this turned into conflicts.
    pub fn user_edit(
        &mut self,
        range: Range<usize>,
        text: &str,
    ) -> Result<Vec<ProposalId>, EditorError> {
        let len = self.len_chars();
        if range.start > range.end || range.end > len {
            return Err(EditorError::BadRange {
                start: range.start,
                end: range.end,
                len,
            });
        }
        let change = TextChange {
            start: range.start,
            removed: self.doc.slice_chars(&range).to_owned(),
            inserted: text.to_owned(),
        };
        if change.removed == change.inserted {
            return Ok(Vec::new());
        }
        let conflicts = self.apply_change(&change, true);
        self.undo.push(UndoStep {
            changes: vec![change],
        });
        self.redo.clear();
        self.rebuild_working();
        Ok(conflicts)
    }

    /// Same as [`Self::user_edit`] with a UTF-16 range (clamped).
    pub fn user_edit_utf16(
        &mut self,
        range: Range<usize>,
        text: &str,
    ) -> Result<Vec<ProposalId>, EditorError> {
        let s = utf16_to_char(self.doc.as_str(), range.start);
        let e = utf16_to_char(self.doc.as_str(), range.end);
        self.user_edit(s..e.max(s), text)
    }

    /// The whole text was replaced (e.g. the browser sent the full body): derived as one edit
    /// between the common prefix and suffix. Returns the proposals that became conflicts.
    pub fn set_text(&mut self, text: &str) -> Vec<ProposalId> {
        let old = self.doc.as_str();
        let mut prefix = old
            .as_bytes()
            .iter()
            .zip(text.as_bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !old.is_char_boundary(prefix) || !text.is_char_boundary(prefix) {
            prefix -= 1;
        }
        let max_suffix = (old.len() - prefix).min(text.len() - prefix);
        let mut suffix = old.as_bytes()[old.len() - max_suffix..]
            .iter()
            .rev()
            .zip(text.as_bytes()[text.len() - max_suffix..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        while !old.is_char_boundary(old.len() - suffix)
            || !text.is_char_boundary(text.len() - suffix)
        {
            suffix -= 1;
        }
        let start = self.doc.byte_to_char(prefix);
        let end = self.doc.byte_to_char(old.len() - suffix);
        let middle = text[prefix..text.len() - suffix].to_owned();
        self.user_edit(start..end, &middle).unwrap_or_default()
    }

    /// Undoes the last step (an accepted batch or a user edit). Returns whether the text
    /// changed.
    pub fn undo(&mut self) -> bool {
        let Some(step) = self.undo.pop() else {
            return false;
        };
        for c in step.changes.iter().rev() {
            let inverse = TextChange {
                start: c.start,
                removed: c.inserted.clone(),
                inserted: c.removed.clone(),
            };
            self.apply_change(&inverse, true);
        }
        self.redo.push(step);
        self.rebuild_working();
        true
    }

    /// Redoes the last undone step. Returns whether the text changed.
    pub fn redo(&mut self) -> bool {
        let Some(step) = self.redo.pop() else {
            return false;
        };
        for c in &step.changes {
            self.apply_change(c, true);
        }
        self.undo.push(step);
        self.rebuild_working();
        true
    }

    /// Applies one change to the text and rebases everything that holds a position. With
    /// `user` set, pending proposals it overlaps become conflicts (their ids are returned);
    /// otherwise (an accept, whose change is disjoint from every other pending proposal) they
    /// only shift.
    fn apply_change(&mut self, c: &TextChange, user: bool) -> Vec<ProposalId> {
        let u = c.start;
        let removed = chars(&c.removed);
        let v = u + removed;
        let k = chars(&c.inserted);
        let d = k as isize - removed as isize;
        let dl = newlines(&c.inserted) - newlines(&c.removed);
        self.doc.replace_chars(&(u..v), &c.inserted);
        self.version += 1;
        let shift = |x: usize| (x as isize + d).max(0) as usize;
        let mut conflicts = Vec::new();
        for p in &mut self.proposals {
            if p.status != ProposalStatus::Pending {
                continue;
            }
            let (s, e) = (p.range.start, p.range.end);
            // Is the change wholly before the proposal, or wholly after it? For a pure
            // insertion proposal at `s`: typing at `s` goes before it; a deletion or
            // replacement that reaches `s` touches it.
            let before = if s < e {
                v <= s
            } else if u == v {
                u <= s
            } else {
                v < s
            };
            let after = if s < e { u >= e } else { u > s };
            if before {
                p.range = shift(s)..shift(e);
                for h in &mut p.hunks {
                    h.old_start = (h.old_start as isize + dl).max(0) as usize;
                    h.new_start = (h.new_start as isize + dl).max(0) as usize;
                }
            } else if after {
                // unchanged
            } else if user {
                p.status = ProposalStatus::Conflict;
                p.conflict =
                    Some("the user edited this text while the proposal was pending".to_owned());
                conflicts.push(p.id);
            } else if s > u {
                // an accepted proposal is disjoint from every other pending one; a pure
                // insertion right after it moves with the text after it
                p.range = shift(s)..shift(e);
            }
        }
        let map = |x: usize| {
            if x <= u {
                x
            } else if x >= v {
                shift(x)
            } else {
                u + k
            }
        };
        self.cursor = map(self.cursor);
        self.selection = self
            .selection
            .as_ref()
            .map(|r| {
                let s = if r.start < u || (r.start == u && u < v) {
                    r.start
                } else {
                    map(r.start)
                };
                s..map(r.end)
            })
            .filter(|r| r.start < r.end);
        conflicts
    }
}
