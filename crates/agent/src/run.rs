//! `run_note_chat`: the agent loop of one turn.

use crate::context::NoteContext;
use crate::dispatch::{Dispatcher, SharedSession, serialize_output};
use crate::error::AgentError;
use crate::events::TurnEvent;
use crate::prompt::{PromptOptions, system_prompt};
use crate::tool_list::{SidebarToggles, ToolList, build_tool_list};
use crate::transcript::TranscriptEntry;
use futures::StreamExt;
use serde::Serialize;
use sidenote_ai::{
    CancellationToken, ChatEvent, ChatOptions, ChatProvider, ChatRequest, Message, StopReason,
    ToolCall, ToolChoice, Usage,
};
use sidenote_editor::{EditProposal, EditorSession, ProposalStatus};
use sidenote_store::Store;
use sidenote_tools::Registry;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// At most this many model calls per turn.
pub const MAX_STEPS: usize = 8;

/// Tunables of the loop.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    pub max_steps: usize,
    /// Tool outputs longer than this (chars of JSON) are cut with a marker.
    pub max_tool_output_chars: usize,
    pub prompt: PromptOptions,
    pub chat: ChatOptions,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            max_steps: MAX_STEPS,
            max_tool_output_chars: 8000,
            prompt: PromptOptions::default(),
            chat: ChatOptions::default(),
        }
    }
}

/// The agent: a model, the workspace-tool registry and (optionally) the store whose
/// `ai.tool.<id>.enabled` switches filter the registry. Cheap to share (`Arc` inside).
#[derive(Clone)]
pub struct Agent {
    provider: Arc<dyn ChatProvider>,
    registry: Registry,
    store: Option<Store>,
    options: AgentOptions,
}

/// One user turn.
#[derive(Debug, Default)]
pub struct TurnRequest {
    pub context: NoteContext,
    /// Earlier messages of the conversation (system messages are dropped: the prompt is
    /// rebuilt from `context` every turn).
    pub history: Vec<Message>,
    pub message: String,
    /// The focused note's live editor session. When `context.note` is set and this is
    /// `None`, a private session on the note's body is used (its proposals are returned in
    /// `edits`).
    pub session: Option<SharedSession>,
    /// Cancel the turn (the model call is aborted; pending edits are rejected).
    pub cancel: CancellationToken,
    /// Where [`TurnEvent`]s go while the turn runs.
    pub events: Option<mpsc::Sender<TurnEvent>>,
    /// Use this turn id instead of a fresh one.
    pub turn_id: Option<String>,
}

impl TurnRequest {
    pub fn new(context: NoteContext, message: impl Into<String>) -> Self {
        TurnRequest {
            context,
            message: message.into(),
            ..Default::default()
        }
    }
}

/// Token usage of the whole turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TurnUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub model_calls: usize,
    /// Per model call, in order.
    pub per_call: Vec<Usage>,
}

impl TurnUsage {
    fn add(&mut self, u: Usage) {
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.per_call.push(u);
    }
    /// The total as one [`Usage`].
    pub fn total(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
        }
    }
}

/// A finished turn: `{reply, edits, transcript, usage, turn_id}`.
#[derive(Debug, Clone, Serialize)]
pub struct TurnResult {
    pub reply: String,
    /// This turn's pending session-tool proposals.
    pub edits: Vec<EditProposal>,
    /// Every tool call of the turn, in order.
    pub transcript: Vec<TranscriptEntry>,
    pub usage: TurnUsage,
    pub turn_id: String,
    /// The turn's messages (user message, assistant steps, tool results, final reply) to
    /// append to the history for the next turn.
    #[serde(skip)]
    pub messages: Vec<Message>,
}

/// A failed turn: the error, plus everything that happened before it.
#[derive(Debug, Clone, Serialize)]
pub struct TurnFailure {
    pub error: AgentError,
    pub transcript: Vec<TranscriptEntry>,
    pub edits: Vec<EditProposal>,
    pub usage: TurnUsage,
    pub turn_id: String,
    #[serde(skip)]
    pub messages: Vec<Message>,
}

impl std::fmt::Display for TurnFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.error.message, self.error.code)
    }
}

impl std::error::Error for TurnFailure {}

impl Agent {
    pub fn new(provider: Arc<dyn ChatProvider>, registry: Registry) -> Self {
        Agent {
            provider,
            registry,
            store: None,
            options: AgentOptions::default(),
        }
    }
    /// Read the sidebar's per-tool switches from this store every turn.
    pub fn with_store(mut self, store: Store) -> Self {
        self.store = Some(store);
        self
    }
    pub fn with_options(mut self, options: AgentOptions) -> Self {
        self.options = options;
        self
    }
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The tool list this agent would offer for `ctx` now.
    pub fn tool_list(&self, ctx: &NoteContext) -> Result<ToolList, AgentError> {
        let toggles = match &self.store {
            Some(store) => SidebarToggles::load(store, &self.registry)
                .map_err(|e| AgentError::internal(format!("cannot read the tool switches: {e}")))?,
            None => SidebarToggles::all_on(),
        };
        Ok(build_tool_list(ctx, &self.registry, &toggles))
    }

    /// The first request of a turn as it would be sent (for size measurements).
    pub fn first_request(
        &self,
        ctx: &NoteContext,
        message: &str,
    ) -> Result<ChatRequest, AgentError> {
        let tools = self.tool_list(ctx)?;
        Ok(ChatRequest::new(vec![
            Message::system(system_prompt(ctx, &self.options.prompt)),
            Message::user(message),
        ])
        .with_tools(tools.specs())
        .with_options(self.options.chat.clone()))
    }

    /// Run one turn. See [`run_note_chat`].
    pub async fn run(&self, req: TurnRequest) -> Result<TurnResult, TurnFailure> {
        run_note_chat(self, req).await
    }
}

/// Run one user turn: build the tool list and system prompt from the context, then call the
/// model up to `max_steps` times, dispatching every tool call it makes, until it answers
/// without tool calls.
pub async fn run_note_chat(agent: &Agent, req: TurnRequest) -> Result<TurnResult, TurnFailure> {
    let TurnRequest {
        mut context,
        history,
        message,
        session,
        cancel,
        events,
        turn_id,
    } = req;
    let turn_id = turn_id.unwrap_or_else(sidenote_store::new_id);
    // The session is the truth for the focused note's text and selection.
    let session = match (&mut context.note, session) {
        (Some(note), Some(s)) => {
            {
                let g = s.lock().unwrap_or_else(|p| p.into_inner());
                if g.note_id() != note.id {
                    return Err(TurnFailure {
                        error: AgentError::invalid_request(format!(
                            "the editor session is for note {}, but the focused note is {}",
                            g.note_id(),
                            note.id
                        )),
                        transcript: Vec::new(),
                        edits: Vec::new(),
                        usage: TurnUsage::default(),
                        turn_id,
                        messages: Vec::new(),
                    });
                }
                note.body = g.working_text().to_string();
                note.selection = g.selection();
            }
            Some(s)
        }
        (Some(note), None) => {
            let mut s = EditorSession::new(note.id.clone(), note.body.clone());
            s.set_selection(note.selection.clone());
            Some(Arc::new(Mutex::new(s)))
        }
        (None, _) => None,
    };
    let mut turn = Turn {
        agent,
        turn_id,
        events,
        cancel,
        session,
        transcript: Vec::new(),
        usage: TurnUsage::default(),
        messages: Vec::new(),
    };
    match turn.run(&context, history, message).await {
        Ok(reply) => {
            let edits = turn.edits();
            turn.emit(TurnEvent::Finished {
                reply: reply.clone(),
                usage: turn.usage.total(),
                edits: edits.len(),
            })
            .await;
            Ok(TurnResult {
                reply,
                edits,
                transcript: turn.transcript,
                usage: turn.usage,
                turn_id: turn.turn_id,
                messages: turn.messages,
            })
        }
        Err(error) => {
            if error.is_cancelled() {
                turn.reject_pending();
            }
            let edits = turn.edits();
            turn.emit(TurnEvent::Failed {
                error: error.clone(),
            })
            .await;
            Err(TurnFailure {
                error,
                transcript: turn.transcript,
                edits,
                usage: turn.usage,
                turn_id: turn.turn_id,
                messages: turn.messages,
            })
        }
    }
}

struct Turn<'a> {
    agent: &'a Agent,
    turn_id: String,
    events: Option<mpsc::Sender<TurnEvent>>,
    cancel: CancellationToken,
    session: Option<SharedSession>,
    transcript: Vec<TranscriptEntry>,
    usage: TurnUsage,
    messages: Vec<Message>,
}

/// What one model call returned.
struct StepAnswer {
    text: String,
    tool_calls: Vec<ToolCall>,
}

impl Turn<'_> {
    async fn emit(&self, ev: TurnEvent) {
        if let Some(tx) = &self.events {
            // a panel that went away does not stop the turn
            let _ = tx.send(ev).await;
        }
    }

    fn lock_session(&self) -> Option<std::sync::MutexGuard<'_, EditorSession>> {
        self.session
            .as_ref()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// This turn's pending proposals.
    fn edits(&self) -> Vec<EditProposal> {
        self.lock_session()
            .map(|s| {
                s.pending()
                    .into_iter()
                    .filter(|p| p.turn.as_deref() == Some(self.turn_id.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    fn reject_pending(&self) {
        if let Some(mut s) = self.lock_session() {
            let ids: Vec<u64> = s
                .proposals()
                .iter()
                .filter(|p| {
                    p.status == ProposalStatus::Pending
                        && p.turn.as_deref() == Some(self.turn_id.as_str())
                })
                .map(|p| p.id)
                .collect();
            for id in ids {
                let _ = s.reject(id);
            }
        }
    }

    async fn run(
        &mut self,
        ctx: &NoteContext,
        history: Vec<Message>,
        message: String,
    ) -> Result<String, AgentError> {
        if message.trim().is_empty() {
            return Err(AgentError::invalid_request("the message is empty"));
        }
        let opts = &self.agent.options;
        let tools = self.agent.tool_list(ctx)?;
        let specs = tools.specs();
        self.emit(TurnEvent::Started {
            turn_id: self.turn_id.clone(),
            tools: tools.names().into_iter().map(str::to_string).collect(),
        })
        .await;
        let mut messages = Vec::with_capacity(history.len() + 8);
        messages.push(Message::system(system_prompt(ctx, &opts.prompt)));
        messages.extend(
            history
                .into_iter()
                .filter(|m| !matches!(m, Message::System { .. })),
        );
        let first_new = messages.len();
        messages.push(Message::user(message));
        let session = self.session.clone();
        let turn_id = self.turn_id.clone();
        let mut dispatcher = Dispatcher::new(
            &tools,
            &self.agent.registry,
            session.as_ref(),
            ctx.note.is_some(),
            ctx.has_selection(),
            &turn_id,
        );
        let mut result = Err(AgentError::max_steps(opts.max_steps));
        // After a step in which every call was refused as a repeat, the next model call asks
        // for a text answer (tool_choice none), so a model stuck in a loop has to reply.
        let mut only_repeats = false;
        for step in 1..=opts.max_steps {
            if self.cancel.is_cancelled() {
                result = Err(AgentError::cancelled());
                break;
            }
            self.emit(TurnEvent::Step { step }).await;
            let request = ChatRequest {
                messages: messages.clone(),
                tools: specs.clone(),
                options: opts.chat.clone(),
                cancel: Some(self.cancel.clone()),
                tool_choice: if only_repeats {
                    ToolChoice::None
                } else {
                    ToolChoice::Auto
                },
            };
            let answer = match self.model_call(request).await {
                Ok(a) => a,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            if answer.tool_calls.is_empty() {
                messages.push(Message::assistant(answer.text.clone()));
                result = Ok(answer.text);
                break;
            }
            // all calls of one answer: one assistant message, then their results in order
            messages.push(Message::Assistant {
                text: answer.text,
                tool_calls: answer.tool_calls.clone(),
            });
            let mut failed = None;
            only_repeats = true;
            for call in &answer.tool_calls {
                if failed.is_some() || self.cancel.is_cancelled() {
                    // every call must be answered, even when the turn is ending
                    messages.push(Message::tool_result(
                        call,
                        "Error: not run (the turn ended).",
                        true,
                    ));
                    continue;
                }
                let activity = dispatcher.start_activity(call);
                self.emit(TurnEvent::ToolStart {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    tier: tools.get(&call.name).map(|t| t.tier),
                    arguments: call.arguments.clone(),
                    activity,
                })
                .await;
                let outcome = tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => Err(AgentError::cancelled()),
                    r = dispatcher.dispatch(call) => r,
                };
                let d = match outcome {
                    Ok(d) => d,
                    Err(e) => {
                        self.transcript.push(TranscriptEntry {
                            step,
                            call_id: call.id.clone(),
                            tool: call.name.clone(),
                            tier: tools.get(&call.name).map(|t| t.tier),
                            arguments: call.arguments.clone(),
                            output: None,
                            error: Some(e.message.clone()),
                            render: None,
                            activity: format!("{} failed", call.name),
                        });
                        messages.push(Message::tool_result(
                            call,
                            format!("Error: {}", e.message),
                            true,
                        ));
                        failed = Some(e);
                        continue;
                    }
                };
                only_repeats &= d.repeated;
                let content = match (&d.output, &d.error) {
                    (_, Some(err)) => format!("Error: {err}"),
                    (Some(out), None) => serialize_output(out, opts.max_tool_output_chars),
                    (None, None) => "{}".to_string(),
                };
                messages.push(Message::tool_result(call, content, d.error.is_some()));
                self.emit(TurnEvent::ToolEnd {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    tier: d.tier,
                    activity: d.activity.clone(),
                    error: d.error.clone(),
                    render: d.render.clone(),
                })
                .await;
                if let Some(p) = &d.proposal {
                    self.emit(TurnEvent::EditProposed {
                        proposal: p.clone(),
                    })
                    .await;
                }
                self.transcript.push(TranscriptEntry {
                    step,
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    tier: d.tier,
                    arguments: call.arguments.clone(),
                    output: d.output,
                    error: d.error,
                    render: d.render,
                    activity: d.activity,
                });
            }
            if let Some(e) = failed {
                result = Err(e);
                break;
            }
            if self.cancel.is_cancelled() {
                result = Err(AgentError::cancelled());
                break;
            }
        }
        self.messages = messages.split_off(first_new);
        result
    }

    /// One model call, streaming text deltas out as events.
    async fn model_call(&mut self, request: ChatRequest) -> Result<StepAnswer, AgentError> {
        let mut stream = self.agent.provider.stream(request);
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut usage = Usage::default();
        let mut stop = None;
        loop {
            let item = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err(AgentError::cancelled()),
                item = stream.next() => item,
            };
            match item {
                None => break,
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(ChatEvent::TextDelta(t))) => {
                    if !t.is_empty() {
                        text.push_str(&t);
                        self.emit(TurnEvent::TextDelta { text: t }).await;
                    }
                }
                Some(Ok(ChatEvent::ToolCall(c))) => tool_calls.push(c),
                Some(Ok(ChatEvent::Usage(u))) => usage = u,
                Some(Ok(ChatEvent::Stop(s))) => stop = Some(s),
            }
        }
        self.usage.model_calls += 1;
        self.usage.add(usage);
        match stop {
            Some(
                StopReason::ToolUse
                | StopReason::EndTurn
                | StopReason::MaxTokens
                | StopReason::Other,
            ) => Ok(StepAnswer { text, tool_calls }),
            None => Err(AgentError::new(
                AgentError::PROVIDER_ERROR,
                "the model's answer ended without a stop reason",
            )),
        }
    }
}
