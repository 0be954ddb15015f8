//! Tool calling against the fake provider, for both wire formats, streaming and not.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use sidenote_ai::*;
use sidenote_testkit::{FakeProvider, Reply, Step};

#[tokio::test]
async fn multi_step_tool_calls() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::tool_call("search_notes", json!({"query": "rust"})));
        fake.push(Step::tool_call("get_note", json!({"id": "abc"})));
        fake.push_rule(|req| {
            let r = req.tool_results();
            Step::text(format!("Done: {}", r[0].content))
        });
        let p = provider(config(&fake, ty, streaming));
        let (steps, _) = run_loop(
            p.as_ref(),
            vec![
                Message::system("You are helpful."),
                Message::user("find rust"),
            ],
            tools(),
            5,
        )
        .await
        .unwrap();
        let l = label(ty, streaming);
        assert_eq!(steps.len(), 3, "{l}");
        assert_eq!(steps[0].stop_reason, StopReason::ToolUse, "{l}");
        assert_eq!(steps[0].tool_calls[0].name, "search_notes");
        assert_eq!(steps[0].tool_calls[0].arguments, json!({"query": "rust"}));
        assert_eq!(steps[1].tool_calls[0].arguments, json!({"id": "abc"}));
        assert_eq!(steps[2].text, "Done: result of get_note", "{l}");
        assert_eq!(steps[2].stop_reason, StopReason::EndTurn);
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 3);
        // The result sent back carries the id the server issued.
        assert_eq!(
            reqs[1].tool_results()[0].call_id,
            steps[0].tool_calls[0].id,
            "{l}"
        );
        assert_eq!(
            reqs[2].tool_results()[0].call_id,
            steps[1].tool_calls[0].id,
            "{l}"
        );
        assert!(reqs.iter().all(|r| r.stream == streaming));
        assert_eq!(reqs[0].system().as_deref(), Some("You are helpful."));
        assert_eq!(reqs[0].tool_names(), vec!["search_notes", "get_note"]);
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn parallel_calls_in_one_step() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(
            Reply::default()
                .tool("search_notes", json!({"query": "a"}))
                .tool("get_note", json!({"id": "1"}))
                .tool("search_notes", json!({"query": "b"})),
        ));
        fake.push_rule(|req| Step::text(format!("{} results", req.tool_results().len())));
        let p = provider(config(&fake, ty, streaming));
        let (steps, _) = run_loop(p.as_ref(), vec![Message::user("go")], tools(), 4)
            .await
            .unwrap();
        let l = label(ty, streaming);
        let calls = &steps[0].tool_calls;
        assert_eq!(calls.len(), 3, "{l}");
        assert_eq!(calls[2].arguments, json!({"query": "b"}), "{l}");
        let ids: std::collections::HashSet<_> = calls.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids.len(), 3, "ids must be distinct ({l})");
        assert_eq!(steps[1].text, "3 results", "{l}");
        let sent: Vec<String> = fake.requests()[1]
            .tool_results()
            .into_iter()
            .map(|r| r.call_id)
            .collect();
        assert_eq!(
            sent,
            calls.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
            "{l}"
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn text_and_tool_calls_in_one_step() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(
            Reply::text("Let me check your notes.").tool("search_notes", json!({"query": "x"})),
        ));
        fake.push(Step::text("Found nothing."));
        let p = provider(config(&fake, ty, streaming));
        let l = label(ty, streaming);
        let all =
            items(p.stream(ChatRequest::new(vec![Message::user("hi")]).with_tools(tools()))).await;
        let events: Vec<ChatEvent> = all.into_iter().map(|e| e.unwrap()).collect();
        let deltas: Vec<&String> = events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::TextDelta(t) => Some(t),
                _ => None,
            })
            .collect();
        if streaming {
            assert!(deltas.len() > 1, "text arrives in several deltas ({l})");
        }
        let first_call = events
            .iter()
            .position(|e| matches!(e, ChatEvent::ToolCall(_)))
            .unwrap();
        let last_delta = events
            .iter()
            .rposition(|e| matches!(e, ChatEvent::TextDelta(_)))
            .unwrap();
        assert!(last_delta < first_call, "{l}");
        assert!(
            matches!(events.last(), Some(ChatEvent::Stop(StopReason::ToolUse))),
            "{l}"
        );
        // Collected: text and call together.
        let r = collect(Box::pin(futures::stream::iter(events.into_iter().map(Ok))))
            .await
            .unwrap();
        assert_eq!(r.text, "Let me check your notes.", "{l}");
        assert_eq!(r.tool_calls.len(), 1);
        // Send the step back: the assistant message keeps text + call.
        let mut msgs = vec![Message::user("hi"), Message::from_result(&r)];
        msgs.push(Message::tool_result(&r.tool_calls[0], "nothing", false));
        let r2 = p
            .chat(ChatRequest::new(msgs).with_tools(tools()))
            .await
            .unwrap();
        assert_eq!(r2.text, "Found nothing.");
        let second = &fake.requests()[1];
        let assistant = &second.messages()[1];
        match ty {
            ProviderType::OpenAiCompatible => {
                assert_eq!(assistant["content"], "Let me check your notes.");
                assert_eq!(assistant["tool_calls"][0]["id"], json!(r.tool_calls[0].id));
            }
            ProviderType::Anthropic => {
                assert_eq!(assistant["content"][0]["type"], "text");
                assert_eq!(assistant["content"][1]["type"], "tool_use");
            }
        }
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn invalid_json_arguments_become_a_parse_error() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(
            Reply::default()
                .raw_tool("search_notes", r#"{"query": "unterminated"#)
                .tool("get_note", json!({"id": "ok"})),
        ));
        fake.push_rule(|req| {
            let r = req.tool_results();
            Step::text(format!(
                "first failed: {}",
                r[0].content.starts_with("failed:")
            ))
        });
        let p = provider(config(&fake, ty, streaming));
        let (steps, _) = run_loop(p.as_ref(), vec![Message::user("go")], tools(), 3)
            .await
            .unwrap();
        let l = label(ty, streaming);
        let bad = &steps[0].tool_calls[0];
        assert!(bad.parse_error.is_some(), "{l}");
        assert_eq!(bad.arguments, json!({}), "{l}");
        assert_eq!(bad.raw_arguments, r#"{"query": "unterminated"#, "{l}");
        let good = &steps[0].tool_calls[1];
        assert_eq!(good.parse_error, None);
        assert_eq!(good.arguments, json!({"id": "ok"}));
        assert_eq!(steps[1].text, "first failed: true", "{l}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn tool_calls_count_even_when_the_server_says_stop() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        let reason = match ty {
            ProviderType::OpenAiCompatible => "stop",
            ProviderType::Anthropic => "end_turn",
        };
        fake.push(Step::reply(
            Reply::default()
                .tool("get_note", json!({"id": "n1"}))
                .finish_reason(reason),
        ));
        let p = provider(config(&fake, ty, streaming));
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]).with_tools(tools()))
            .await
            .unwrap();
        let l = label(ty, streaming);
        assert_eq!(r.stop_reason, StopReason::ToolUse, "{l}");
        assert_eq!(r.tool_calls.len(), 1, "{l}");
        assert!(wants_tools(&r));
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn no_argument_tool_call_with_empty_arguments() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(Reply::default().raw_tool("get_note", "")));
        let p = provider(config(&fake, ty, streaming));
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]).with_tools(tools()))
            .await
            .unwrap();
        let l = label(ty, streaming);
        assert_eq!(r.tool_calls[0].arguments, json!({}), "{l}");
        assert_eq!(r.tool_calls[0].parse_error, None, "{l}");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn max_tokens_stop_reason() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        let reason = match ty {
            ProviderType::OpenAiCompatible => "length",
            ProviderType::Anthropic => "max_tokens",
        };
        fake.push(Step::reply(Reply::text("truncat").finish_reason(reason)));
        let p = provider(config(&fake, ty, streaming));
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap();
        assert_eq!(
            r.stop_reason,
            StopReason::MaxTokens,
            "{}",
            label(ty, streaming)
        );
        fake.assert_no_violations();
    }
}
