//! What the panel's API costs on loopback (real `sidenote serve` router, bearer auth, Host
//! guard, JSON):
//!
//! - `notes_list_10k`: `GET /api/notes` (newest 200 of a 10k-note workspace) — the note list;
//! - `search_10k`: `GET /api/notes?q=…` — the search box (same query as the tools bench);
//! - `editor_edit_10kb`: `POST /api/editor/{id}/edit` of a 10 KB note with one word changed —
//!   what every debounced keystroke batch costs (diff against the session, one undo step,
//!   saved to the store);
//! - `chat_turn_sse`: one whole `POST /api/chat` turn against the in-process fake provider
//!   (one tool call, then the reply), SSE read to the end — the panel's per-turn overhead
//!   around the model (provider built from settings, history loaded, events streamed,
//!   conversation saved).
//!
//! Run: `cargo bench -p sidenote-server --bench panel_api`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use sidenote_server::{ServeOptions, Server};
use sidenote_store::{Actor, NewNote, Store};
use sidenote_testkit::{FakeProvider, Step};
use sidenote_tools::Registry;
use sidenote_tools::builtin::bench_fixture::{BENCH_NOTES, BENCH_QUERY, populate};
use sidenote_tools::builtin::register_builtin;

const TOKEN: &str = "bench-token-0123456789abcdef";

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    populate(&store, BENCH_NOTES).unwrap();
    let registry = Registry::new();
    register_builtin(&registry, store.clone()).unwrap();
    let line = "The quick brown fox jumps over the lazy dog near the lake today.\n";
    let body: String = line.repeat(10_240 / line.len());
    let note = store
        .create_note(
            &Actor::Cli,
            NewNote {
                title: "Bench".into(),
                body: body.clone(),
                ..Default::default()
            },
        )
        .unwrap();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fake = rt.block_on(FakeProvider::start()).unwrap();
    store
        .set_setting("ai.chat.baseUrl", &fake.base_url())
        .unwrap();
    store.set_setting("ai.chat.model", "fake-model").unwrap();
    let server = rt
        .block_on(Server::bind(ServeOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            store: store.clone(),
            registry,
            token: TOKEN.into(),
            extra_hosts: vec![],
            plugins: None,
        }))
        .unwrap();
    let base = format!("{}/api", server.url());
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = rt.spawn(server.run(async {
        let _ = stop_rx.await;
    }));
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        async move {
            let r = http.get(path).bearer_auth(TOKEN).send().await.unwrap();
            assert!(r.status().is_success());
            r.json::<Value>().await.unwrap()
        }
    };
    let post = |path: String, body: Value| {
        let http = http.clone();
        async move {
            let r = http
                .post(path)
                .bearer_auth(TOKEN)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert!(r.status().is_success());
            r.text().await.unwrap()
        }
    };
    // sanity
    let list = rt.block_on(get(format!("{base}/notes")));
    assert_eq!(list["notes"].as_array().unwrap().len(), 200);
    rt.block_on(post(format!("{base}/editor/{}/open", note.id), json!({})));

    let mut g = c.benchmark_group("panel");
    g.bench_function("notes_list_10k", |b| {
        b.iter(|| rt.block_on(get(format!("{base}/notes"))))
    });
    let q = format!("{base}/notes?q={}", BENCH_QUERY.replace(' ', "+"));
    g.bench_function("search_10k", |b| b.iter(|| rt.block_on(get(q.clone()))));
    let variants = [body.replacen("lazy", "sleepy", 1), body.clone()];
    let mut i = 0usize;
    g.bench_function("editor_edit_10kb", |b| {
        b.iter(|| {
            i += 1;
            let text = &variants[i % 2];
            rt.block_on(post(
                format!("{base}/editor/{}/edit", note.id),
                json!({"text": text}),
            ))
        })
    });
    g.sample_size(30);
    g.bench_function("chat_turn_sse", |b| {
        b.iter(|| {
            fake.push(Step::tool_call("list_notebooks", json!({})));
            fake.push(Step::text("Done."));
            let sse = rt.block_on(post(format!("{base}/chat"), json!({"message": "hi"})));
            assert!(sse.contains("\"saved\""), "{sse}");
            // keep the stored history short so every turn does the same work
            rt.block_on(async {
                http.delete(format!("{base}/conversations/workspace"))
                    .bearer_auth(TOKEN)
                    .send()
                    .await
                    .unwrap()
            });
        })
    });
    g.finish();
    let _ = stop_tx.send(());
    let _ = rt.block_on(running);
}

criterion_group!(benches, bench);
criterion_main!(benches);
