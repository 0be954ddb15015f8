//! The opened workspace shared by every command.

use anyhow::Context;
use sidenote_store::Store;
use std::path::PathBuf;

pub struct App {
    pub workspace: PathBuf,
    pub store: Store,
}

impl App {
    /// Open the workspace (explicit dir, else the XDG data dir), creating it on first run.
    pub fn open(dir: Option<PathBuf>) -> anyhow::Result<App> {
        let workspace = match dir {
            Some(d) => d,
            None => default_workspace()?,
        };
        let store = Store::open(&workspace)
            .with_context(|| format!("cannot open workspace {}", workspace.display()))?;
        Ok(App { workspace, store })
    }
}

fn default_workspace() -> anyhow::Result<PathBuf> {
    if let Some(d) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(d).join("sidenote"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("no workspace given and $HOME is not set: pass --workspace DIR")?;
    Ok(PathBuf::from(home).join(".local/share/sidenote"))
}
