//! `sidenote export DIR`: every note as Markdown with front matter (re-importable).

use crate::app::{App, print_json};
use anyhow::Context;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Target directory (created if missing; must be empty).
    pub dir: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(app: &App, args: Args) -> anyhow::Result<()> {
    let r = app
        .store
        .export_markdown(&args.dir)
        .with_context(|| format!("cannot export to {}", args.dir.display()))?;
    if args.json {
        return print_json(&r);
    }
    crate::out!(
        "exported {} notes, {} notebooks, {} attachments to {}",
        r.notes,
        r.notebooks,
        r.resources,
        args.dir.display()
    );
    Ok(())
}
