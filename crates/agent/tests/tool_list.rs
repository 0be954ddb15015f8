//! The per-turn tool list, row by row of the seed's table, and what the model is sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::{Value, json};
use sidenote_agent::*;
use sidenote_testkit::{FakeProvider, Step};
use sidenote_tools::builtin::BUILTIN_IDS;
use sidenote_tools::{Access, Tool, ToolCtx, ToolError, ToolOutput, ToolSource};
use std::sync::Arc;

struct PlanTrip {
    schema: Value,
}

#[async_trait::async_trait]
impl Tool for PlanTrip {
    fn id(&self) -> &str {
        "plan_trip_packing"
    }
    fn description(&self) -> &str {
        "Plan a packing list for a trip."
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        Access::Read
    }
    async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Json(
            json!({"items": ["boots", "lead"], "input": input}),
        ))
    }
    async fn render(&self, _input: &Value, output: &Value) -> Option<Value> {
        Some(json!({"type": "list", "items": output["items"].clone()}))
    }
}

fn focused(body: &str, selection: Option<std::ops::Range<usize>>) -> NoteContext {
    NoteContext::with_note(FocusedNote {
        id: "0123456789abcdef0123456789abcdef".into(),
        title: "Trip".into(),
        notebook_id: "nb".into(),
        notebook: Some("Travel".into()),
        body: body.into(),
        selection,
    })
}

fn names(l: &ToolList) -> Vec<String> {
    l.names().into_iter().map(str::to_string).collect()
}

#[test]
fn one_row_per_context() {
    let ws = Workspace::new();
    ws.registry
        .add(
            Arc::new(PlanTrip {
                schema: json!({"type":"object","properties":{"days":{"type":"integer"}}}),
            }),
            ToolSource::Plugin("vacation".into()),
        )
        .unwrap();
    let on = SidebarToggles::all_on();
    let mut workspace: Vec<String> = BUILTIN_IDS.iter().map(|s| s.to_string()).collect();
    workspace.push("plan_trip_packing".into());

    // no note focused: workspace tools only, plugin tools included
    let l = build_tool_list(&NoteContext::workspace(), &ws.registry, &on);
    assert_eq!(names(&l), workspace);
    assert_eq!(l.get("plan_trip_packing").unwrap().tier, Tier::Plugin);
    assert_eq!(l.get("search_notes").unwrap().tier, Tier::Workspace);

    // note focused, no selection: + the anchor/append tools
    let l = build_tool_list(&focused("Socks\n\nBoots\n", None), &ws.registry, &on);
    let mut want = workspace.clone();
    want.extend(
        [
            "rewrite_paragraph",
            "insert_before_anchor",
            "insert_after_anchor",
            "append_to_note",
        ]
        .map(String::from),
    );
    assert_eq!(names(&l), want);
    assert_eq!(l.get("append_to_note").unwrap().tier, Tier::Session);

    // ... + replace_structured_block only when a supported block exists
    let l = build_tool_list(
        &focused("Plan\n```mermaid\ngraph TD; A-->B\n```\n", None),
        &ws.registry,
        &on,
    );
    let mut want_block = want.clone();
    want_block.push("replace_structured_block".into());
    assert_eq!(names(&l), want_block);

    // selection present: + edit_selection only
    let l = build_tool_list(
        &focused("Plan\n```mermaid\ngraph\n```\n", Some(0..4)),
        &ws.registry,
        &on,
    );
    let mut want_sel = workspace.clone();
    want_sel.push("edit_selection".into());
    assert_eq!(names(&l), want_sel);

    // an empty selection is no selection
    let l = build_tool_list(&focused("Plan", Some(2..2)), &ws.registry, &on);
    assert!(l.get("append_to_note").is_some() && l.get("edit_selection").is_none());

    // the sidebar switches remove tools (plugin ones too)
    let off = SidebarToggles::all_on()
        .disable("delete_note")
        .disable("plan_trip_packing");
    let l = build_tool_list(&NoteContext::workspace(), &ws.registry, &off);
    assert!(l.get("delete_note").is_none() && l.get("plan_trip_packing").is_none());
    assert_eq!(l.len(), BUILTIN_IDS.len() - 1);
}

#[test]
fn switches_are_read_from_the_store() {
    let ws = Workspace::new();
    let t = SidebarToggles::load(&ws.store, &ws.registry).unwrap();
    assert!(
        BUILTIN_IDS.iter().all(|id| t.is_enabled(id)),
        "all on by default"
    );
    ws.store
        .set_setting("ai.tool.delete_note.enabled", "false")
        .unwrap();
    // the MCP switch is separate and does not affect the sidebar
    ws.store
        .set_setting("mcp.tool.search_notes.enabled", "false")
        .unwrap();
    let t = SidebarToggles::load(&ws.store, &ws.registry).unwrap();
    assert!(!t.is_enabled("delete_note"));
    assert!(t.is_enabled("search_notes"));
}

#[tokio::test]
async fn the_model_is_sent_exactly_the_turn_list_in_every_mode() {
    for (ty, streaming) in MODES {
        let ws = Workspace::new();
        ws.store
            .set_setting("ai.tool.create_notebook.enabled", "off")
            .unwrap();
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::text("ok"));
        let agent = ws.agent(&fake, ty, streaming);
        let ctx = focused("Tent\n", Some(0..4));
        let want = names(&agent.tool_list(&ctx).unwrap());
        let done = agent
            .run(TurnRequest::new(ctx, "shorter please"))
            .await
            .unwrap();
        assert_eq!(done.reply, "ok");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 1, "{}", mode_name(ty, streaming));
        assert_eq!(reqs[0].tool_names(), want);
        assert!(!want.contains(&"create_notebook".to_string()));
        assert!(want.contains(&"edit_selection".to_string()));
        let system = reqs[0].system().unwrap();
        assert!(
            system.contains("<selection>\nTent\n</selection>"),
            "{system}"
        );
        fake.assert_no_violations();
    }
}

/// A cheap offline guard for the small-model budget (the live suite measures real tokens:
/// ~1.8k without a note, ~2.3k with one, see BENCHMARKS.md): the first request's system
/// prompt plus tool schemas stay compact.
#[test]
fn the_first_request_stays_compact() {
    let ws = Workspace::new();
    let fake_provider = sidenote_ai::build_provider(
        sidenote_ai::ProviderConfig::new(
            sidenote_ai::ProviderType::OpenAiCompatible,
            "http://127.0.0.1:9/v1",
            "m",
        ),
        None,
    )
    .unwrap();
    let agent = Agent::new(fake_provider, ws.registry.clone());
    let ctx = focused("# Packing list\n\n- [ ] tent\n- [ ] boots\n", None);
    let req = agent.first_request(&ctx, "add socks to this list").unwrap();
    let chars: usize = req
        .messages
        .iter()
        .map(|m| serde_json::to_string(m).unwrap().len())
        .sum::<usize>()
        + req
            .tools
            .iter()
            .map(|t| serde_json::to_string(t).unwrap().len())
            .sum::<usize>();
    println!("first request: {chars} chars, {} tools", req.tools.len());
    assert_eq!(req.tools.len(), BUILTIN_IDS.len() + 4);
    // ~3.3 chars per token for this JSON-heavy text: 8,500 chars is ~2.6k tokens
    assert!(chars < 8_500, "first request grew to {chars} chars");
}
