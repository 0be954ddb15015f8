//! The workspace and query of the `search_notes` benchmarks, shared so the three figures
//! line up: the store's own search bench (`sidenote-store --bench search`, "plain" query at
//! 10k notes), this crate's in-process registry call, and the `mcp` crate's call over MCP
//! HTTP. All three use the store's synthetic corpus with the same seed and query.

use sidenote_store::{Store, StoreError};

/// Seed of `sidenote_store::corpus::load` (the store bench uses 42 too).
pub const BENCH_SEED: u64 = 42;
/// Notes in the benchmark workspace.
pub const BENCH_NOTES: usize = 10_000;
/// The query sent to `search_notes` (default limit, 20): the store bench's "plain" query.
pub const BENCH_QUERY: &str = "meeting budget";
/// A cheap query (few matches: the store bench's "rare" query), where the per-call overhead
/// of the transport dominates.
pub const BENCH_QUERY_RARE: &str = "zanzibar";

/// Fill `store` with `n` synthetic notes (10 notebooks, tags) from the store's corpus.
pub fn populate(store: &Store, n: usize) -> Result<(), StoreError> {
    sidenote_store::corpus::load(store, n, BENCH_SEED)
}
