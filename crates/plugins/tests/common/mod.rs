#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use serde_json::Value;
use sidenote_plugins::{HostOptions, Limits, PluginHost};
use sidenote_store::{Actor, Store};
use sidenote_tools::{Registry, ToolCtx, ToolError, ToolOutput};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Env {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub registry: Registry,
    pub host: PluginHost,
}

/// Tight limits so the misbehaving plugins fail fast.
pub fn fast_options() -> HostOptions {
    HostOptions {
        limits: Limits {
            cpu_per_call: Duration::from_millis(400),
            wall_per_call: Duration::from_millis(1500),
            render_cpu: Duration::from_millis(200),
            render_wall: Duration::from_millis(1000),
            memory_bytes: 16 * 1024 * 1024,
            stack_bytes: 256 * 1024,
        },
        max_consecutive_failures: 3,
        ..HostOptions::default()
    }
}

pub fn env_with(options: HostOptions) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("ws")).unwrap();
    let registry = Registry::new();
    sidenote_tools::builtin::register_builtin(&registry, store.clone()).unwrap();
    let host = PluginHost::new(
        &dir.path().join("ws"),
        store.clone(),
        registry.clone(),
        options,
    )
    .unwrap();
    Env {
        dir,
        store,
        registry,
        host,
    }
}

pub fn env() -> Env {
    env_with(fast_options())
}

impl Env {
    /// Write a plugin folder (outside the workspace) and return it.
    pub fn plugin_dir(&self, id: &str, permissions: Value, script: &str) -> PathBuf {
        let d = self.dir.path().join("src").join(id);
        std::fs::create_dir_all(&d).unwrap();
        let manifest = serde_json::json!({
            "id": id, "name": format!("Test {id}"), "version": "0.1.0", "main": "main.js",
            "permissions": permissions,
        });
        std::fs::write(d.join("manifest.json"), manifest.to_string()).unwrap();
        std::fs::write(d.join("main.js"), script).unwrap();
        d
    }

    pub async fn load(&self, id: &str, permissions: Value, script: &str) -> Vec<String> {
        let d = self.plugin_dir(id, permissions, script);
        self.host.load_dir(&d).await.unwrap().tools
    }

    pub async fn call(&self, tool: &str, input: Value) -> Result<Value, ToolError> {
        self.registry
            .call(tool, input, &ToolCtx::new(Actor::Cli))
            .await
            .map(|o| match o {
                ToolOutput::Json(v) => v,
                other => panic!("unexpected output {other:?}"),
            })
    }

    /// A recoverable error's message (panics on success or an internal error).
    pub async fn call_err(&self, tool: &str, input: Value) -> String {
        match self.call(tool, input).await {
            Err(ToolError::Recoverable(m)) => m,
            other => panic!("expected a recoverable error from {tool}, got {other:?}"),
        }
    }
}

pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/plugins/vacation-packing")
}

/// A tool that always works, to show the host keeps serving.
pub const ECHO: &str = r#"
joplin.ai.tools.register({
  id: 'echo',
  description: 'Echo the input back',
  inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  handler: async (input) => ({ n: input.n, twice: input.n * 2 }),
});
"#;
