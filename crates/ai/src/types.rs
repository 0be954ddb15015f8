//! Provider-neutral chat types: messages, tool definitions, options, events and results.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// One message of a conversation, in the order the model should read them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions for the model. Anthropic gets all system messages joined as its top-level
    /// `system` field; OpenAI-compatible servers get them in place.
    System { content: String },
    /// What the user typed.
    User { content: String },
    /// What the model answered: text and/or the tool calls it made in that step.
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call of the previous assistant step. `is_error` is sent natively
    /// to Anthropic; the OpenAI format has no such flag, so say so in `content` too
    /// (e.g. "failed: …").
    ToolResult {
        call_id: String,
        tool_name: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message::System {
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message::User {
            content: content.into(),
        }
    }
    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Message {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }
    /// The assistant message that replays a [`ChatResult`] into the history.
    pub fn from_result(result: &ChatResult) -> Message {
        Message::Assistant {
            text: result.text.clone(),
            tool_calls: result.tool_calls.clone(),
        }
    }
    /// The answer to `call`.
    pub fn tool_result(call: &ToolCall, content: impl Into<String>, is_error: bool) -> Message {
        Message::ToolResult {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: content.into(),
            is_error,
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object. Adapted per provider before sending
    /// (see [`crate::schema_adapt`]).
    pub input_schema: Value,
}

/// A complete tool call made by the model. Providers only ever hand on complete calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (generated when a server omits it); answer with the same id.
    pub id: String,
    pub name: String,
    /// The parsed arguments; an empty object when `parse_error` is set.
    pub arguments: Value,
    /// The arguments exactly as the model produced them.
    #[serde(default)]
    pub raw_arguments: String,
    /// Set when `raw_arguments` was not a JSON object; answer the call with an error result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
}

impl ToolCall {
    /// Build a call from raw argument text, parsing it leniently (empty text is `{}`).
    pub fn from_raw(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: impl Into<String>,
    ) -> Self {
        let raw = raw.into();
        let (arguments, parse_error) = parse_arguments(&raw);
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
            raw_arguments: raw,
            parse_error,
        }
    }
}

/// Parse tool-call arguments: `""` is `{}`; anything that is not a JSON object is a parse error.
pub fn parse_arguments(raw: &str) -> (Value, Option<String>) {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return (Value::Object(Default::default()), None);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => (Value::Object(map), None),
        Ok(other) => (
            Value::Object(Default::default()),
            Some(format!(
                "The tool arguments must be a JSON object, got {}.",
                json_kind(&other)
            )),
        ),
        Err(e) => {
            let mut msg = format!("Failed to parse the tool arguments as JSON ({e}).");
            if trimmed.starts_with('{') && trimmed.len() > 1000 {
                msg.push_str(
                    " The arguments are long and were probably cut off; try again with shorter arguments.",
                );
            }
            (Value::Object(Default::default()), Some(msg))
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Sampling options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Maximum output tokens. Anthropic requires one; it defaults to 4096 there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// One call to the model.
#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub options: ChatOptions,
    /// Cancel the call (the stream then ends with [`crate::AiError::Cancelled`]).
    pub cancel: Option<CancellationToken>,
    /// Whether the model may call the offered tools in this step.
    pub tool_choice: ToolChoice,
}

/// Whether the model may call tools in a step. `None` keeps the tools defined (the history may
/// refer to them) but asks for a text answer (`tool_choice: "none"` on both wire formats).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            ..Default::default()
        }
    }
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }
    pub fn with_options(mut self, options: ChatOptions) -> Self {
        self.options = options;
        self
    }
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model wants tool results (set whenever the step contains tool calls, whatever the
    /// server said — local servers often say `stop`).
    ToolUse,
    /// The output hit the token limit.
    MaxTokens,
    /// Anything else the server reported (content filter, …).
    Other,
}

/// Token usage of one call. Servers that report none give zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What a provider stream yields, in order: any number of `TextDelta`s as they arrive, then
/// the step's complete `ToolCall`s (only once the response finished without error — never a
/// half call), then one `Usage` and one `Stop`. An `Err` item ends the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    TextDelta(String),
    ToolCall(ToolCall),
    Usage(Usage),
    Stop(StopReason),
}

/// The collected answer of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResult {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop_reason: StopReason,
    pub usage: Usage,
}
