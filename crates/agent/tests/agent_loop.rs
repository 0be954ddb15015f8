//! The loop against the fake provider server: gates, recovery, the step cap, the repetition
//! guard, cancellation, internal errors, truncation and events — in every wire mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use sidenote_agent::*;
use sidenote_editor::{EditorSession, ProposalStatus};
use sidenote_testkit::{FakeProvider, Reply, Step};
use sidenote_tools::{Access, Tool, ToolCtx, ToolError, ToolOutput, ToolSource};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn open_note(ws: &Workspace, body: &str) -> (FocusedNote, SharedSession) {
    let nb = ws.notebook("Travel");
    let n = ws.note(&nb, "Trip", body, 1_700_000_000_000);
    let focused = FocusedNote::load(&ws.store, &n.id).unwrap();
    let session = Arc::new(Mutex::new(EditorSession::new(n.id.clone(), n.body.clone())));
    (focused, session)
}

#[tokio::test]
async fn a_disallowed_call_is_refused_and_the_note_untouched() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let (note, session) = open_note(&ws, "Bring a tent.\n\nAnd a stove.\n");
        session.lock().unwrap().set_selection(Some(0..13));
        let before = ws.snapshot();
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            // with a selection only edit_selection is offered
            Step::tool_call("append_to_note", json!({"text": "socks"})),
            Step::tool_call("delete_everything", json!({})),
            Step::tool_call("edit_selection", json!({"text": "Bring a big tent."})),
            Step::text("Done."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let mut req = TurnRequest::new(NoteContext::with_note(note), "make it bigger");
        req.session = Some(session.clone());
        let done = agent.run(req).await.unwrap();
        let mode = mode_name(ty, streaming);
        assert_eq!(done.reply, "Done.", "{mode}");
        let reqs = fake.requests();
        let refusal = &reqs[1].tool_results()[0].content;
        assert!(refusal.contains("only edit_selection"), "{mode}: {refusal}");
        assert!(
            refusal.contains("Available tools:") && refusal.contains("edit_selection"),
            "{refusal}"
        );
        let unknown = &reqs[2].tool_results()[0].content;
        assert!(
            unknown.contains("Unknown tool: 'delete_everything'"),
            "{unknown}"
        );
        // only the allowed call produced a proposal; nothing was written
        assert_eq!(done.edits.len(), 1);
        assert_eq!(done.edits[0].tool, "edit_selection");
        assert_eq!(done.edits[0].status, ProposalStatus::Pending);
        assert_eq!(done.edits[0].turn.as_deref(), Some(done.turn_id.as_str()));
        let s = session.lock().unwrap();
        assert_eq!(s.text(), "Bring a tent.\n\nAnd a stove.\n");
        assert_eq!(s.proposals().len(), 1);
        assert_eq!(ws.snapshot(), before, "{mode}: the store must not change");
        assert_eq!(done.transcript.len(), 3);
        assert_eq!(done.transcript[0].tier, None);
        assert!(done.transcript[0].error.is_some() && done.transcript[1].error.is_some());
        assert_eq!(done.transcript[2].tier, Some(Tier::Session));
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn bad_json_and_schema_failures_are_recovered() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let nb = ws.notebook("Travel");
        let n = ws.note(&nb, "Packing list", "tent", 1_700_000_000_000);
        let before = ws.snapshot();
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::reply(Reply::default().raw_tool("search_notes", "{\"query\": \"packing")),
            Step::tool_call("update_note", json!({"append": "socks"})), // no id: schema failure
            Step::tool_call("search_notes", json!({"query": "packing"})),
            Step::text("Found it."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let done = agent
            .run(TurnRequest::new(
                NoteContext::workspace(),
                "find my packing list",
            ))
            .await
            .unwrap();
        let mode = mode_name(ty, streaming);
        assert_eq!(done.reply, "Found it.", "{mode}");
        let reqs = fake.requests();
        let bad_json = &reqs[1].tool_results()[0].content;
        assert!(
            bad_json.contains("invalid arguments for search_notes"),
            "{mode}: {bad_json}"
        );
        let schema = &reqs[2].tool_results()[0].content;
        assert!(
            schema.starts_with("Error:") && schema.contains("id"),
            "{mode}: {schema}"
        );
        assert_eq!(ws.snapshot(), before, "{mode}: nothing mutated");
        let found = last_result_json(&reqs[3]);
        assert_eq!(found["results"][0]["id"], json!(n.id), "{mode}");
        assert_eq!(done.transcript.len(), 3);
        assert!(done.transcript[2].error.is_none());
        assert_eq!(done.usage.model_calls, 4);
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn the_turn_stops_after_eight_model_calls() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let fake = FakeProvider::start().await.unwrap();
        fake.set_fallback(|req| {
            // a different query each time, so the repetition guard does not fire
            Step::tool_call("search_notes", json!({"query": format!("q{}", req.index)}))
        });
        let agent = ws.agent(&fake, ty, streaming);
        let err = agent
            .run(TurnRequest::new(NoteContext::workspace(), "loop forever"))
            .await
            .unwrap_err();
        let mode = mode_name(ty, streaming);
        assert_eq!(err.error.code, "max_steps_exceeded", "{mode}");
        assert_eq!(fake.requests().len(), MAX_STEPS, "{mode}");
        assert_eq!(
            err.transcript.len(),
            MAX_STEPS,
            "{mode}: the transcript is kept"
        );
        assert_eq!(err.usage.model_calls, MAX_STEPS);
        let json = serde_json::to_value(&err).unwrap();
        assert_eq!(json["error"]["code"], "max_steps_exceeded");
        assert!(json["transcript"].as_array().unwrap().len() == MAX_STEPS);
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn the_third_identical_call_is_refused() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let fake = FakeProvider::start().await.unwrap();
        let call = json!({"query": "packing", "limit": 5});
        let reordered: Value = serde_json::from_str(r#"{"limit": 5, "query": "packing"}"#).unwrap();
        fake.push_all([
            Step::tool_call("search_notes", call.clone()),
            Step::tool_call("search_notes", call.clone()),
            Step::tool_call("search_notes", reordered),
            Step::text("Nothing found."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let done = agent
            .run(TurnRequest::new(NoteContext::workspace(), "find it"))
            .await
            .unwrap();
        let mode = mode_name(ty, streaming);
        assert_eq!(done.transcript.len(), 3);
        assert!(done.transcript[0].error.is_none() && done.transcript[1].error.is_none());
        let refusal = done.transcript[2].error.as_deref().unwrap();
        assert!(refusal.contains("Stop repeating"), "{mode}: {refusal}");
        assert!(
            done.transcript[2].output.is_none(),
            "the third call did not run"
        );
        let sent = &fake.requests()[3].tool_results()[0].content;
        assert!(sent.contains("Stop repeating"), "{mode}: {sent}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn a_step_of_only_repeats_is_followed_by_a_text_only_call() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let fake = FakeProvider::start().await.unwrap();
        let call = json!({"query": "packing"});
        fake.push_all([
            Step::tool_call("search_notes", call.clone()),
            Step::tool_call("search_notes", call.clone()),
            Step::tool_call("search_notes", call.clone()),
            Step::text("I found your packing lists."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let done = agent
            .run(TurnRequest::new(NoteContext::workspace(), "find it"))
            .await
            .unwrap();
        let mode = mode_name(ty, streaming);
        assert_eq!(done.reply, "I found your packing lists.", "{mode}");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 4, "{mode}");
        // tools stay defined (the history refers to them); only the choice changes
        for r in &reqs[..3] {
            assert!(r.body.get("tool_choice").is_none(), "{mode}: {}", r.body);
            assert!(!r.tool_names().is_empty(), "{mode}");
        }
        let last = &reqs[3];
        assert!(!last.tool_names().is_empty(), "{mode}");
        let choice = &last.body["tool_choice"];
        assert!(
            choice == &json!("none") || choice == &json!({"type": "none"}),
            "{mode}: {choice}"
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn several_calls_in_one_answer_go_back_in_order() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let nb = ws.notebook("Travel");
        ws.note(&nb, "Lakes", "packing list", 1_700_000_000_000);
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::reply(
                Reply::text("Looking in two ways.")
                    .tool("list_notebooks", json!({}))
                    .tool("search_notes", json!({"query": "packing"}))
                    .tool("list_tags", json!({})),
            ),
            Step::text("Here."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let done = agent
            .run(TurnRequest::new(NoteContext::workspace(), "overview"))
            .await
            .unwrap();
        let mode = mode_name(ty, streaming);
        let second = &fake.requests()[1];
        let results = second.tool_results();
        assert_eq!(results.len(), 3, "{mode}");
        let first: Value = serde_json::from_str(&results[0].content).unwrap();
        assert!(first.to_string().contains("Travel"), "{mode}: {first}");
        let middle: Value = serde_json::from_str(&results[1].content).unwrap();
        assert_eq!(middle["total"], 1);
        assert_eq!(
            done.transcript
                .iter()
                .map(|t| t.tool.as_str())
                .collect::<Vec<_>>(),
            ["list_notebooks", "search_notes", "list_tags"]
        );
        // the turn's messages: user, one assistant step with 3 calls, 3 results, the reply
        assert_eq!(done.messages.len(), 6, "{mode}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn cancellation_stops_promptly_and_applies_nothing() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let (note, session) = open_note(&ws, "Tent\n");
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::tool_call("append_to_note", json!({"text": "\nSocks\n"})),
            Step::delay(30_000, Step::text("too late")),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let cancel = CancellationToken::new();
        let mut req = TurnRequest::new(NoteContext::with_note(note), "add socks");
        req.session = Some(session.clone());
        req.cancel = cancel.clone();
        req.events = Some(tx);
        let task = tokio::spawn({
            let agent = agent.clone();
            async move { agent.run(req).await }
        });
        // cancel once the edit was proposed and the second model call is under way
        let mut proposed = false;
        while let Some(ev) = rx.recv().await {
            if matches!(ev, TurnEvent::EditProposed { .. }) {
                proposed = true;
            }
            if matches!(ev, TurnEvent::Step { step: 2 }) {
                break;
            }
        }
        assert!(proposed);
        let t0 = Instant::now();
        cancel.cancel();
        let err = tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("cancel must end the turn")
            .unwrap()
            .unwrap_err();
        let mode = mode_name(ty, streaming);
        assert!(t0.elapsed() < Duration::from_secs(5), "{mode}");
        assert_eq!(err.error.code, "cancelled", "{mode}");
        assert!(err.edits.is_empty(), "{mode}");
        let s = session.lock().unwrap();
        assert_eq!(s.text(), "Tent\n");
        assert!(s.pending().is_empty());
        assert_eq!(s.proposals()[0].status, ProposalStatus::Rejected);
        assert_eq!(err.transcript.len(), 1);
        fake.assert_no_violations();
    }
}

/// A read-only plugin-style tool with an empty input schema whose every call returns
/// what `result` makes.
struct FixedTool {
    id: &'static str,
    description: &'static str,
    schema: Value,
    result: fn() -> Result<ToolOutput, ToolError>,
}

impl FixedTool {
    fn new(
        id: &'static str,
        description: &'static str,
        result: fn() -> Result<ToolOutput, ToolError>,
    ) -> Arc<FixedTool> {
        Arc::new(FixedTool {
            id,
            description,
            schema: json!({"type": "object", "properties": {}}),
            result,
        })
    }
}

#[async_trait::async_trait]
impl Tool for FixedTool {
    fn id(&self) -> &str {
        self.id
    }
    fn description(&self) -> &str {
        self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }
    async fn call(&self, _input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        (self.result)()
    }
}

#[tokio::test]
async fn internal_errors_fail_the_turn_and_large_outputs_are_cut() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        ws.registry
            .add(
                FixedTool::new("broken", "Always fails internally.", || {
                    Err(ToolError::internal("disk on fire"))
                }),
                ToolSource::Plugin("p".into()),
            )
            .unwrap();
        ws.registry
            .add(
                FixedTool::new("huge", "Returns a lot.", || {
                    Ok(ToolOutput::Json(json!({"text": "x".repeat(50_000)})))
                }),
                ToolSource::Plugin("p".into()),
            )
            .unwrap();
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::tool_call("huge", json!({})),
            Step::reply(
                Reply::default()
                    .tool("broken", json!({}))
                    .tool("list_tags", json!({})),
            ),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let err = agent
            .run(TurnRequest::new(NoteContext::workspace(), "go"))
            .await
            .unwrap_err();
        let mode = mode_name(ty, streaming);
        assert_eq!(err.error.code, "internal", "{mode}");
        assert!(
            err.error.message.contains("disk on fire"),
            "{}",
            err.error.message
        );
        let reqs = fake.requests();
        assert_eq!(
            reqs.len(),
            2,
            "{mode}: no model call after an internal error"
        );
        let cut = &reqs[1].tool_results()[0].content;
        assert!(cut.contains("[truncated:"), "{mode}");
        assert!(cut.chars().count() < 9_000, "{mode}: {}", cut.len());
        assert_eq!(err.transcript[0].tier, Some(Tier::Plugin));
        assert_eq!(err.transcript.len(), 2);
    }
}

#[tokio::test]
async fn events_stream_while_the_turn_runs() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let (note, session) = open_note(&ws, "Tent\n");
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::reply(Reply::text("Adding.").tool("append_to_note", json!({"text": "Socks\n"}))),
            Step::text("Added socks."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let (tx, mut rx) = tokio::sync::mpsc::channel(256);
        let mut req = TurnRequest::new(NoteContext::with_note(note), "add socks");
        req.session = Some(session.clone());
        req.events = Some(tx);
        let done = agent.run(req).await.unwrap();
        let mut evs = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            evs.push(ev);
        }
        let mode = mode_name(ty, streaming);
        assert!(
            matches!(evs.first(), Some(TurnEvent::Started { .. })),
            "{mode}"
        );
        assert!(
            matches!(evs.last(), Some(TurnEvent::Finished { edits: 1, .. })),
            "{mode}"
        );
        let text: String = evs
            .iter()
            .filter_map(|e| match e {
                TurnEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Adding.Added socks.", "{mode}");
        let start = evs
            .iter()
            .position(|e| matches!(e, TurnEvent::ToolStart { .. }))
            .unwrap();
        let end = evs
            .iter()
            .position(|e| matches!(e, TurnEvent::ToolEnd { error: None, .. }))
            .unwrap();
        let prop = evs
            .iter()
            .position(|e| matches!(e, TurnEvent::EditProposed { .. }))
            .unwrap();
        assert!(start < end && end < prop, "{mode}");
        assert_eq!(done.reply, "Added socks.");
        // the edit stays pending in the session
        let s = session.lock().unwrap();
        assert_eq!(s.text(), "Tent\n");
        assert_eq!(s.pending().len(), 1);
        assert_eq!(s.working_text(), "Tent\n\nSocks\n");
        let json = serde_json::to_value(&evs[end]).unwrap();
        assert_eq!(json["type"], "tool_end");
    }
}

#[tokio::test]
async fn history_carries_over_and_sessions_must_match_the_note() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        let fake = FakeProvider::start().await.unwrap();
        fake.push_all([
            Step::tool_call("list_notebooks", json!({})),
            Step::text("You have one notebook."),
            Step::text("You're welcome."),
        ]);
        let agent = ws.agent(&fake, ty, streaming);
        let first = agent
            .run(TurnRequest::new(
                NoteContext::workspace(),
                "how many notebooks?",
            ))
            .await
            .unwrap();
        let mut history = vec![sidenote_ai::Message::system("an old prompt, dropped")];
        history.extend(first.messages.clone());
        let mut req = TurnRequest::new(NoteContext::workspace(), "thanks");
        req.history = history;
        let second = agent.run(req).await.unwrap();
        assert_eq!(second.reply, "You're welcome.");
        assert_ne!(first.turn_id, second.turn_id);
        let last = fake.requests().pop().unwrap();
        let system = last.system().unwrap();
        assert!(!system.contains("an old prompt"), "{system}");
        let users: Vec<String> = last
            .messages()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| match &m["content"] {
                Value::String(s) => s.clone(),
                blocks => blocks
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .collect::<String>(),
            })
            .filter(|t| !t.is_empty())
            .collect();
        assert_eq!(
            users,
            ["how many notebooks?", "thanks"],
            "{}",
            mode_name(ty, streaming)
        );
        fake.assert_no_violations();

        // a session for another note is refused before any model call
        let (note, _) = open_note(&ws, "Tent\n");
        let other = Arc::new(Mutex::new(EditorSession::new(
            "ffffffffffffffffffffffffffffffff",
            "x",
        )));
        let mut req = TurnRequest::new(NoteContext::with_note(note), "hi");
        req.session = Some(other);
        let before = fake.requests().len();
        let err = agent.run(req).await.unwrap_err();
        assert_eq!(err.error.code, "invalid_request");
        assert_eq!(fake.requests().len(), before);
    }
}
