//! `sidenote ai test` and `sidenote ai usage` against the fake provider server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use sidenote_testkit::{FakeProvider, Step};
use std::process::Output;

/// A loopback port nothing listens on: used as the HTTP proxy of the child process, so that
/// a regression in the privacy gate could never reach a remote address from a test.
fn closed_loopback_proxy() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

async fn sidenote(workspace: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sidenote"));
    cmd.arg("--workspace").arg(workspace).args(args);
    for k in [
        "SIDENOTE_AI_PROVIDER",
        "SIDENOTE_AI_BASE_URL",
        "SIDENOTE_AI_MODEL",
        "SIDENOTE_AI_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SIDENOTE_WORKSPACE",
        "NO_PROXY",
        "no_proxy",
    ] {
        cmd.env_remove(k);
    }
    let proxy = closed_loopback_proxy();
    for k in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        cmd.env(k, &proxy);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().await.expect("run sidenote")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ai_test_passes_with_a_tool_calling_model_and_records_usage() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::text("OK"));
    fake.push(Step::tool_call(
        "get_secret_word",
        json!({"topic": "sidenote"}),
    ));
    fake.push_rule(|req| Step::text(req.tool_results()[0].content.clone()));
    let ws = tempfile::tempdir().unwrap();
    let base = fake.base_url();
    let env = [
        ("SIDENOTE_AI_PROVIDER", "openai-compatible"),
        ("SIDENOTE_AI_BASE_URL", base.as_str()),
        ("SIDENOTE_AI_MODEL", "fake-model"),
    ];
    let out = sidenote(ws.path(), &env, &["ai", "test"]).await;
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        text(&out.stderr)
    );
    assert!(stdout.contains("Verdict:  PASS"), "{stdout}");
    assert!(stdout.contains("2. Tool calling: native"), "{stdout}");
    assert!(stdout.contains("(local)"), "{stdout}");
    assert_eq!(fake.requests().len(), 3);
    fake.assert_no_violations();

    let out = sidenote(ws.path(), &env, &["ai", "usage"]).await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = stdout
        .lines()
        .find(|l| l.contains(&base))
        .unwrap_or_else(|| panic!("no usage line for {base}: {stdout}"));
    assert!(line.starts_with("openai-compatible"), "{line}");
    assert_eq!(
        line.split_whitespace().nth(2),
        Some("3"),
        "3 requests: {line}"
    );

    let out = sidenote(ws.path(), &env, &["ai", "usage", "--json"]).await;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["endpoints"][format!("openai-compatible {base}")]["requests"],
        3
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ai_test_fails_clearly_without_native_tool_calls() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::text("OK."));
    fake.push(Step::text("Sure! The secret word is probably banana."));
    let ws = tempfile::tempdir().unwrap();
    let base = fake.base_url();
    let env = [
        ("SIDENOTE_AI_PROVIDER", "anthropic"),
        ("SIDENOTE_AI_BASE_URL", base.as_str()),
        ("SIDENOTE_AI_MODEL", "fake-claude"),
    ];
    let out = sidenote(ws.path(), &env, &["ai", "test"]).await;
    let stdout = text(&out.stdout);
    assert!(!out.status.success());
    assert!(stdout.contains("Verdict:  FAIL"), "{stdout}");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot call tools natively"), "{stderr}");
    fake.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ai_test_refuses_a_remote_provider_by_default() {
    let ws = tempfile::tempdir().unwrap();
    let env = [
        ("SIDENOTE_AI_PROVIDER", "openai-compatible"),
        ("SIDENOTE_AI_BASE_URL", "https://api.openai.com/v1"),
        ("SIDENOTE_AI_MODEL", "gpt-4o-mini"),
    ];
    let out = sidenote(ws.path(), &env, &["ai", "test"]).await;
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("ai.allowRemote"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ai_usage_is_empty_at_first() {
    let ws = tempfile::tempdir().unwrap();
    let out = sidenote(ws.path(), &[], &["ai", "usage"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("No AI usage recorded yet."));
}
