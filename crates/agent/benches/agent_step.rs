//! The agent's own overhead per step: a zero-latency in-process model (this benchmark only)
//! that calls a no-op workspace tool 7 times and then answers, so a turn is 8 model calls.
//! Everything else is real: the registry with the 11 built-in tools (their specs go into every
//! request), the sidebar switches read from the store, the system prompt, dispatch with
//! schema validation, the repetition guard, transcript and events.
//!
//! `cargo bench -p sidenote-agent --bench agent_step`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use sidenote_agent::*;
use sidenote_ai::{
    ChatEvent, ChatProvider, ChatRequest, ChatStream, Classification, Message, StopReason,
    ToolCall, Usage,
};
use sidenote_tools::{Access, Registry, Tool, ToolCtx, ToolError, ToolOutput, ToolSource};
use std::sync::Arc;

/// Answers instantly: a tool call while fewer than `calls` results are in the history, then text.
struct Instant {
    calls: usize,
}

#[async_trait::async_trait]
impl ChatProvider for Instant {
    fn id(&self) -> String {
        "instant".into()
    }
    fn model(&self) -> &str {
        "instant"
    }
    fn classification(&self) -> Classification {
        Classification::Local
    }
    fn stream(&self, req: ChatRequest) -> ChatStream {
        let done = req
            .messages
            .iter()
            .filter(|m| matches!(m, Message::ToolResult { .. }))
            .count();
        let mut events = vec![Ok(ChatEvent::TextDelta("ok".into()))];
        if done < self.calls {
            let args = format!("{{\"n\": {done}}}");
            events.push(Ok(ChatEvent::ToolCall(ToolCall::from_raw(
                format!("call_{done}"),
                "noop",
                args,
            ))));
            events.push(Ok(ChatEvent::Usage(Usage::default())));
            events.push(Ok(ChatEvent::Stop(StopReason::ToolUse)));
        } else {
            events.push(Ok(ChatEvent::Usage(Usage::default())));
            events.push(Ok(ChatEvent::Stop(StopReason::EndTurn)));
        }
        Box::pin(futures::stream::iter(events))
    }
}

struct Noop {
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for Noop {
    fn id(&self) -> &str {
        "noop"
    }
    fn description(&self) -> &str {
        "Does nothing."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }
    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Json(json!({"echo": input})))
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = sidenote_store::Store::open(dir.path()).unwrap();
    let registry = Registry::new();
    sidenote_tools::builtin::register_builtin(&registry, store.clone()).unwrap();
    registry
        .add(
            Arc::new(Noop {
                schema: json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            }),
            ToolSource::Plugin("bench".into()),
        )
        .unwrap();
    let note = FocusedNote {
        id: "0123456789abcdef0123456789abcdef".into(),
        title: "Packing list".into(),
        notebook_id: "nb".into(),
        notebook: Some("Travel".into()),
        body: "# Packing list\n\n- [ ] tent\n- [ ] boots\n".repeat(20),
        selection: None,
    };
    let mut g = c.benchmark_group("agent");
    for steps in [1usize, MAX_STEPS] {
        let agent = Agent::new(Arc::new(Instant { calls: steps - 1 }), registry.clone())
            .with_store(store.clone());
        g.bench_function(format!("turn_{steps}_model_calls"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
                    let mut req = TurnRequest::new(NoteContext::with_note(note.clone()), "go");
                    req.events = Some(tx);
                    let done = agent.run(req).await.unwrap();
                    while rx.try_recv().is_ok() {}
                    assert_eq!(done.usage.model_calls, steps);
                    done
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
