//! The fake provider itself: wire output, validation, script-by-rule and the binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use sidenote_testkit::{FakeProvider, Reply, Step};

async fn post(url: &str, body: Value, headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = reqwest::Client::new().post(url).json(&body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

#[tokio::test]
async fn openai_stream_has_fragments_and_done() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::reply(
        Reply::text("hello world").tool("f", json!({"a": 1})),
    ));
    let (status, body) = post(
        &format!("{}/chat/completions", fake.base_url()),
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.trim_end().ends_with("data: [DONE]"), "{body}");
    let args: String = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter_map(|v| {
            v["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(args, r#"{"a":1}"#);
    assert!(body.contains(r#""finish_reason":"tool_calls""#));
    fake.assert_no_violations();
}

#[tokio::test]
async fn anthropic_json_and_event_names() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::tool_call("f", json!({"a": 1})));
    fake.push(Step::text("streamed"));
    let url = format!("{}/messages", fake.base_url());
    let h = [("anthropic-version", "2023-06-01")];
    let (_, body) = post(
        &url,
        json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}),
        &h,
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["stop_reason"], "tool_use");
    assert_eq!(v["content"][0]["input"], json!({"a": 1}));
    let (_, body) = post(&url, json!({"model": "m", "max_tokens": 5, "stream": true, "messages": [{"role": "user", "content": "hi"}]}), &h).await;
    for ev in [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ] {
        assert!(
            body.contains(&format!("event: {ev}\n")),
            "{ev} missing: {body}"
        );
    }
    fake.assert_no_violations();
}

#[tokio::test]
async fn violations_are_recorded() {
    let fake = FakeProvider::start().await.unwrap();
    fake.allow_foreign_tool_ids();
    fake.set_fallback(|_| Step::text("ok"));
    // An unanswered OpenAI tool call.
    post(
        &format!("{}/chat/completions", fake.base_url()),
        json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "again"}
        ]}),
        &[],
    )
    .await;
    // Anthropic: a system message inside messages, no version header, no max_tokens.
    post(
        &format!("{}/messages", fake.base_url()),
        json!({"model": "m", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    let v = fake.violations();
    assert!(
        v.iter()
            .any(|m| m.starts_with("request #0") && m.contains("x was never answered")),
        "{v:?}"
    );
    assert!(
        v.iter()
            .any(|m| m.starts_with("request #1") && m.contains("top-level")),
        "{v:?}"
    );
    assert!(v.iter().any(|m| m.contains("anthropic-version")), "{v:?}");
    assert!(v.iter().any(|m| m.contains("max_tokens")), "{v:?}");
}

#[tokio::test]
async fn foreign_tool_ids_and_exhausted_scripts_are_violations() {
    let fake = FakeProvider::start().await.unwrap();
    let (status, _) = post(
        &format!("{}/chat/completions", fake.base_url()),
        json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "made_up", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "made_up", "content": "r"}
        ]}),
        &[],
    )
    .await;
    assert_eq!(status, 400);
    let v = fake.violations();
    assert!(
        v.iter()
            .any(|m| m.contains("made_up") && m.contains("never issued")),
        "{v:?}"
    );
    assert!(v.iter().any(|m| m.contains("no more steps")), "{v:?}");
}

#[tokio::test]
async fn rules_see_the_request() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push_rule(|req| {
        Step::text(format!(
            "you said {}",
            req.last_user_text().unwrap_or_default()
        ))
    });
    let (_, body) = post(
        &format!("{}/chat/completions", fake.base_url()),
        json!({"model": "m", "messages": [{"role": "user", "content": "banana"}]}),
        &[],
    )
    .await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "you said banana");
    assert_eq!(fake.requests()[0].model(), "m");
    fake.assert_no_violations();
}

#[test]
fn steps_round_trip_as_json() {
    let steps = vec![
        Step::reply(
            Reply::text("hi")
                .raw_tool("f", "{bad")
                .finish_reason("stop")
                .no_usage(),
        ),
        Step::error_retry_after(429, "1"),
        Step::delay(10, Step::cut(Reply::default().tool("g", json!({})))),
        Step::stall(Reply::text("x"), 100),
        Step::raw(200, "application/json", "{}"),
    ];
    let text = serde_json::to_string(&steps).unwrap();
    assert_eq!(sidenote_testkit::parse_script(&text).unwrap(), steps);
    let handwritten = r#"[{"type":"reply","text":"Hi","tool_calls":[{"name":"f","arguments":{"a":1}}]},{"type":"error","status":500}]"#;
    assert_eq!(
        sidenote_testkit::parse_script(handwritten).unwrap().len(),
        2
    );
}

#[tokio::test]
async fn binary_serves_a_json_script() {
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"[{"type":"reply","text":"from the script"}]"#).unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_fake-provider"))
        .arg("--script")
        .arg(&script)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let base = lines.next_line().await.unwrap().unwrap();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"),
        "{base}"
    );
    let (status, body) = post(
        &format!("{base}/chat/completions"),
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        &[],
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("from the script"));
    let root = base.trim_end_matches("/v1");
    let reqs: Value = reqwest::get(format!("{root}/_fake/requests"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reqs.as_array().unwrap().len(), 1);
    let viol: Value = reqwest::get(format!("{root}/_fake/violations"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(viol, json!([]));
    child.kill().await.unwrap();
}
