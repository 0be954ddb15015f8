//! The dispatcher: routes one tool call by id — the session table first, then the registry —
//! after the turn's gates (offered this turn, arguments parsed, not repeated too often).

use crate::error::AgentError;
use crate::tool_list::{Tier, ToolList};
use serde_json::{Value, json};
use sidenote_ai::ToolCall;
use sidenote_editor::{EditProposal, EditorSession, SessionToolError};
use sidenote_store::Actor;
use sidenote_tools::toggles::{self, Surface};
use sidenote_tools::{Registry, RenderSpec, ToolCtx, ToolError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// An editor session shared between the panel and running turns. The agent locks it only
/// for the instant of a session-tool call, so the user can keep typing during a turn.
pub type SharedSession = Arc<Mutex<EditorSession>>;

/// The same tool with the same arguments this many times in one turn is refused.
pub const REPEAT_LIMIT: usize = 3;

/// What a call produced for the model and the transcript.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dispatched {
    pub tier: Option<Tier>,
    /// JSON output on success.
    pub output: Option<Value>,
    /// The error text the model reads (recoverable failures).
    pub error: Option<String>,
    pub render: Option<RenderSpec>,
    pub activity: String,
    pub proposal: Option<EditProposal>,
    /// Refused by the repetition guard.
    pub repeated: bool,
}

impl Dispatched {
    fn refused(tier: Option<Tier>, message: String, tool: &str) -> Self {
        Dispatched {
            tier,
            output: None,
            error: Some(message),
            render: None,
            activity: format!("Refused {tool}"),
            proposal: None,
            repeated: false,
        }
    }
}

/// Per-turn dispatch state.
pub(crate) struct Dispatcher<'a> {
    pub tools: &'a ToolList,
    pub registry: &'a Registry,
    pub session: Option<&'a SharedSession>,
    /// The open note has a selection (for the refusal text).
    pub has_selection: bool,
    pub note_open: bool,
    pub turn_id: &'a str,
    repeats: HashMap<(String, String), usize>,
}

fn lock(session: &SharedSession) -> std::sync::MutexGuard<'_, EditorSession> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` compare equal.
pub(crate) fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

impl<'a> Dispatcher<'a> {
    pub fn new(
        tools: &'a ToolList,
        registry: &'a Registry,
        session: Option<&'a SharedSession>,
        note_open: bool,
        has_selection: bool,
        turn_id: &'a str,
    ) -> Self {
        Dispatcher {
            tools,
            registry,
            session,
            has_selection,
            note_open,
            turn_id,
            repeats: HashMap::new(),
        }
    }

    /// The one-line description shown before the call runs.
    pub fn start_activity(&self, call: &ToolCall) -> String {
        match self.tools.get(&call.name).map(|t| t.tier) {
            Some(Tier::Session) => format!("Proposing an edit ({})", call.name),
            Some(_) => match self.registry.get(&call.name) {
                Some(tool) => tool.activity(&call.arguments, None),
                None => format!("Calling {}", call.name),
            },
            None => format!("Calling {}", call.name),
        }
    }

    fn not_offered(&self, name: &str) -> String {
        let why = if sidenote_editor::find_tool(name).is_some() {
            if !self.note_open {
                format!("`{name}` edits the open note, but no note is open")
            } else if self.has_selection {
                format!(
                    "`{name}` is not available: the user selected text, so only edit_selection may change the note"
                )
            } else {
                format!("`{name}` is not available for this note")
            }
        } else if self.registry.get(name).is_some() {
            toggles::disabled_message(Surface::Sidebar, name)
        } else {
            format!("Unknown tool: '{name}'")
        };
        format!(
            "{} Available tools: {}.",
            why.trim_end_matches('.').to_string() + ".",
            self.tools.names().join(", ")
        )
    }

    /// Run one call. `Err` only for internal failures (the turn fails).
    pub async fn dispatch(&mut self, call: &ToolCall) -> Result<Dispatched, AgentError> {
        let name = call.name.as_str();
        let Some(turn_tool) = self.tools.get(name) else {
            return Ok(Dispatched::refused(None, self.not_offered(name), name));
        };
        let tier = turn_tool.tier;
        if let Some(pe) = &call.parse_error {
            return Ok(Dispatched::refused(
                Some(tier),
                format!(
                    "invalid arguments for {name}: {pe} Call it again with a JSON object that matches its schema."
                ),
                name,
            ));
        }
        let key = (name.to_string(), canonical(&call.arguments));
        let seen = self.repeats.entry(key).or_insert(0);
        *seen += 1;
        if *seen >= REPEAT_LIMIT {
            return Ok(Dispatched {
                repeated: true,
                ..Dispatched::refused(
                    Some(tier),
                    format!(
                        "You already called {name} with these same arguments {} times in this turn. \
                         Stop repeating it: use the results you have, change the arguments, or answer the user.",
                        *seen - 1
                    ),
                    name,
                )
            });
        }
        match tier {
            Tier::Session => self.session_call(call),
            Tier::Workspace | Tier::Plugin => self.registry_call(call, tier).await,
        }
    }

    fn session_call(&self, call: &ToolCall) -> Result<Dispatched, AgentError> {
        let Some(session) = self.session else {
            return Err(AgentError::internal(format!(
                "session tool {} was offered without an editor session",
                call.name
            )));
        };
        let mut s = lock(session);
        // proposals made by this call belong to this turn (the journal actor when saved)
        s.set_turn(Some(self.turn_id.to_string()));
        let result = sidenote_editor::dispatch(&mut s, &call.name, &call.arguments);
        s.set_turn(None);
        match result {
            Ok(out) => Ok(Dispatched {
                tier: Some(Tier::Session),
                output: Some(json!({
                    "proposed": out.proposal.id,
                    "message": out.message,
                    "status": "pending user review",
                    "next": "Done: the user will review this edit. Do not propose it again; \
                             make another edit or reply to the user.",
                })),
                error: None,
                render: None,
                activity: out.message.clone(),
                proposal: Some(out.proposal),
                repeated: false,
            }),
            Err(SessionToolError::Internal(m)) => Err(AgentError::internal(format!(
                "session tool {} failed: {m}",
                call.name
            ))),
            Err(e) => Ok(Dispatched::refused(
                Some(Tier::Session),
                e.to_string(),
                &call.name,
            )),
        }
    }

    async fn registry_call(&self, call: &ToolCall, tier: Tier) -> Result<Dispatched, AgentError> {
        let ctx = ToolCtx::new(Actor::Agent(self.turn_id.to_string()));
        let tool = self.registry.get(&call.name);
        match self
            .registry
            .call(&call.name, call.arguments.clone(), &ctx)
            .await
        {
            Ok(output) => {
                let json = output.to_json();
                let (activity, render) = match &tool {
                    Some(t) => (
                        t.activity(&call.arguments, Some(&output)),
                        t.render(&call.arguments, &json).await,
                    ),
                    None => (format!("Called {}", call.name), None),
                };
                Ok(Dispatched {
                    tier: Some(tier),
                    output: Some(json),
                    error: None,
                    render,
                    activity,
                    proposal: None,
                    repeated: false,
                })
            }
            Err(ToolError::Recoverable(m)) => Ok(Dispatched::refused(Some(tier), m, &call.name)),
            Err(ToolError::Internal(m)) => Err(AgentError::internal(format!(
                "tool {} failed: {m}",
                call.name
            ))),
        }
    }
}

/// Serialise a tool output for the model, cut to `max_chars` with a marker.
pub fn serialize_output(output: &Value, max_chars: usize) -> String {
    let s = match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    truncate(s, max_chars)
}

/// Cut `s` to `max_chars` chars, saying how much was left out.
pub fn truncate(s: String, max_chars: usize) -> String {
    let total = s.chars().count();
    if total <= max_chars {
        return s;
    }
    let cut: String = s.chars().take(max_chars).collect();
    format!(
        "{cut}…[truncated: {} more characters not shown; ask for less, e.g. read_note with offset and max_chars]",
        total - max_chars
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ignores_key_order() {
        let a: Value =
            serde_json::from_str(r#"{"b":{"y":1,"x":[{"q":1,"p":2}]},"a":2}"#).unwrap_or_default();
        let b: Value =
            serde_json::from_str(r#"{"a":2,"b":{"x":[{"p":2,"q":1}],"y":1}}"#).unwrap_or_default();
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(canonical(&a), canonical(&Value::Null));
    }

    #[test]
    fn truncation_marks_what_was_cut() {
        assert_eq!(truncate("héllo".into(), 5), "héllo");
        let t = truncate("héllo wörld".into(), 5);
        assert!(t.starts_with("héllo…[truncated: 6 more characters"), "{t}");
        assert_eq!(serialize_output(&json!({"a": 1}), 100), "{\"a\":1}");
        assert_eq!(serialize_output(&json!("plain"), 100), "plain");
    }
}
