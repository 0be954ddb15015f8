//! The cost of MCP over Streamable HTTP on loopback, against the same call in-process.
//!
//! - `search_notes_in_process_10k`: `Registry::call("search_notes", …)` (what the agent does);
//! - `search_notes_mcp_http_10k`: the same call as one real `tools/call` POST to `sidenote
//!   serve`'s `/mcp` on 127.0.0.1 (stateless 2026-07-28 request, as the Python SDK 2.x sends
//!   it; bearer auth, Host guard, JSON-RPC, response parsed) — one request at a time;
//! - `tools_call_throughput_http/<c>`: 64 such calls with `c` in flight at once; criterion's
//!   element throughput is calls per second.
//!
//! Same 10k-note workspace and query as `cargo bench -p sidenote-tools --bench search_notes`.
//! Run: `cargo bench -p sidenote-server --bench mcp_http`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use sidenote_server::{ServeOptions, Server};
use sidenote_store::{Actor, Store};
use sidenote_tools::builtin::bench_fixture::{BENCH_NOTES, BENCH_QUERY, populate};
use sidenote_tools::builtin::register_builtin;
use sidenote_tools::{Registry, ToolCtx};
use std::hint::black_box;
use std::sync::Arc;

const TOKEN: &str = "bench-token-0123456789abcdef";

struct Http {
    client: reqwest::Client,
    url: String,
    body: Arc<Vec<u8>>,
}

impl Http {
    async fn call(&self) -> Value {
        let resp = self
            .client
            .post(&self.url)
            .bearer_auth(TOKEN)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "search_notes")
            .body(self.body.as_ref().clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let text = resp.text().await.unwrap();
        let msg: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) => text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .find(|d| !d.is_empty())
                .map(|d| serde_json::from_str(d).unwrap())
                .unwrap(),
        };
        assert_eq!(msg["result"]["isError"], false, "{msg}");
        msg
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    populate(&store, BENCH_NOTES).unwrap();
    let registry = Registry::new();
    register_builtin(&registry, store.clone()).unwrap();
    let ctx = ToolCtx::new(Actor::Mcp("bench".into()));
    let args = json!({ "query": BENCH_QUERY });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(Server::bind(ServeOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            store: store.clone(),
            registry: registry.clone(),
            token: TOKEN.into(),
            extra_hosts: vec![],
            plugins: None,
        }))
        .unwrap();
    let url = server.mcp_url();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = rt.spawn(server.run(async {
        let _ = stop_rx.await;
    }));
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "name": "search_notes",
            "arguments": args,
        }
    });
    let http = Arc::new(Http {
        client: reqwest::Client::new(),
        url,
        body: Arc::new(serde_json::to_vec(&body).unwrap()),
    });
    // sanity: same answer as in-process
    let over_http = rt.block_on(http.call());
    let text = over_http["result"]["content"][0]["text"].as_str().unwrap();
    let page: Value = serde_json::from_str(text).unwrap();
    assert_eq!(page["results"].as_array().unwrap().len(), 20, "{page}");

    let mut g = c.benchmark_group("mcp");
    g.bench_function("search_notes_in_process_10k", |b| {
        b.iter(|| {
            rt.block_on(registry.call("search_notes", black_box(args.clone()), &ctx))
                .unwrap()
        })
    });
    g.bench_function("search_notes_mcp_http_10k", |b| {
        b.iter(|| rt.block_on(http.call()))
    });
    g.finish();

    const BATCH: usize = 64;
    let mut g = c.benchmark_group("tools_call_throughput_http");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sample_size(20);
    for concurrency in [1usize, 8] {
        g.bench_function(format!("search_notes_c{concurrency}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut tasks = Vec::new();
                    for w in 0..concurrency {
                        let http = http.clone();
                        let n = BATCH / concurrency + usize::from(w < BATCH % concurrency);
                        tasks.push(tokio::spawn(async move {
                            for _ in 0..n {
                                black_box(http.call().await);
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                })
            })
        });
    }
    g.finish();

    let _ = stop_tx.send(());
    rt.block_on(running).unwrap().unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
