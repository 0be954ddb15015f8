//! The opened workspace shared by every command.

use anyhow::Context;
use sidenote_store::Store;
use std::path::PathBuf;

pub struct App {
    pub workspace: PathBuf,
    pub store: Store,
}

impl App {
    /// Open the workspace (explicit dir, else the XDG data dir), creating it on first run
    /// with an API token and a "Welcome" notebook.
    pub fn open(dir: Option<PathBuf>) -> anyhow::Result<App> {
        let workspace = match dir {
            Some(d) => d,
            None => default_workspace()?,
        };
        if workspace.is_file() {
            anyhow::bail!(
                "workspace {} is a file, not a directory",
                workspace.display()
            );
        }
        let store = Store::open(&workspace)
            .with_context(|| format!("cannot open workspace {}", workspace.display()))?;
        let created = store
            .init_workspace()
            .with_context(|| format!("cannot set up workspace {}", workspace.display()))?;
        if created {
            tracing::info!("created workspace {}", workspace.display());
        }
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

/// Print `value` as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    emit(format_args!("{}", serde_json::to_string_pretty(value)?));
    Ok(())
}

/// A date for humans: `YYYY-MM-DD HH:MM` (UTC), or `-` for 0.
pub fn show_time(ms: i64) -> String {
    if ms <= 0 {
        return "-".into();
    }
    let s = sidenote_store::format_time(ms);
    // 2024-03-15T12:00:00.000Z -> 2024-03-15 12:00
    match (s.get(0..10), s.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => s,
    }
}

/// Write one line of command output to stdout. A closed pipe (`sidenote … | head`) ends the
/// process quietly instead of panicking.
pub fn emit(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write output: {e}");
        std::process::exit(1);
    }
}

/// `println!` for command output, through [`emit`].
#[macro_export]
macro_rules! out {
    () => { $crate::app::emit(format_args!("")) };
    ($($t:tt)*) => { $crate::app::emit(format_args!($($t)*)) };
}
