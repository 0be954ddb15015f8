//! sidenote's plugin host (Tier 3 of the seed): sandboxed JavaScript plugins that register
//! workspace tools. A plugin tool is an ordinary registry tool — schema-validated, listed to
//! the agent and over MCP — whose handler runs in the plugin's QuickJS runtime.
//!
//! - One QuickJS runtime per plugin, on its own thread, talking to the async host through
//!   channels ([`sandbox`]). A prelude defines a frozen `joplin` object before the plugin's
//!   script runs: `joplin.ai.tools.register({ id, description, inputSchema, handler, render? })`,
//!   `joplin.net.fetch(url)` (hosts in `permissions.net` only, performed by the host),
//!   `joplin.data.searchNotes/readNote` (`notes:read`) and `createNote/updateNote`
//!   (`notes:write`, journaled as `plugin:<id>`), `joplin.settings.value(key)`, `console.*`,
//!   `setTimeout`/`clearTimeout`. Nothing else: no file system, no other network.
//! - Limits per call and per plugin ([`Limits`]); every failure is a recoverable tool error
//!   with a clear message; fatal ones restart the runtime; a plugin that keeps failing is
//!   disabled ([`PluginHost`]).
//! - [`render`]: the RenderSpec vocabulary a plugin's `render(input, output)` may return,
//!   validated by the host, images inlined as `data:` URLs by the host.
//!
//! Start-up: [`PluginHost::load_all`] loads `<workspace>/plugins/*/` into a registry.

mod host;
pub mod manifest;
pub mod net;
pub mod render;
pub mod sandbox;

pub use host::{LoadReport, PluginHost, PluginStatus, PluginTool, plugins_dir};
pub use manifest::Manifest;
pub use net::FetchLimits;
pub use sandbox::{FailureKind, MemoryStats};

use std::time::Duration;

/// Resource limits for one plugin.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Time one handler call may spend running JS (not waiting for fetches or timers).
    pub cpu_per_call: Duration,
    /// Time one handler call may take in all, waiting included.
    pub wall_per_call: Duration,
    /// CPU slice for one `render(input, output)`.
    pub render_cpu: Duration,
    /// Wall-clock limit for one render.
    pub render_wall: Duration,
    /// QuickJS heap limit for the plugin's runtime.
    pub memory_bytes: usize,
    /// QuickJS stack limit (deep recursion fails with a clear error above it).
    pub stack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_per_call: Duration::from_secs(2),
            wall_per_call: Duration::from_secs(20),
            render_cpu: Duration::from_millis(250),
            render_wall: Duration::from_secs(2),
            memory_bytes: 64 * 1024 * 1024,
            stack_bytes: 1024 * 1024,
        }
    }
}

/// How the host runs plugins.
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub limits: Limits,
    pub fetch: FetchLimits,
    /// Consecutive failures of the serious kinds (CPU budget, out of memory, deadline, not
    /// responding) after which a plugin is disabled. Thrown errors do not count: a tool may
    /// legitimately answer "no" with an error.
    pub max_consecutive_failures: u32,
}

impl Default for HostOptions {
    fn default() -> Self {
        HostOptions {
            limits: Limits::default(),
            fetch: FetchLimits::default(),
            max_consecutive_failures: 3,
        }
    }
}

/// Errors of the plugin host's own operations (install, load, remove, ...). Failures of a
/// plugin tool call are `ToolError::Recoverable`s instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    #[error("{0}")]
    Manifest(String),
    #[error("{0}")]
    Load(String),
    #[error("no plugin '{0}' is installed")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Io(String),
    #[error("internal error: {0}")]
    Internal(String),
}
