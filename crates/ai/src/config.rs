//! Provider settings and their resolution from settings + environment.
//!
//! Settings (Joplin-style keys) and the environment variables that override them:
//!
//! | setting | env override | default |
//! |---|---|---|
//! | `ai.chat.providerType` (`openai-compatible` \| `anthropic`) | `SIDENOTE_AI_PROVIDER` | `openai-compatible` |
//! | `ai.chat.baseUrl` | `SIDENOTE_AI_BASE_URL` | Anthropic: `https://api.anthropic.com/v1`; OpenAI-compatible: required |
//! | `ai.chat.model` | `SIDENOTE_AI_MODEL` | required |
//! | `ai.chat.apiKey` | `SIDENOTE_AI_API_KEY` | then `ANTHROPIC_API_KEY` (Anthropic) or `OPENAI_API_KEY` (only for `api.openai.com`) |
//! | `ai.allowRemote` | — | `false` |
//! | `ai.chat.anthropicVersion` | — | `2023-06-01` |
//! | `ai.chat.streaming` | — | `true` |
//! | `ai.chat.connectTimeoutMs` / `firstByteTimeoutMs` / `idleTimeoutMs` | — | 10 s / 120 s / 60 s |
//! | `ai.chat.maxRetries` | — | 3 |

use crate::error::AiError;
use crate::privacy::{self, Classification};
use std::fmt;
use std::time::Duration;

/// Every setting key [`ProviderConfig::resolve`] reads (so a caller can pre-load them).
pub const SETTING_KEYS: &[&str] = &[
    "ai.chat.providerType",
    "ai.chat.baseUrl",
    "ai.chat.model",
    "ai.chat.apiKey",
    "ai.allowRemote",
    "ai.chat.anthropicVersion",
    "ai.chat.streaming",
    "ai.chat.connectTimeoutMs",
    "ai.chat.firstByteTimeoutMs",
    "ai.chat.idleTimeoutMs",
    "ai.chat.maxRetries",
];

pub const DEFAULT_ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
pub const DEFAULT_ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderType {
    /// OpenAI Chat Completions wire format (OpenAI, Ollama `/v1`, LM Studio, llama.cpp, vLLM, OpenRouter).
    OpenAiCompatible,
    /// Anthropic Messages API.
    Anthropic,
}

impl ProviderType {
    pub fn parse(s: &str) -> Result<ProviderType, AiError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai-compatible" | "openai" | "openai_compatible" => {
                Ok(ProviderType::OpenAiCompatible)
            }
            "anthropic" => Ok(ProviderType::Anthropic),
            other => Err(AiError::NotConfigured(format!(
                "Unknown AI provider type {other:?}; set ai.chat.providerType (or SIDENOTE_AI_PROVIDER) to \"openai-compatible\" or \"anthropic\""
            ))),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderType::OpenAiCompatible => "openai-compatible",
            ProviderType::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for ProviderType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// TCP/TLS connect.
    pub connect: Duration,
    /// From sending the request to the response headers.
    pub first_byte: Duration,
    /// Longest silence between two chunks of the response body.
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(120),
            idle: Duration::from_secs(60),
        }
    }
}

/// Retries on 429, 5xx and connection errors, with exponential backoff. A `Retry-After`
/// (or `retry-after-ms`) header replaces the backoff, up to `max_retry_after`; a longer ask
/// fails at once with a clear error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (0-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(16));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// Everything needed to talk to one provider endpoint.
#[derive(Clone, PartialEq)]
pub struct ProviderConfig {
    pub provider_type: ProviderType,
    /// E.g. `http://127.0.0.1:11434/v1`. OpenAI-compatible requests go to `{base}/chat/completions`;
    /// Anthropic ones to `{base}/messages` (`/v1` is added when missing).
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub allow_remote: bool,
    /// Sent as the `anthropic-version` header.
    pub anthropic_version: String,
    /// Ask the server to stream (SSE). When false, one JSON response per call.
    pub streaming: bool,
    pub timeouts: Timeouts,
    pub retry: RetryPolicy,
}

impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("provider_type", &self.provider_type)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("allow_remote", &self.allow_remote)
            .field("anthropic_version", &self.anthropic_version)
            .field("streaming", &self.streaming)
            .field("timeouts", &self.timeouts)
            .field("retry", &self.retry)
            .finish()
    }
}

impl ProviderConfig {
    /// A config with defaults for everything but the essentials (no key, remote refused).
    pub fn new(
        provider_type: ProviderType,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> Self {
        ProviderConfig {
            provider_type,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            allow_remote: false,
            anthropic_version: DEFAULT_ANTHROPIC_VERSION.to_string(),
            streaming: true,
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
        }
    }

    /// Resolve from a settings lookup and an environment lookup (pass `|k| std::env::var(k).ok()`).
    /// Empty values count as unset.
    pub fn resolve(
        setting: &dyn Fn(&str) -> Option<String>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ProviderConfig, AiError> {
        let nonempty =
            |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let get = |env_key: Option<&str>, key: &str| {
            env_key
                .and_then(|k| nonempty(env(k)))
                .or_else(|| nonempty(setting(key)))
        };

        let provider_type = match get(Some("SIDENOTE_AI_PROVIDER"), "ai.chat.providerType") {
            Some(t) => ProviderType::parse(&t)?,
            None => ProviderType::OpenAiCompatible,
        };
        let base_url = match get(Some("SIDENOTE_AI_BASE_URL"), "ai.chat.baseUrl") {
            Some(u) => u,
            None => match provider_type {
                ProviderType::Anthropic => DEFAULT_ANTHROPIC_BASE_URL.to_string(),
                ProviderType::OpenAiCompatible => {
                    return Err(AiError::NotConfigured(
                        "The OpenAI-compatible provider has no base URL: set ai.chat.baseUrl (or SIDENOTE_AI_BASE_URL), e.g. http://127.0.0.1:11434/v1 for Ollama or https://api.openai.com/v1".into(),
                    ));
                }
            },
        };
        let base_url = base_url.trim_end_matches('/').to_string();
        let model = get(Some("SIDENOTE_AI_MODEL"), "ai.chat.model").ok_or_else(|| {
            AiError::NotConfigured(format!(
                "The {provider_type} provider has no model: set ai.chat.model (or SIDENOTE_AI_MODEL)"
            ))
        })?;
        let host = url::Url::parse(&base_url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.to_ascii_lowercase()));
        let api_key =
            get(Some("SIDENOTE_AI_API_KEY"), "ai.chat.apiKey").or_else(|| match provider_type {
                ProviderType::Anthropic => nonempty(env("ANTHROPIC_API_KEY")),
                // Only hand an OpenAI key to OpenAI itself, never to another server.
                ProviderType::OpenAiCompatible if host.as_deref() == Some("api.openai.com") => {
                    nonempty(env("OPENAI_API_KEY"))
                }
                ProviderType::OpenAiCompatible => None,
            });
        let allow_remote =
            parse_bool(get(None, "ai.allowRemote").as_deref(), "ai.allowRemote")?.unwrap_or(false);
        let streaming = parse_bool(
            get(None, "ai.chat.streaming").as_deref(),
            "ai.chat.streaming",
        )?
        .unwrap_or(true);
        let anthropic_version = get(None, "ai.chat.anthropicVersion")
            .unwrap_or_else(|| DEFAULT_ANTHROPIC_VERSION.to_string());
        let mut timeouts = Timeouts::default();
        if let Some(ms) = parse_u64(
            get(None, "ai.chat.connectTimeoutMs"),
            "ai.chat.connectTimeoutMs",
        )? {
            timeouts.connect = Duration::from_millis(ms);
        }
        if let Some(ms) = parse_u64(
            get(None, "ai.chat.firstByteTimeoutMs"),
            "ai.chat.firstByteTimeoutMs",
        )? {
            timeouts.first_byte = Duration::from_millis(ms);
        }
        if let Some(ms) = parse_u64(get(None, "ai.chat.idleTimeoutMs"), "ai.chat.idleTimeoutMs")? {
            timeouts.idle = Duration::from_millis(ms);
        }
        let mut retry = RetryPolicy::default();
        if let Some(n) = parse_u64(get(None, "ai.chat.maxRetries"), "ai.chat.maxRetries")? {
            retry.max_retries = u32::try_from(n.min(20)).unwrap_or(20);
        }
        let config = ProviderConfig {
            provider_type,
            base_url,
            model,
            api_key,
            allow_remote,
            anthropic_version,
            streaming,
            timeouts,
            retry,
        };
        config.validate()?;
        Ok(config)
    }

    /// Check the essentials (URL shape, model, Anthropic key for remote endpoints).
    pub fn validate(&self) -> Result<(), AiError> {
        let class = privacy::classify(&self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(AiError::NotConfigured(format!(
                "The {} provider has no model: set ai.chat.model (or SIDENOTE_AI_MODEL)",
                self.provider_type
            )));
        }
        if self.provider_type == ProviderType::Anthropic
            && class == Classification::Remote
            && self.api_key.is_none()
        {
            return Err(AiError::NotConfigured(
                "The Anthropic provider has no API key: set ai.chat.apiKey, SIDENOTE_AI_API_KEY or ANTHROPIC_API_KEY".into(),
            ));
        }
        Ok(())
    }

    /// `local` or `remote`, by the base URL's host.
    pub fn classification(&self) -> Result<Classification, AiError> {
        privacy::classify(&self.base_url)
    }

    /// The key usage is counted under: `<provider type> <base URL>`.
    pub fn endpoint_id(&self) -> String {
        format!(
            "{} {}",
            self.provider_type,
            self.base_url.trim_end_matches('/')
        )
    }
}

fn parse_bool(v: Option<&str>, key: &str) -> Result<Option<bool>, AiError> {
    match v.map(|s| s.to_ascii_lowercase()) {
        None => Ok(None),
        Some(s) => match s.as_str() {
            "true" | "1" | "yes" | "on" => Ok(Some(true)),
            "false" | "0" | "no" | "off" => Ok(Some(false)),
            _ => Err(AiError::NotConfigured(format!(
                "{key} must be true or false, got {s:?}"
            ))),
        },
    }
}

fn parse_u64(v: Option<String>, key: &str) -> Result<Option<u64>, AiError> {
    match v {
        None => Ok(None),
        Some(s) => s.parse::<u64>().map(Some).map_err(|_| {
            AiError::NotConfigured(format!("{key} must be a whole number, got {s:?}"))
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::collections::HashMap;

    fn resolve(settings: &[(&str, &str)], env: &[(&str, &str)]) -> Result<ProviderConfig, AiError> {
        let s: HashMap<String, String> = settings
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let e: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProviderConfig::resolve(&|k| s.get(k).cloned(), &|k| e.get(k).cloned())
    }

    #[test]
    fn settings_then_env_overrides() {
        let c = resolve(
            &[
                ("ai.chat.providerType", "anthropic"),
                ("ai.chat.baseUrl", "http://127.0.0.1:1/v1/"),
                ("ai.chat.model", "m1"),
                ("ai.chat.idleTimeoutMs", "250"),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(c.provider_type, ProviderType::Anthropic);
        assert_eq!(c.base_url, "http://127.0.0.1:1/v1");
        assert_eq!(c.model, "m1");
        assert_eq!(c.timeouts.idle, Duration::from_millis(250));
        assert!(!c.allow_remote);

        let c = resolve(
            &[
                ("ai.chat.providerType", "anthropic"),
                ("ai.chat.model", "m1"),
            ],
            &[
                ("SIDENOTE_AI_PROVIDER", "openai-compatible"),
                ("SIDENOTE_AI_BASE_URL", "http://localhost:11434/v1"),
                ("SIDENOTE_AI_MODEL", "qwen3"),
            ],
        )
        .unwrap();
        assert_eq!(c.provider_type, ProviderType::OpenAiCompatible);
        assert_eq!(c.base_url, "http://localhost:11434/v1");
        assert_eq!(c.model, "qwen3");
    }

    #[test]
    fn api_key_sources() {
        let base = [
            ("ai.chat.model", "m"),
            ("ai.chat.baseUrl", "https://api.openai.com/v1"),
        ];
        let c = resolve(&base, &[("OPENAI_API_KEY", "sk-env")]).unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-env"));
        let c = resolve(
            &[
                ("ai.chat.model", "m"),
                ("ai.chat.baseUrl", "https://api.openai.com/v1"),
                ("ai.chat.apiKey", "sk-set"),
            ],
            &[("OPENAI_API_KEY", "sk-env")],
        )
        .unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-set"));
        let c = resolve(
            &base,
            &[
                ("SIDENOTE_AI_API_KEY", "sk-side"),
                ("OPENAI_API_KEY", "sk-env"),
            ],
        )
        .unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-side"));
        // An OpenAI key is never handed to another server.
        let c = resolve(
            &[
                ("ai.chat.model", "m"),
                ("ai.chat.baseUrl", "https://openrouter.ai/api/v1"),
            ],
            &[("OPENAI_API_KEY", "sk-env")],
        )
        .unwrap();
        assert_eq!(c.api_key, None);
        let c = resolve(
            &[
                ("ai.chat.providerType", "anthropic"),
                ("ai.chat.model", "claude"),
            ],
            &[("ANTHROPIC_API_KEY", "sk-ant")],
        )
        .unwrap();
        assert_eq!(c.api_key.as_deref(), Some("sk-ant"));
        assert_eq!(c.base_url, DEFAULT_ANTHROPIC_BASE_URL);
        assert!(
            !format!("{c:?}").contains("sk-ant"),
            "Debug must redact the key"
        );
    }

    #[test]
    fn clear_errors_for_missing_or_bad_settings() {
        let e = resolve(&[("ai.chat.model", "m")], &[]).unwrap_err();
        assert!(e.to_string().contains("ai.chat.baseUrl"), "{e}");
        let e = resolve(&[("ai.chat.baseUrl", "http://127.0.0.1:1/v1")], &[]).unwrap_err();
        assert!(e.to_string().contains("ai.chat.model"), "{e}");
        let e = resolve(
            &[("ai.chat.providerType", "gemini"), ("ai.chat.model", "m")],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("gemini"), "{e}");
        let e = resolve(
            &[
                ("ai.chat.model", "m"),
                ("ai.chat.baseUrl", "http://127.0.0.1:1/v1"),
                ("ai.allowRemote", "maybe"),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("ai.allowRemote"), "{e}");
        let e = resolve(
            &[
                ("ai.chat.providerType", "anthropic"),
                ("ai.chat.model", "m"),
            ],
            &[],
        )
        .unwrap_err();
        assert!(e.to_string().contains("API key"), "{e}");
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(350),
            ..RetryPolicy::default()
        };
        assert_eq!(p.backoff(0), Duration::from_millis(100));
        assert_eq!(p.backoff(1), Duration::from_millis(200));
        assert_eq!(p.backoff(2), Duration::from_millis(350));
        assert_eq!(p.backoff(40), Duration::from_millis(350));
    }
}
