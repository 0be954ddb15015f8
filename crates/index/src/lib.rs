//! `sidenote-index` — semantic search over the notes.
//!
//! - [`chunk`]: heading- and paragraph-aware Markdown chunks keyed by content hash.
//! - [`embed`]: the [`Embedder`] trait; the local all-MiniLM-L6-v2 on candle (feature
//!   `local-model`), OpenAI-compatible `/v1/embeddings`, and a deterministic test embedder.
//! - [`SemanticIndex`]: chunks + f32 vectors in SQLite beside the notes (`sem_*` tables in
//!   `sidenote.db`, created by this crate), an in-memory vector set scanned in Rust, scopes,
//!   relevance presets, query by text or by note, hybrid reciprocal-rank fusion with the
//!   store's FTS5 search, incremental journal-driven indexing ([`SemanticIndex::sync`]).
//! - [`BackgroundIndexer`]: a thread that keeps the index current.
//! - [`model`]: checking and installing the local model directory.
//!
//! ```no_run
//! # fn demo(store: sidenote_store::Store) -> sidenote_index::Result<()> {
//! use sidenote_index::*;
//! let choice = embed::resolve_choice(store.root(), &|_| None, &|k| std::env::var(k).ok())?;
//! let index = SemanticIndex::open(store, embed::build(&choice)?)?;
//! index.sync(&mut |_| {}, None)?;
//! for hit in index.search(&SearchRequest::text("the note about pet sitters for my dog"))? {
//!     println!("{:.3} {} {}", hit.score, hit.note_id, hit.text);
//! }
//! # Ok(()) }
//! ```

pub mod background;
pub mod chunk;
pub mod embed;
pub mod error;
pub mod index;
pub mod model;
pub mod vectors;

pub use background::BackgroundIndexer;
pub use embed::{EmbedChoice, Embedder, HashEmbedder};
pub use error::{IndexError, Result};
pub use index::{
    Hit, Preset, Presets, Progress, Query, Relevance, Scope, SearchRequest, SemanticIndex, Status,
    SyncReport,
};
