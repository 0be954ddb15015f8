//! Edit proposals: what a session tool produces instead of writing to the note.

use crate::engine::anchor::AnchorMatch;
use crate::engine::diff::DiffHunk;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ops::Range;

/// A proposal's id, unique within its session (1, 2, 3, …).
pub type ProposalId = u64;

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    /// Waiting for the user (panel) or the CLI.
    Pending,
    /// Applied to the note.
    Accepted,
    /// Dropped; the note was not touched.
    Rejected,
    /// The user changed the text it was about to replace (or next to its insertion point);
    /// it was not applied and never will be.
    Conflict,
    /// A later tool call in the same region produced a proposal that includes this one's
    /// change (see [`EditProposal::superseded_by`]).
    Superseded,
}

/// One proposed edit.
///
/// While `Pending`, `range` is a char range in the session's **current** text (it moves when the
/// user types elsewhere) and `before` is exactly the text in that range; accepting replaces it
/// with `after`. Pending proposals never overlap, so any subset can be accepted in any order.
/// Once resolved, `range` is frozen at where the proposal stood when it was resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditProposal {
    /// Id within the session.
    pub id: ProposalId,
    /// The session tool that made it (`rewrite_paragraph`, …).
    pub tool: String,
    /// The tool's arguments as the model sent them.
    pub arguments: Value,
    /// The agent turn that made it, when the caller set one ([`crate::EditorSession::set_turn`]).
    pub turn: Option<String>,
    /// Char range (Unicode scalar values) in the session text.
    pub range: Range<usize>,
    /// The text the proposal replaces (empty for a pure insertion).
    pub before: String,
    /// The replacement.
    pub after: String,
    /// Unified-diff hunks of the change against the session text (1-based line numbers).
    pub hunks: Vec<DiffHunk>,
    /// Where it stands.
    pub status: ProposalStatus,
    /// For anchored tools: which occurrence of the anchor was used.
    pub anchor_match: Option<AnchorMatch>,
    /// The short confirmation the model was given.
    pub summary: String,
    /// Earlier pending proposals this one absorbed (a later edit touched their text).
    pub supersedes: Vec<ProposalId>,
    /// Set when a later proposal absorbed this one.
    pub superseded_by: Option<ProposalId>,
    /// Why it became a conflict.
    pub conflict: Option<String>,
}

impl EditProposal {
    /// The whole change as unified-diff text (hunks only, no file header).
    pub fn unified_diff(&self) -> String {
        self.hunks.iter().map(|h| h.to_unified()).collect()
    }
}
