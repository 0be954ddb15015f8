//! Events a running turn streams to the panel (or the CLI) while it runs.

use crate::error::AgentError;
use crate::tool_list::Tier;
use serde::Serialize;
use serde_json::Value;
use sidenote_ai::Usage;
use sidenote_editor::EditProposal;
use sidenote_tools::RenderSpec;

/// One event of a running turn, in order. Serialised with a `type` tag for the panel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// The turn began; `tools` are the names offered to the model.
    Started { turn_id: String, tools: Vec<String> },
    /// A model call began (1-based).
    Step { step: usize },
    /// Reply text as it arrives.
    TextDelta { text: String },
    /// A tool call is about to run.
    ToolStart {
        call_id: String,
        tool: String,
        tier: Option<Tier>,
        arguments: Value,
        activity: String,
    },
    /// A tool call finished (`error` set when it failed or was refused).
    ToolEnd {
        call_id: String,
        tool: String,
        tier: Option<Tier>,
        activity: String,
        error: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        render: Option<RenderSpec>,
    },
    /// A session tool queued an edit proposal (pending until accepted).
    EditProposed { proposal: EditProposal },
    /// The turn ended with a reply.
    Finished {
        reply: String,
        usage: Usage,
        edits: usize,
    },
    /// The turn failed.
    Failed { error: AgentError },
}
