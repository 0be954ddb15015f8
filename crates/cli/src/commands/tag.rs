//! `sidenote tag list`.

use crate::app::{App, print_json};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List tags (by default only those on at least one note that is not in the trash).
    List {
        /// Include tags that no note uses.
        #[arg(long)]
        all: bool,
        /// Print JSON (`{"tags":[{id,title}]}`).
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::List { all, json } => {
            let tags = app.store.list_tags(!all)?;
            if json {
                return print_json(&serde_json::json!({ "tags": tags }));
            }
            if tags.is_empty() {
                crate::out!("no tags");
            }
            for t in tags {
                crate::out!("{}  {}", t.id, t.title);
            }
        }
    }
    Ok(())
}
