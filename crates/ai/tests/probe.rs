//! The `sidenote ai test` probe against the fake provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use sidenote_ai::probe::{self, ToolSupport};
use sidenote_ai::*;
use sidenote_testkit::{FakeProvider, Step};

#[tokio::test]
async fn native_tool_calling_passes() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::text("OK"));
        fake.push(Step::tool_call(
            probe::PROBE_TOOL,
            json!({"topic": "sidenote"}),
        ));
        fake.push_rule(|req| Step::text(format!("The word is {}.", req.tool_results()[0].content)));
        let report = probe::run_probe(provider(config(&fake, ty, streaming)).as_ref())
            .await
            .unwrap();
        assert!(report.hello_ok);
        assert_eq!(
            report.tools,
            ToolSupport::Native,
            "{}",
            label(ty, streaming)
        );
        assert!(report.verdict().starts_with("PASS"));
        let reqs = fake.requests();
        assert_eq!(
            reqs[0].last_user_text().as_deref(),
            Some(probe::HELLO_PROMPT)
        );
        assert_eq!(reqs[1].tool_names(), vec![probe::PROBE_TOOL]);
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn text_instead_of_a_call_fails() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::text("ok."));
    fake.push(Step::text(
        "I would call get_secret_word(topic=\"sidenote\")",
    ));
    let report =
        probe::run_probe(provider(config(&fake, ProviderType::OpenAiCompatible, true)).as_ref())
            .await
            .unwrap();
    assert!(report.hello_ok);
    assert!(
        matches!(report.tools, ToolSupport::None(ref why) if why.contains("as text")),
        "{:?}",
        report.tools
    );
    assert!(report.verdict().starts_with("FAIL"));
    fake.assert_no_violations();
}

#[tokio::test]
async fn wrong_arguments_are_partial() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::text("OK"));
    fake.push(Step::tool_call(probe::PROBE_TOOL, json!({"subject": "x"})));
    fake.push(Step::text("pomegranate"));
    let report = probe::run_probe(provider(config(&fake, ProviderType::Anthropic, false)).as_ref())
        .await
        .unwrap();
    assert!(
        matches!(report.tools, ToolSupport::Partial(ref why) if why.contains("arguments")),
        "{:?}",
        report.tools
    );
    fake.assert_no_violations();
}
