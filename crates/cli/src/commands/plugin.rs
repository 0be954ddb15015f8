//! `sidenote plugin install PATH | list | remove ID | enable ID | disable ID`: plugins live in
//! `<workspace>/plugins/<id>/` and load when `serve`, `mcp` and `chat` start.

use crate::app::App;
use crate::toolset::builtin_registry;
use sidenote_plugins::{PluginHost, PluginStatus};
use sidenote_tools::builtin::SemanticSlot;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Install the plugin folder PATH (with its manifest.json) into the workspace and check
    /// that it loads.
    Install { path: PathBuf },
    /// List installed plugins, their tools and permissions.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Uninstall a plugin (its folder and its settings).
    Remove { id: String },
    /// Switch a plugin on (also after it was disabled for failing).
    Enable { id: String },
    /// Switch a plugin off; its tools disappear from the sidebar and MCP.
    Disable { id: String },
}

/// A host over the workspace with the built-in tools registered (so collisions are named).
/// Not [`crate::toolset::Toolset`]: a one-shot command needs neither the semantic index nor
/// the plugin watcher, and a host that cannot start is an error here, not a logged warning.
fn host(app: &App) -> anyhow::Result<PluginHost> {
    let registry = builtin_registry(app, SemanticSlot::new())?;
    Ok(PluginHost::new(
        &app.workspace,
        app.store.clone(),
        registry,
        sidenote_plugins::HostOptions::default(),
    )?)
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    let host = host(app)?;
    let result = run_with(&host, cmd).await;
    host.shutdown();
    result
}

async fn run_with(host: &PluginHost, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Install { path } => {
            // the other plugins' tools take part in the collision check
            host.load_installed().await;
            let r = host.install(&path).await?;
            println!(
                "Installed {} {} ({}): tools {}",
                r.id,
                r.version,
                r.name,
                if r.tools.is_empty() {
                    "(none)".to_string()
                } else {
                    r.tools.join(", ")
                }
            );
        }
        Cmd::List { json } => {
            host.load_installed().await;
            let status = host.status();
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else if status.is_empty() {
                println!("No plugins installed. Install one with `sidenote plugin install PATH`.");
            } else {
                for s in &status {
                    print_status(s);
                }
            }
        }
        Cmd::Remove { id } => {
            host.remove(&id).await?;
            println!("Removed plugin {id}");
        }
        Cmd::Enable { id } => {
            host.enable(&id).await?;
            println!("Enabled plugin {id}");
        }
        Cmd::Disable { id } => {
            host.disable(&id).await?;
            println!("Disabled plugin {id}");
        }
    }
    Ok(())
}

fn print_status(s: &PluginStatus) {
    let state = if !s.enabled {
        "disabled"
    } else if s.loaded {
        "enabled"
    } else {
        "failed"
    };
    println!("{} {} — {} [{state}]", s.id, s.version, s.name);
    if !s.tools.is_empty() {
        println!("  tools: {}", s.tools.join(", "));
    }
    let p = &s.permissions;
    if !p.net.is_empty() || !p.data.is_empty() {
        println!(
            "  permissions: net [{}], data [{}]",
            p.net.join(", "),
            p.data.join(", ")
        );
    }
    if let Some(e) = &s.error {
        println!("  error: {e}");
    }
    if let Some(r) = &s.disabled_reason {
        println!("  disabled: {r}");
    }
}
