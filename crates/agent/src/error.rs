//! The agent's errors: a stable `code` the panel and `--json` callers switch on, and a message
//! that says what to do.

use serde::{Deserialize, Serialize};
use sidenote_ai::AiError;

/// Why a turn failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct AgentError {
    /// `max_steps_exceeded`, `cancelled`, `provider_error`, `internal` or `invalid_request`
    /// (the CLI adds `not_configured` when no provider is set up).
    pub code: String,
    pub message: String,
}

impl AgentError {
    pub const MAX_STEPS_EXCEEDED: &'static str = "max_steps_exceeded";
    pub const CANCELLED: &'static str = "cancelled";
    pub const PROVIDER_ERROR: &'static str = "provider_error";
    pub const INTERNAL: &'static str = "internal";
    pub const INVALID_REQUEST: &'static str = "invalid_request";

    pub fn new(code: &str, message: impl Into<String>) -> Self {
        AgentError {
            code: code.to_string(),
            message: message.into(),
        }
    }
    pub fn max_steps(max: usize) -> Self {
        Self::new(
            Self::MAX_STEPS_EXCEEDED,
            format!(
                "the agent stopped after {max} model calls without a final answer; \
                 try a narrower request"
            ),
        )
    }
    pub fn cancelled() -> Self {
        Self::new(
            Self::CANCELLED,
            "the turn was cancelled; no pending edit was applied",
        )
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Self::INTERNAL, message)
    }
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(Self::INVALID_REQUEST, message)
    }
    pub fn is_cancelled(&self) -> bool {
        self.code == Self::CANCELLED
    }
}

impl From<AiError> for AgentError {
    fn from(e: AiError) -> Self {
        match e {
            AiError::Cancelled => AgentError::cancelled(),
            other => AgentError::new(AgentError::PROVIDER_ERROR, other.to_string()),
        }
    }
}
