//! Turning a [`Reply`] into the bytes of each wire format, streamed or not.

use crate::Api;
use crate::script::{FakeUsage, Reply};
use serde_json::{Value, json};

/// The body of one response, as SSE frames (streaming) or a single JSON text.
pub(crate) struct Rendered {
    /// Frames in order (SSE: one event each; JSON: exactly one).
    pub frames: Vec<String>,
    /// For a cut: send `frames[..cut_at]` (plus half of `frames[cut_at]` for JSON) then break.
    pub cut_at: usize,
    pub content_type: &'static str,
}

/// Split into up to `n` pieces on char boundaries (at least one piece, possibly empty).
pub(crate) fn split(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= 1 || n <= 1 {
        return vec![s.to_string()];
    }
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn usage_of(reply: &Reply, request_len: usize) -> FakeUsage {
    reply.usage.unwrap_or_else(|| {
        let out: usize = reply.text.len()
            + reply
                .tool_calls
                .iter()
                .map(|c| c.raw_text().len() + c.name.len())
                .sum::<usize>();
        FakeUsage {
            input_tokens: (request_len / 4) as u64 + 1,
            output_tokens: (out / 4) as u64 + 1,
        }
    })
}

fn sse_data(v: &Value) -> String {
    format!("data: {v}\n\n")
}

fn sse_event(name: &str, v: &Value) -> String {
    format!("event: {name}\ndata: {v}\n\n")
}

/// `ids[i]` is the id of `reply.tool_calls[i]`.
pub(crate) fn render(
    api: Api,
    reply: &Reply,
    ids: &[String],
    model: &str,
    stream: bool,
    request_len: usize,
) -> Rendered {
    let usage = usage_of(reply, request_len);
    match (api, stream) {
        (Api::OpenAi, true) => openai_stream(reply, ids, model, usage),
        (Api::OpenAi, false) => single(openai_json(reply, ids, model, usage)),
        (Api::Anthropic, true) => anthropic_stream(reply, ids, model, usage),
        (Api::Anthropic, false) => single(anthropic_json(reply, ids, model, usage)),
    }
}

fn single(v: Value) -> Rendered {
    Rendered {
        frames: vec![v.to_string()],
        cut_at: 0,
        content_type: "application/json",
    }
}

fn openai_finish(reply: &Reply) -> String {
    reply.finish_reason.clone().unwrap_or_else(|| {
        if reply.tool_calls.is_empty() {
            "stop".into()
        } else {
            "tool_calls".into()
        }
    })
}

fn openai_json(reply: &Reply, ids: &[String], model: &str, usage: FakeUsage) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if reply.text.is_empty() && !reply.tool_calls.is_empty() { Value::Null } else { reply.text.clone().into() },
    });
    if !reply.tool_calls.is_empty() {
        message["tool_calls"] = reply
            .tool_calls
            .iter()
            .zip(ids)
            .map(|(c, id)| {
                json!({"id": id, "type": "function", "function": {"name": c.name, "arguments": c.raw_text()}})
            })
            .collect();
    }
    let mut v = json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": openai_finish(reply)}],
    });
    if !reply.omit_usage {
        v["usage"] = json!({
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        });
    }
    v
}

fn openai_stream(reply: &Reply, ids: &[String], model: &str, usage: FakeUsage) -> Rendered {
    let chunk = |choices: Value| {
        sse_data(&json!({
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": choices,
        }))
    };
    let mut frames = vec![chunk(
        json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]),
    )];
    for piece in split(&reply.text, 3).into_iter().filter(|p| !p.is_empty()) {
        frames.push(chunk(
            json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]),
        ));
    }
    let mut cut_at = None;
    for (i, (c, id)) in reply.tool_calls.iter().zip(ids).enumerate() {
        frames.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": id, "type": "function", "function": {"name": c.name, "arguments": ""}}
        ]}, "finish_reason": null}])));
        for (k, piece) in split(&c.raw_text(), 3).into_iter().enumerate() {
            if i == 0 && k == 1 {
                cut_at = Some(frames.len());
            }
            frames.push(chunk(json!([{"index": 0, "delta": {"tool_calls": [
                {"index": i, "function": {"arguments": piece}}
            ]}, "finish_reason": null}])));
        }
        if i == 0 && cut_at.is_none() {
            cut_at = Some(frames.len());
        }
    }
    if cut_at.is_none() {
        cut_at = Some(frames.len().min(2));
    }
    frames.push(chunk(
        json!([{"index": 0, "delta": {}, "finish_reason": openai_finish(reply)}]),
    ));
    if !reply.omit_usage {
        frames.push(sse_data(&json!({
            "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [],
            "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                      "total_tokens": usage.input_tokens + usage.output_tokens},
        })));
    }
    frames.push("data: [DONE]\n\n".into());
    Rendered {
        frames,
        cut_at: cut_at.unwrap_or(1),
        content_type: "text/event-stream",
    }
}

fn anthropic_stop(reply: &Reply) -> String {
    reply.finish_reason.clone().unwrap_or_else(|| {
        if reply.tool_calls.is_empty() {
            "end_turn".into()
        } else {
            "tool_use".into()
        }
    })
}

fn anthropic_json(reply: &Reply, ids: &[String], model: &str, usage: FakeUsage) -> Value {
    let mut content = Vec::new();
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    for (c, id) in reply.tool_calls.iter().zip(ids) {
        let raw = c.raw_text();
        // Real Anthropic always sends an object; invalid JSON can only be shown as a string.
        let input = match serde_json::from_str::<Value>(&raw) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(raw),
        };
        content.push(json!({"type": "tool_use", "id": id, "name": c.name, "input": input}));
    }
    let mut v = json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": anthropic_stop(reply), "stop_sequence": null,
    });
    if !reply.omit_usage {
        v["usage"] =
            json!({"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens});
    }
    v
}

fn anthropic_stream(reply: &Reply, ids: &[String], model: &str, usage: FakeUsage) -> Rendered {
    let mut message = json!({
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
    });
    if !reply.omit_usage {
        message["usage"] = json!({"input_tokens": usage.input_tokens, "output_tokens": 1});
    }
    let mut frames = vec![
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": message}),
        ),
        sse_event("ping", &json!({"type": "ping"})),
    ];
    let mut index = 0;
    if !reply.text.is_empty() {
        frames.push(sse_event("content_block_start", &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})));
        for piece in split(&reply.text, 3) {
            frames.push(sse_event("content_block_delta", &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})));
        }
        frames.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let mut cut_at = None;
    for (i, (c, id)) in reply.tool_calls.iter().zip(ids).enumerate() {
        frames.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": c.name, "input": {}}}),
        ));
        for (k, piece) in split(&c.raw_text(), 3).into_iter().enumerate() {
            if i == 0 && k == 1 {
                cut_at = Some(frames.len());
            }
            frames.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        if i == 0 && cut_at.is_none() {
            cut_at = Some(frames.len());
        }
        frames.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    if cut_at.is_none() {
        cut_at = Some(frames.len().saturating_sub(1).max(1));
    }
    let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": anthropic_stop(reply), "stop_sequence": null}});
    if !reply.omit_usage {
        delta["usage"] = json!({"output_tokens": usage.output_tokens});
    }
    frames.push(sse_event("message_delta", &delta));
    frames.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    Rendered {
        frames,
        cut_at: cut_at.unwrap_or(1),
        content_type: "text/event-stream",
    }
}

/// An error body in the API's format.
pub(crate) fn error_body(api: Api, status: u16, message: &str) -> Value {
    match api {
        Api::OpenAi => json!({"error": {"message": message, "type": "fake_error", "code": status}}),
        Api::Anthropic => {
            let kind = match status {
                429 => "rate_limit_error",
                529 => "overloaded_error",
                401 => "authentication_error",
                400 => "invalid_request_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_every_char() {
        assert_eq!(split("abcdefg", 3).concat(), "abcdefg");
        assert_eq!(split("abcdefg", 3).len(), 3);
        assert_eq!(split("é", 3), vec!["é".to_string()]);
        assert_eq!(split("", 3), vec![String::new()]);
    }
}
