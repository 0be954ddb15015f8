//! `sidenote ai test`: check that the configured model answers, and whether it can call tools
//! natively (offer one tool, expect a structured call, send the result back, check the answer).

use crate::error::AiError;
use crate::provider::ChatProvider;
use crate::types::{ChatOptions, ChatRequest, Message, StopReason, ToolSpec, Usage};
use serde::Serialize;
use serde_json::json;

pub const HELLO_PROMPT: &str = "Reply with the single word OK.";
pub const PROBE_TOOL: &str = "get_secret_word";
pub const PROBE_TOPIC: &str = "sidenote";
/// What the probe tool returns; the final answer must contain it.
pub const PROBE_SECRET: &str = "pomegranate";
pub const PROBE_PROMPT: &str = "Call the get_secret_word tool with topic \"sidenote\", then reply with the secret word it returns and nothing else.";

/// The tool offered by the probe.
pub fn probe_tool() -> ToolSpec {
    ToolSpec {
        name: PROBE_TOOL.into(),
        description:
            "Returns the secret word for a topic. Always call it when asked for a secret word."
                .into(),
        input_schema: json!({
            "type": "object",
            "properties": {"topic": {"type": "string", "description": "The topic to get the secret word for."}},
            "required": ["topic"],
        }),
    }
}

/// Outcome of the tool-calling probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "detail")]
pub enum ToolSupport {
    /// Structured call, result used in the final answer.
    Native,
    /// A structured call was made but something was off (arguments, final answer).
    Partial(String),
    /// No structured call: the model answered in text (or the server ignored `tools`).
    None(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    pub provider: String,
    pub model: String,
    /// The reply to [`HELLO_PROMPT`].
    pub hello_reply: String,
    /// True when the reply was "OK" (any case, punctuation ignored).
    pub hello_ok: bool,
    pub tools: ToolSupport,
    pub usage: Usage,
}

impl ProbeReport {
    /// One-line verdict for humans.
    pub fn verdict(&self) -> String {
        match &self.tools {
            ToolSupport::Native => format!(
                "PASS: {} answers and calls tools natively; it can drive the AI sidebar.",
                self.model
            ),
            ToolSupport::Partial(why) => format!(
                "PARTIAL: {} made a native tool call, but {why}. It may work, but a stronger model is recommended.",
                self.model
            ),
            ToolSupport::None(why) => format!(
                "FAIL: {} cannot call tools natively ({why}). The AI sidebar needs a tool-calling model (e.g. qwen3, llama3.1+, gpt-4o-mini, claude).",
                self.model
            ),
        }
    }
}

fn is_ok_word(s: &str) -> bool {
    s.trim()
        .trim_matches(|c: char| !c.is_alphanumeric())
        .eq_ignore_ascii_case("ok")
}

/// Run both probes. Errors (connection, HTTP, timeouts) are returned as is: the model
/// could not be reached at all.
pub async fn run_probe(provider: &dyn ChatProvider) -> Result<ProbeReport, AiError> {
    let opts = ChatOptions {
        temperature: Some(0.0),
        max_tokens: Some(512),
    };
    let hello = provider
        .chat(ChatRequest::new(vec![Message::user(HELLO_PROMPT)]).with_options(opts.clone()))
        .await?;
    let mut usage = hello.usage;

    let tools = vec![probe_tool()];
    let mut messages = vec![Message::user(PROBE_PROMPT)];
    let first = provider
        .chat(
            ChatRequest::new(messages.clone())
                .with_tools(tools.clone())
                .with_options(opts.clone()),
        )
        .await?;
    usage.input_tokens += first.usage.input_tokens;
    usage.output_tokens += first.usage.output_tokens;

    let tool_support = match first.tool_calls.first() {
        None => ToolSupport::None(if first.text.contains(PROBE_TOOL) {
            "it wrote the tool call as text instead of a structured call".into()
        } else {
            "it answered without calling the offered tool".into()
        }),
        Some(call) => {
            let mut problems = Vec::new();
            if call.name != PROBE_TOOL {
                problems.push(format!("it called an unknown tool {:?}", call.name));
            }
            if let Some(e) = &call.parse_error {
                problems.push(format!("its arguments were not valid JSON ({e})"));
            } else if !call
                .arguments
                .get("topic")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.eq_ignore_ascii_case(PROBE_TOPIC))
            {
                problems.push(format!(
                    "its arguments were {} instead of {{\"topic\":\"{PROBE_TOPIC}\"}}",
                    call.raw_arguments
                ));
            }
            if first.stop_reason != StopReason::ToolUse {
                problems.push(format!("it stopped with {:?}", first.stop_reason));
            }
            messages.push(Message::from_result(&first));
            for c in &first.tool_calls {
                if c.name == PROBE_TOOL && c.parse_error.is_none() {
                    messages.push(Message::tool_result(c, PROBE_SECRET, false));
                } else {
                    messages.push(Message::tool_result(
                        c,
                        format!("Error: unknown tool or bad arguments; call {PROBE_TOOL} with {{\"topic\": \"{PROBE_TOPIC}\"}}."),
                        true,
                    ));
                }
            }
            let second = provider
                .chat(
                    ChatRequest::new(messages)
                        .with_tools(tools)
                        .with_options(opts),
                )
                .await?;
            usage.input_tokens += second.usage.input_tokens;
            usage.output_tokens += second.usage.output_tokens;
            if !second.text.to_lowercase().contains(PROBE_SECRET) {
                problems.push(format!(
                    "its final answer did not use the tool result (got {:?})",
                    crate::retry::truncate(second.text.trim(), 80)
                ));
            }
            if problems.is_empty() {
                ToolSupport::Native
            } else {
                ToolSupport::Partial(problems.join("; "))
            }
        }
    };
    Ok(ProbeReport {
        provider: provider.id(),
        model: provider.model().to_string(),
        hello_ok: is_ok_word(&hello.text),
        hello_reply: hello.text,
        tools: tool_support,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_word() {
        assert!(is_ok_word("OK"));
        assert!(is_ok_word(" ok.\n"));
        assert!(is_ok_word("**Ok!**"));
        assert!(!is_ok_word("OK, sure"));
        assert!(!is_ok_word(""));
    }
}
