//! The turn's record of tool calls (what the panel shows as tool-use entries).

use crate::tool_list::Tier;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One tool call of the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptEntry {
    /// 1-based model step that made the call.
    pub step: usize,
    pub call_id: String,
    pub tool: String,
    /// `None` when the tool was not offered this turn (the call was refused).
    pub tier: Option<Tier>,
    pub arguments: Value,
    /// The tool's output (JSON) on success; session tools give `{message, proposal_id}`.
    pub output: Option<Value>,
    /// The error text the model was given.
    pub error: Option<String>,
    /// The tool's RenderSpec, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<Value>,
    /// One human line, e.g. `Found 3 notes`.
    pub activity: String,
}
