//! `sidenote import PATH`: a Markdown folder, a Joplin RAW export directory or a `.jex`.

use crate::app::{App, print_json};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use sidenote_store::{Actor, ImportFormat};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A folder of Markdown files (sub-folders become notebooks), a Joplin RAW export
    /// directory, or a Joplin .jex archive.
    pub path: PathBuf,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(app: &App, args: Args) -> anyhow::Result<()> {
    if !args.path.exists() {
        anyhow::bail!("{} does not exist", args.path.display());
    }
    let format = ImportFormat::detect(&args.path)?;
    let bar = if std::io::stderr().is_terminal() && !args.json {
        let b = ProgressBar::new(0);
        if let Ok(style) =
            ProgressStyle::with_template("{spinner} importing [{bar:40}] {pos}/{len} ({eta} left)")
        {
            b.set_style(style.progress_chars("=> "));
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let report = app
        .store
        .import(&args.path, &Actor::Import, &mut |p| {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
        })
        .with_context(|| format!("cannot import {}", args.path.display()))?;
    bar.finish_and_clear();
    if args.json {
        return print_json(&report);
    }
    let kind = match format {
        ImportFormat::Markdown => "Markdown folder",
        ImportFormat::JoplinRaw => "Joplin RAW export",
        ImportFormat::Jex => "Joplin .jex archive",
    };
    crate::out!(
        "{} ({kind}: {} notebooks, {} tags, {} attachments created)",
        report.summary(),
        report.notebooks,
        report.tags,
        report.resources
    );
    for s in &report.skipped {
        crate::out!("  skipped {}: {}", s.path.display(), s.reason);
    }
    Ok(())
}
