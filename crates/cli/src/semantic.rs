//! The composition root of semantic search: opens the workspace's semantic index with the
//! configured embedder and plugs it into the `semantic_search_notes` tool's slot.
//!
//! [`crate::toolset::Toolset`] calls [`attach`] once after building the
//! tool registry and keeps the returned [`BackgroundIndexer`] alive for as long as the process runs.

use crate::app::App;
use sidenote_index::embed::{self, EmbedChoice};
use sidenote_index::{
    BackgroundIndexer, IndexError, Query, Relevance, Scope, SearchRequest, SemanticIndex,
};
use sidenote_tools::ToolError;
use sidenote_tools::builtin::{
    Relevance as ToolRelevance, SemanticHit, SemanticQuery, SemanticScope, SemanticSearch,
    SemanticSlot, SemanticStatus, SemanticText,
};
use sidenote_tools::toggles::parse_bool;
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
    app.store
        .setting("ai.embeddings.hybrid")
        .ok()
        .flatten()
        .and_then(|v| parse_bool(&v))
        .unwrap_or(true)
}

/// Fill `slot` with the workspace's semantic index and, when `background`, start the
/// background indexer.
///
/// - embeddings off (`ai.embeddings.provider = off`): the slot is left empty, `Ok(None)`;
/// - no usable embedder (model not installed, bad config): the slot answers every search
///   with a recoverable error saying exactly how to fix it, `Ok(None)`;
/// - otherwise the slot holds the index and the returned indexer (only with `background`)
///   keeps it current (drop it to stop indexing).
pub fn attach(
    app: &App,
    slot: &SemanticSlot,
    background: bool,
) -> anyhow::Result<Option<BackgroundIndexer>> {
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
            tracing::info!("semantic search unavailable: {e}");
            slot.set(Some(Arc::new(Unavailable(e.to_string()))));
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let index = Arc::new(SemanticIndex::open(app.store.clone(), embedder)?);
    // A one-shot command searches the index as it is; only long-running processes keep it
    // current (embedding a backlog would compete with the model for the CPU).
    let indexer = if background {
        Some(BackgroundIndexer::spawn(index.clone(), INDEX_INTERVAL)?)
    } else {
        None
    };
    slot.set(Some(Arc::new(ToolAdapter::new(index, hybrid_enabled(app)))));
    Ok(indexer)
}

/// `semantic_search_notes` on top of a [`SemanticIndex`].
pub struct ToolAdapter {
    index: Arc<SemanticIndex>,
    /// The workspace default for queries that leave `hybrid` unset.
    hybrid: bool,
}

impl ToolAdapter {
    pub fn new(index: Arc<SemanticIndex>, hybrid: bool) -> Self {
        ToolAdapter { index, hybrid }
    }

    /// The index request for a tool query.
    fn request(&self, q: SemanticQuery) -> SearchRequest {
        SearchRequest {
            query: match q.query {
                SemanticText::Text(t) => Query::Text(t),
                SemanticText::LikeNote(id) => Query::LikeNote(id),
            },
            scope: match q.scope {
                SemanticScope::All => Scope::All,
                SemanticScope::Notebook(id) => Scope::Notebook(id),
                SemanticScope::Tag(id) => Scope::Tag(id),
                SemanticScope::Note(id) => Scope::Note(id),
            },
            relevance: match q.relevance {
                ToolRelevance::Strict => Relevance::Strict,
                ToolRelevance::Normal => Relevance::Normal,
                ToolRelevance::Loose => Relevance::Loose,
            },
            hybrid: q.hybrid.unwrap_or(self.hybrid),
            limit: None,
        }
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
        let req = self.request(q);
        // An empty result while the index is incomplete is explained by the tool from
        // `status()` (its output carries the progress and a "still being built" message).
        let hits = tokio::task::spawn_blocking(move || index.search(&req))
            .await
            .map_err(|e| ToolError::internal(format!("semantic search task failed: {e}")))?
            .map_err(tool_error)?;
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

    fn status(&self) -> Option<SemanticStatus> {
        match self.index.status() {
            Ok(s) => Some(SemanticStatus {
                complete: s.is_complete(),
                indexed_notes: s.indexed_notes,
                total_notes: s.total_notes,
                model: s.model,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "semantic index status unavailable");
                None
            }
        }
    }
}

/// Fills the slot when semantic search cannot run: every call explains why and how to fix it.
pub struct Unavailable(pub String);

#[async_trait::async_trait]
impl SemanticSearch for Unavailable {
    async fn search(&self, _q: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError> {
        Err(ToolError::recoverable(format!(
            "semantic index not available: {} Meanwhile use search_notes (keyword search).",
            self.0
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;
    use sidenote_index::{HashEmbedder, Preset, Presets};
    use sidenote_store::{Actor, NewNote};
    use sidenote_tools::{ToolCtx, ToolOutput};

    fn app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        let app = App::open(Some(dir.path().to_path_buf())).unwrap();
        (dir, app)
    }

    #[test]
    fn hybrid_is_on_unless_the_setting_says_false() {
        let (_d, app) = app();
        assert!(hybrid_enabled(&app));
        for (value, on) in [("off", false), (" No ", false), ("0", false), ("yes", true)] {
            app.store
                .set_setting("ai.embeddings.hybrid", value)
                .unwrap();
            assert_eq!(hybrid_enabled(&app), on, "{value}");
        }
        app.store
            .set_setting("ai.embeddings.hybrid", "maybe")
            .unwrap();
        assert!(hybrid_enabled(&app));
    }

    fn query(q: &str, scope: SemanticScope) -> SemanticQuery {
        SemanticQuery {
            scope,
            relevance: ToolRelevance::Loose,
            ..SemanticQuery::text(q)
        }
    }

    fn note(app: &App, title: &str, body: &str, parent: Option<&str>) -> String {
        app.store
            .create_note(
                &Actor::Cli,
                NewNote {
                    title: title.into(),
                    body: body.into(),
                    parent_id: parent.map(str::to_string),
                    ..Default::default()
                },
            )
            .unwrap()
            .id
    }

    fn hash_index(app: &App) -> Arc<SemanticIndex> {
        Arc::new(
            SemanticIndex::open(app.store.clone(), Arc::new(HashEmbedder::new("hash", 64)))
                .unwrap(),
        )
    }

    #[tokio::test]
    async fn the_adapter_maps_queries_scopes_and_hits() {
        let (_d, app) = app();
        let nb = app
            .store
            .create_notebook(&Actor::Cli, "Pets", None)
            .unwrap()
            .id;
        let dog = note(
            &app,
            "Dog walker",
            "walker for the dog on tuesdays",
            Some(&nb),
        );
        note(&app, "Taxes", "quarterly tax return", None);
        let index = hash_index(&app);
        let adapter = ToolAdapter::new(index.clone(), true);
        // Not indexed yet: nothing found, and the status says why.
        let hits = adapter
            .search(query("dog walker", SemanticScope::All))
            .await
            .unwrap();
        assert!(hits.is_empty());
        // (the workspace also holds its welcome note)
        let total = app.store.list_notes(None, false, 1000).unwrap().len();
        let status = adapter.status().unwrap();
        assert_eq!(
            (status.indexed_notes, status.total_notes, status.complete),
            (0, total, false)
        );
        assert_eq!(status.model, index.model_id());

        index.sync(&mut |_| {}, None).unwrap();
        let status = adapter.status().unwrap();
        assert_eq!(
            (status.indexed_notes, status.total_notes, status.complete),
            (total, total, true)
        );
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
    async fn the_adapter_queries_by_note_and_inside_one_note() {
        let (_d, app) = app();
        let dog = note(&app, "Dog walker", "Anna walks the dog on tuesdays", None);
        let sitter = note(&app, "Dog sitter", "Ben sits the dog on fridays", None);
        let long = note(
            &app,
            "Journal",
            "# Garden\n\nPlanted tomatoes and basil in the garden.\n\n\
             # Car\n\nThe car needs new tyres before winter.",
            None,
        );
        let index = hash_index(&app);
        index.sync(&mut |_| {}, None).unwrap();
        let adapter = ToolAdapter::new(index, true);

        // Like a note: its vectors are reused and it is left out of the results.
        let like = adapter
            .search(SemanticQuery {
                relevance: ToolRelevance::Loose,
                ..SemanticQuery::like_note(dog.clone())
            })
            .await
            .unwrap();
        assert_eq!(like[0].note_id, sitter);
        assert!(like.iter().all(|h| h.note_id != dog), "{like:?}");

        // Inside one note: only its passages, the relevant one first.
        let inside = adapter
            .search(query(
                "tyres for the car",
                SemanticScope::Note(long.clone()),
            ))
            .await
            .unwrap();
        assert!(!inside.is_empty());
        assert!(inside.iter().all(|h| h.note_id == long), "{inside:?}");
        assert!(inside[0].chunk_text.contains("tyres"), "{inside:?}");
    }

    #[tokio::test]
    async fn hybrid_follows_the_query_then_the_workspace_default() {
        let (_d, app) = app();
        let zebra = note(
            &app,
            "Zoo trip",
            "we saw a zebra, two lions, many monkeys, a sleepy bear and penguins",
            None,
        );
        let strict = Preset {
            k: 5,
            min_score: 0.99,
        };
        let index = Arc::new(
            SemanticIndex::open(app.store.clone(), Arc::new(HashEmbedder::new("hash", 64)))
                .unwrap()
                .with_presets(Presets {
                    strict,
                    normal: strict,
                    loose: strict,
                }),
        );
        index.sync(&mut |_| {}, None).unwrap();
        let ask = |hybrid| SemanticQuery {
            hybrid,
            ..SemanticQuery::text("zebra")
        };
        // The cosine is below the cut-off: only the keyword half finds the note.
        let on_by_default = ToolAdapter::new(index.clone(), true);
        assert_eq!(
            on_by_default.search(ask(None)).await.unwrap()[0].note_id,
            zebra
        );
        assert!(
            on_by_default
                .search(ask(Some(false)))
                .await
                .unwrap()
                .is_empty()
        );
        let off_by_default = ToolAdapter::new(index, false);
        assert!(off_by_default.search(ask(None)).await.unwrap().is_empty());
        assert_eq!(
            off_by_default.search(ask(Some(true))).await.unwrap()[0].note_id,
            zebra
        );
    }

    #[tokio::test]
    async fn the_tool_output_carries_the_index_status() {
        let (_d, app) = app();
        let dog = note(&app, "Dog walker", "walker for the dog on tuesdays", None);
        let index = hash_index(&app);
        let slot = SemanticSlot::with(Arc::new(ToolAdapter::new(index.clone(), true)));
        let reg = crate::toolset::builtin_registry(&app, slot).unwrap();
        let ctx = ToolCtx::new(Actor::Mcp("test".into()));
        let call = |args: serde_json::Value| {
            let reg = &reg;
            let ctx = &ctx;
            async move {
                match reg.call("semantic_search_notes", args, ctx).await {
                    Ok(ToolOutput::Json(v)) => v,
                    other => panic!("{other:?}"),
                }
            }
        };

        // (the workspace also holds its welcome note)
        let total = app.store.list_notes(None, false, 1000).unwrap().len();
        let before = call(json!({"query": "dog walker"})).await;
        assert_eq!(before["total"], 0);
        assert_eq!(
            before["index"],
            json!({"indexed_notes": 0, "total_notes": total, "model": index.model_id(), "complete": false})
        );
        let msg = before["message"].as_str().unwrap();
        let progress = format!("still being built (0/{total} notes indexed)");
        assert!(msg.contains(&progress), "{msg}");
        assert!(msg.contains("search_notes"), "{msg}");

        index.sync(&mut |_| {}, None).unwrap();
        let after = call(json!({"query": "dog walker"})).await;
        assert_eq!(after["results"][0]["note_id"], dog.as_str());
        assert_eq!(after["index"]["complete"], true);
        assert_eq!(after["index"]["indexed_notes"], total);
        assert!(after.get("message").is_none(), "{after}");
        // by note id: the note is not its own match
        let like = call(json!({"note_id": dog, "relevance": "loose"})).await;
        let results = like["results"].as_array().unwrap();
        assert!(
            results.iter().all(|r| r["note_id"] != dog.as_str()),
            "{like}"
        );
        assert_eq!(like["index"]["complete"], true);
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
        let bg = attach(&app, &slot, true).unwrap();
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
        assert!(attach(&app, &slot, true).unwrap().is_none());
        assert!(!slot.is_available());
    }
}
