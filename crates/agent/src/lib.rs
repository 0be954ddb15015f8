//! `sidenote-agent` — the AI sidebar's agent (the seed's `runNoteChat`).
//!
//! One user turn: [`build_tool_list`] picks the tools from the [`NoteContext`] (the seed's
//! table), [`system_prompt`] frames the app, the focused note and its selection, then
//! [`run_note_chat`] calls the model up to [`MAX_STEPS`] times. Every tool call is routed by
//! id — session tools to the [`sidenote_editor::EditorSession`] (edits stay pending
//! proposals), everything else to the workspace-tool [`sidenote_tools::Registry`] (writes are
//! journaled as `agent:<turn_id>`). Calls to tools not offered this turn, bad JSON arguments,
//! schema failures and the third identical call are answered with an error result the model
//! can recover from; a tool's internal error fails the turn.
//!
//! ```no_run
//! # async fn demo(provider: std::sync::Arc<dyn sidenote_ai::ChatProvider>,
//! #               store: sidenote_store::Store) -> Result<(), Box<dyn std::error::Error>> {
//! use sidenote_agent::*;
//! let registry = sidenote_tools::Registry::new();
//! sidenote_tools::builtin::register_builtin(&registry, store.clone())?;
//! let agent = Agent::new(provider, registry).with_store(store);
//! let (tx, mut rx) = tokio::sync::mpsc::channel(64);
//! tokio::spawn(async move { while let Some(ev) = rx.recv().await { println!("{ev:?}") } });
//! let mut req = TurnRequest::new(NoteContext::workspace(), "Find my packing list");
//! req.events = Some(tx);
//! let done = agent.run(req).await?;
//! println!("{} ({} tool calls)", done.reply, done.transcript.len());
//! # Ok(()) }
//! ```
//!
//! [`turns`]: list recent turns and revert one (`sidenote turns list|revert`).

pub mod context;
pub mod dispatch;
pub mod error;
pub mod events;
pub mod prompt;
pub mod run;
pub mod tool_list;
pub mod transcript;
pub mod turns;

pub use context::{FocusedNote, NoteContext};
pub use dispatch::{REPEAT_LIMIT, SharedSession, serialize_output};
pub use error::AgentError;
pub use events::TurnEvent;
pub use prompt::{MARKDOWN_RULES, PromptOptions, system_prompt};
pub use run::{
    Agent, AgentOptions, MAX_STEPS, TurnFailure, TurnRequest, TurnResult, TurnUsage, run_note_chat,
};
pub use sidenote_ai::CancellationToken;
pub use tool_list::{SidebarToggles, Tier, ToolList, TurnTool, build_tool_list};
pub use transcript::TranscriptEntry;
pub use turns::{RevertError, RevertReport, TurnSummary, list_turns, revert_turn};
