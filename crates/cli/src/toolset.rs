//! The composition root of the workspace tools: the ONE registry with the built-in tools, the
//! semantic index plugged into `semantic_search_notes`, and the installed plugins' tools.
//! `serve`, `mcp` and `chat` all build their tools here, so the sidebar, MCP and the terminal
//! see the same set.

use crate::app::App;
use anyhow::Context;
use sidenote_index::BackgroundIndexer;
use sidenote_plugins::PluginHost;
use sidenote_tools::Registry;
use sidenote_tools::builtin::{SemanticSlot, register_builtin_with};
use std::time::Duration;
use tokio::task::JoinHandle;

/// How often a long-running process rescans the plugins folder (install/remove from another
/// process then reach its MCP clients as `tools/list_changed`).
const PLUGIN_RESCAN: Duration = Duration::from_secs(2);

/// What the process keeps alive while it serves tools.
pub struct Toolset {
    pub registry: Registry,
    /// `None` when the plugin host could not start (logged; the built-ins still work).
    pub plugins: Option<PluginHost>,
    _indexer: Option<BackgroundIndexer>,
    _plugin_watch: Option<JoinHandle<()>>,
}

impl Toolset {
    /// Build the registry: built-ins first, then plugins (so a colliding plugin tool id is
    /// refused with the built-in named). `long_running` also keeps the semantic index current and rescans the plugins
    /// folder; a one-shot command (`chat`) searches the index as it is.
    pub async fn open(app: &App, long_running: bool) -> anyhow::Result<Toolset> {
        let semantic = SemanticSlot::new();
        let registry = builtin_registry(app, semantic.clone())?;
        let indexer = crate::semantic::attach(app, &semantic, long_running)?;
        let plugins =
            match PluginHost::load_all(&app.workspace, app.store.clone(), registry.clone()).await {
                Ok(h) => Some(h),
                Err(e) => {
                    tracing::warn!("plugins are not available: {e}");
                    None
                }
            };
        let plugin_watch = match (&plugins, long_running) {
            (Some(p), true) => Some(p.watch(PLUGIN_RESCAN)),
            _ => None,
        };
        Ok(Toolset {
            registry,
            plugins,
            _indexer: indexer,
            _plugin_watch: plugin_watch,
        })
    }
}

/// A registry holding the built-in tools, `semantic_search_notes` answering from `semantic`.
/// Plugins register after these, so a colliding plugin tool id is refused with the built-in
/// named (`sidenote plugin` uses this without the index or the plugin watcher).
pub fn builtin_registry(app: &App, semantic: SemanticSlot) -> anyhow::Result<Registry> {
    let registry = Registry::new();
    register_builtin_with(&registry, app.store.clone(), semantic)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .context("cannot register the built-in tools")?;
    Ok(registry)
}

impl Drop for Toolset {
    fn drop(&mut self) {
        if let Some(p) = &self.plugins {
            p.shutdown();
        }
    }
}
