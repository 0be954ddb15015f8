//! The script: what the fake model answers next.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One scripted answer. Serialisable, so the `fake-provider` binary can read a JSON list of
/// steps, e.g. `[{"type":"reply","text":"Hi"},{"type":"error","status":429,"retry_after":"1"}]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// A normal answer: text and/or tool calls (streamed or not, as the client asked).
    Reply(Reply),
    /// An HTTP error in the API's error format, with an optional `Retry-After` header value.
    Error {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// Start the reply, then drop the connection in the middle of the first tool call's
    /// arguments (or mid-text when there is no tool call).
    Cut(Reply),
    /// Start the reply, go silent for `stall_ms`, then finish it.
    Stall { reply: Reply, stall_ms: u64 },
    /// Wait `delay_ms` before sending the response headers, then answer with `step`.
    Delay { delay_ms: u64, step: Box<Step> },
    /// Any raw response (e.g. a 200 without `choices`, or HTML).
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// What the fake model says in one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<FakeToolCall>,
    /// Override the wire stop reason (OpenAI `finish_reason`, Anthropic `stop_reason`), e.g.
    /// `"stop"` with tool calls like some local servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Token usage to report (default: derived from the sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<FakeUsage>,
    /// Report no usage at all.
    #[serde(default)]
    pub omit_usage: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FakeToolCall {
    /// Call id; generated (`call_N` / `toolu_N`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
    /// Send these exact argument characters instead of `arguments` (e.g. invalid JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_arguments: Option<String>,
}

impl FakeToolCall {
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        FakeToolCall {
            id: None,
            name: name.into(),
            arguments,
            raw_arguments: None,
        }
    }
    /// A call whose argument text is sent verbatim (may be invalid JSON).
    pub fn raw(name: impl Into<String>, raw: impl Into<String>) -> Self {
        FakeToolCall {
            id: None,
            name: name.into(),
            arguments: Value::Null,
            raw_arguments: Some(raw.into()),
        }
    }
    pub(crate) fn raw_text(&self) -> String {
        match &self.raw_arguments {
            Some(r) => r.clone(),
            None if self.arguments.is_null() => "{}".into(),
            None => self.arguments.to_string(),
        }
    }
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Self {
        Reply {
            text: text.into(),
            ..Default::default()
        }
    }
    /// Add a tool call with JSON arguments.
    pub fn tool(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push(FakeToolCall::new(name, arguments));
        self
    }
    /// Add a tool call whose arguments are sent verbatim.
    pub fn raw_tool(mut self, name: impl Into<String>, raw: impl Into<String>) -> Self {
        self.tool_calls.push(FakeToolCall::raw(name, raw));
        self
    }
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(FakeUsage {
            input_tokens,
            output_tokens,
        });
        self
    }
    pub fn no_usage(mut self) -> Self {
        self.omit_usage = true;
        self
    }
}

impl Step {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Step {
        Step::Reply(Reply::text(text))
    }
    /// One tool call, no text.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Step {
        Step::Reply(Reply::default().tool(name, arguments))
    }
    pub fn reply(reply: Reply) -> Step {
        Step::Reply(reply)
    }
    pub fn error(status: u16) -> Step {
        Step::Error {
            status,
            retry_after: None,
            message: None,
        }
    }
    pub fn error_retry_after(status: u16, retry_after: impl Into<String>) -> Step {
        Step::Error {
            status,
            retry_after: Some(retry_after.into()),
            message: None,
        }
    }
    pub fn cut(reply: Reply) -> Step {
        Step::Cut(reply)
    }
    pub fn stall(reply: Reply, stall_ms: u64) -> Step {
        Step::Stall { reply, stall_ms }
    }
    pub fn delay(delay_ms: u64, step: Step) -> Step {
        Step::Delay {
            delay_ms,
            step: Box::new(step),
        }
    }
    pub fn raw(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Step {
        Step::Raw {
            status,
            content_type: content_type.into(),
            body: body.into(),
        }
    }
}
