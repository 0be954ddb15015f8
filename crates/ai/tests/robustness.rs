//! Retries, timeouts, cut streams and cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use futures::StreamExt;
use serde_json::json;
use sidenote_ai::*;
use sidenote_testkit::{FakeProvider, Reply, Step};
use std::time::Duration;

const BOTH: [ProviderType; 2] = [ProviderType::OpenAiCompatible, ProviderType::Anthropic];

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    for ty in BOTH {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::error_retry_after(429, "1"));
        fake.push(Step::text("after the wait"));
        let p = provider(config(&fake, ty, true));
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap();
        assert_eq!(r.text, "after the wait");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 2);
        // The backoff alone would be 10 ms; the server asked for 1 s.
        assert!(
            reqs[1].at_ms - reqs[0].at_ms >= 900,
            "{} ms",
            reqs[1].at_ms - reqs[0].at_ms
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn overlong_retry_after_gives_up_at_once() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::error_retry_after(429, "3600"));
    let p = provider(config(&fake, ProviderType::OpenAiCompatible, true));
    let e = p
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(matches!(e, AiError::RetryAfterTooLong { .. }), "{e:?}");
    assert!(e.to_string().contains("3600s"), "{e}");
    assert_eq!(fake.requests().len(), 1);
    fake.assert_no_violations();
}

#[tokio::test]
async fn server_error_storm_gives_up_with_a_clear_error() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        for _ in 0..6 {
            fake.push(Step::error(500));
        }
        let mut cfg = config(&fake, ty, streaming);
        cfg.retry.max_retries = 2;
        let e = provider(cfg)
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        let l = label(ty, streaming);
        assert!(
            matches!(e, AiError::RetriesExhausted { attempts: 3, .. }),
            "{e:?} {l}"
        );
        let s = e.to_string();
        assert!(
            s.contains("HTTP 500")
                && s.contains("gave up after 3 attempts")
                && s.contains("try again later"),
            "{s}"
        );
        assert_eq!(fake.requests().len(), 3, "{l}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn overloaded_then_success() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push_all([Step::error(529), Step::error(503), Step::text("fine")]);
    let p = provider(config(&fake, ProviderType::Anthropic, true));
    assert_eq!(
        p.chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap()
            .text,
        "fine"
    );
    assert_eq!(fake.requests().len(), 3);
    fake.assert_no_violations();
}

#[tokio::test]
async fn connection_refused_is_retried_then_explained() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cfg = ProviderConfig::new(
        ProviderType::OpenAiCompatible,
        format!("http://127.0.0.1:{port}/v1"),
        "m",
    );
    cfg.retry = RetryPolicy {
        max_retries: 1,
        initial_backoff: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let e = provider(cfg)
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(
        matches!(e, AiError::RetriesExhausted { attempts: 2, .. }),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("cannot connect") && e.to_string().contains("Is the server running"),
        "{e}"
    );
}

#[tokio::test]
async fn stream_cut_mid_tool_call_is_an_error_without_a_half_call() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::cut(Reply::text("Searching").tool(
            "search_notes",
            json!({"query": "a fairly long query string"}),
        )));
        let p = provider(config(&fake, ty, streaming));
        let all =
            items(p.stream(ChatRequest::new(vec![Message::user("x")]).with_tools(tools()))).await;
        let l = label(ty, streaming);
        let (last, before) = all.split_last().unwrap();
        let err = last.as_ref().unwrap_err();
        assert!(matches!(err, AiError::StreamCut(_)), "{err:?} {l}");
        assert!(err.to_string().contains("cut off"), "{err}");
        for ev in before {
            let ev = ev.as_ref().unwrap();
            assert!(
                matches!(ev, ChatEvent::TextDelta(_)),
                "only text before the cut, got {ev:?} ({l})"
            );
        }
        assert_eq!(
            fake.requests().len(),
            1,
            "a cut stream is not silently retried ({l})"
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn slow_stream_hits_the_idle_timeout() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::stall(
            Reply::text("a slow answer").tool("get_note", json!({"id": "1"})),
            5_000,
        ));
        let mut cfg = config(&fake, ty, streaming);
        cfg.timeouts.idle = Duration::from_millis(300);
        let all = items(
            provider(cfg).stream(ChatRequest::new(vec![Message::user("x")]).with_tools(tools())),
        )
        .await;
        let l = label(ty, streaming);
        let err = all.last().unwrap().as_ref().unwrap_err();
        assert!(
            matches!(
                err,
                AiError::Timeout {
                    kind: TimeoutKind::Idle,
                    ..
                }
            ),
            "{err:?} {l}"
        );
        assert!(err.to_string().contains("ai.chat.idleTimeoutMs"), "{err}");
        assert!(
            all.iter().all(|e| !matches!(e, Ok(ChatEvent::ToolCall(_)))),
            "{l}"
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn slow_first_byte_times_out_without_retry() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::delay(5_000, Step::text("late")));
    let mut cfg = config(&fake, ProviderType::OpenAiCompatible, true);
    cfg.timeouts.first_byte = Duration::from_millis(300);
    let e = provider(cfg)
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(
        matches!(
            e,
            AiError::Timeout {
                kind: TimeoutKind::FirstByte,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("firstByteTimeoutMs"), "{e}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn a_short_delay_is_fine() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::delay(100, Step::text("late but ok")));
    let p = provider(config(&fake, ProviderType::Anthropic, true));
    assert_eq!(
        p.chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap()
            .text,
        "late but ok"
    );
    fake.assert_no_violations();
}

#[tokio::test]
async fn cancellation_stops_a_stalled_stream() {
    for ty in BOTH {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::stall(Reply::text("hello there, friend"), 10_000));
        let cancel = CancellationToken::new();
        let p = provider(config(&fake, ty, true));
        let mut s =
            p.stream(ChatRequest::new(vec![Message::user("x")]).with_cancel(cancel.clone()));
        // cancel only once the request is in flight (the server then stalls mid-reply)
        until_received(&fake, 1).await;
        cancel.cancel();
        let mut last = None;
        while let Some(item) = tokio::time::timeout(Duration::from_secs(3), s.next())
            .await
            .unwrap()
        {
            last = Some(item);
        }
        let err = last.unwrap().unwrap_err();
        assert!(matches!(err, AiError::Cancelled), "{err:?}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn mid_stream_error_event_is_reported() {
    let fake = FakeProvider::start().await.unwrap();
    let body = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    fake.push(Step::raw(200, "text/event-stream", body));
    let p = provider(config(&fake, ProviderType::Anthropic, true));
    let e = p
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("overloaded") && e.to_string().contains("try again"),
        "{e}"
    );
}

#[tokio::test]
async fn dropping_a_stream_midway_leaves_the_provider_usable() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::stall(Reply::text("never finished"), 30_000));
    fake.push(Step::text("second"));
    let p = provider(config(&fake, ProviderType::OpenAiCompatible, true));
    let s = p.stream(ChatRequest::new(vec![Message::user("x")]));
    until_received(&fake, 1).await;
    drop(s);
    // The provider is still usable, and the abandoned request did not block it.
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        p.chat(ChatRequest::new(vec![Message::user("y")])),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(r.text, "second");
    fake.assert_no_violations();
}

/// Waits (at most 5 s) until the fake server has received `n` requests.
async fn until_received(fake: &FakeProvider, n: usize) {
    tokio::time::timeout(Duration::from_secs(5), async {
        while fake.requests().len() < n {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the fake provider never received the request");
}
