//! `sidenote index [--rebuild] [--status] [--json]`: build or update the semantic index.

use crate::app::{App, print_json};
use crate::out;
use indicatif::{ProgressBar, ProgressStyle};

#[derive(clap::Args)]
pub struct Args {
    /// Drop every vector and embed all notes again.
    #[arg(long, conflicts_with = "status")]
    pub rebuild: bool,
    /// Show progress (indexed/total notes, chunks, model) without indexing.
    #[arg(long)]
    pub status: bool,
    /// Print the status / the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn run(app: &App, args: Args) -> anyhow::Result<()> {
    let index = crate::semantic::open_index(app)?;
    if args.status {
        let status = tokio::task::spawn_blocking({
            let index = index.clone();
            move || index.status()
        })
        .await??;
        if args.json {
            return print_json(&serde_json::json!({
                "model": status.model,
                "indexed_notes": status.indexed_notes,
                "total_notes": status.total_notes,
                "chunks": status.chunks,
                "complete": status.is_complete(),
                "journal_cursor": status.cursor,
                "journal_head": status.head,
            }));
        }
        out!("{status}");
        return Ok(());
    }

    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} indexing {bar:30} {pos}/{len} notes ({elapsed})")
            .map_err(|e| anyhow::anyhow!("progress bar template: {e}"))?,
    );
    let started = std::time::Instant::now();
    let (report, status) = tokio::task::spawn_blocking({
        let index = index.clone();
        let bar = bar.clone();
        let rebuild = args.rebuild;
        move || {
            if rebuild {
                index.clear()?;
            }
            let report = index.sync(
                &mut |p| {
                    bar.set_length(p.total as u64);
                    bar.set_position(p.done as u64);
                },
                None,
            )?;
            Ok::<_, sidenote_index::IndexError>((report, index.status()?))
        }
    })
    .await??;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        return print_json(&serde_json::json!({
            "report": report,
            "model": status.model,
            "indexed_notes": status.indexed_notes,
            "total_notes": status.total_notes,
            "chunks": status.chunks,
            "seconds": secs,
        }));
    }
    out!(
        "indexed {} notes ({} chunks embedded, {} reused, {} unchanged notes, {} removed) in {:.1}s",
        report.notes_indexed,
        report.chunks_embedded,
        report.chunks_reused,
        report.notes_unchanged,
        report.notes_removed,
        secs
    );
    out!("{status}");
    Ok(())
}
