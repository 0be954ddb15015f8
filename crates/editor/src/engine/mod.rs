//! The edit engine: pure functions over a note's text (byte offsets internally; the session
//! converts to char offsets at its API).
//!
//! - [`fence`]: fenced code blocks (a line scanner following CommonMark's fence rules).
//! - [`paragraph`]: paragraph spans (a run of non-blank lines; a fenced block, blank lines and
//!   all, belongs to the paragraph it touches).
//! - [`anchor`]: exact, case-sensitive anchor search; several matches → nearest the cursor.
//! - [`blocks`]: the structured blocks (`mermaid`, `jsoncanvas`, `abc`, `fountain`).
//! - [`guard`]: the "more than half of a long note" guard.
//! - [`diff`]: unified-diff hunks for a proposal.

pub mod anchor;
pub mod blocks;
pub mod diff;
pub mod fence;
pub mod guard;
pub mod paragraph;

/// Start of the line containing byte `pos`.
pub(crate) fn line_start(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    memchr::memrchr(b'\n', &text.as_bytes()[..pos]).map_or(0, |i| i + 1)
}

/// Byte offset of the `\n` ending the line containing `pos` (or the text's length).
pub(crate) fn line_end(text: &str, pos: usize) -> usize {
    let pos = pos.min(text.len());
    memchr::memchr(b'\n', &text.as_bytes()[pos..]).map_or(text.len(), |i| pos + i)
}

/// Whether a line (without its `\n`) is blank.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}
