//! `sidenote turns list|revert`: the agent's turn journal.

use crate::app::App;
use sidenote_agent::turns::{format_time, list_turns, revert_turn};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Show recent agent turns and what each wrote.
    List {
        /// How many turns.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Restore every note a turn changed to its state before the turn (itself a turn that
    /// can be reverted). Notes changed by someone else since are reported, not overwritten.
    Revert {
        turn_id: String,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::List { limit, json } => {
            let turns = list_turns(&app.store, limit)?;
            if json {
                println!("{}", serde_json::to_string(&turns)?);
                return Ok(());
            }
            if turns.is_empty() {
                println!("No agent turn has written anything yet.");
            }
            for t in turns {
                println!(
                    "{}  {}  {} write(s)",
                    t.turn_id,
                    format_time(t.last_time),
                    t.writes.len()
                );
                for w in t.writes {
                    let kind = serde_json::to_value(w.kind)?;
                    let tag = w.tag.map(|t| format!(" [{t}]")).unwrap_or_default();
                    println!(
                        "    {:<15} {}{} ({})",
                        kind.as_str().unwrap_or("write"),
                        w.title.unwrap_or_default(),
                        tag,
                        w.item_id
                    );
                }
            }
            Ok(())
        }
        Cmd::Revert { turn_id, json } => {
            let report = revert_turn(&app.store, &turn_id)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
                return Ok(());
            }
            println!(
                "Reverted turn {} (as turn {}).",
                report.turn_id, report.revert_turn_id
            );
            for r in &report.reverted {
                println!("  reverted  {} ({}): {}", r.title, r.item_id, r.action);
            }
            for c in &report.conflicts {
                println!(
                    "  conflict  {} ({}): {} — left as is",
                    c.title, c.item_id, c.reason
                );
            }
            for s in &report.skipped {
                println!("  skipped   {} ({}): {}", s.title, s.item_id, s.reason);
            }
            Ok(())
        }
    }
}
