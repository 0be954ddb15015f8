//! Shared helpers for the provider tests against the fake provider server.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use sidenote_ai::*;
use sidenote_testkit::FakeProvider;
use std::sync::Arc;
use std::time::Duration;

/// Every (provider type, streaming) combination.
pub const MODES: [(ProviderType, bool); 4] = [
    (ProviderType::OpenAiCompatible, true),
    (ProviderType::OpenAiCompatible, false),
    (ProviderType::Anthropic, true),
    (ProviderType::Anthropic, false),
];

pub fn config(fake: &FakeProvider, ty: ProviderType, streaming: bool) -> ProviderConfig {
    let mut c = ProviderConfig::new(ty, fake.base_url(), "fake-model");
    c.streaming = streaming;
    c.retry = RetryPolicy {
        max_retries: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(5),
    };
    c.timeouts = Timeouts {
        connect: Duration::from_secs(2),
        first_byte: Duration::from_secs(10),
        idle: Duration::from_secs(10),
    };
    c
}

pub fn provider(cfg: ProviderConfig) -> Arc<dyn ChatProvider> {
    build_provider(cfg, None).unwrap()
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "search_notes".into(),
            description: "Search notes.".into(),
            input_schema: json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "SearchArgs",
                "type": "object",
                "properties": {"query": {"type": "string", "title": "Query"}},
                "required": ["query"]
            }),
        },
        ToolSpec {
            name: "get_note".into(),
            description: "Read one note.".into(),
            input_schema: json!({"type": "object", "properties": {"id": {"type": "string"}}}),
        },
    ]
}

pub fn label(ty: ProviderType, streaming: bool) -> String {
    format!("{ty} streaming={streaming}")
}

/// A minimal agent loop: answer every tool call with `result of <name>` (or an error result
/// for unparsable arguments) until the model ends its turn. Returns every step's result.
pub async fn run_loop(
    p: &dyn ChatProvider,
    mut messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    max_steps: usize,
) -> Result<(Vec<ChatResult>, Vec<Message>), AiError> {
    let mut steps = Vec::new();
    for _ in 0..max_steps {
        let r = p
            .chat(ChatRequest::new(messages.clone()).with_tools(tools.clone()))
            .await?;
        messages.push(Message::from_result(&r));
        let done = !wants_tools(&r);
        for c in &r.tool_calls {
            match &c.parse_error {
                Some(e) => messages.push(Message::tool_result(c, format!("failed: {e}"), true)),
                None => messages.push(Message::tool_result(
                    c,
                    format!("result of {}", c.name),
                    false,
                )),
            }
        }
        steps.push(r);
        if done {
            break;
        }
    }
    Ok((steps, messages))
}

/// Collect a stream's raw items (events and the final error, if any).
pub async fn items(mut s: ChatStream) -> Vec<Result<ChatEvent, AiError>> {
    use futures::StreamExt;
    let mut out = Vec::new();
    while let Some(i) = s.next().await {
        out.push(i);
    }
    out
}
