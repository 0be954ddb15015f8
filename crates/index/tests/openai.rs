//! The OpenAI-compatible `/v1/embeddings` embedder against a tiny local axum server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use sidenote_index::embed::openai::{OpenAiEmbedConfig, OpenAiEmbedder};
use sidenote_index::embed::{Embedder, dot};
use sidenote_index::*;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Seen {
    requests: Vec<(Value, Option<String>)>,
}

/// 4-d vectors from the text: [len, vowels, 1, 0] (unnormalised); data returned in reverse
/// order with explicit indexes. Model "broken" answers 500.
async fn embeddings(
    State(seen): State<Arc<Mutex<Seen>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let auth = headers
        .get("authorization")
        .map(|v| v.to_str().unwrap().to_string());
    seen.lock().unwrap().requests.push((body.clone(), auth));
    if body["model"] == "broken" {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": "boom"})),
        );
    }
    let inputs = body["input"].as_array().unwrap();
    let mut data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let t = t.as_str().unwrap();
            let vowels = t.chars().filter(|c| "aeiou".contains(*c)).count();
            json!({"object": "embedding", "index": i, "embedding": [t.len() as f64, vowels as f64, 1.0, 0.0]})
        })
        .collect();
    data.reverse();
    (
        StatusCode::OK,
        Json(json!({"object": "list", "data": data, "model": body["model"]})),
    )
}

fn server() -> (String, Arc<Mutex<Seen>>, std::thread::JoinHandle<()>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let app = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(seen.clone());
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    let addr = rx.recv().unwrap();
    (format!("http://{addr}/v1"), seen, handle)
}

fn config(base_url: &str, model: &str) -> OpenAiEmbedConfig {
    OpenAiEmbedConfig {
        base_url: base_url.into(),
        model: model.into(),
        api_key: Some("sk-test".into()),
        allow_remote: false,
    }
}

#[test]
fn embeds_in_order_normalised_with_model_and_key() {
    let (base, seen, _h) = server();
    let e = OpenAiEmbedder::new(config(&base, "nomic-embed-text")).unwrap();
    assert_eq!(e.model_id(), format!("openai:{base}:nomic-embed-text"));
    let texts: Vec<String> = (0..70).map(|i| "a".repeat(i + 1)).collect();
    let v = e.embed(&texts).unwrap();
    assert_eq!(v.len(), 70);
    for (i, vec) in v.iter().enumerate() {
        assert!((dot(vec, vec) - 1.0).abs() < 1e-5);
        // [n, n, 1, 0] normalised: the order survived the reversed response.
        let n = (i + 1) as f32;
        let norm = (2.0 * n * n + 1.0).sqrt();
        assert!((vec[0] - n / norm).abs() < 1e-5, "{i}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.requests.len(), 2, "64 texts per request");
    assert_eq!(seen.requests[0].0["model"], "nomic-embed-text");
    assert_eq!(seen.requests[0].0["input"].as_array().unwrap().len(), 64);
    assert_eq!(seen.requests[0].1.as_deref(), Some("Bearer sk-test"));
}

#[test]
fn http_errors_are_reported_and_remote_urls_need_permission() {
    let (base, _seen, _h) = server();
    let e = OpenAiEmbedder::new(config(&base, "broken")).unwrap();
    let err = e.embed(&["x".into()]).unwrap_err().to_string();
    assert!(err.contains("HTTP 500") && err.contains("boom"), "{err}");

    let remote = config("http://10.1.2.3:11434/v1", "m");
    let err = match OpenAiEmbedder::new(remote.clone()) {
        Err(e) => e,
        Ok(_) => panic!("a remote URL must be refused without ai.allowRemote"),
    };
    assert!(err.is_recoverable(), "{err}");
    assert!(err.to_string().contains("10.1.2.3"), "{err}");
    assert!(
        OpenAiEmbedder::new(OpenAiEmbedConfig {
            allow_remote: true,
            ..remote
        })
        .is_ok()
    );

    // Nothing listening: a clear error, no hang.
    let dead = OpenAiEmbedder::new(config("http://127.0.0.1:9/v1", "m")).unwrap();
    assert!(dead.embed(&["x".into()]).is_err());
}

#[test]
fn the_index_runs_on_the_http_embedder() {
    let (base, _seen, _h) = server();
    let dir = tempfile::tempdir().unwrap();
    let store = sidenote_store::Store::open(dir.path()).unwrap();
    let id = store
        .create_note(
            &sidenote_store::Actor::Cli,
            sidenote_store::NewNote {
                title: "aaaa".into(),
                body: "aeiou aeiou".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .id;
    let e = Arc::new(OpenAiEmbedder::new(config(&base, "m")).unwrap());
    let index = SemanticIndex::open(store, e).unwrap();
    index.sync(&mut |_| {}, None).unwrap();
    let s = index.status().unwrap();
    assert!(s.is_complete() && s.indexed_notes == 1, "{s:?}");
    assert!(s.model.starts_with("openai:"));
    let hits = index
        .search(&SearchRequest {
            relevance: Relevance::Loose,
            ..SearchRequest::text("aaaa")
        })
        .unwrap();
    assert_eq!(hits[0].note_id, id);
}
