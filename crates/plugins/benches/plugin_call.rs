//! Plugin call round-trip (registry → plugin thread → JS handler → back) and per-plugin
//! memory. `cargo bench -p sidenote-plugins --bench plugin_call`; the median of each
//! benchmark is the p50 in BENCHMARKS.md, the memory lines are printed at the end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::Criterion;
use serde_json::json;
use sidenote_plugins::{HostOptions, PluginHost};
use sidenote_store::{Actor, Store};
use sidenote_tools::{Registry, ToolCtx};
use std::path::Path;

const ECHO: &str = r#"
joplin.ai.tools.register({
  id: 'echo', description: 'echo', inputSchema: { type: 'object' },
  handler: async (input) => input,
});
"#;

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let store = Store::open(&ws).unwrap();
    let registry = Registry::new();
    let host = PluginHost::new(&ws, store, registry.clone(), HostOptions::default()).unwrap();

    let echo_dir = dir.path().join("echo");
    std::fs::create_dir_all(&echo_dir).unwrap();
    std::fs::write(
        echo_dir.join("manifest.json"),
        json!({"id": "echo", "name": "Echo", "version": "1", "main": "main.js"}).to_string(),
    )
    .unwrap();
    std::fs::write(echo_dir.join("main.js"), ECHO).unwrap();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/plugins/vacation-packing");
    rt.block_on(async {
        host.load_dir(&echo_dir).await.unwrap();
        host.load_dir(&example).await.unwrap();
    });

    let ctx = ToolCtx::new(Actor::Cli);
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("plugin_call_echo_roundtrip", |b| {
        b.iter(|| {
            rt.block_on(registry.call("echo", json!({"n": 1, "s": "hello"}), &ctx))
                .unwrap()
        })
    });
    let trip = json!({"destination": "Lake District", "days": 5, "companions": ["dog"]});
    c.bench_function("plugin_call_plan_trip_packing", |b| {
        b.iter(|| {
            rt.block_on(registry.call("plan_trip_packing", trip.clone(), &ctx))
                .unwrap()
        })
    });
    let tool = host.tool("plan_trip_packing").unwrap();
    let out = rt
        .block_on(registry.call("plan_trip_packing", trip.clone(), &ctx))
        .unwrap()
        .to_json();
    c.bench_function("plugin_render_plan_trip_packing", |b| {
        b.iter(|| {
            rt.block_on(tool.render_checked(&trip, &out))
                .unwrap()
                .unwrap()
        })
    });
    c.final_summary();

    rt.block_on(async {
        for id in ["echo", "vacation-packing"] {
            let m = host.memory(id).await.unwrap();
            println!(
                "plugin memory {id}: {} KiB allocated by QuickJS ({} KiB in JS objects), limit {} MiB",
                m.malloc_bytes / 1024,
                m.used_bytes / 1024,
                m.limit_bytes / (1024 * 1024)
            );
        }
    });
    host.shutdown();
}
