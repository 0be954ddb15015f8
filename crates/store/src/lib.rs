//! sidenote's note store: one SQLite file per workspace (WAL), notebooks, notes, tags,
//! resources, settings, and the write journal that records every change with its actor.
//!
//! The store knows nothing of AI. Every write method takes an [`Actor`] and appends a
//! [`JournalEntry`] in the same transaction as the write.
//!
//! PUBLIC API CONTRACT (other crates code against these signatures; keep them stable,
//! add methods freely):
//! - `Store::open(workspace_dir)` / `Store::clone()` (cheap, `Arc` inside, `Send + Sync`).
//! - notebooks, notes, tags, resources, settings, search, journal — see `impl Store` below.
//! - times are Unix milliseconds (`i64`); ids are 32-char lowercase hex.

#[doc(hidden)]
pub mod corpus;
mod db;
mod error;
mod export;
mod import;
mod search;
mod store;
mod types;
mod welcome;

pub use error::{QueryError, StoreError};
pub use export::ExportReport;
pub use import::{ImportFormat, ImportProgress, ImportReport, Skipped, format_time, parse_time};
pub use store::Store;
pub use types::*;
pub use welcome::{API_TOKEN_KEY, WELCOME_DONE_KEY};

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Make a new 32-char lowercase hex id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// True when `s` is a 32-char lowercase hex id.
pub fn is_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
