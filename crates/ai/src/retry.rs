//! Sending one request with retries (429, 5xx, connection errors), `Retry-After` and timeouts.

use crate::config::ProviderConfig;
use crate::error::{AiError, TimeoutKind};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::HeaderMap;
use serde_json::Value;
use std::time::Duration;

/// How long the server asks us to wait: `retry-after-ms` (OpenAI) or `Retry-After` in seconds.
/// HTTP-date values are ignored (the backoff applies instead).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    if let Some(ms) = get("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms.min(1e9) / 1000.0));
    }
    get("retry-after").map(|s| Duration::from_secs_f64(s.min(1e9)))
}

/// The source chain of an error, joined (reqwest hides the useful part in sources).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let m = inner.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = inner.source();
    }
    s
}

/// The innermost error message (e.g. "Connection refused (os error 111)").
pub(crate) fn root_cause(e: &dyn std::error::Error) -> String {
    let mut last = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        last = inner.to_string();
        src = inner.source();
    }
    last
}

/// A failure while reading a response body.
#[derive(Debug)]
pub(crate) enum BodyError {
    Idle(Duration),
    Transport(String),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Idle(d) => write!(f, "no data for {d:?}"),
            BodyError::Transport(s) => f.write_str(s),
        }
    }
}

impl From<BodyError> for AiError {
    fn from(e: BodyError) -> Self {
        match e {
            BodyError::Idle(after) => AiError::Timeout {
                kind: TimeoutKind::Idle,
                after,
            },
            BodyError::Transport(s) => AiError::StreamCut(s),
        }
    }
}

/// The response body as a stream of chunks that fails when it goes silent for `idle`.
pub(crate) fn body_stream(
    resp: reqwest::Response,
    idle: Duration,
) -> impl Stream<Item = Result<Bytes, BodyError>> + Send + Unpin {
    let inner = resp.bytes_stream().boxed();
    futures::stream::unfold((inner, false), move |(mut s, done)| async move {
        if done {
            return None;
        }
        match tokio::time::timeout(idle, s.next()).await {
            Err(_) => Some((Err(BodyError::Idle(idle)), (s, true))),
            Ok(None) => None,
            Ok(Some(Ok(b))) => Some((Ok(b), (s, false))),
            Ok(Some(Err(e))) => Some((Err(BodyError::Transport(error_chain(&e))), (s, true))),
        }
    })
    .boxed()
}

/// Read a whole body (bounded by `limit` bytes), with the idle timeout between chunks.
pub(crate) async fn read_body(
    resp: reqwest::Response,
    idle: Duration,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let mut out = Vec::new();
    let mut s = body_stream(resp, idle);
    while let Some(chunk) = s.next().await {
        let chunk = chunk?;
        let room = limit.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// The short, human part of an error body: `error.message`, `error` (string), `message` or
/// `detail`; else the first 200 characters of the text.
pub(crate) fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        let candidates = [
            v.pointer("/error/message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("message"),
            v.get("detail"),
        ];
        for c in candidates.into_iter().flatten() {
            if let Some(s) = c.as_str().filter(|s| !s.trim().is_empty()) {
                return s.trim().to_string();
            }
        }
    }
    let t = text.trim();
    if t.is_empty() {
        "(no details in the response)".into()
    } else {
        truncate(t, 200)
    }
}

pub(crate) fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// POST `body` to `url` and return a 2xx response, retrying per the policy.
pub(crate) async fn send_with_retry(
    client: &reqwest::Client,
    config: &ProviderConfig,
    provider: &'static str,
    url: &str,
    headers: &HeaderMap,
    body: &Value,
) -> Result<reqwest::Response, AiError> {
    let policy = config.retry;
    let mut attempt: u32 = 0;
    loop {
        attempt += 1;
        let (err, wait_hint) = match send_once(client, config, provider, url, headers, body).await {
            Ok(resp) => return Ok(resp),
            Err(e) => e,
        };
        if !err.is_retryable() {
            return Err(err);
        }
        if attempt > policy.max_retries {
            return Err(if attempt > 1 {
                AiError::RetriesExhausted {
                    attempts: attempt,
                    last: Box::new(err),
                }
            } else {
                err
            });
        }
        let wait = match wait_hint {
            Some(d) if d > policy.max_retry_after => {
                let status = match &err {
                    AiError::Http { status, .. } => *status,
                    _ => 0,
                };
                return Err(AiError::RetryAfterTooLong {
                    provider,
                    status,
                    wait: d,
                    max: policy.max_retry_after,
                });
            }
            Some(d) => d,
            None => policy.backoff(attempt - 1),
        };
        tracing::warn!(attempt, ?wait, error = %err, "AI request failed; retrying");
        tokio::time::sleep(wait).await;
    }
}

async fn send_once(
    client: &reqwest::Client,
    config: &ProviderConfig,
    provider: &'static str,
    url: &str,
    headers: &HeaderMap,
    body: &Value,
) -> Result<reqwest::Response, (AiError, Option<Duration>)> {
    let req = client.post(url).headers(headers.clone()).json(body);
    let first_byte = config.timeouts.first_byte;
    let resp = match tokio::time::timeout(first_byte, req.send()).await {
        Err(_) => {
            return Err((
                AiError::Timeout {
                    kind: TimeoutKind::FirstByte,
                    after: first_byte,
                },
                None,
            ));
        }
        Ok(Err(e)) => {
            let err = if e.is_connect() && e.is_timeout() {
                AiError::Timeout {
                    kind: TimeoutKind::Connect,
                    after: config.timeouts.connect,
                }
            } else if e.is_connect() {
                AiError::Connect {
                    url: url.to_string(),
                    detail: root_cause(&e),
                }
            } else if e.is_timeout() {
                AiError::Timeout {
                    kind: TimeoutKind::FirstByte,
                    after: first_byte,
                }
            } else {
                AiError::Transport(error_chain(&e))
            };
            return Err((err, None));
        }
        Ok(Ok(resp)) => resp,
    };
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let hint = retry_after(resp.headers());
    let body = read_body(resp, config.timeouts.idle, 64 * 1024)
        .await
        .unwrap_or_default();
    Err((
        AiError::Http {
            provider,
            status: status.as_u16(),
            message: error_message(&body),
        },
        hint,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn parses_retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn error_messages_are_extracted() {
        assert_eq!(
            error_message(br#"{"error":{"message":"bad key","type":"x"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_message(b"<html>Bad Gateway</html>"),
            "<html>Bad Gateway</html>"
        );
        assert_eq!(error_message(b""), "(no details in the response)");
        assert_eq!(
            error_message("é".repeat(300).as_bytes()).chars().count(),
            201
        );
    }
}
