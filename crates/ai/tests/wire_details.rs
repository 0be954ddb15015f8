//! Usage, headers, schemas, bad shapes and the privacy gate.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use sidenote_ai::*;
use sidenote_testkit::{FakeProvider, Reply, Step};
use std::sync::Arc;

#[tokio::test]
async fn usage_is_reported_and_counted_per_endpoint() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(Reply::text("hi").usage(12, 3)));
        fake.push(Step::reply(Reply::text("again").usage(5, 1)));
        let sink = Arc::new(MemoryUsage::default());
        let cfg = config(&fake, ty, streaming);
        let endpoint = cfg.endpoint_id();
        let p = build_provider(cfg, Some(sink.clone())).unwrap();
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap();
        let l = label(ty, streaming);
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 3
            },
            "{l}"
        );
        p.chat(ChatRequest::new(vec![Message::user("y")]))
            .await
            .unwrap();
        let t = sink.snapshot();
        assert_eq!(
            t.endpoints[&endpoint],
            UsageTotals {
                requests: 2,
                input_tokens: 17,
                output_tokens: 4
            },
            "{l}"
        );
        assert!(endpoint.contains(&fake.base_url()));
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn missing_usage_is_zero() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::reply(Reply::text("hi").no_usage()));
        let p = provider(config(&fake, ty, streaming));
        let r = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap();
        assert_eq!(r.usage, Usage::default(), "{}", label(ty, streaming));
        assert_eq!(r.text, "hi");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn schemas_are_adapted_and_options_sent() {
    for (ty, streaming) in MODES {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::text("ok"));
        let p = provider(config(&fake, ty, streaming));
        let opts = ChatOptions {
            temperature: Some(0.25),
            max_tokens: Some(77),
        };
        p.chat(
            ChatRequest::new(vec![Message::user("x")])
                .with_tools(tools())
                .with_options(opts),
        )
        .await
        .unwrap();
        let req = &fake.requests()[0];
        let schema = match ty {
            ProviderType::OpenAiCompatible => &req.body["tools"][0]["function"]["parameters"],
            ProviderType::Anthropic => &req.body["tools"][0]["input_schema"],
        };
        assert_eq!(
            schema,
            &json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
        );
        assert_eq!(req.body["temperature"], json!(0.25));
        assert_eq!(req.body["max_tokens"], json!(77));
        assert_eq!(req.model(), "fake-model");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn auth_and_version_headers() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push_all([Step::text("a"), Step::text("b"), Step::text("c")]);
    let mut cfg = config(&fake, ProviderType::OpenAiCompatible, true);
    cfg.api_key = Some("sk-test".into());
    provider(cfg)
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let mut cfg = config(&fake, ProviderType::Anthropic, true);
    cfg.api_key = Some("sk-ant-test".into());
    cfg.anthropic_version = "2099-01-01".into();
    provider(cfg)
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let cfg = config(&fake, ProviderType::Anthropic, false);
    provider(cfg)
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap();
    let reqs = fake.requests();
    assert_eq!(reqs[0].headers["authorization"], "Bearer sk-test");
    assert_eq!(reqs[1].headers["x-api-key"], "sk-ant-test");
    assert_eq!(reqs[1].headers["anthropic-version"], "2099-01-01");
    assert!(!reqs[1].headers.contains_key("authorization"));
    assert_eq!(reqs[2].headers["anthropic-version"], "2023-06-01");
    assert!(!reqs[2].headers.contains_key("x-api-key"));
    fake.assert_no_violations();
}

#[tokio::test]
async fn two_xx_without_choices_suggests_v1() {
    for streaming in [true, false] {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::raw(
            200,
            "application/json",
            r#"{"object":"list","data":[]}"#,
        ));
        fake.push(Step::raw(
            200,
            "text/html",
            "<html><body>Ollama is running</body></html>",
        ));
        let p = provider(config(&fake, ProviderType::OpenAiCompatible, streaming));
        let e = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        assert!(matches!(e, AiError::BadResponse(_)), "{e:?}");
        assert!(e.to_string().contains("\"/v1\""), "{e}");
        assert!(e.to_string().contains(&fake.base_url()), "{e}");
        let e = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("non-JSON") && e.to_string().contains("/v1"),
            "{e}"
        );
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn anthropic_unexpected_shape_is_clear() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::raw(200, "application/json", r#"{"choices":[]}"#));
    let p = provider(config(&fake, ProviderType::Anthropic, false));
    let e = p
        .chat(ChatRequest::new(vec![Message::user("x")]))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("ai.chat.baseUrl"), "{e}");
    fake.assert_no_violations();
}

#[tokio::test]
async fn http_errors_say_what_to_do() {
    for ty in [ProviderType::OpenAiCompatible, ProviderType::Anthropic] {
        let fake = FakeProvider::start().await.unwrap();
        fake.push(Step::Error {
            status: 401,
            retry_after: None,
            message: Some("invalid x-api-key".into()),
        });
        fake.push(Step::Error {
            status: 404,
            retry_after: None,
            message: Some("model 'nope' not found".into()),
        });
        let p = provider(config(&fake, ty, true));
        let e = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("401") && s.contains("invalid x-api-key") && s.contains("API key"),
            "{s}"
        );
        let e = p
            .chat(ChatRequest::new(vec![Message::user("x")]))
            .await
            .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("model 'nope' not found") && s.contains("ai.chat.model"),
            "{s}"
        );
        assert_eq!(fake.requests().len(), 2, "4xx are not retried");
        fake.assert_no_violations();
    }
}

#[tokio::test]
async fn max_completion_tokens_is_retried_once() {
    let fake = FakeProvider::start().await.unwrap();
    fake.push(Step::Error {
        status: 400,
        retry_after: None,
        message: Some("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.".into()),
    });
    fake.push(Step::text("ok"));
    let p = provider(config(&fake, ProviderType::OpenAiCompatible, true));
    let opts = ChatOptions {
        temperature: None,
        max_tokens: Some(50),
    };
    let r = p
        .chat(ChatRequest::new(vec![Message::user("x")]).with_options(opts))
        .await
        .unwrap();
    assert_eq!(r.text, "ok");
    let reqs = fake.requests();
    assert_eq!(reqs[1].body["max_completion_tokens"], json!(50));
    assert!(reqs[1].body.get("max_tokens").is_none());
    fake.assert_no_violations();
}

#[tokio::test]
async fn empty_request_is_refused() {
    let fake = FakeProvider::start().await.unwrap();
    let p = provider(config(&fake, ProviderType::OpenAiCompatible, true));
    let e = p.chat(ChatRequest::new(vec![])).await.unwrap_err();
    assert!(matches!(e, AiError::InvalidRequest(_)));
    assert!(fake.requests().is_empty());
}

#[test]
fn remote_providers_are_refused_before_any_connection() {
    // build_provider is synchronous and needs no runtime: no connection can have been made.
    for (ty, url) in [
        (ProviderType::OpenAiCompatible, "https://api.openai.com/v1"),
        (
            ProviderType::OpenAiCompatible,
            "http://192.168.1.20:11434/v1",
        ),
        (ProviderType::Anthropic, "https://api.anthropic.com/v1"),
    ] {
        let mut cfg = ProviderConfig::new(ty, url, "m");
        cfg.api_key = Some("k".into());
        let e = build_provider(cfg.clone(), None)
            .err()
            .expect("must be refused");
        assert!(matches!(e, AiError::RemoteNotAllowed { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("ai.allowRemote") && msg.contains(url), "{msg}");
        cfg.allow_remote = true;
        let p = build_provider(cfg, None).unwrap();
        assert_eq!(p.classification(), Classification::Remote);
    }
}

#[tokio::test]
async fn loopback_fake_is_local() {
    let fake = FakeProvider::start().await.unwrap();
    let p = provider(config(&fake, ProviderType::Anthropic, true));
    assert_eq!(p.classification(), Classification::Local);
    let mut cfg = config(&fake, ProviderType::OpenAiCompatible, true);
    cfg.base_url = cfg.base_url.replace("127.0.0.1", "localhost");
    assert_eq!(provider(cfg).classification(), Classification::Local);
}
