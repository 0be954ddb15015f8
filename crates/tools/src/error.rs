use sidenote_store::StoreError;
use thiserror::Error;

/// Errors by audience: `Recoverable` is read by the model (and MCP clients, as
/// `isError: true`), which can fix its call and try again; `Internal` fails the call
/// (MCP JSON-RPC −32603; the agent turn ends with a clear message).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ToolError {
    #[error("{0}")]
    Recoverable(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    pub fn recoverable(msg: impl std::fmt::Display) -> Self {
        ToolError::Recoverable(msg.to_string())
    }
    pub fn internal(msg: impl std::fmt::Display) -> Self {
        ToolError::Internal(msg.to_string())
    }
    pub fn is_recoverable(&self) -> bool {
        matches!(self, ToolError::Recoverable(_))
    }
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { .. }
            | StoreError::Invalid(_)
            | StoreError::Conflict { .. }
            | StoreError::Query(_) => ToolError::Recoverable(e.to_string()),
            StoreError::Sql(_) | StoreError::Io(_) => ToolError::Internal(e.to_string()),
        }
    }
}
