//! Pieces shared by the wire formats.

use crate::types::{ChatEvent, StopReason, ToolCall, Usage};
use std::sync::atomic::{AtomicU64, Ordering};

static CALL_IDS: AtomicU64 = AtomicU64::new(1);

/// An id for a tool call the server sent without one (unique within the process).
pub(crate) fn next_call_id(index: usize) -> String {
    let n = CALL_IDS.fetch_add(1, Ordering::Relaxed);
    format!("call_sn{n}_{index}")
}

/// The end of one response: complete tool calls, usage, stop reason.
pub(crate) struct Finish {
    pub tool_calls: Vec<ToolCall>,
    pub stop: Option<StopReason>,
    pub usage: Usage,
}

impl Finish {
    /// Push `ToolCall`s, then `Usage`, then `Stop`. A step with tool calls always stops with
    /// `ToolUse` (local servers often report `stop`).
    pub fn push_into(self, out: &mut Vec<ChatEvent>) {
        let stop = if self.tool_calls.is_empty() {
            self.stop.unwrap_or(StopReason::EndTurn)
        } else {
            StopReason::ToolUse
        };
        out.extend(self.tool_calls.into_iter().map(ChatEvent::ToolCall));
        out.push(ChatEvent::Usage(self.usage));
        out.push(ChatEvent::Stop(stop));
    }
}
