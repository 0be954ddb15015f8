//! Live turns against a REAL small model (Qwen2.5-Coder-1.5B-Instruct on the CPU behind
//! llama.cpp's OpenAI-compatible server). Ignored by default; `scripts/test.d/40-local-llm.sh`
//! starts the server and runs them with `--ignored`, passing its base URL in
//! `SIDENOTE_LIVE_LLM_URL`. Assertions are on structure, never on wording.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use sidenote_agent::*;
use sidenote_ai::{ChatOptions, ProviderConfig, ProviderType, Timeouts, build_provider};
use sidenote_store::Actor;
use std::time::Duration;

/// The model's context window; the first request must fit with room to spare.
const CONTEXT: u64 = 4096;

fn live_agent(ws: &Workspace) -> Agent {
    let url = std::env::var("SIDENOTE_LIVE_LLM_URL").unwrap_or_default();
    assert!(
        !url.is_empty(),
        "SIDENOTE_LIVE_LLM_URL is not set: run scripts/test.d/40-local-llm.sh, which starts the local model"
    );
    let mut config = ProviderConfig::new(ProviderType::OpenAiCompatible, url, "local");
    config.timeouts = Timeouts {
        connect: Duration::from_secs(10),
        // one CPU thread: reading a ~2k-token prompt takes a minute or two
        first_byte: Duration::from_secs(600),
        idle: Duration::from_secs(300),
    };
    config.retry.max_retries = 1;
    let provider = build_provider(config, None).unwrap();
    Agent::new(provider, ws.registry.clone())
        .with_store(ws.store.clone())
        .with_options(AgentOptions {
            max_tool_output_chars: 2000,
            chat: ChatOptions {
                temperature: Some(0.0),
                max_tokens: Some(300),
            },
            ..AgentOptions::default()
        })
}

/// A small Markdown corpus imported the way users import theirs.
fn imported_corpus() -> Workspace {
    let ws = Workspace::new();
    let src = tempfile::tempdir().unwrap();
    let write = |rel: &str, body: &str| {
        let p = src.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    };
    write(
        "Travel/Packing list Rome.md",
        "# Packing list Rome\n\n- [x] sunscreen\n- [ ] passport\n",
    );
    write(
        "Camping/Packing list Lake District.md",
        "# Packing list Lake District\n\n- [ ] tent\n- [ ] boots\n- [ ] dog lead\n",
    );
    write(
        "Recipes/Pasta.md",
        "# Pasta\n\nBoil water, add salt, cook 9 minutes.\n",
    );
    write("Home/Shopping.md", "# Shopping\n\n- milk\n- eggs\n");
    let report = ws
        .store
        .import(src.path(), &Actor::Import, &mut |_| {})
        .unwrap();
    assert_eq!(report.imported, 4, "{}", report.summary());
    ws
}

#[tokio::test]
#[ignore = "needs the local model server (scripts/test.d/40-local-llm.sh)"]
async fn live_find_my_packing_list() {
    let ws = imported_corpus();
    let agent = live_agent(&ws);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let mut req = TurnRequest::new(NoteContext::workspace(), "find my packing list");
    req.events = Some(tx);
    let done = agent.run(req).await.unwrap_or_else(|f| {
        panic!(
            "the live turn failed: {} ({})\ntranscript: {:#?}",
            f.error.message, f.error.code, f.transcript
        )
    });
    let mut events = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        events.push(ev);
    }
    let first = done.usage.per_call.first().copied().unwrap_or_default();
    println!(
        "live turn: {} model calls, first request {} prompt tokens, total {} in / {} out",
        done.usage.model_calls,
        first.input_tokens,
        done.usage.input_tokens,
        done.usage.output_tokens
    );
    println!(
        "tools: {:?}",
        done.transcript.iter().map(|t| &t.tool).collect::<Vec<_>>()
    );
    println!("reply: {}", done.reply);
    // the model called a tool: its call was parsed and executed, the result went back ...
    assert!(!done.transcript.is_empty(), "the model made no tool call");
    let offered = agent.tool_list(&NoteContext::workspace()).unwrap();
    let ran: Vec<&TranscriptEntry> = done
        .transcript
        .iter()
        .filter(|t| offered.get(&t.tool).is_some() && t.output.is_some())
        .collect();
    assert!(
        !ran.is_empty(),
        "no offered tool ran: {:#?}",
        done.transcript
    );
    assert!(ran.iter().all(|t| t.arguments.is_object()));
    assert!(
        done.usage.model_calls >= 2,
        "the result was never sent back"
    );
    // ... and a plain-text answer arrived
    assert!(!done.reply.trim().is_empty(), "no final text answer");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TurnEvent::ToolEnd { .. }))
    );
    assert!(matches!(events.last(), Some(TurnEvent::Finished { .. })));
    // the whole first request fits the model's context with room to spare
    assert!(
        first.input_tokens > 500,
        "the server reported no usage: {first:?}"
    );
    assert!(
        first.input_tokens < CONTEXT * 3 / 4,
        "first request is {} tokens",
        first.input_tokens
    );
}
