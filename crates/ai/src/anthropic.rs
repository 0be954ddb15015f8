//! Anthropic Messages API wire format: `system` as a top-level field, `tool_use` /
//! `tool_result` content blocks (all results of one step in one user message), SSE events
//! (`message_start`, `content_block_*`, `message_delta`, `message_stop`, `ping`, `error`).

use crate::config::ProviderConfig;
use crate::error::AiError;
use crate::retry::truncate;
use crate::schema_adapt;
use crate::types::{ChatEvent, ChatRequest, Message, StopReason, ToolCall, ToolChoice, Usage};
use crate::wire::{Finish, next_call_id};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub(crate) const PROVIDER: &str = "Anthropic";
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn url(config: &ProviderConfig) -> String {
    let base = config.base_url.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

pub(crate) fn body(config: &ProviderConfig, req: &ChatRequest, stream: bool) -> Value {
    let mut system = Vec::new();
    // (role, blocks); consecutive same-role messages are merged so roles alternate and all
    // tool results of one step travel in one user message.
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match turns.last_mut() {
            Some((r, existing)) if *r == role => {
                if role == "user" {
                    // Tool results must come first in a user message.
                    let (mut results, mut rest): (Vec<Value>, Vec<Value>) = existing
                        .drain(..)
                        .chain(blocks)
                        .partition(|b| b["type"] == "tool_result");
                    results.append(&mut rest);
                    *existing = results;
                } else {
                    existing.extend(blocks);
                }
            }
            _ => turns.push((role, blocks)),
        }
    };
    for m in &req.messages {
        match m {
            Message::System { content } => system.push(content.clone()),
            Message::User { content } => {
                if !content.is_empty() {
                    push("user", vec![json!({"type": "text", "text": content})]);
                }
            }
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    let input = if c.arguments.is_object() {
                        c.arguments.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
                push("assistant", blocks);
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut b =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    b["is_error"] = true.into();
                }
                push("user", vec![b]);
            }
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut b = Map::new();
    b.insert("model".into(), config.model.clone().into());
    b.insert(
        "max_tokens".into(),
        json!(req.options.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    if !system.is_empty() {
        b.insert("system".into(), system.join("\n\n").into());
    }
    b.insert("messages".into(), Value::Array(messages));
    if let Some(t) = req.options.temperature {
        b.insert("temperature".into(), json!(t));
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": schema_adapt::adapt(&t.input_schema),
                })
            })
            .collect();
        b.insert("tools".into(), Value::Array(tools));
        if req.tool_choice == ToolChoice::None {
            b.insert("tool_choice".into(), json!({"type": "none"}));
        }
    }
    if stream {
        b.insert("stream".into(), true.into());
    }
    Value::Object(b)
}

fn stop_of(raw: &str) -> StopReason {
    match raw {
        "end_turn" | "stop_sequence" | "pause_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

fn error_event(v: &Value) -> AiError {
    let kind = v
        .pointer("/error/type")
        .and_then(Value::as_str)
        .unwrap_or("error");
    let msg = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| truncate(&v.to_string(), 200));
    let hint = if kind == "overloaded_error" {
        "Anthropic is overloaded; try again in a moment."
    } else {
        "Try again; if it persists, check the model name and your account."
    };
    AiError::BadResponse(format!(
        "Anthropic reported an error ({kind}): {msg}. {hint}"
    ))
}

fn read_usage(u: Option<&Value>, usage: &mut Usage) {
    let Some(u) = u else { return };
    if let Some(n) = u.get("input_tokens").and_then(Value::as_u64) {
        let cache = ["cache_creation_input_tokens", "cache_read_input_tokens"]
            .iter()
            .filter_map(|k| u.get(*k).and_then(Value::as_u64))
            .sum::<u64>();
        usage.input_tokens = n + cache;
    }
    if let Some(n) = u.get("output_tokens").and_then(Value::as_u64) {
        usage.output_tokens = n;
    }
}

/// Decode a non-streaming response.
pub(crate) fn decode_json(config: &ProviderConfig, v: &Value) -> Result<Vec<ChatEvent>, AiError> {
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(error_event(v));
    }
    let Some(content) = v.get("content").and_then(Value::as_array) else {
        return Err(AiError::BadResponse(format!(
            "Anthropic returned an unexpected response shape (no \"content\" array); check ai.chat.baseUrl (got {}, expected e.g. https://api.anthropic.com/v1).",
            config.base_url
        )));
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, block) in content.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            Some("tool_use") => {
                let id = block
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| next_call_id(i));
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let raw = match block.get("input") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                };
                calls.push(ToolCall::from_raw(id, name, raw));
            }
            _ => {}
        }
    }
    let mut usage = Usage::default();
    read_usage(v.get("usage"), &mut usage);
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(ChatEvent::TextDelta(text));
    }
    Finish {
        tool_calls: calls,
        stop: v.get("stop_reason").and_then(Value::as_str).map(stop_of),
        usage,
    }
    .push_into(&mut out);
    Ok(out)
}

struct ToolBlock {
    id: String,
    name: String,
    json: String,
    initial: Option<Value>,
    closed: bool,
}

/// Decoder of an SSE Messages stream.
pub(crate) struct StreamDecoder {
    tools: BTreeMap<u64, ToolBlock>,
    stop: Option<StopReason>,
    usage: Usage,
    done: bool,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder {
            tools: BTreeMap::new(),
            stop: None,
            usage: Usage::default(),
            done: false,
        }
    }

    /// Feed one SSE event. Returns true after `message_stop`.
    pub(crate) fn on_event(
        &mut self,
        name: &str,
        data: &str,
        out: &mut Vec<ChatEvent>,
    ) -> Result<bool, AiError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            AiError::BadResponse(format!(
                "Anthropic sent a stream event that is not JSON ({e}): {}",
                truncate(data, 200)
            ))
        })?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(name)
            .to_string();
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind.as_str() {
            "message_start" => read_usage(v.pointer("/message/usage"), &mut self.usage),
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ChatEvent::TextDelta(t.to_string()));
                        }
                    }
                    Some("tool_use") => {
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(|| next_call_id(index as usize));
                        let name = block
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        self.tools.insert(
                            index,
                            ToolBlock {
                                id,
                                name: name.to_string(),
                                json: String::new(),
                                initial: block.get("input").cloned(),
                                closed: false,
                            },
                        );
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ChatEvent::TextDelta(t.to_string()));
                        }
                    }
                    Some("input_json_delta") => {
                        let part = delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        match self.tools.get_mut(&index) {
                            Some(t) => t.json.push_str(part),
                            None => {
                                return Err(AiError::BadResponse(format!(
                                    "Anthropic sent tool arguments for unknown content block {index}"
                                )));
                            }
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(t) = self.tools.get_mut(&index) {
                    t.closed = true;
                }
            }
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_of(r));
                }
                read_usage(v.get("usage"), &mut self.usage);
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => return Err(error_event(&v)),
            _ => {} // ping and future event types
        }
        Ok(false)
    }

    /// The stream ended. Errors unless `message_stop` arrived with every tool block closed.
    pub(crate) fn finish(self, out: &mut Vec<ChatEvent>) -> Result<(), AiError> {
        let open = self.tools.values().filter(|t| !t.closed).count();
        if !self.done || open > 0 {
            let what = if open > 0 {
                format!("the stream ended in the middle of {open} tool call(s)")
            } else {
                "the stream ended before message_stop".to_string()
            };
            return Err(AiError::StreamCut(what));
        }
        let calls = self
            .tools
            .into_values()
            .map(|t| {
                let raw = if t.json.trim().is_empty() {
                    match t.initial {
                        Some(v) if v.is_object() => v.to_string(),
                        _ => String::new(),
                    }
                } else {
                    t.json
                };
                ToolCall::from_raw(t.id, t.name, raw)
            })
            .collect();
        Finish {
            tool_calls: calls,
            stop: self.stop,
            usage: self.usage,
        }
        .push_into(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::config::ProviderType;

    #[test]
    fn merges_tool_results_and_lifts_system() {
        let cfg = ProviderConfig::new(ProviderType::Anthropic, "http://127.0.0.1:1", "m");
        assert_eq!(url(&cfg), "http://127.0.0.1:1/v1/messages");
        let a = ToolCall::from_raw("t1", "f", "{}");
        let b = ToolCall::from_raw("t2", "g", "{}");
        let req = ChatRequest::new(vec![
            Message::system("s1"),
            Message::system("s2"),
            Message::user("hi"),
            Message::Assistant {
                text: "let me look".into(),
                tool_calls: vec![a.clone(), b.clone()],
            },
            Message::tool_result(&a, "A", false),
            Message::tool_result(&b, "B", true),
        ]);
        let body = body(&cfg, &req, false);
        assert_eq!(body["system"], "s1\n\ns2");
        assert_eq!(body["max_tokens"], 4096);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[2]["role"], "user");
        let blocks = msgs[2]["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0]["tool_use_id"], "t1");
        assert_eq!(blocks[1]["is_error"], true);
    }
}
