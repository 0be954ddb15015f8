//! First-run setup: an API token and a short "Welcome" notebook that explains the app.

use crate::store::create_note_tx;
use crate::*;

/// Setting that records that the welcome notebook was created (so deleting it is final).
pub const WELCOME_DONE_KEY: &str = "sidenote.welcomeCreated";
/// The bearer token for the HTTP API and `/mcp`.
pub const API_TOKEN_KEY: &str = "api.token";

const WELCOME_TITLE: &str = "Welcome to sidenote";
const WELCOME_BODY: &str = "\
sidenote keeps your notes in one local folder (the *workspace*): a SQLite file plus \
`resources/` for attachments. Nothing leaves your machine unless you point the AI \
sidebar at a remote provider.

## Try it

- `sidenote note create --title \"First note\" --body \"Hello\"` makes a note.
- `sidenote search \"hello\"` finds it. The query language is Joplin's: \
`tag:idea`, `notebook:Work`, `\"exact phrase\"`, `type:todo iscompleted:0`, `-word`, `created:day-7`.
- `sidenote import ~/notes` brings in a folder of Markdown files, a Joplin RAW export or a \
`.jex` archive; `sidenote export DIR` writes everything back out as Markdown.
- `sidenote config list` shows the settings; `sidenote serve` opens the panel with the AI sidebar.

## The AI sidebar

The sidebar is an agent with tools: it can search and read your notes, and propose edits \
that you accept or reject one by one. Every change, by you, the agent, an MCP client or a \
plugin, is recorded in a journal, so any turn can be reviewed and reverted.
";

impl Store {
    /// First-run setup, safe to call on every start: creates `api.token` (32 hex) when
    /// missing, and the "Welcome" notebook with its note once per workspace. Returns true
    /// when the welcome notebook was created now. Seed content is not journaled.
    pub fn init_workspace(&self) -> Result<bool> {
        self.write(|tx| {
            let get = |k: &str| -> Result<Option<String>> {
                use rusqlite::OptionalExtension;
                Ok(tx
                    .query_row("SELECT value FROM settings WHERE key = ?1", [k], |r| {
                        r.get(0)
                    })
                    .optional()?)
            };
            let set = |k: &str, v: &str| -> Result<()> {
                tx.execute(
                    "INSERT INTO settings(key, value) VALUES (?1, ?2)
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [k, v],
                )?;
                Ok(())
            };
            if get(API_TOKEN_KEY)?.filter(|t| !t.is_empty()).is_none() {
                set(API_TOKEN_KEY, &new_id())?;
            }
            if get(WELCOME_DONE_KEY)?.is_some() {
                return Ok(false);
            }
            let now = now_ms();
            let nb = Notebook {
                id: new_id(),
                title: "Welcome".into(),
                parent_id: None,
                created_time: now,
                updated_time: now,
            };
            crate::store::insert_notebook(tx, &nb)?;
            let note = create_note_tx(
                tx,
                "cli",
                NewNote {
                    parent_id: Some(nb.id.clone()),
                    title: WELCOME_TITLE.into(),
                    body: WELCOME_BODY.into(),
                    ..Default::default()
                },
            )?;
            // seed content: drop the journal row create_note_tx wrote
            tx.execute(
                "DELETE FROM journal WHERE item_id = ?1 AND kind = 'note_create'",
                [&note.id],
            )?;
            set(WELCOME_DONE_KEY, "1")?;
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn first_run_once() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(d.path()).unwrap();
        assert!(s.init_workspace().unwrap());
        let token = s.setting(API_TOKEN_KEY).unwrap().unwrap();
        assert!(is_id(&token));
        assert!(!s.init_workspace().unwrap());
        assert_eq!(s.setting(API_TOKEN_KEY).unwrap().unwrap(), token);
        let nbs = s.list_notebooks().unwrap();
        let w = nbs.iter().find(|n| n.title == "Welcome").unwrap();
        assert_eq!(w.note_count, 1);
        assert_eq!(
            s.search("workspace", 5).unwrap().results[0].title,
            WELCOME_TITLE
        );
        assert_eq!(s.journal_head().unwrap(), 0);
        // new notes still go to the default notebook, not Welcome
        assert_ne!(s.default_notebook_id().unwrap(), w.id);
    }
}
