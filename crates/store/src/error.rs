use thiserror::Error;

/// A search query that does not parse. `message` names the bad part.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid search query: {message}")]
pub struct QueryError {
    pub message: String,
}

#[derive(Debug, Error)]
pub enum StoreError {
    /// `kind` is "Note", "Notebook", "Tag" or "Resource"; Display is e.g. `Note not found: <id>`.
    #[error("{kind} not found: {id}")]
    NotFound { kind: &'static str, id: String },
    /// Bad input from the caller (empty title, bad id, a notebook cycle, ...).
    #[error("{0}")]
    Invalid(String),
    /// `NotePatch::if_updated_time` did not match.
    #[error("conflict: note {id} was changed since it was read")]
    Conflict { id: String },
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}
