//! `joplin.net.fetch`: performed by the host, for permitted hosts only (every redirect hop
//! checked), with a size limit; the response helpers work.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::response::IntoResponse;
use common::{env_with, fast_options};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

async fn server() -> (u16, Arc<AtomicUsize>) {
    let secret_hits = Arc::new(AtomicUsize::new(0));
    let hits = secret_hits.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new()
        .route(
            "/json",
            axum::routing::get(|| async { axum::Json(json!({"a": 1, "b": "two"})) }),
        )
        .route(
            "/hop",
            axum::routing::get(|| async { axum::response::Redirect::temporary("/json") }),
        )
        .route(
            "/away",
            axum::routing::get(move || async move {
                axum::response::Redirect::temporary(&format!("http://localhost:{port}/secret"))
            }),
        )
        .route(
            "/secret",
            axum::routing::get(move || {
                hits.fetch_add(1, Ordering::SeqCst);
                async { "secret" }
            }),
        )
        .route(
            "/big",
            axum::routing::get(|| async { vec![b'x'; 300_000].into_response() }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, secret_hits)
}

#[tokio::test]
async fn fetch_follows_permitted_redirects_only_and_limits_size() {
    let mut options = fast_options();
    options.fetch.max_bytes = 100_000;
    let e = env_with(options);
    let (port, secret_hits) = server().await;
    e.load(
        "fetcher",
        json!({"net": ["127.0.0.1"]}),
        r#"
        joplin.ai.tools.register({
          id: 'get', description: 'x',
          inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
          handler: async ({ url }) => {
            const r = await joplin.net.fetch(url);
            const body = await r.json();
            return { ok: r.ok, status: r.status, type: r.contentType, body, url: r.url };
          },
        });
        "#,
    )
    .await;
    let base = format!("http://127.0.0.1:{port}");
    let out = e
        .call("get", json!({"url": format!("{base}/json")}))
        .await
        .unwrap();
    assert_eq!(out["body"], json!({"a": 1, "b": "two"}));
    assert_eq!(
        (out["ok"].clone(), out["status"].clone()),
        (json!(true), json!(200))
    );
    assert_eq!(out["type"], "application/json");
    // a redirect to a permitted host is followed
    let out = e
        .call("get", json!({"url": format!("{base}/hop")}))
        .await
        .unwrap();
    assert_eq!(out["body"]["a"], 1);
    assert_eq!(out["url"], format!("{base}/json"));
    // a redirect to another host is refused before it is followed
    let err = e
        .call_err("get", json!({"url": format!("{base}/away")}))
        .await;
    assert!(
        err.contains("permission denied") && err.contains("'localhost'"),
        "{err}"
    );
    assert_eq!(secret_hits.load(Ordering::SeqCst), 0);
    // too large
    let err = e
        .call_err("get", json!({"url": format!("{base}/big")}))
        .await;
    assert!(err.contains("larger than the 100000 byte limit"), "{err}");
    // not http(s)
    let err = e
        .call_err("get", json!({"url": "file:///etc/passwd"}))
        .await;
    assert!(err.contains("only http and https"), "{err}");
}
