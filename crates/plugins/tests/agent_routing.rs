//! The seed's plugin use case through the real agent loop and the fake provider server:
//! "what do I need for 5 days in the Lake District with my dog" is routed to the example
//! plugin's `plan_trip_packing`; the model sees the plain JSON output, the transcript carries
//! the RenderSpec.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{env, example_dir};
use serde_json::{Value, json};
use sidenote_agent::{Agent, NoteContext, Tier, TurnRequest};
use sidenote_ai::{ProviderConfig, ProviderType, RetryPolicy, build_provider};
use sidenote_testkit::{FakeProvider, RecordedRequest, Step};
use std::time::Duration;

const QUESTION: &str = "what do I need for 5 days in the Lake District with my dog";

/// The scripted model: it calls the packing tool only when it is offered and its description
/// talks about packing; then it answers from the tool result it was sent.
fn script(fake: &FakeProvider) {
    fake.push_rule(|req: &RecordedRequest| {
        let asked = req.last_user_text().unwrap_or_default();
        if req.tool_names().iter().any(|t| t == "plan_trip_packing")
            && asked.contains("what do I need")
        {
            Step::tool_call(
                "plan_trip_packing",
                json!({"destination": "Lake District", "days": 5, "companions": ["dog"]}),
            )
        } else {
            Step::text("I cannot plan packing here.")
        }
    });
    fake.push_rule(|req: &RecordedRequest| {
        let r = req.tool_results();
        let out: Value = serde_json::from_str(&r.last().unwrap().content).unwrap_or(Value::Null);
        Step::text(format!(
            "Here is your list: {} items for {}.",
            out["total_items"],
            out["region"]["name"].as_str().unwrap_or("?")
        ))
    });
}

#[tokio::test]
async fn the_agent_routes_the_packing_question_to_the_plugin() {
    for (ty, streaming) in [
        (ProviderType::OpenAiCompatible, true),
        (ProviderType::Anthropic, false),
    ] {
        let e = env();
        e.host.load_dir(&example_dir()).await.unwrap();
        let fake = FakeProvider::start().await.unwrap();
        script(&fake);
        let mut cfg = ProviderConfig::new(ty, fake.base_url(), "fake-model");
        cfg.streaming = streaming;
        cfg.retry = RetryPolicy {
            max_retries: 0,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(10),
            max_retry_after: Duration::from_secs(1),
        };
        let agent = Agent::new(build_provider(cfg, None).unwrap(), e.registry.clone())
            .with_store(e.store.clone());
        let done = agent
            .run(TurnRequest::new(NoteContext::workspace(), QUESTION))
            .await
            .unwrap();

        assert_eq!(done.transcript.len(), 1, "{:?}", done.transcript);
        let entry = &done.transcript[0];
        assert_eq!(entry.tool, "plan_trip_packing");
        assert_eq!(entry.tier, Some(Tier::Plugin));
        assert!(entry.error.is_none(), "{:?}", entry.error);
        let output = entry.output.as_ref().unwrap();
        assert_eq!(output["region"]["id"], "uk-uplands");
        // the transcript carries the RenderSpec (for the panel) ...
        let render = entry.render.as_ref().expect("a RenderSpec");
        assert_eq!(render["version"], 1);
        assert_eq!(render["type"], "stack");
        assert!(render.to_string().contains("data:image/svg+xml"));
        // ... while the model got the plain JSON output, without it
        let requests = fake.requests();
        let seen = &requests.last().unwrap().tool_results()[0].content;
        let seen: Value = serde_json::from_str(seen).unwrap();
        assert_eq!(&seen, output);
        assert!(!seen.to_string().contains("\"version\":1"));
        assert_eq!(
            done.reply,
            format!(
                "Here is your list: {} items for British uplands.",
                output["total_items"]
            )
        );
        fake.assert_no_violations();
    }
}
