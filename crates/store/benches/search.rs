//! Keyword search latency at 10k and 100k synthetic notes.
//!
//! `cargo bench -p sidenote-store --bench search` — criterion timings per query, then a
//! p50/p95 table over the fixed query mix (printed, and written to
//! `$CARGO_TARGET_DIR/search-bench.md`). `SIDENOTE_BENCH_SIZES=10000` limits the sizes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::Criterion;
use sidenote_store::Store;
use std::hint::black_box;
use std::time::{Duration, Instant};

const QUERIES: &[(&str, &str)] = &[
    ("plain", "meeting budget"),
    ("phrase", "\"project review\""),
    ("wildcard", "deploy* server"),
    ("tag", "tag:important review"),
    ("notebook", "notebook:work deadline"),
    ("negation", "release -tag:archived"),
    ("date", "updated:20250601 invoice"),
    ("rare", "zanzibar"),
    ("filters-only", "type:todo iscompleted:0 tag:work"),
];

fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    (at(0.50), at(0.95))
}

fn main() {
    let sizes: Vec<usize> = std::env::var("SIDENOTE_BENCH_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let mut table = String::from(
        "| notes | kind | query | p50 | p95 | matches |\n|---:|---|---|---:|---:|---:|\n",
    );
    let mut overall = String::new();
    for &n in &sizes {
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let store = Store::open(dir.path()).unwrap();
        sidenote_store::corpus::load(&store, n, 42).unwrap();
        eprintln!("generated {n} notes in {:.1?}", t0.elapsed());
        let mut group = c.benchmark_group(format!("search_{n}"));
        for (name, q) in QUERIES {
            group.bench_function(*name, |b| {
                b.iter(|| black_box(store.search(q, 20).unwrap()))
            });
        }
        group.finish();
        // p50/p95 over the mix: 30 rounds of every query, limit 20 (what the tool asks for)
        let mut all = Vec::new();
        for (name, q) in QUERIES {
            let mut times = Vec::new();
            let mut total = 0;
            for _ in 0..30 {
                let t = Instant::now();
                let r = black_box(store.search(q, 20).unwrap());
                times.push(t.elapsed());
                total = r.total;
            }
            all.extend(times.iter().copied());
            let (p50, p95) = percentiles(times);
            table.push_str(&format!(
                "| {n} | {name} | `{q}` | {:.2} ms | {:.2} ms | {total} |\n",
                p50.as_secs_f64() * 1e3,
                p95.as_secs_f64() * 1e3
            ));
        }
        let (p50, p95) = percentiles(all);
        overall.push_str(&format!(
            "- {n} notes, whole mix: p50 {:.2} ms, p95 {:.2} ms\n",
            p50.as_secs_f64() * 1e3,
            p95.as_secs_f64() * 1e3
        ));
    }
    let report = format!("{overall}\n{table}");
    println!("\n{report}");
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let _ = std::fs::write(
        std::path::Path::new(&target).join("search-bench.md"),
        &report,
    );
    c.final_summary();
}
