//! The composition root of semantic search: opens the workspace's semantic index with the
//! configured embedder and plugs it into the `semantic_search_notes` tool's slot.
//!
//! `sidenote serve` / `sidenote mcp` (and the chat) call [`attach`] once after building the
//! tool registry and keep the returned [`BackgroundIndexer`] alive for as long as they run.
// `attach` and the adapter are wired into serve/mcp by their owners; until then only the
// tests use them.
#![allow(dead_code)]

use crate::app::App;
use sidenote_index::embed::{self, EmbedChoice};
use sidenote_index::{
    BackgroundIndexer, IndexError, Query, Relevance, Scope, SearchRequest, SemanticIndex,
};
use sidenote_tools::ToolError;
use sidenote_tools::builtin::{
    Relevance as ToolRelevance, SemanticHit, SemanticQuery, SemanticScope, SemanticSearch,
    SemanticSlot,
};
use std::sync::Arc;
use std::time::Duration;

/// How often the background indexer checks the journal (it is also poked on demand).
pub const INDEX_INTERVAL: Duration = Duration::from_secs(2);

/// The settings lookup for the embedder (settings first, environment overrides).
pub fn embed_choice(app: &App) -> Result<EmbedChoice, IndexError> {
    let store = app.store.clone();
    embed::resolve_choice(
        &app.workspace,
        &move |k| store.setting(k).ok().flatten(),
        &|k| std::env::var(k).ok(),
    )
}

/// Open the semantic index with the configured embedder (loads the local model).
pub fn open_index(app: &App) -> Result<Arc<SemanticIndex>, IndexError> {
    let choice = embed_choice(app)?;
    let embedder = embed::build(&choice)?;
    Ok(Arc::new(SemanticIndex::open(app.store.clone(), embedder)?))
}

/// Whether `semantic_search_notes` fuses keyword ranks in (`ai.embeddings.hybrid`, default on).
pub fn hybrid_enabled(app: &App) -> bool {
    !matches!(
        app.store
            .setting("ai.embeddings.hybrid")
            .ok()
            .flatten()
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref(),
        Some("false" | "0" | "no" | "off")
    )
}

/// Fill `slot` with the workspace's semantic index and start the background indexer.
///
/// - embeddings off (`ai.embeddings.provider = off`): the slot is left empty, `Ok(None)`;
/// - no usable embedder (model not installed, bad config): the slot answers every search
///   with a recoverable error saying exactly how to fix it, `Ok(None)`;
/// - otherwise the slot holds the index and the returned indexer keeps it current (drop it
///   to stop indexing).
pub fn attach(app: &App, slot: &SemanticSlot) -> anyhow::Result<Option<BackgroundIndexer>> {
    let choice = match embed_choice(app) {
        Ok(EmbedChoice::Off) => {
            slot.set(None);
            return Ok(None);
        }
        Ok(c) => c,
        Err(e) => {
            slot.set(Some(Arc::new(Unavailable(e.to_string()))));
            return Ok(None);
        }
    };
    let embedder = match embed::build(&choice) {
        Ok(e) => e,
        Err(e) if e.is_recoverable() => {
            tracing::warn!("semantic search unavailable: {e}");
            slot.set(Some(Arc::new(Unavailable(e.to_string()))));
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let index = Arc::new(SemanticIndex::open(app.store.clone(), embedder)?);
    let indexer = BackgroundIndexer::spawn(index.clone(), INDEX_INTERVAL)?;
    slot.set(Some(Arc::new(ToolAdapter::new(index, hybrid_enabled(app)))));
    Ok(Some(indexer))
}

/// `semantic_search_notes` on top of a [`SemanticIndex`].
pub struct ToolAdapter {
    index: Arc<SemanticIndex>,
    hybrid: bool,
}

impl ToolAdapter {
    pub fn new(index: Arc<SemanticIndex>, hybrid: bool) -> Self {
        ToolAdapter { index, hybrid }
    }
}

fn tool_error(e: IndexError) -> ToolError {
    if e.is_recoverable() {
        ToolError::recoverable(e)
    } else {
        ToolError::internal(e)
    }
}

#[async_trait::async_trait]
impl SemanticSearch for ToolAdapter {
    async fn search(&self, q: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError> {
        let index = self.index.clone();
        let req = SearchRequest {
            query: Query::Text(q.query),
            scope: match q.scope {
                SemanticScope::All => Scope::All,
                SemanticScope::Notebook(id) => Scope::Notebook(id),
                SemanticScope::Tag(id) => Scope::Tag(id),
            },
            relevance: match q.relevance {
                ToolRelevance::Strict => Relevance::Strict,
                ToolRelevance::Normal => Relevance::Normal,
                ToolRelevance::Loose => Relevance::Loose,
            },
            hybrid: self.hybrid,
            limit: None,
        };
        let (hits, status) = tokio::task::spawn_blocking(move || {
            let hits = index.search(&req)?;
            let status = index.status()?;
            Ok::<_, IndexError>((hits, status))
        })
        .await
        .map_err(|e| ToolError::internal(format!("semantic search task failed: {e}")))?
        .map_err(tool_error)?;
        if hits.is_empty() && !status.is_complete() {
            // Tell the model why there may be nothing yet instead of a bare empty list.
            return Err(ToolError::recoverable(format!(
                "No passages found yet: the semantic index is still being built ({}/{} notes \
                 indexed). Try again shortly, or use search_notes (keyword search).",
                status.indexed_notes, status.total_notes
            )));
        }
        Ok(hits
            .into_iter()
            .map(|h| SemanticHit {
                note_id: h.note_id,
                chunk_index: h.chunk_index,
                chunk_text: h.text,
                score: h.score,
            })
            .collect())
    }
}

/// Fills the slot when semantic search cannot run: every call explains why and how to fix it.
pub struct Unavailable(pub String);

#[async_trait::async_trait]
impl SemanticSearch for Unavailable {
    async fn search(&self, _q: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError> {
        Err(ToolError::recoverable(format!(
            "semantic search is not available: {} Meanwhile use search_notes (keyword search).",
            self.0
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use sidenote_index::HashEmbedder;
    use sidenote_store::{Actor, NewNote};

    fn app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(Some(dir.path().to_path_buf())).unwrap();
        (dir, app)
    }

    fn query(q: &str, scope: SemanticScope) -> SemanticQuery {
        SemanticQuery {
            query: q.into(),
            scope,
            relevance: ToolRelevance::Loose,
        }
    }

    #[tokio::test]
    async fn the_adapter_maps_queries_scopes_and_hits() {
        let (_d, app) = app();
        let nb = app
            .store
            .create_notebook(&Actor::Cli, "Pets", None)
            .unwrap()
            .id;
        let dog = app
            .store
            .create_note(
                &Actor::Cli,
                NewNote {
                    title: "Dog walker".into(),
                    body: "walker for the dog on tuesdays".into(),
                    parent_id: Some(nb.clone()),
                    ..Default::default()
                },
            )
            .unwrap()
            .id;
        app.store
            .create_note(
                &Actor::Cli,
                NewNote {
                    title: "Taxes".into(),
                    body: "quarterly tax return".into(),
                    ..Default::default()
                },
            )
            .unwrap();
        let index = Arc::new(
            SemanticIndex::open(app.store.clone(), Arc::new(HashEmbedder::new("hash", 64)))
                .unwrap(),
        );
        let adapter = ToolAdapter::new(index.clone(), true);
        // Not indexed yet: a recoverable error that says so.
        let err = adapter
            .search(query("dog walker", SemanticScope::All))
            .await
            .unwrap_err();
        assert!(err.is_recoverable());
        assert!(err.to_string().contains("still being built (0/"), "{err}");

        index.sync(&mut |_| {}, None).unwrap();
        let hits = adapter
            .search(query("dog walker", SemanticScope::All))
            .await
            .unwrap();
        assert_eq!(hits[0].note_id, dog);
        assert_eq!(hits[0].chunk_index, 0);
        assert!(hits[0].chunk_text.contains("walker for the dog"));
        let scoped = adapter
            .search(query("tax", SemanticScope::Notebook(nb)))
            .await
            .unwrap();
        assert!(scoped.iter().all(|h| h.note_id == dog));
    }

    #[tokio::test]
    async fn attach_without_a_model_explains_how_to_install_it() {
        let (_d, app) = app();
        app.store
            .set_setting(
                "ai.embeddings.modelDir",
                &app.workspace.join("no-model").to_string_lossy(),
            )
            .unwrap();
        let slot = SemanticSlot::new();
        let bg = attach(&app, &slot).unwrap();
        assert!(bg.is_none());
        let err = slot
            .get()
            .unwrap()
            .search(query("anything", SemanticScope::All))
            .await
            .unwrap_err();
        assert!(err.is_recoverable());
        let msg = err.to_string();
        assert!(msg.contains("sidenote model install --from"), "{msg}");
        assert!(msg.contains("search_notes"), "{msg}");

        app.store
            .set_setting("ai.embeddings.provider", "off")
            .unwrap();
        assert!(attach(&app, &slot).unwrap().is_none());
        assert!(!slot.is_available());
    }
}
