//! One `search_notes` call through the registry, in-process, on the generated 10k-note
//! workspace of `builtin::bench_fixture`. The `mcp` crate measures the same call over MCP
//! HTTP on loopback; BENCHMARKS.md compares the two. `store_search_direct` is the bare
//! `Store::search` underneath, so the registry's own cost (schema validation, blocking-pool
//! hop, JSON output) is the difference.
//!
//! Run: `cargo bench -p sidenote-tools --bench search_notes`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use sidenote_store::{Actor, Store};
use sidenote_tools::builtin::bench_fixture::{
    BENCH_NOTES, BENCH_QUERY, BENCH_QUERY_RARE, populate,
};
use sidenote_tools::builtin::register_builtin;
use sidenote_tools::{Registry, ToolCtx, ToolOutput};
use std::hint::black_box;

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
    // sanity: the query matches and returns a full page
    match rt
        .block_on(registry.call("search_notes", args.clone(), &ctx))
        .unwrap()
    {
        ToolOutput::Json(v) => {
            let total = v["total"].as_u64().unwrap();
            let page = v["results"].as_array().unwrap().len();
            eprintln!("search_notes {BENCH_QUERY:?}: {total} matches, {page} returned");
            assert!(total >= 20 && page == 20, "{v}");
        }
        other => panic!("{other:?}"),
    }

    let mut g = c.benchmark_group("tools");
    g.bench_function("search_notes_in_process_10k", |b| {
        b.iter(|| {
            rt.block_on(registry.call("search_notes", black_box(args.clone()), &ctx))
                .unwrap()
        })
    });
    g.bench_function("store_search_direct_10k", |b| {
        b.iter(|| store.search(black_box(BENCH_QUERY), 20).unwrap())
    });
    let rare = json!({ "query": BENCH_QUERY_RARE });
    g.bench_function("search_notes_in_process_10k_rare", |b| {
        b.iter(|| {
            rt.block_on(registry.call("search_notes", black_box(rare.clone()), &ctx))
                .unwrap()
        })
    });
    g.bench_function("store_search_direct_10k_rare", |b| {
        b.iter(|| store.search(black_box(BENCH_QUERY_RARE), 20).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
