//! The [`ChatProvider`] trait and the HTTP provider behind both wire formats.

use crate::config::{ProviderConfig, ProviderType};
use crate::error::AiError;
use crate::privacy::{self, Classification};
use crate::retry;
use crate::types::{ChatEvent, ChatRequest, ChatResult, StopReason, ToolCall, Usage};
use crate::usage::UsageSink;
use crate::{anthropic, openai};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use std::pin::Pin;
use std::sync::Arc;

/// The stream a provider returns; see [`ChatEvent`] for the order of items.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, AiError>> + Send>>;

/// A chat model. `stream` must be called inside a Tokio runtime.
#[async_trait::async_trait]
pub trait ChatProvider: Send + Sync {
    /// E.g. `openai-compatible http://127.0.0.1:11434/v1` (the usage key).
    fn id(&self) -> String;
    fn model(&self) -> &str;
    fn classification(&self) -> Classification;
    /// Stream one model step.
    fn stream(&self, req: ChatRequest) -> ChatStream;
    /// One model step, collected (built on [`ChatProvider::stream`]).
    async fn chat(&self, req: ChatRequest) -> Result<ChatResult, AiError> {
        collect(self.stream(req)).await
    }
}

/// Collect a stream into a [`ChatResult`]. Any error discards everything received.
pub async fn collect(mut stream: ChatStream) -> Result<ChatResult, AiError> {
    let mut text = String::new();
    let mut tool_calls: Vec<ToolCall> = Vec::new();
    let mut usage = Usage::default();
    let mut stop = None;
    while let Some(ev) = stream.next().await {
        match ev? {
            ChatEvent::TextDelta(t) => text.push_str(&t),
            ChatEvent::ToolCall(c) => tool_calls.push(c),
            ChatEvent::Usage(u) => usage = u,
            ChatEvent::Stop(s) => stop = Some(s),
        }
    }
    let stop_reason = stop.ok_or_else(|| {
        AiError::StreamCut("the provider stream ended without a stop reason".into())
    })?;
    Ok(ChatResult {
        text,
        tool_calls,
        stop_reason,
        usage,
    })
}

/// Build the provider for `config`, applying the privacy gate: a remote base URL is refused
/// here, before any connection, unless `config.allow_remote`. `usage` (if any) is told the
/// usage of every successful call.
pub fn build_provider(
    config: ProviderConfig,
    usage: Option<Arc<dyn UsageSink>>,
) -> Result<Arc<dyn ChatProvider>, AiError> {
    Ok(Arc::new(HttpProvider::new(config, usage)?))
}

/// The reqwest-based provider for both wire formats.
#[derive(Clone)]
pub struct HttpProvider {
    inner: Arc<Inner>,
}

struct Inner {
    config: ProviderConfig,
    client: reqwest::Client,
    classification: Classification,
    usage: Option<Arc<dyn UsageSink>>,
}

impl HttpProvider {
    pub fn new(
        config: ProviderConfig,
        usage: Option<Arc<dyn UsageSink>>,
    ) -> Result<HttpProvider, AiError> {
        config.validate()?;
        let classification = privacy::check(&config.base_url, config.allow_remote)?;
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.timeouts.connect)
            .user_agent(concat!("sidenote/", env!("CARGO_PKG_VERSION")));
        if classification == Classification::Local {
            // Loopback traffic never goes through an HTTP proxy (it would leave the machine).
            builder = builder.no_proxy();
        }
        let client = builder
            .build()
            .map_err(|e| AiError::Transport(retry::error_chain(&e)))?;
        Ok(HttpProvider {
            inner: Arc::new(Inner {
                config,
                client,
                classification,
                usage,
            }),
        })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.inner.config
    }
}

#[async_trait::async_trait]
impl ChatProvider for HttpProvider {
    fn id(&self) -> String {
        self.inner.config.endpoint_id()
    }
    fn model(&self) -> &str {
        &self.inner.config.model
    }
    fn classification(&self) -> Classification {
        self.inner.classification
    }
    fn stream(&self, req: ChatRequest) -> ChatStream {
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<ChatEvent, AiError>>(64);
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let cancel = req.cancel.clone().unwrap_or_default();
            let emitter = Emitter { tx: tx.clone() };
            let result = tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(AiError::Cancelled),
                // The consumer dropped the stream: stop the request at once.
                _ = tx.closed() => return,
                r = inner.run(&req, &emitter) => r,
            };
            if let Err(e) = result {
                let _ = tx.send(Err(e)).await;
            }
        });
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        }))
    }
}

struct Emitter {
    tx: tokio::sync::mpsc::Sender<Result<ChatEvent, AiError>>,
}

impl Emitter {
    /// Send events on; fails with `Cancelled` when the consumer dropped the stream.
    async fn emit(&self, events: &mut Vec<ChatEvent>) -> Result<(), AiError> {
        for ev in events.drain(..) {
            self.tx.send(Ok(ev)).await.map_err(|_| AiError::Cancelled)?;
        }
        Ok(())
    }
}

impl Inner {
    fn provider_name(&self) -> &'static str {
        match self.config.provider_type {
            ProviderType::OpenAiCompatible => openai::PROVIDER,
            ProviderType::Anthropic => anthropic::PROVIDER,
        }
    }

    fn headers(&self) -> Result<HeaderMap, AiError> {
        let mut h = HeaderMap::new();
        let bad = |what: &str| {
            AiError::NotConfigured(format!(
                "{what} contains characters not allowed in an HTTP header"
            ))
        };
        let key = self.config.api_key.as_deref();
        match self.config.provider_type {
            ProviderType::OpenAiCompatible => {
                if let Some(k) = key {
                    let v = HeaderValue::from_str(&format!("Bearer {k}"))
                        .map_err(|_| bad("The API key"))?;
                    h.insert(reqwest::header::AUTHORIZATION, v);
                }
            }
            ProviderType::Anthropic => {
                if let Some(k) = key {
                    let mut v = HeaderValue::from_str(k).map_err(|_| bad("The API key"))?;
                    v.set_sensitive(true);
                    h.insert(HeaderName::from_static("x-api-key"), v);
                }
                let v = HeaderValue::from_str(&self.config.anthropic_version)
                    .map_err(|_| bad("ai.chat.anthropicVersion"))?;
                h.insert(HeaderName::from_static("anthropic-version"), v);
            }
        }
        Ok(h)
    }

    async fn run(&self, req: &ChatRequest, out: &Emitter) -> Result<(), AiError> {
        if req.messages.is_empty() {
            return Err(AiError::InvalidRequest(
                "the chat request has no messages".into(),
            ));
        }
        // Defence in depth: the gate is also applied when the provider is built.
        privacy::check(&self.config.base_url, self.config.allow_remote)?;
        let cfg = &self.config;
        let stream = cfg.streaming;
        let (url, mut body) = match cfg.provider_type {
            ProviderType::OpenAiCompatible => (openai::url(cfg), openai::body(cfg, req, stream)),
            ProviderType::Anthropic => (anthropic::url(cfg), anthropic::body(cfg, req, stream)),
        };
        let headers = self.headers()?;
        let provider = self.provider_name();
        let mut adjusted = false;
        let resp = loop {
            match retry::send_with_retry(&self.client, cfg, provider, &url, &headers, &body).await {
                Err(AiError::Http {
                    status: 400,
                    message,
                    provider,
                }) if !adjusted && cfg.provider_type == ProviderType::OpenAiCompatible => {
                    match openai::adjust_for_400(&body, &message) {
                        Some(b) => {
                            body = b;
                            adjusted = true;
                        }
                        None => {
                            return Err(AiError::Http {
                                provider,
                                status: 400,
                                message,
                            });
                        }
                    }
                }
                other => break other?,
            }
        };
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.to_ascii_lowercase().contains("text/event-stream"));
        let mut events = Vec::new();
        if is_sse {
            self.decode_sse(resp, out, &mut events).await?;
        } else {
            // Non-streaming, or a server that ignored `stream: true`.
            let bytes = retry::read_body(resp, cfg.timeouts.idle, 64 * 1024 * 1024).await?;
            let v: Value = serde_json::from_slice(&bytes).map_err(|_| {
                AiError::BadResponse(format!(
                    "{provider} returned a non-JSON response: {}. Check ai.chat.baseUrl (got {}){}.",
                    retry::truncate(String::from_utf8_lossy(&bytes).trim(), 200),
                    cfg.base_url,
                    if cfg.provider_type == ProviderType::OpenAiCompatible {
                        "; for OpenAI, Ollama, LM Studio and llama.cpp it must end with \"/v1\""
                    } else {
                        ""
                    }
                ))
            })?;
            events = match cfg.provider_type {
                ProviderType::OpenAiCompatible => openai::decode_json(cfg, &v)?,
                ProviderType::Anthropic => anthropic::decode_json(cfg, &v)?,
            };
        }
        self.record_usage(&events);
        out.emit(&mut events).await
    }

    async fn decode_sse(
        &self,
        resp: reqwest::Response,
        out: &Emitter,
        events: &mut Vec<ChatEvent>,
    ) -> Result<(), AiError> {
        let mut sse = retry::body_stream(resp, self.config.timeouts.idle).eventsource();
        enum Decoder {
            OpenAi(openai::StreamDecoder),
            Anthropic(anthropic::StreamDecoder),
        }
        let mut dec = match self.config.provider_type {
            ProviderType::OpenAiCompatible => Decoder::OpenAi(openai::StreamDecoder::new()),
            ProviderType::Anthropic => Decoder::Anthropic(anthropic::StreamDecoder::new()),
        };
        while let Some(item) = sse.next().await {
            let ev = item.map_err(|e| match e {
                EventStreamError::Transport(b) => AiError::from(b),
                EventStreamError::Utf8(e) => AiError::BadResponse(format!(
                    "the AI provider's stream is not valid UTF-8: {e}"
                )),
                EventStreamError::Parser(e) => {
                    AiError::BadResponse(format!("the AI provider's stream is not valid SSE: {e}"))
                }
            })?;
            let finished = match &mut dec {
                Decoder::OpenAi(d) => d.on_data(&ev.data, events)?,
                Decoder::Anthropic(d) => d.on_event(&ev.event, &ev.data, events)?,
            };
            // Text deltas go out as they arrive; tool calls only at the end.
            out.emit(events).await?;
            if finished {
                break;
            }
        }
        match dec {
            Decoder::OpenAi(d) => d.finish(events),
            Decoder::Anthropic(d) => d.finish(events),
        }
    }

    fn record_usage(&self, events: &[ChatEvent]) {
        let Some(sink) = &self.usage else { return };
        let completed = events.iter().any(|e| matches!(e, ChatEvent::Stop(_)));
        if !completed {
            return;
        }
        let usage = events
            .iter()
            .find_map(|e| match e {
                ChatEvent::Usage(u) => Some(*u),
                _ => None,
            })
            .unwrap_or_default();
        sink.record(&self.config.endpoint_id(), &self.config.model, usage);
    }
}

/// Convenience: true when the step asks for tool results.
pub fn wants_tools(result: &ChatResult) -> bool {
    result.stop_reason == StopReason::ToolUse && !result.tool_calls.is_empty()
}
