//! Conversations persisted per note (key = the note id) and one workspace-wide (key
//! `workspace`), in the panel's own table of the workspace database
//! (`panel_conversations`, created on first use on a separate connection).
//!
//! Each row keeps two lists: `history`, the model messages the next turn continues from, and
//! `items`, what the sidebar shows (user messages; replies with their activity lines,
//! RenderSpecs, errors and how many workspace writes the turn made).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;
use sidenote_ai::Message;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The workspace-wide conversation's key.
pub const WORKSPACE_KEY: &str = "workspace";

/// At most this many model messages are kept as history (older ones are dropped).
const MAX_HISTORY: usize = 60;

/// A stored conversation.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    pub history: Vec<Message>,
    pub items: Vec<Value>,
}

/// The conversation table. Cheap to clone.
#[derive(Clone)]
pub struct Conversations {
    conn: Arc<Mutex<Connection>>,
}

impl Conversations {
    /// Open `<workspace>/sidenote.db` and create the table if needed.
    pub fn open(workspace: &Path) -> anyhow::Result<Conversations> {
        let conn = Connection::open(workspace.join("sidenote.db"))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS panel_conversations (
                 key TEXT PRIMARY KEY,
                 history TEXT NOT NULL,
                 items TEXT NOT NULL,
                 updated_time INTEGER NOT NULL
             )",
        )?;
        Ok(Conversations {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The conversation under `key` (empty when there is none).
    pub fn load(&self, key: &str) -> anyhow::Result<Conversation> {
        let row: Option<(String, String)> = self
            .conn()
            .query_row(
                "SELECT history, items FROM panel_conversations WHERE key = ?1",
                params![key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((history, items)) = row else {
            return Ok(Conversation::default());
        };
        // A row written by another version that does not parse is treated as empty rather
        // than making the sidebar unusable.
        Ok(Conversation {
            history: serde_json::from_str(&history).unwrap_or_default(),
            items: serde_json::from_str(&items).unwrap_or_default(),
        })
    }

    /// Append one turn (its messages and display items).
    pub fn append(
        &self,
        key: &str,
        messages: Vec<Message>,
        items: Vec<Value>,
    ) -> anyhow::Result<()> {
        let mut c = self.load(key)?;
        c.history.extend(messages);
        if c.history.len() > MAX_HISTORY {
            let cut = c.history.len() - MAX_HISTORY;
            // start the kept history at a user message so no tool result loses its call
            let start = c.history[cut..]
                .iter()
                .position(|m| matches!(m, Message::User { .. }))
                .map_or(c.history.len(), |p| cut + p);
            c.history.drain(..start);
        }
        c.items.extend(items);
        self.conn().execute(
            "INSERT INTO panel_conversations (key, history, items, updated_time)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(key) DO UPDATE SET history = ?2, items = ?3, updated_time = ?4",
            params![
                key,
                serde_json::to_string(&c.history)?,
                serde_json::to_string(&c.items)?,
                sidenote_store::now_ms()
            ],
        )?;
        Ok(())
    }

    /// Forget the conversation under `key`. Returns whether there was one.
    pub fn reset(&self, key: &str) -> anyhow::Result<bool> {
        Ok(self.conn().execute(
            "DELETE FROM panel_conversations WHERE key = ?1",
            params![key],
        )? > 0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn conversations_persist_append_and_reset() {
        let dir = tempfile::tempdir().unwrap();
        let c = Conversations::open(dir.path()).unwrap();
        assert!(c.load("n1").unwrap().items.is_empty());
        c.append(
            "n1",
            vec![Message::user("hi"), Message::assistant("hello")],
            vec![json!({"role": "user", "text": "hi"})],
        )
        .unwrap();
        // reopened from disk
        let c2 = Conversations::open(dir.path()).unwrap();
        let got = c2.load("n1").unwrap();
        assert_eq!(
            got.history,
            vec![Message::user("hi"), Message::assistant("hello")]
        );
        assert_eq!(got.items, vec![json!({"role": "user", "text": "hi"})]);
        assert!(c2.load(WORKSPACE_KEY).unwrap().history.is_empty());
        assert!(c2.reset("n1").unwrap());
        assert!(!c2.reset("n1").unwrap());
        assert!(c2.load("n1").unwrap().items.is_empty());
    }

    #[test]
    fn long_histories_are_cut_at_a_user_message() {
        let dir = tempfile::tempdir().unwrap();
        let c = Conversations::open(dir.path()).unwrap();
        for i in 0..40 {
            c.append(
                "k",
                vec![
                    Message::user(format!("q{i}")),
                    Message::assistant(format!("a{i}")),
                ],
                vec![],
            )
            .unwrap();
        }
        let h = c.load("k").unwrap().history;
        assert!(h.len() <= MAX_HISTORY);
        assert!(matches!(&h[0], Message::User { .. }));
        assert_eq!(h.last(), Some(&Message::assistant("a39")));
    }
}
