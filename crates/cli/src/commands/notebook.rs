//! `sidenote notebook list|create`.

use crate::app::{App, print_json};
use sidenote_store::{Actor, NotebookInfo, Store, is_id};
use std::collections::HashMap;

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Show the notebook tree with direct note counts.
    List {
        /// Print a flat JSON list (`id`, `title`, `parent_id`, `note_count`).
        #[arg(long)]
        json: bool,
    },
    /// Create a notebook.
    Create {
        title: String,
        /// Parent notebook (id or title).
        #[arg(long)]
        parent: Option<String>,
        /// Print the notebook as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// A notebook given by id or by (case-insensitive, unique) title.
pub fn resolve_notebook(store: &Store, id_or_title: &str) -> anyhow::Result<String> {
    if is_id(id_or_title) {
        if store.notebook(id_or_title)?.is_some() {
            return Ok(id_or_title.to_string());
        }
        anyhow::bail!("Notebook not found: {id_or_title}");
    }
    let want = id_or_title.trim().to_lowercase();
    let matches: Vec<_> = store
        .all_notebooks()?
        .into_iter()
        .filter(|n| n.title.to_lowercase() == want)
        .collect();
    match matches.as_slice() {
        [one] => Ok(one.id.clone()),
        [] => anyhow::bail!("no notebook titled '{id_or_title}' (see `sidenote notebook list`)"),
        many => anyhow::bail!(
            "{} notebooks are titled '{id_or_title}'; pass one of their ids: {}",
            many.len(),
            many.iter()
                .map(|n| n.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn print_tree(all: &[NotebookInfo], default_id: &str) {
    let mut children: HashMap<Option<&str>, Vec<&NotebookInfo>> = HashMap::new();
    let ids: std::collections::HashSet<&str> = all.iter().map(|n| n.id.as_str()).collect();
    for n in all {
        let parent = n.parent_id.as_deref().filter(|p| ids.contains(p));
        children.entry(parent).or_default().push(n);
    }
    fn walk(
        parent: Option<&str>,
        depth: usize,
        children: &HashMap<Option<&str>, Vec<&NotebookInfo>>,
        default_id: &str,
        seen: &mut std::collections::HashSet<String>,
    ) {
        for n in children.get(&parent).map(Vec::as_slice).unwrap_or(&[]) {
            if !seen.insert(n.id.clone()) {
                continue;
            }
            let mark = if n.id == default_id {
                "  (default)"
            } else {
                ""
            };
            crate::out!(
                "{}  {}{} ({}){mark}",
                n.id,
                "  ".repeat(depth),
                n.title,
                n.note_count
            );
            walk(Some(&n.id), depth + 1, children, default_id, seen);
        }
    }
    let mut seen = std::collections::HashSet::new();
    walk(None, 0, &children, default_id, &mut seen);
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::List { json } => {
            let all = app.store.list_notebooks()?;
            if json {
                return print_json(&serde_json::json!({ "notebooks": all }));
            }
            print_tree(&all, &app.store.default_notebook_id()?);
        }
        Cmd::Create {
            title,
            parent,
            json,
        } => {
            let parent = match parent {
                Some(p) => Some(resolve_notebook(&app.store, &p)?),
                None => None,
            };
            let nb = app
                .store
                .create_notebook(&Actor::Cli, &title, parent.as_deref())?;
            if json {
                return print_json(&nb);
            }
            crate::out!("{}", nb.id);
        }
    }
    Ok(())
}
