//! The semantic index: chunks and vectors in SQLite beside the notes, an in-memory vector
//! set kept in sync, incremental journal-driven updates, and (hybrid) search.

use crate::chunk::{ChunkConfig, chunk_note, content_hash};
use crate::embed::Embedder;
use crate::error::{IndexError, Result};
use crate::vectors::{Filter, NoteVectors, VectorSet};
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use sidenote_store::{JournalKind, JournalQuery, Store};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS sem_chunks (
    note_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (note_id, chunk_index)
);
CREATE INDEX IF NOT EXISTS sem_chunks_hash ON sem_chunks(hash, model);
CREATE TABLE IF NOT EXISTS sem_notes (
    note_id TEXT PRIMARY KEY NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    indexed_time INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sem_state (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
"#;

/// Notes per embedding round during a sync.
const NOTE_GROUP: usize = 32;
/// Journal rows read per step.
const JOURNAL_PAGE: usize = 500;
/// Reciprocal-rank-fusion constant.
pub const RRF_K: f32 = 60.0;

/// How strict the similarity cut-off is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relevance {
    Strict,
    #[default]
    Normal,
    Loose,
}

/// `k` and minimum cosine score of one relevance level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    pub k: usize,
    pub min_score: f32,
}

/// The three presets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Presets {
    pub strict: Preset,
    pub normal: Preset,
    pub loose: Preset,
}

impl Presets {
    /// Calibrated for all-MiniLM-L6-v2 on the test corpus of `tests/real_model.rs`: the
    /// right note scored 0.27 ("the note about pet sitters for my dog" → the dog-walker note,
    /// no shared word) and 0.51–0.58 for plainer paraphrases; the best wrong note scored
    /// 0.17–0.22; an unrelated query stayed below 0.35. MiniLM's cosines run lower than e5's,
    /// hence lower cut-offs than Joplin's 0.55 / 0.40 / 0.25.
    pub const MINILM: Presets = Presets {
        strict: Preset {
            k: 5,
            min_score: 0.35,
        },
        normal: Preset {
            k: 10,
            min_score: 0.20,
        },
        loose: Preset {
            k: 20,
            min_score: 0.10,
        },
    };
    pub fn get(&self, r: Relevance) -> Preset {
        match r {
            Relevance::Strict => self.strict,
            Relevance::Normal => self.normal,
            Relevance::Loose => self.loose,
        }
    }
}

impl Default for Presets {
    fn default() -> Self {
        Presets::MINILM
    }
}

/// Restrict a search to part of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    /// Notes directly in this notebook.
    Notebook(String),
    /// Notes with this tag (by tag id).
    Tag(String),
    /// Only this note.
    Note(String),
}

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Text(String),
    /// Notes like this one (its stored vectors are reused; it is left out of the results).
    LikeNote(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchRequest {
    pub query: Query,
    pub scope: Scope,
    pub relevance: Relevance,
    /// Fuse keyword (FTS5) ranks with vector ranks (text queries only).
    pub hybrid: bool,
    /// Override the preset's `k`.
    pub limit: Option<usize>,
}

impl SearchRequest {
    pub fn text(q: impl Into<String>) -> Self {
        SearchRequest {
            query: Query::Text(q.into()),
            scope: Scope::All,
            relevance: Relevance::Normal,
            hybrid: true,
            limit: None,
        }
    }
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub note_id: String,
    pub chunk_index: u32,
    pub text: String,
    /// Cosine similarity of the chunk to the query.
    pub score: f32,
    /// The ranking score: reciprocal-rank fusion when hybrid, else the cosine.
    pub rank_score: f32,
    /// 1-based rank of the note in keyword search, when it matched.
    pub keyword_rank: Option<usize>,
}

/// Index progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Status {
    pub model: String,
    /// Non-trashed notes indexed with the current model.
    pub indexed_notes: usize,
    /// Non-trashed notes in the store.
    pub total_notes: usize,
    pub chunks: usize,
    /// Journal position the index has caught up to, and the store's head.
    pub cursor: i64,
    pub head: i64,
    pub initial_scan_done: bool,
}

impl Status {
    pub fn is_complete(&self) -> bool {
        self.initial_scan_done && self.cursor >= self.head && self.indexed_notes >= self.total_notes
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} notes indexed ({} chunks), model {}",
            self.indexed_notes, self.total_notes, self.chunks, self.model
        )?;
        if !self.is_complete() {
            write!(f, ", not up to date (run `sidenote index`)")?;
        }
        Ok(())
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// Notes whose chunks were (re)written.
    pub notes_indexed: usize,
    /// Notes checked and found unchanged.
    pub notes_unchanged: usize,
    /// Notes removed from the index (trashed, deleted, emptied).
    pub notes_removed: usize,
    /// Chunks sent to the embedder.
    pub chunks_embedded: usize,
    /// Chunks whose vector was reused by content hash.
    pub chunks_reused: usize,
    /// The sync stopped early because it was asked to.
    pub interrupted: bool,
}

impl SyncReport {
    fn add(&mut self, o: &SyncReport) {
        self.notes_indexed += o.notes_indexed;
        self.notes_unchanged += o.notes_unchanged;
        self.notes_removed += o.notes_removed;
        self.chunks_embedded += o.chunks_embedded;
        self.chunks_reused += o.chunks_reused;
    }
}

/// Progress callback argument during a sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

struct Memory {
    generation: i64,
    set: VectorSet,
}

/// The semantic index of one workspace. `Send + Sync`; share it in an `Arc`.
pub struct SemanticIndex {
    store: Store,
    conn: Mutex<Connection>,
    embedder: Arc<dyn Embedder>,
    model: String,
    memory: RwLock<Option<Memory>>,
    chunking: ChunkConfig,
    presets: Presets,
}

fn to_blob(v: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn state_get(conn: &Connection, key: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row("SELECT value FROM sem_state WHERE key = ?1", [key], |r| {
        r.get(0)
    })
    .optional()
}

fn state_set(conn: &Connection, key: &str, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO sem_state(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

fn state_i64(conn: &Connection, key: &str) -> rusqlite::Result<i64> {
    Ok(state_get(conn, key)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Bump the write generation (inside the caller's transaction); returns the new value.
fn bump_generation(conn: &Connection) -> rusqlite::Result<i64> {
    let g = state_i64(conn, "generation")? + 1;
    state_set(conn, "generation", &g.to_string())?;
    Ok(g)
}

/// A note prepared for writing.
struct Prepared {
    note_id: String,
    note_hash: String,
    chunks: Vec<crate::chunk::Chunk>,
}

impl SemanticIndex {
    /// Open the index of `store`'s workspace (tables live in `sidenote.db`, created if
    /// missing). A model different from the one the index was built with clears it: vectors
    /// of different models are never mixed.
    pub fn open(store: Store, embedder: Arc<dyn Embedder>) -> Result<Self> {
        let conn = Connection::open(store.root().join("sidenote.db"))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        let model = embedder.model_id().to_string();
        let index = SemanticIndex {
            store,
            conn: Mutex::new(conn),
            embedder,
            model,
            memory: RwLock::new(None),
            chunking: ChunkConfig::default(),
            presets: Presets::default(),
        };
        index.ensure_model()?;
        Ok(index)
    }

    /// Use other presets (e.g. for an embedder with a different score range).
    pub fn with_presets(mut self, presets: Presets) -> Self {
        self.presets = presets;
        self
    }

    pub fn with_chunking(mut self, chunking: ChunkConfig) -> Self {
        self.chunking = chunking;
        self
    }

    pub fn model_id(&self) -> &str {
        &self.model
    }

    pub fn presets(&self) -> Presets {
        self.presets
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn ensure_model(&self) -> Result<()> {
        let mut conn = self.conn();
        let stored = state_get(&conn, "model")?;
        if stored.as_deref() == Some(self.model.as_str()) {
            return Ok(());
        }
        if let Some(old) = &stored {
            tracing::info!(old = %old, new = %self.model, "embedding model changed: re-indexing");
        }
        let tx = conn.transaction()?;
        Self::clear_tx(&tx)?;
        state_set(&tx, "model", &self.model)?;
        tx.commit()?;
        drop(conn);
        self.invalidate_memory();
        Ok(())
    }

    fn clear_tx(tx: &Connection) -> rusqlite::Result<()> {
        tx.execute("DELETE FROM sem_chunks", [])?;
        tx.execute("DELETE FROM sem_notes", [])?;
        state_set(tx, "cursor", "0")?;
        state_set(tx, "initial_scan_done", "0")?;
        state_set(tx, "dim", "0")?;
        bump_generation(tx)?;
        Ok(())
    }

    fn invalidate_memory(&self) {
        *self.memory.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Drop every chunk and vector; the next sync re-embeds everything.
    pub fn clear(&self) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        Self::clear_tx(&tx)?;
        tx.commit()?;
        drop(conn);
        self.invalidate_memory();
        Ok(())
    }

    pub fn status(&self) -> Result<Status> {
        let conn = self.conn();
        let total: i64 = conn.query_row(
            "SELECT COUNT(*) FROM notes WHERE deleted_time = 0",
            [],
            |r| r.get(0),
        )?;
        let indexed: i64 = conn.query_row(
            "SELECT COUNT(*) FROM sem_notes s JOIN notes n ON n.id = s.note_id
             WHERE n.deleted_time = 0 AND s.model = ?1",
            [&self.model],
            |r| r.get(0),
        )?;
        let chunks: i64 = conn.query_row(
            "SELECT COUNT(*) FROM sem_chunks WHERE model = ?1",
            [&self.model],
            |r| r.get(0),
        )?;
        let head: i64 = conn.query_row("SELECT COALESCE(MAX(seq), 0) FROM journal", [], |r| {
            r.get(0)
        })?;
        Ok(Status {
            model: self.model.clone(),
            indexed_notes: usize::try_from(indexed).unwrap_or(0),
            total_notes: usize::try_from(total).unwrap_or(0),
            chunks: usize::try_from(chunks).unwrap_or(0),
            cursor: state_i64(&conn, "cursor")?,
            head,
            initial_scan_done: state_i64(&conn, "initial_scan_done")? == 1,
        })
    }

    /// Bring the index up to date with the store: the initial scan if it has not completed
    /// (resumable: notes already indexed are skipped by hash), then the journal after the
    /// persisted cursor. `stop` is polled between rounds.
    pub fn sync(
        &self,
        progress: &mut dyn FnMut(Progress),
        stop: Option<&AtomicBool>,
    ) -> Result<SyncReport> {
        let stopped = || stop.is_some_and(|s| s.load(Ordering::Relaxed));
        let mut report = SyncReport::default();
        let (initial_done, mut cursor) = {
            let conn = self.conn();
            (
                state_i64(&conn, "initial_scan_done")? == 1,
                state_i64(&conn, "cursor")?,
            )
        };
        if !initial_done {
            let head = self.store.journal_head()?;
            let (ids, stale) = {
                let conn = self.conn();
                let mut st =
                    conn.prepare("SELECT id FROM notes WHERE deleted_time = 0 ORDER BY id")?;
                let ids = st
                    .query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                let mut st = conn.prepare(
                    "SELECT note_id FROM sem_notes WHERE note_id NOT IN
                     (SELECT id FROM notes WHERE deleted_time = 0)",
                )?;
                let stale = st
                    .query_map([], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                (ids, stale)
            };
            if !stale.is_empty() {
                report.add(&self.index_notes(&stale)?);
            }
            let total = ids.len();
            progress(Progress { done: 0, total });
            for (i, group) in ids.chunks(NOTE_GROUP).enumerate() {
                if stopped() {
                    report.interrupted = true;
                    return Ok(report);
                }
                report.add(&self.index_notes(group)?);
                progress(Progress {
                    done: (i * NOTE_GROUP + group.len()).min(total),
                    total,
                });
            }
            let conn = self.conn();
            state_set(&conn, "cursor", &head.to_string())?;
            state_set(&conn, "initial_scan_done", "1")?;
            cursor = head;
        }
        loop {
            if stopped() {
                report.interrupted = true;
                break;
            }
            let entries = self.store.journal(&JournalQuery {
                after_seq: Some(cursor),
                limit: Some(JOURNAL_PAGE),
                ..Default::default()
            })?;
            let Some(last) = entries.last().map(|e| e.seq) else {
                break;
            };
            let mut seen = HashSet::new();
            let ids: Vec<String> = entries
                .iter()
                .filter(|e| {
                    matches!(
                        e.kind,
                        JournalKind::NoteCreate
                            | JournalKind::NoteUpdate
                            | JournalKind::NoteTrash
                            | JournalKind::NoteRestore
                    )
                })
                .filter(|e| seen.insert(e.item_id.clone()))
                .map(|e| e.item_id.clone())
                .collect();
            let total = ids.len();
            for (i, group) in ids.chunks(NOTE_GROUP).enumerate() {
                report.add(&self.index_notes(group)?);
                progress(Progress {
                    done: (i * NOTE_GROUP + group.len()).min(total),
                    total,
                });
            }
            // Only after the batch: a crash re-processes it (idempotent by hash).
            let conn = self.conn();
            state_set(&conn, "cursor", &last.to_string())?;
            cursor = last;
        }
        Ok(report)
    }

    /// Re-index these notes now (missing, trashed or empty notes are removed).
    pub fn index_notes(&self, ids: &[String]) -> Result<SyncReport> {
        let mut report = SyncReport::default();
        let mut remove: Vec<String> = Vec::new();
        let mut prepared: Vec<Prepared> = Vec::new();
        {
            for id in ids {
                let note = self.store.note(id)?;
                let Some(note) = note.filter(|n| !n.is_trashed()) else {
                    remove.push(id.clone());
                    continue;
                };
                let chunks = chunk_note(&note.title, &note.body, &self.chunking);
                let joined: String = chunks
                    .iter()
                    .map(|c| c.hash.as_str())
                    .collect::<Vec<_>>()
                    .join(",");
                let note_hash = content_hash(&joined);
                let current: Option<(String, String)> = self
                    .conn()
                    .query_row(
                        "SELECT hash, model FROM sem_notes WHERE note_id = ?1",
                        [id],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                if current
                    .as_ref()
                    .is_some_and(|(h, m)| *h == note_hash && *m == self.model)
                {
                    report.notes_unchanged += 1;
                    continue;
                }
                prepared.push(Prepared {
                    note_id: id.clone(),
                    note_hash,
                    chunks,
                });
            }
        }

        // Vectors we already have, by content hash (this note's old chunks or any other).
        let mut known: HashMap<String, Vec<f32>> = HashMap::new();
        {
            let conn = self.conn();
            let mut st = conn.prepare_cached(
                "SELECT vector FROM sem_chunks WHERE hash = ?1 AND model = ?2 LIMIT 1",
            )?;
            for p in &prepared {
                for c in &p.chunks {
                    if known.contains_key(&c.hash) {
                        continue;
                    }
                    if let Some(blob) = st
                        .query_row(params![c.hash, self.model], |r| r.get::<_, Vec<u8>>(0))
                        .optional()?
                    {
                        known.insert(c.hash.clone(), from_blob(&blob));
                    }
                }
            }
        }
        let mut missing: Vec<(String, String)> = Vec::new();
        let mut queued = HashSet::new();
        for p in &prepared {
            for c in &p.chunks {
                if known.contains_key(&c.hash) {
                    report.chunks_reused += 1;
                } else if queued.insert(c.hash.clone()) {
                    missing.push((c.hash.clone(), c.embed_text.clone()));
                }
            }
        }
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|(_, t)| t.clone()).collect();
            let vectors = self.embedder.embed(&texts)?;
            if vectors.len() != texts.len() {
                return Err(IndexError::Embed(format!(
                    "asked for {} vectors, got {}",
                    texts.len(),
                    vectors.len()
                )));
            }
            report.chunks_embedded += texts.len();
            for ((hash, _), v) in missing.into_iter().zip(vectors) {
                known.insert(hash, v);
            }
        }

        // Write everything in one short transaction.
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let mut dim = usize::try_from(state_i64(&tx, "dim")?).unwrap_or(0);
        let mut updates: Vec<(String, Option<NoteVectors>)> = Vec::new();
        for id in &remove {
            let n = tx.execute("DELETE FROM sem_chunks WHERE note_id = ?1", [id])?;
            let m = tx.execute("DELETE FROM sem_notes WHERE note_id = ?1", [id])?;
            if n + m > 0 {
                report.notes_removed += 1;
            }
            updates.push((id.clone(), None));
        }
        let now = sidenote_store::now_ms();
        for p in &prepared {
            tx.execute("DELETE FROM sem_chunks WHERE note_id = ?1", [&p.note_id])?;
            let mut nv = NoteVectors::default();
            for c in &p.chunks {
                let v = known
                    .get(&c.hash)
                    .ok_or_else(|| IndexError::Embed("a chunk vector went missing".into()))?;
                if dim == 0 {
                    dim = v.len();
                    state_set(&tx, "dim", &dim.to_string())?;
                }
                if v.len() != dim {
                    return Err(IndexError::Embed(format!(
                        "the embedder returned a {}-dimensional vector; the index holds {dim}-dimensional ones",
                        v.len()
                    )));
                }
                tx.execute(
                    "INSERT INTO sem_chunks(note_id, chunk_index, hash, text, model, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![p.note_id, c.index, c.hash, c.text, self.model, to_blob(v)],
                )?;
                nv.chunks.push(c.index);
                nv.data.extend_from_slice(v);
            }
            tx.execute(
                "INSERT INTO sem_notes(note_id, hash, model, chunks, indexed_time)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(note_id) DO UPDATE SET hash = excluded.hash, model = excluded.model,
                   chunks = excluded.chunks, indexed_time = excluded.indexed_time",
                params![p.note_id, p.note_hash, self.model, p.chunks.len(), now],
            )?;
            report.notes_indexed += 1;
            updates.push((p.note_id.clone(), Some(nv)));
        }
        if updates.is_empty() {
            return Ok(report);
        }
        let generation = bump_generation(&tx)?;
        tx.commit()?;
        drop(conn);

        // Keep the in-memory set in step (or drop it if it missed another writer's change).
        let mut mem = self.memory.write().unwrap_or_else(|p| p.into_inner());
        let in_step = mem.as_ref().is_some_and(|m| {
            m.generation == generation - 1 && (m.set.dim() == dim || m.set.is_empty())
        });
        if in_step {
            if let Some(m) = mem.as_mut() {
                if m.set.dim() != dim {
                    m.set = VectorSet::new(dim);
                }
                for (id, nv) in updates {
                    match nv {
                        Some(nv) => {
                            m.set.set_note(&id, nv);
                        }
                        None => m.set.remove_note(&id),
                    }
                }
                m.generation = generation;
            }
        } else {
            *mem = None;
        }
        Ok(report)
    }

    /// Run `f` on the in-memory vectors, (re)loading them when another writer changed the
    /// database.
    fn with_vectors<T>(&self, f: impl FnOnce(&VectorSet) -> T) -> Result<T> {
        let generation = state_i64(&self.conn(), "generation")?;
        {
            let mem = self.memory.read().unwrap_or_else(|p| p.into_inner());
            if let Some(m) = mem.as_ref().filter(|m| m.generation == generation) {
                return Ok(f(&m.set));
            }
        }
        let mut mem = self.memory.write().unwrap_or_else(|p| p.into_inner());
        let (generation, set) = {
            let conn = self.conn();
            let generation = state_i64(&conn, "generation")?;
            let dim = usize::try_from(state_i64(&conn, "dim")?).unwrap_or(0);
            let mut set = VectorSet::new(dim);
            let mut st = conn.prepare(
                "SELECT note_id, chunk_index, vector FROM sem_chunks WHERE model = ?1
                 ORDER BY note_id, chunk_index",
            )?;
            let mut rows = st.query([&self.model])?;
            while let Some(r) = rows.next()? {
                let id: String = r.get(0)?;
                let chunk: u32 = r.get(1)?;
                let blob: Vec<u8> = r.get(2)?;
                set.push(&id, chunk, &from_blob(&blob));
            }
            (generation, set)
        };
        let out = f(&set);
        *mem = Some(Memory { generation, set });
        Ok(out)
    }

    fn scope_ids(&self, scope: &Scope) -> Result<Option<HashSet<String>>> {
        let conn = self.conn();
        let collect = |sql: &str, arg: &str| -> Result<Option<HashSet<String>>> {
            let mut st = conn.prepare(sql)?;
            let ids = st
                .query_map([arg], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<HashSet<_>>>()?;
            Ok(Some(ids))
        };
        match scope {
            Scope::All => Ok(None),
            Scope::Notebook(id) => collect(
                "SELECT id FROM notes WHERE parent_id = ?1 AND deleted_time = 0",
                id,
            ),
            Scope::Tag(id) => collect(
                "SELECT nt.note_id FROM note_tags nt JOIN notes n ON n.id = nt.note_id
                 WHERE nt.tag_id = ?1 AND n.deleted_time = 0",
                id,
            ),
            Scope::Note(id) => collect(
                "SELECT id FROM notes WHERE id = ?1 AND deleted_time = 0",
                id,
            ),
        }
    }

    fn trashed_ids(&self) -> Result<HashSet<String>> {
        let conn = self.conn();
        let mut st = conn.prepare("SELECT id FROM notes WHERE deleted_time > 0")?;
        let ids = st
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<HashSet<_>>>()?;
        Ok(ids)
    }

    /// Ranked chunks for a request. Blocks (embeds the query); call off the async executor.
    pub fn search(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        let preset = self.presets.get(req.relevance);
        let k = req.limit.unwrap_or(preset.k).max(1);
        let mut exclude = self.trashed_ids()?;
        let (queries, text) = match &req.query {
            Query::Text(t) => {
                let t = t.trim();
                if t.is_empty() {
                    return Ok(Vec::new());
                }
                let mut q = self.embedder.embed_query(t)?;
                crate::embed::normalize(&mut q);
                (vec![q], Some(t.to_string()))
            }
            Query::LikeNote(id) => {
                exclude.insert(id.clone());
                let vs = self.with_vectors(|set| {
                    set.note(id).map(|nv| {
                        let dim = set.dim().max(1);
                        nv.data.chunks(dim).map(<[f32]>::to_vec).collect::<Vec<_>>()
                    })
                })?;
                match vs {
                    Some(vs) => (vs, None),
                    None => return Ok(Vec::new()),
                }
            }
        };
        let only = self.scope_ids(&req.scope)?;
        if only.as_ref().is_some_and(HashSet::is_empty) {
            return Ok(Vec::new());
        }
        let in_scope =
            |id: &str| !exclude.contains(id) && only.as_ref().is_none_or(|o| o.contains(id));

        // Keyword ranks (note level), only for hybrid text queries.
        let keyword: Vec<String> = match (&text, req.hybrid) {
            (Some(t), true) => match self.store.search(t, 50) {
                Ok(r) => r
                    .results
                    .into_iter()
                    .map(|h| h.id)
                    .filter(|id| in_scope(id))
                    .collect(),
                // Natural-language text is often not a valid keyword query: vector only.
                Err(e) => {
                    tracing::debug!(error = %e, "keyword half of the hybrid search skipped");
                    Vec::new()
                }
            },
            _ => Vec::new(),
        };

        let candidates = if keyword.is_empty() { k } else { k * 3 };
        let filter = Filter {
            only: only.as_ref(),
            exclude: &exclude,
        };
        let (vector_hits, keyword_best) = self.with_vectors(|set| {
            let v = set.top_k(&queries, candidates, preset.min_score, &filter);
            let kb: Vec<(String, u32, f32)> = keyword
                .iter()
                .filter_map(|id| {
                    set.best_chunk(id, &queries)
                        .map(|(c, s)| (id.clone(), c, s))
                })
                .collect();
            (v, kb)
        })?;

        let mut fused: HashMap<(String, u32), Hit> = HashMap::new();
        for (rank, h) in vector_hits.iter().enumerate() {
            let rank_score = if keyword.is_empty() {
                h.score
            } else {
                1.0 / (RRF_K + (rank + 1) as f32)
            };
            fused.insert(
                (h.note_id.clone(), h.chunk_index),
                Hit {
                    note_id: h.note_id.clone(),
                    chunk_index: h.chunk_index,
                    text: String::new(),
                    score: h.score,
                    rank_score,
                    keyword_rank: None,
                },
            );
        }
        for (rank, (id, chunk, score)) in keyword_best.into_iter().enumerate() {
            let e = fused.entry((id.clone(), chunk)).or_insert_with(|| Hit {
                note_id: id,
                chunk_index: chunk,
                text: String::new(),
                score,
                rank_score: 0.0,
                keyword_rank: None,
            });
            e.rank_score += 1.0 / (RRF_K + (rank + 1) as f32);
            e.keyword_rank = Some(rank + 1);
        }
        let mut hits: Vec<Hit> = fused.into_values().collect();
        hits.sort_by(|a, b| {
            // On a tie, a keyword match wins (exact names first), then the cosine.
            b.rank_score
                .total_cmp(&a.rank_score)
                .then_with(|| b.keyword_rank.is_some().cmp(&a.keyword_rank.is_some()))
                .then_with(|| b.score.total_cmp(&a.score))
                .then_with(|| a.note_id.cmp(&b.note_id))
                .then_with(|| a.chunk_index.cmp(&b.chunk_index))
        });
        hits.truncate(k);
        let conn = self.conn();
        let mut st = conn.prepare_cached(
            "SELECT text FROM sem_chunks WHERE note_id = ?1 AND chunk_index = ?2",
        )?;
        for h in &mut hits {
            h.text = st
                .query_row(params![h.note_id, h.chunk_index], |r| r.get(0))
                .optional()?
                .unwrap_or_default();
        }
        Ok(hits)
    }
}
