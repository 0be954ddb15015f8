//! `sidenote chat [--note ID] [--selection START..END] [--apply] [--json] MESSAGE`: one agent
//! turn from the command line. Streams the reply and prints tool activity and edit diffs;
//! `--json` prints one object `{reply, edits, transcript, usage, turn_id}` (on failure
//! `{error: {code, message}, transcript}` and a non-zero exit). Edits on the focused note stay
//! pending unless `--apply` accepts them all (saved once, as `agent:<turn_id>`).

use crate::app::App;
use anyhow::{Context, bail};
use serde_json::json;
use sidenote_agent::{
    Agent, AgentError, CancellationToken, FocusedNote, NoteContext, TurnEvent, TurnRequest,
};
use sidenote_editor::EditorSession;
use sidenote_store::{Actor, NotePatch};
use std::io::Write;
use std::ops::Range;
use std::sync::{Arc, Mutex};

#[derive(clap::Args)]
pub struct Args {
    /// Focus this note (id): the agent may then propose edits to it.
    #[arg(long)]
    note: Option<String>,
    /// Select characters START..END of the note (Unicode characters, END exclusive): the
    /// agent may then change only the selection.
    #[arg(long, requires = "note", value_parser = parse_range, value_name = "START..END")]
    selection: Option<Range<usize>>,
    /// Accept every edit the turn proposes and save the note (one revision).
    #[arg(long, requires = "note")]
    apply: bool,
    /// Print one JSON object instead of streaming text.
    #[arg(long)]
    json: bool,
    /// What to ask.
    #[arg(required = true, num_args = 1.., value_name = "MESSAGE")]
    message: Vec<String>,
}

fn parse_range(s: &str) -> Result<Range<usize>, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected START..END (character offsets), got {s:?}"))?;
    let start: usize = a
        .trim()
        .parse()
        .map_err(|_| format!("START must be a whole number, got {a:?}"))?;
    let end: usize = b
        .trim()
        .parse()
        .map_err(|_| format!("END must be a whole number, got {b:?}"))?;
    if start >= end {
        return Err(format!("the selection {start}..{end} is empty or reversed"));
    }
    Ok(start..end)
}

/// Print the `--json` failure object and fail.
fn fail_json(
    json_mode: bool,
    error: AgentError,
    transcript: serde_json::Value,
) -> anyhow::Result<()> {
    if json_mode {
        println!("{}", json!({"error": error, "transcript": transcript}));
    }
    bail!("{} ({})", error.message, error.code)
}

pub async fn run(app: &App, args: Args) -> anyhow::Result<()> {
    let store = app.store.clone();
    // settings + environment, privacy gate, usage recorded in the workspace (`sidenote ai usage`)
    let provider = match super::ai::provider(&store) {
        Ok(p) => p,
        Err(e) => {
            return fail_json(
                args.json,
                AgentError::new("not_configured", format!("{e:#}")),
                json!([]),
            );
        }
    };
    let tools = crate::toolset::Toolset::open(app, false).await?;
    let agent = Agent::new(provider, tools.registry.clone()).with_store(store.clone());

    // the focused note and its session
    let mut context = NoteContext::workspace();
    let mut session = None;
    let mut note_updated = 0;
    if let Some(id) = &args.note {
        let mut focused = match FocusedNote::load_versioned(&store, id) {
            Ok((f, updated)) => {
                note_updated = updated;
                f
            }
            Err(e) => {
                return fail_json(
                    args.json,
                    AgentError::invalid_request(e.to_string()),
                    json!([]),
                );
            }
        };
        let mut s = EditorSession::new(focused.id.clone(), focused.body.clone());
        if let Some(sel) = &args.selection {
            let len = s.len_chars();
            if sel.end > len {
                return fail_json(
                    args.json,
                    AgentError::invalid_request(format!(
                        "the selection {}..{} is past the end of the note ({len} characters)",
                        sel.start, sel.end
                    )),
                    json!([]),
                );
            }
            s.set_selection(Some(sel.clone()));
            focused.selection = Some(sel.clone());
        }
        context = NoteContext::with_note(focused);
        session = Some(Arc::new(Mutex::new(s)));
    }

    let cancel = CancellationToken::new();
    tokio::spawn({
        let cancel = cancel.clone();
        async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel.cancel();
            }
        }
    });
    let mut req = TurnRequest::new(context, args.message.join(" "));
    req.session = session.clone();
    req.cancel = cancel;
    // `--json` prints only the final object: no event stream to build and throw away
    let printer = (!args.json).then(|| {
        let (tx, rx) = tokio::sync::mpsc::channel(256);
        req.events = Some(tx);
        tokio::spawn(print_events(rx))
    });
    let outcome = agent.run(req).await;
    if let Some(printer) = printer {
        let _ = printer.await;
    }

    let done = match outcome {
        Ok(d) => d,
        Err(f) => {
            let transcript = serde_json::to_value(&f.transcript)?;
            return fail_json(args.json, f.error, transcript);
        }
    };
    let mut applied = None;
    if args.apply
        && let (Some(session), Some(id)) = (&session, &args.note)
    {
        let (outcome, text) = {
            let mut s = session.lock().unwrap_or_else(|p| p.into_inner());
            let o = s.accept_all();
            (o, s.text().to_string())
        };
        if outcome.changed {
            store
                .update_note(
                    &Actor::Agent(done.turn_id.clone()),
                    id,
                    NotePatch {
                        body: Some(text),
                        if_updated_time: Some(note_updated),
                        ..NotePatch::default()
                    },
                )
                .context("cannot save the accepted edits (was the note changed meanwhile?)")?;
        }
        applied = Some(outcome);
    }
    // report the edits' current status (accepted after --apply)
    let edits: Vec<_> = match &session {
        Some(s) => {
            let s = s.lock().unwrap_or_else(|p| p.into_inner());
            done.edits
                .iter()
                .map(|e| s.proposal(e.id).cloned().unwrap_or_else(|| e.clone()))
                .collect()
        }
        None => done.edits.clone(),
    };
    if args.json {
        let mut out = json!({
            "reply": done.reply,
            "edits": edits,
            "transcript": done.transcript,
            "usage": done.usage,
            "turn_id": done.turn_id,
        });
        if let Some(a) = &applied {
            out["applied"] = serde_json::to_value(a)?;
        }
        println!("{out}");
    } else {
        let mut out = std::io::stdout();
        match &applied {
            Some(a) if a.changed => {
                writeln!(out, "Applied {} edit(s) to the note.", a.accepted.len())?
            }
            Some(a) if !a.conflicts.is_empty() => writeln!(
                out,
                "{} edit(s) conflicted and were not applied.",
                a.conflicts.len()
            )?,
            _ if !edits.is_empty() => writeln!(
                out,
                "{} edit(s) pending — not applied (run again with --apply to accept them).",
                edits.len()
            )?,
            _ => {}
        }
        writeln!(out, "turn {}", done.turn_id)?;
    }
    Ok(())
}

/// Stream events as text: the reply as it arrives, one line per tool, edit diffs.
async fn print_events(mut rx: tokio::sync::mpsc::Receiver<TurnEvent>) {
    let mut out = std::io::stdout();
    let mut at_line_start = true;
    let newline = |out: &mut std::io::Stdout, at: &mut bool| {
        if !*at {
            let _ = writeln!(out);
            *at = true;
        }
    };
    while let Some(ev) = rx.recv().await {
        match ev {
            TurnEvent::TextDelta { text } => {
                let _ = write!(out, "{text}");
                at_line_start = text.ends_with('\n');
            }
            TurnEvent::ToolStart { activity, .. } => {
                newline(&mut out, &mut at_line_start);
                let _ = writeln!(out, "→ {activity}");
            }
            TurnEvent::ToolEnd {
                tool,
                activity,
                error,
                ..
            } => {
                newline(&mut out, &mut at_line_start);
                match error {
                    None => {
                        let _ = writeln!(out, "  ✓ {activity}");
                    }
                    Some(e) => {
                        let _ = writeln!(out, "  ✗ {tool}: {e}");
                    }
                }
            }
            TurnEvent::EditProposed { proposal } => {
                newline(&mut out, &mut at_line_start);
                let _ = writeln!(
                    out,
                    "Proposed edit #{} ({}): {}",
                    proposal.id, proposal.tool, proposal.summary
                );
                let _ = write!(out, "{}", proposal.unified_diff());
            }
            TurnEvent::Finished { .. } | TurnEvent::Failed { .. } => {
                newline(&mut out, &mut at_line_start);
            }
            TurnEvent::Started { .. } | TurnEvent::Step { .. } => {}
        }
        let _ = out.flush();
    }
}
