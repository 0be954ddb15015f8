//! `sidenote note list|show|create|edit|trash|restore`.

use super::notebook::resolve_notebook;
use crate::app::{App, print_json, show_time};
use anyhow::Context;
use sidenote_store::{Actor, NewNote, Note, NotePatch, Store, is_id, now_ms};
use std::io::Read;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List notes, most recently updated first.
    List {
        /// Only notes directly in this notebook (id or title).
        #[arg(long)]
        notebook: Option<String>,
        /// Include notes in the trash.
        #[arg(long)]
        trashed: bool,
        #[arg(long, short = 'n', default_value_t = 50)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
    /// Show one note with its metadata and tags.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Create a note; prints its id.
    Create {
        #[arg(long)]
        title: String,
        /// The Markdown body (`-` reads stdin).
        #[arg(long, conflicts_with = "body_file")]
        body: Option<String>,
        /// Read the body from a file.
        #[arg(long)]
        body_file: Option<PathBuf>,
        /// Notebook (id or title); default: the default notebook.
        #[arg(long)]
        notebook: Option<String>,
        /// Make it a to-do.
        #[arg(long)]
        todo: bool,
        /// Tag to add (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Change a note; only the options given change.
    Edit {
        id: String,
        #[arg(long)]
        title: Option<String>,
        /// Replace the body (`-` reads stdin).
        #[arg(long, conflicts_with_all = ["body_file", "append"])]
        body: Option<String>,
        #[arg(long, conflicts_with = "append")]
        body_file: Option<PathBuf>,
        /// Append text to the body (no separator is added).
        #[arg(long)]
        append: Option<String>,
        /// Move to this notebook (id or title).
        #[arg(long)]
        notebook: Option<String>,
        /// Mark a to-do completed (true) or not (false).
        #[arg(long)]
        completed: Option<bool>,
        /// Tag to add (repeatable).
        #[arg(long = "tag")]
        tags: Vec<String>,
        /// Tag to remove (repeatable).
        #[arg(long = "untag")]
        untags: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Move a note to the trash (reversible with `restore`).
    Trash { id: String },
    /// Bring a note back from the trash.
    Restore { id: String },
}

fn read_body(body: Option<String>, file: Option<PathBuf>) -> anyhow::Result<Option<String>> {
    if let Some(f) = file {
        let text =
            std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        return Ok(Some(text));
    }
    match body.as_deref() {
        Some("-") => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("cannot read the body from stdin")?;
            Ok(Some(s))
        }
        _ => Ok(body),
    }
}

fn load(store: &Store, id: &str) -> anyhow::Result<Note> {
    if !is_id(id) {
        anyhow::bail!("bad note id '{id}': expected 32 lowercase hex characters");
    }
    store
        .note(id)?
        .ok_or_else(|| anyhow::anyhow!("Note not found: {id}"))
}

fn tag_titles(store: &Store, note_id: &str) -> anyhow::Result<Vec<String>> {
    Ok(store
        .note_tags(note_id)?
        .into_iter()
        .map(|t| t.title)
        .collect())
}

fn show(store: &Store, note: &Note) -> anyhow::Result<()> {
    let tags = tag_titles(store, &note.id)?;
    let nb = store
        .notebook(&note.parent_id)?
        .map(|n| n.title)
        .unwrap_or_else(|| note.parent_id.clone());
    crate::out!("# {}", note.title);
    crate::out!("id:       {}", note.id);
    crate::out!("notebook: {nb} ({})", note.parent_id);
    crate::out!("created:  {}", show_time(note.created_time));
    crate::out!("updated:  {}", show_time(note.updated_time));
    if !tags.is_empty() {
        crate::out!("tags:     {}", tags.join(", "));
    }
    if note.is_todo {
        let state = if note.todo_completed > 0 {
            "done"
        } else {
            "open"
        };
        crate::out!("to-do:    {state}, due {}", show_time(note.todo_due));
    }
    if !note.source_url.is_empty() {
        crate::out!("source:   {}", note.source_url);
    }
    if note.is_trashed() {
        crate::out!("trashed:  {}", show_time(note.deleted_time));
    }
    crate::out!();
    crate::out!("{}", note.body);
    Ok(())
}

fn note_json(store: &Store, note: &Note) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(note)?;
    let tags = tag_titles(store, &note.id)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("tags".into(), serde_json::json!(tags));
    }
    Ok(v)
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    let store = &app.store;
    let actor = Actor::Cli;
    match cmd {
        Cmd::List {
            notebook,
            trashed,
            limit,
            json,
        } => {
            let nb = match notebook {
                Some(n) => Some(resolve_notebook(store, &n)?),
                None => None,
            };
            let notes = store.list_notes(nb.as_deref(), trashed, limit)?;
            if json {
                return print_json(&serde_json::json!({ "notes": notes }));
            }
            if notes.is_empty() {
                crate::out!("no notes");
            }
            for n in notes {
                let mut flags = String::new();
                if n.is_todo {
                    flags.push_str(if n.todo_completed > 0 { "[x] " } else { "[ ] " });
                }
                if n.deleted_time > 0 {
                    flags.push_str("(trashed) ");
                }
                let title = if n.title.is_empty() {
                    "(untitled)"
                } else {
                    &n.title
                };
                crate::out!("{}  {}  {flags}{title}", n.id, show_time(n.updated_time));
            }
        }
        Cmd::Show { id, json } => {
            let note = load(store, &id)?;
            if json {
                return print_json(&note_json(store, &note)?);
            }
            show(store, &note)?;
        }
        Cmd::Create {
            title,
            body,
            body_file,
            notebook,
            todo,
            tags,
            json,
        } => {
            let body = read_body(body, body_file)?.unwrap_or_default();
            let parent_id = match notebook {
                Some(n) => Some(resolve_notebook(store, &n)?),
                None => None,
            };
            if title.trim().is_empty() {
                anyhow::bail!("the title must not be empty");
            }
            let note = store.create_note(
                &actor,
                NewNote {
                    parent_id,
                    title,
                    body,
                    is_todo: todo,
                    ..Default::default()
                },
            )?;
            for t in &tags {
                store.add_tag(&actor, &note.id, t)?;
            }
            if json {
                return print_json(&note_json(store, &note)?);
            }
            crate::out!("{}", note.id);
        }
        Cmd::Edit {
            id,
            title,
            body,
            body_file,
            append,
            notebook,
            completed,
            tags,
            untags,
            json,
        } => {
            let note = load(store, &id)?;
            let mut patch = NotePatch {
                title,
                ..Default::default()
            };
            patch.body = read_body(body, body_file)?;
            if let Some(a) = append {
                patch.body = Some(format!("{}{a}", note.body));
            }
            if let Some(n) = notebook {
                patch.parent_id = Some(resolve_notebook(store, &n)?);
            }
            if let Some(c) = completed {
                patch.todo_completed = Some(if c { now_ms() } else { 0 });
            }
            let changes_note = patch.title.is_some()
                || patch.body.is_some()
                || patch.parent_id.is_some()
                || patch.todo_completed.is_some();
            if !changes_note && tags.is_empty() && untags.is_empty() {
                anyhow::bail!(
                    "nothing to change: pass --title, --body, --append, --notebook, --completed, --tag or --untag"
                );
            }
            if changes_note {
                patch.if_updated_time = Some(note.updated_time);
                store.update_note(&actor, &id, patch)?;
            }
            for t in &tags {
                store.add_tag(&actor, &id, t)?;
            }
            for t in &untags {
                if !store.remove_tag(&actor, &id, t)? {
                    eprintln!("note: the note had no tag '{t}'");
                }
            }
            let note = load(store, &id)?;
            if json {
                return print_json(&note_json(store, &note)?);
            }
            crate::out!("{} updated", note.id);
        }
        Cmd::Trash { id } => {
            load(store, &id)?;
            store.trash_note(&actor, &id)?;
            crate::out!("{id} moved to the trash (undo with `sidenote note restore {id}`)");
        }
        Cmd::Restore { id } => {
            load(store, &id)?;
            store.restore_note(&actor, &id)?;
            crate::out!("{id} restored");
        }
    }
    Ok(())
}
