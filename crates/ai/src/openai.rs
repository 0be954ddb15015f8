//! OpenAI Chat Completions wire format (OpenAI, Ollama `/v1`, LM Studio, llama.cpp server,
//! vLLM, OpenRouter): request building, SSE chunk decoding and JSON response decoding.
//! Parsing is lenient: unknown fields are ignored, missing usage is zero, tool calls count
//! whatever `finish_reason` says.

use crate::config::ProviderConfig;
use crate::error::AiError;
use crate::retry::truncate;
use crate::schema_adapt;
use crate::types::{ChatEvent, ChatRequest, Message, ToolCall, ToolChoice, Usage};
use crate::wire::{Finish, next_call_id};
use serde_json::{Map, Value, json};

pub(crate) const PROVIDER: &str = "OpenAI-compatible provider";

pub(crate) fn url(config: &ProviderConfig) -> String {
    format!("{}/chat/completions", config.base_url.trim_end_matches('/'))
}

pub(crate) fn body(config: &ProviderConfig, req: &ChatRequest, stream: bool) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len());
    for m in &req.messages {
        match m {
            Message::System { content } => {
                messages.push(json!({"role": "system", "content": content}))
            }
            Message::User { content } => messages.push(json!({"role": "user", "content": content})),
            Message::Assistant { text, tool_calls } => {
                let mut msg = Map::new();
                msg.insert("role".into(), "assistant".into());
                if tool_calls.is_empty() {
                    msg.insert("content".into(), text.clone().into());
                } else {
                    msg.insert(
                        "content".into(),
                        if text.is_empty() {
                            Value::Null
                        } else {
                            text.clone().into()
                        },
                    );
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()},
                            })
                        })
                        .collect();
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(msg));
            }
            Message::ToolResult {
                call_id,
                tool_name,
                content,
                ..
            } => messages.push(json!({
                "role": "tool",
                "tool_call_id": call_id,
                "name": tool_name,
                "content": content,
            })),
        }
    }
    let mut b = Map::new();
    b.insert("model".into(), config.model.clone().into());
    b.insert("messages".into(), Value::Array(messages));
    b.insert("stream".into(), stream.into());
    if stream {
        b.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(t) = req.options.temperature {
        b.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.options.max_tokens {
        b.insert("max_tokens".into(), json!(n));
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": schema_adapt::adapt(&t.input_schema),
                    }
                })
            })
            .collect();
        b.insert("tools".into(), Value::Array(tools));
        if req.tool_choice == ToolChoice::None {
            b.insert("tool_choice".into(), json!("none"));
        }
    }
    Value::Object(b)
}

/// Some servers (newer OpenAI models) reject `max_tokens` and ask for `max_completion_tokens`.
/// Returns the body to resend once, if this 400 message asks for that.
pub(crate) fn adjust_for_400(body: &Value, message: &str) -> Option<Value> {
    let mut b = body.as_object()?.clone();
    if message
        .to_ascii_lowercase()
        .contains("max_completion_tokens")
    {
        let n = b.remove("max_tokens")?;
        b.insert("max_completion_tokens".into(), n);
        return Some(Value::Object(b));
    }
    None
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage")?.as_object()?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input_tokens: n("prompt_tokens"),
        output_tokens: n("completion_tokens"),
    })
}

fn stop_of(raw: &str) -> crate::types::StopReason {
    use crate::types::StopReason::*;
    match raw.to_ascii_lowercase().as_str() {
        "stop" | "end_turn" | "eos" => EndTurn,
        "tool_calls" | "function_call" | "tool_use" => ToolUse,
        "length" | "max_tokens" => MaxTokens,
        _ => Other,
    }
}

fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        // Some servers send content parts.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or(p.as_str()))
            .collect(),
        _ => String::new(),
    }
}

fn arguments_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        // Non-standard servers sometimes send the arguments as an object.
        Some(other) => other.to_string(),
    }
}

fn bad_shape(config: &ProviderConfig, detail: &str) -> AiError {
    AiError::BadResponse(format!(
        "The AI provider returned an unexpected response shape ({detail}). The base URL is likely wrong — for OpenAI, Ollama, LM Studio and llama.cpp it must end with \"/v1\" (got {}).",
        config.base_url
    ))
}

fn mid_stream_error(v: &Value) -> Option<AiError> {
    let e = v.get("error")?;
    if e.is_null() {
        return None;
    }
    let msg = e
        .get("message")
        .and_then(Value::as_str)
        .or(e.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| truncate(&e.to_string(), 200));
    Some(AiError::BadResponse(format!(
        "The AI provider reported an error while answering: {msg}. Try again; if it persists, check the model and server."
    )))
}

/// Decode a non-streaming response.
pub(crate) fn decode_json(config: &ProviderConfig, v: &Value) -> Result<Vec<ChatEvent>, AiError> {
    if let Some(e) = mid_stream_error(v) {
        return Err(e);
    }
    let Some(choices) = v.get("choices").and_then(Value::as_array) else {
        return Err(bad_shape(config, "no \"choices\" array"));
    };
    let Some(first) = choices.first() else {
        return Err(bad_shape(config, "an empty \"choices\" array"));
    };
    let msg = first.get("message").or_else(|| first.get("delta"));
    let text = content_text(msg.and_then(|m| m.get("content")));
    let mut calls = Vec::new();
    if let Some(tcs) = msg
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
    {
        for (i, tc) in tcs.iter().enumerate() {
            let Some(f) = tc.get("function") else {
                continue;
            };
            let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
            let id = tc
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| next_call_id(i));
            calls.push(ToolCall::from_raw(
                id,
                name,
                arguments_text(f.get("arguments")),
            ));
        }
    }
    let finish = Finish {
        tool_calls: calls,
        stop: first
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(stop_of),
        usage: usage_of(v).unwrap_or_default(),
    };
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(ChatEvent::TextDelta(text));
    }
    finish.push_into(&mut out);
    Ok(out)
}

#[derive(Default)]
struct PartialCall {
    index: Option<u64>,
    id: String,
    name: String,
    args: String,
}

/// Decoder of an SSE chat-completions stream.
pub(crate) struct StreamDecoder {
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Usage,
    done: bool,
}

impl StreamDecoder {
    pub(crate) fn new() -> Self {
        StreamDecoder {
            calls: Vec::new(),
            finish_reason: None,
            usage: Usage::default(),
            done: false,
        }
    }

    /// Feed one SSE event's data. Returns true once the stream is complete (`[DONE]`).
    pub(crate) fn on_data(
        &mut self,
        data: &str,
        out: &mut Vec<ChatEvent>,
    ) -> Result<bool, AiError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(false);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            AiError::BadResponse(format!(
                "The AI provider sent a stream chunk that is not JSON ({e}): {}",
                truncate(data, 200)
            ))
        })?;
        if let Some(e) = mid_stream_error(&v) {
            return Err(e);
        }
        if let Some(u) = usage_of(&v) {
            self.usage = u;
        }
        let Some(choices) = v.get("choices").and_then(Value::as_array) else {
            return Ok(false);
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(delta) = delta {
                let text = content_text(delta.get("content"));
                if !text.is_empty() {
                    out.push(ChatEvent::TextDelta(text));
                }
                if let Some(tcs) = delta.get("tool_calls").and_then(Value::as_array) {
                    for tc in tcs {
                        self.merge(tc);
                    }
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(r.to_string());
            }
        }
        Ok(false)
    }

    fn merge(&mut self, tc: &Value) {
        let index = tc.get("index").and_then(Value::as_u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let f = tc.get("function");
        let name = f
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = arguments_text(f.and_then(|f| f.get("arguments")));
        let pos = match (index, id) {
            (Some(i), _) => self.calls.iter().position(|c| c.index == Some(i)),
            (None, Some(id)) => self.calls.iter().position(|c| c.id == id),
            (None, None) => self.calls.len().checked_sub(1),
        };
        let call = match pos {
            Some(p) => &mut self.calls[p],
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..Default::default()
                });
                let last = self.calls.len() - 1;
                &mut self.calls[last]
            }
        };
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        if !name.is_empty() && call.name.is_empty() {
            call.name = name.to_string();
        }
        call.args.push_str(&args);
    }

    /// The stream ended (EOF). Errors if the model had not finished.
    pub(crate) fn finish(self, out: &mut Vec<ChatEvent>) -> Result<(), AiError> {
        if !self.done && self.finish_reason.is_none() {
            let what = if self.calls.is_empty() {
                "the stream ended before the model finished".to_string()
            } else {
                format!(
                    "the stream ended in the middle of {} tool call(s)",
                    self.calls.len()
                )
            };
            return Err(AiError::StreamCut(what));
        }
        let calls = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, c)| !(c.name.is_empty() && c.args.trim().is_empty()))
            .map(|(i, c)| {
                let id = if c.id.is_empty() {
                    next_call_id(i)
                } else {
                    c.id
                };
                let mut call = ToolCall::from_raw(id, c.name, c.args);
                if call.name.is_empty() {
                    call.parse_error = Some("The tool call had no tool name.".into());
                }
                call
            })
            .collect();
        Finish {
            tool_calls: calls,
            stop: self.finish_reason.as_deref().map(stop_of),
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
    use crate::types::{StopReason, ToolSpec};

    fn cfg() -> ProviderConfig {
        ProviderConfig::new(ProviderType::OpenAiCompatible, "http://127.0.0.1:1/v1", "m")
    }

    #[test]
    fn joins_fragments_by_index_and_treats_stop_with_calls_as_tool_use() {
        let mut d = StreamDecoder::new();
        let mut out = Vec::new();
        for chunk in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":"}},{"index":1,"id":"b","function":{"name":"g","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}},{"index":0,"function":{"arguments":"1}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        ] {
            assert!(!d.on_data(chunk, &mut out).unwrap());
        }
        assert!(d.on_data("[DONE]", &mut out).unwrap());
        d.finish(&mut out).unwrap();
        assert_eq!(out[0], ChatEvent::TextDelta("Hi".into()));
        let ChatEvent::ToolCall(a) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!((a.id.as_str(), a.name.as_str()), ("a", "f"));
        assert_eq!(a.arguments, json!({"x": 1}));
        let ChatEvent::ToolCall(b) = &out[2] else {
            panic!("{out:?}")
        };
        assert_eq!((b.id.as_str(), b.arguments.clone()), ("b", json!({})));
        assert_eq!(out[3], ChatEvent::Usage(Usage::default()));
        assert_eq!(out[4], ChatEvent::Stop(StopReason::ToolUse));
    }

    #[test]
    fn eof_without_finish_is_a_cut() {
        let mut d = StreamDecoder::new();
        let mut out = Vec::new();
        d.on_data(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x"}}]}}]}"#,
            &mut out,
        )
        .unwrap();
        let e = d.finish(&mut out).unwrap_err();
        assert!(matches!(e, AiError::StreamCut(_)));
        assert!(out.iter().all(|e| !matches!(e, ChatEvent::ToolCall(_))));
    }

    #[test]
    fn request_body_shape() {
        let req = ChatRequest::new(vec![
            Message::system("s"),
            Message::user("u"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCall::from_raw("c1", "f", r#"{"a":1}"#)],
            },
            Message::ToolResult {
                call_id: "c1".into(),
                tool_name: "f".into(),
                content: "ok".into(),
                is_error: false,
            },
        ])
        .with_tools(vec![ToolSpec {
            name: "f".into(),
            description: "d".into(),
            input_schema: json!({"$schema": "x", "type": "object"}),
        }]);
        let b = body(&cfg(), &req, true);
        assert_eq!(b["messages"][2]["content"], Value::Null);
        assert_eq!(
            b["messages"][2]["tool_calls"][0]["function"]["arguments"],
            r#"{"a":1}"#
        );
        assert_eq!(b["messages"][3]["tool_call_id"], "c1");
        assert_eq!(
            b["tools"][0]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(b["stream_options"]["include_usage"], true);
    }

    #[test]
    fn max_completion_tokens_adjustment() {
        let b = json!({"model": "m", "max_tokens": 5});
        let b2 = adjust_for_400(
            &b,
            "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.",
        )
        .unwrap();
        assert_eq!(b2, json!({"model": "m", "max_completion_tokens": 5}));
        assert!(adjust_for_400(&b, "other").is_none());
    }
}
