//! `sidenote-ai` — the AI chat primitive: one model step with tools, streamed.
//!
//! Knows nothing of notes. The agent loop builds a [`ChatRequest`] (provider-neutral
//! [`Message`]s, [`ToolSpec`]s, [`ChatOptions`], an optional cancellation token), and calls
//! [`ChatProvider::stream`] (text deltas as they arrive, then complete tool calls, usage and a
//! stop reason) or [`ChatProvider::chat`] (the same, collected into a [`ChatResult`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), sidenote_ai::AiError> {
//! use sidenote_ai::*;
//! let config = ProviderConfig::resolve(&|_key| None, &|k| std::env::var(k).ok())?;
//! let provider = build_provider(config, None)?; // privacy gate applied here
//! let result = provider.chat(ChatRequest::new(vec![Message::user("Hi")])).await?;
//! println!("{} ({:?})", result.text, result.stop_reason);
//! # Ok(()) }
//! ```
//!
//! Wire formats: OpenAI-compatible Chat Completions and Anthropic Messages, thin clients on reqwest with lenient parsing. Robustness: retries with backoff on
//! 429/5xx/connection errors honouring `Retry-After` (bounded), connect/first-byte/idle
//! timeouts, cancellation, and a cut stream is an error — never a half tool call.

mod anthropic;
pub mod config;
pub mod error;
mod openai;
pub mod privacy;
pub mod probe;
pub mod provider;
pub mod replay;
pub mod retry;
pub mod schema_adapt;
pub mod types;
pub mod usage;
mod wire;

pub use config::{ProviderConfig, ProviderType, RetryPolicy, Timeouts};
pub use error::{AiError, TimeoutKind};
pub use privacy::Classification;
pub use provider::{ChatProvider, ChatStream, HttpProvider, build_provider, collect, wants_tools};
pub use tokio_util::sync::CancellationToken;
pub use types::{
    ChatEvent, ChatOptions, ChatRequest, ChatResult, Message, StopReason, ToolCall, ToolChoice,
    ToolSpec, Usage,
};
pub use usage::{MemoryUsage, UsageSink, UsageTable, UsageTotals};
