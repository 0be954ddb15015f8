//! Errors of the AI primitive. Every message says what the user can do about it.

use std::time::Duration;

/// Which timeout fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutKind {
    /// No TCP/TLS connection within the connect timeout.
    Connect,
    /// Connected, but no response headers within the first-byte timeout.
    FirstByte,
    /// The response stream went silent for longer than the idle timeout.
    Idle,
}

#[derive(Debug, thiserror::Error)]
pub enum AiError {
    /// A required setting is missing or invalid.
    #[error("{0}")]
    NotConfigured(String),
    /// The provider is remote and `ai.allowRemote` is off. Raised before any connection.
    #[error(
        "Remote AI access is not allowed: {base_url} is not on this machine. Run `sidenote config set ai.allowRemote true` to allow cloud-hosted models, or point ai.chat.baseUrl at a local server (127.0.0.1/localhost)."
    )]
    RemoteNotAllowed { base_url: String },
    /// The request to the model is invalid (no messages, …).
    #[error("{0}")]
    InvalidRequest(String),
    /// The server answered with an error status.
    #[error("{provider} returned HTTP {status}: {message}{hint}", hint = status_hint(*status))]
    Http {
        provider: &'static str,
        status: u16,
        message: String,
    },
    /// 429/5xx/connection errors persisted through every retry.
    #[error("{last} (gave up after {attempts} attempts)")]
    RetriesExhausted { attempts: u32, last: Box<AiError> },
    /// The server asked to wait longer than we are willing to.
    #[error(
        "{provider} is rate limiting (HTTP {status}) and asks to wait {wait:?}, longer than the {max:?} allowed; try again later or check your plan's rate limits."
    )]
    RetryAfterTooLong {
        provider: &'static str,
        status: u16,
        wait: Duration,
        max: Duration,
    },
    /// Could not reach the server.
    #[error(
        "cannot connect to the AI provider at {url}: {detail}. Is the server running, and is ai.chat.baseUrl right?"
    )]
    Connect { url: String, detail: String },
    #[error("{}", timeout_message(*kind, *after))]
    Timeout { kind: TimeoutKind, after: Duration },
    /// The response stream ended or broke before the model finished; nothing partial is handed on.
    #[error(
        "the AI provider's response was cut off mid-way ({0}); no partial tool call was used. Try again; if it keeps happening, check the server's logs or set ai.chat.streaming to false."
    )]
    StreamCut(String),
    /// The server answered 2xx with something we cannot read.
    #[error("{0}")]
    BadResponse(String),
    /// The caller cancelled the request.
    #[error("the AI request was cancelled")]
    Cancelled,
    /// Any other transport problem.
    #[error("AI provider request failed: {0}. Check ai.chat.baseUrl and the server's logs.")]
    Transport(String),
}

impl AiError {
    /// True when retrying the same request may succeed (429, 5xx, connection refused or
    /// timed out).
    pub fn is_retryable(&self) -> bool {
        match self {
            AiError::Http { status, .. } => *status == 429 || *status >= 500,
            AiError::Connect { .. } => true,
            AiError::Timeout {
                kind: TimeoutKind::Connect,
                ..
            } => true,
            _ => false,
        }
    }
}

fn status_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => {
            " — check the API key (ai.chat.apiKey or the SIDENOTE_AI_API_KEY environment variable)."
        }
        404 => {
            " — check ai.chat.baseUrl (OpenAI-compatible servers usually need it to end with /v1) and that ai.chat.model names a model the server has."
        }
        429 => " — the provider is rate limiting; wait a moment and try again.",
        500..=599 => " — the provider is having trouble; try again later.",
        _ => "",
    }
}

fn timeout_message(kind: TimeoutKind, after: Duration) -> String {
    match kind {
        TimeoutKind::Connect => format!(
            "could not connect to the AI provider within {after:?}; is the server running and reachable? (setting ai.chat.connectTimeoutMs)"
        ),
        TimeoutKind::FirstByte => format!(
            "the AI provider did not start answering within {after:?}; a local model may still be loading — try again, or raise ai.chat.firstByteTimeoutMs"
        ),
        TimeoutKind::Idle => format!(
            "the AI provider's response stalled for more than {after:?}; try again, or raise ai.chat.idleTimeoutMs for slow models"
        ),
    }
}
