//! The editor session and the six session tools (Tier 1 of the seed).
//!
//! - [`EditorSession`]: the open note's text, selection, cursor, undo/redo stack and the
//!   pending-diff queue of [`EditProposal`]s. Offsets are **char offsets** (Unicode scalar
//!   values) throughout; convert browser UTF-16 offsets with [`utf16_to_char`] /
//!   [`char_to_utf16`].
//! - [`tools`]: `edit_selection`, `rewrite_paragraph`, `insert_before_anchor`,
//!   `insert_after_anchor`, `append_to_note`, `replace_structured_block`. Each call appends a
//!   proposal (never writes); [`available_tools`] implements the seed's availability table and
//!   [`dispatch`] is the agent's gate (availability, then schema validation, then the tool).
//! - Accepting (one proposal or a batch) is one undo step and returns what changed; the caller
//!   saves [`EditorSession::text`] through the store once (see [`session`] for the contract).
//! - [`engine`]: the pure text engine (anchors, paragraphs, fenced blocks, guard, diff hunks).
//!
//! # Decisions (where the issue left a choice)
//! - **Chained edits** are recorded against the session text, not the working copy. A tool call
//!   whose edit touches (overlaps or abuts) earlier pending proposals absorbs them into one new
//!   proposal; the old ones become `Superseded`. Pending proposals are therefore always disjoint,
//!   and any subset can be accepted or rejected.
//! - **Concurrent typing** rebases eagerly: [`EditorSession::user_edit`] shifts proposals it does
//!   not touch and marks the ones whose `before` text it overlaps (or, for a pure insertion,
//!   whose insertion point a deletion reaches) as `Conflict`. Accept re-checks `before` at the
//!   rebased position. [`EditorSession::set_text`] turns a full-text update into one edit
//!   (common prefix/suffix). User edits are undo steps too.
//! - **The 50% guard** applies to `rewrite_paragraph` on notes of at least
//!   [`engine::guard::LONG_NOTE_CHARS`] chars. `edit_selection` (the user chose the scope),
//!   insertions and `replace_structured_block` (one explicit block) are not guarded.
//! - **Structured blocks** are found with the same CommonMark fence scanner as paragraphs: the
//!   tag is the info string's first word, case-insensitive (so ```` ```mermaid {x} ```` counts,
//!   ```` ```abcd ```` does not count as `abc`). Several blocks → the one nearest the cursor.
//! - **Argument errors** use the workspace registry's wording (`Invalid arguments: 'field': rule`).

pub mod engine;
pub mod proposal;
pub mod session;
pub mod text;
pub mod tools;

pub use engine::anchor::AnchorMatch;
pub use engine::blocks::SUPPORTED_TAGS;
pub use engine::diff::{DiffHunk, DiffLine};
pub use proposal::{EditProposal, ProposalId, ProposalStatus};
pub use session::{AcceptOutcome, EditorError, EditorSession, SessionState, Utf16Positions};
pub use text::{char_to_utf16, chars_to_utf16, utf16_to_char};
pub use tools::{
    SessionTool, SessionToolError, SessionToolOutput, all_tools, available_tools,
    available_tools_for, dispatch, find_tool, has_structured_block,
};
