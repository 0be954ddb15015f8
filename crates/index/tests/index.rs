//! The index with deterministic test embedders (no model needed).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sidenote_index::embed::{Embedder, HashEmbedder};
use sidenote_index::*;
use sidenote_store::{Actor, NewNote, NotePatch, Store};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn user() -> Actor {
    Actor::Cli
}

fn note(store: &Store, title: &str, body: &str, notebook: Option<&str>) -> String {
    store
        .create_note(
            &user(),
            NewNote {
                title: title.into(),
                body: body.into(),
                parent_id: notebook.map(str::to_string),
                ..Default::default()
            },
        )
        .unwrap()
        .id
}

/// Open test presets: the hash embedder's scores are not MiniLM's.
fn open_presets() -> Presets {
    Presets {
        strict: Preset {
            k: 2,
            min_score: 0.5,
        },
        normal: Preset {
            k: 5,
            min_score: 0.0,
        },
        loose: Preset {
            k: 20,
            min_score: -1.0,
        },
    }
}

fn open(store: &Store, e: Arc<HashEmbedder>) -> SemanticIndex {
    SemanticIndex::open(store.clone(), e)
        .unwrap()
        .with_presets(open_presets())
}

fn long_body(seed: &str, sections: usize) -> String {
    (0..sections)
        .map(|s| {
            let words: Vec<String> = (0..150).map(|i| format!("{seed}{s}w{i}")).collect();
            format!("## Part {s}\n\n{}", words.join(" "))
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn incremental_indexing_embeds_only_changed_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let big = note(&store, "Big", &long_body("a", 4), None);
    for i in 0..5 {
        note(
            &store,
            &format!("Small {i}"),
            &format!("short note number {i}"),
            None,
        );
    }
    let e = Arc::new(HashEmbedder::new("hash-a", 64));
    let index = open(&store, e.clone());
    let r = index.sync(&mut |_| {}, None).unwrap();
    let status = index.status().unwrap();
    assert_eq!(status.indexed_notes, 6);
    assert_eq!(status.total_notes, 6);
    assert!(status.is_complete(), "{status:?}");
    assert_eq!(r.notes_indexed, 6);
    assert_eq!(
        e.embedded_texts(),
        status.chunks,
        "every chunk embedded once"
    );
    let big_chunks = status.chunks - 5;
    assert!(big_chunks >= 4, "{big_chunks}");

    // Nothing changed: nothing embedded.
    let before = e.embedded_texts();
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(e.embedded_texts(), before);
    assert_eq!(r.chunks_embedded, 0);

    // Change one section of the big note: only its chunk(s) are re-embedded.
    let body = store.note(&big).unwrap().unwrap().body;
    let changed = body.replace("a3w7 ", "CHANGED ");
    assert_ne!(body, changed);
    store
        .update_note(
            &user(),
            &big,
            NotePatch {
                body: Some(changed),
                ..Default::default()
            },
        )
        .unwrap();
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(r.notes_indexed, 1);
    assert!(
        r.chunks_embedded >= 1 && r.chunks_embedded < big_chunks,
        "{r:?}"
    );
    assert_eq!(r.chunks_embedded + r.chunks_reused, big_chunks, "{r:?}");
    assert_eq!(e.embedded_texts() - before, r.chunks_embedded);

    // Trash: removed from the index (vectors dropped); restore: indexed again.
    let before = e.embedded_texts();
    store.trash_note(&user(), &big).unwrap();
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(r.notes_removed, 1);
    assert_eq!(index.status().unwrap().total_notes, 5);
    store.restore_note(&user(), &big).unwrap();
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(r.notes_indexed, 1);
    assert_eq!(r.chunks_embedded, big_chunks, "{r:?}");
    assert_eq!(e.embedded_texts(), before + big_chunks);
    assert!(index.status().unwrap().is_complete());
}

#[test]
fn a_model_change_reindexes_instead_of_mixing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 0..3 {
        note(&store, &format!("N{i}"), "some text here", None);
    }
    let a = Arc::new(HashEmbedder::new("model-a", 32));
    let index = open(&store, a.clone());
    index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(index.status().unwrap().indexed_notes, 3);
    drop(index);

    // Same model again: nothing to do.
    let index = open(&store, a.clone());
    assert_eq!(index.status().unwrap().indexed_notes, 3);
    assert_eq!(index.sync(&mut |_| {}, None).unwrap().chunks_embedded, 0);
    drop(index);

    // Another model (and another dimension): cleared, rebuilt with the new one only.
    let b = Arc::new(HashEmbedder::new("model-b", 48));
    let index = open(&store, b.clone());
    let s = index.status().unwrap();
    assert_eq!(
        (s.indexed_notes, s.chunks, s.model.as_str()),
        (0, 0, "model-b")
    );
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(r.chunks_embedded, 3);
    assert_eq!(b.embedded_texts(), 3);
    let hits = index.search(&SearchRequest::text("some text")).unwrap();
    assert_eq!(hits.len(), 3);
}

#[test]
fn an_interrupted_initial_scan_resumes_without_re_embedding() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for i in 0..80 {
        note(
            &store,
            &format!("Note {i}"),
            &format!("body of note {i}"),
            None,
        );
    }
    let e = Arc::new(HashEmbedder::new("hash", 32));
    let stop = AtomicBool::new(false);
    {
        let index = open(&store, e.clone());
        let r = index
            .sync(
                &mut |p| {
                    if p.done > 0 {
                        stop.store(true, Ordering::SeqCst); // "crash" after the first round
                    }
                },
                Some(&stop),
            )
            .unwrap();
        assert!(r.interrupted);
        let s = index.status().unwrap();
        assert!(!s.initial_scan_done);
        assert!(s.indexed_notes > 0 && s.indexed_notes < 80, "{s:?}");
    }
    let done_first = e.embedded_texts();
    let index = open(&store, e.clone());
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert!(!r.interrupted);
    assert_eq!(r.chunks_embedded, 80 - done_first);
    assert_eq!(e.embedded_texts(), 80);
    assert!(index.status().unwrap().is_complete());
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: Store,
    index: SemanticIndex,
    work: String,
    home: String,
    dog: String,
    taxes: String,
    garden: String,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let work = store.create_notebook(&user(), "Work", None).unwrap().id;
    let home = store.create_notebook(&user(), "Home", None).unwrap().id;
    let dog = note(
        &store,
        "Dog walker",
        "walker for the dog comes tuesday",
        Some(&home),
    );
    let taxes = note(
        &store,
        "Taxes",
        "quarterly tax return paperwork",
        Some(&work),
    );
    let garden = note(
        &store,
        "Garden",
        "plant tomatoes and water the dog roses",
        Some(&home),
    );
    note(
        &store,
        "Meeting",
        "project meeting notes with the team",
        Some(&work),
    );
    store.add_tag(&user(), &dog, "pets").unwrap();
    store.add_tag(&user(), &garden, "pets").unwrap();
    let index = open(&store, Arc::new(HashEmbedder::new("hash", 128)));
    index.sync(&mut |_| {}, None).unwrap();
    Fixture {
        _dir: dir,
        store,
        index,
        work,
        home,
        dog,
        taxes,
        garden,
    }
}

fn ids(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.note_id.as_str()).collect()
}

#[test]
fn scopes_restrict_results() {
    let f = fixture();
    let q = |scope: Scope| {
        f.index
            .search(&SearchRequest {
                scope,
                relevance: Relevance::Loose,
                ..SearchRequest::text("dog")
            })
            .unwrap()
    };
    let all = q(Scope::All);
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].note_id, f.dog);
    assert!(all[0].text.contains("walker for the dog"));
    let work = q(Scope::Notebook(f.work.clone()));
    assert_eq!(work.len(), 2);
    assert!(ids(&work).contains(&f.taxes.as_str()));
    let home = q(Scope::Notebook(f.home.clone()));
    assert_eq!(ids(&home).len(), 2);
    let tag = f.store.tag_by_title("pets").unwrap().unwrap().id;
    let mut tagged = ids(&q(Scope::Tag(tag)))
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    tagged.sort();
    let mut want = vec![f.dog.clone(), f.garden.clone()];
    want.sort();
    assert_eq!(tagged, want);
    assert_eq!(
        ids(&q(Scope::Note(f.taxes.clone()))),
        vec![f.taxes.as_str()]
    );
    assert!(q(Scope::Notebook("0".repeat(32))).is_empty());
}

#[test]
fn presets_set_k_and_min_score() {
    let f = fixture();
    let q = |relevance| {
        f.index
            .search(&SearchRequest {
                relevance,
                hybrid: false,
                ..SearchRequest::text("walker for the dog")
            })
            .unwrap()
    };
    let loose = q(Relevance::Loose);
    let normal = q(Relevance::Normal);
    let strict = q(Relevance::Strict);
    assert_eq!(loose.len(), 4);
    assert!(normal.len() <= 5 && normal.iter().all(|h| h.score >= 0.0));
    assert!(!strict.is_empty() && strict.len() <= 2);
    assert!(strict.iter().all(|h| h.score >= 0.5), "{strict:?}");
    assert!(
        loose.iter().any(|h| h.score < 0.5),
        "the loose preset keeps weak hits"
    );
    assert_eq!(strict[0].note_id, f.dog);
    // Scores are sorted when hybrid is off, and rank_score is the cosine.
    assert!(loose.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(loose.iter().all(|h| h.rank_score == h.score));
    // An explicit limit wins over the preset's k.
    let one = f
        .index
        .search(&SearchRequest {
            limit: Some(1),
            relevance: Relevance::Loose,
            ..SearchRequest::text("dog")
        })
        .unwrap();
    assert_eq!(one.len(), 1);
}

#[test]
fn trashed_notes_are_never_returned_even_before_the_index_catches_up() {
    let f = fixture();
    f.store.trash_note(&user(), &f.dog).unwrap();
    // No sync yet: the vectors are still there, the search must still skip the note.
    let hits = f
        .index
        .search(&SearchRequest {
            relevance: Relevance::Loose,
            ..SearchRequest::text("dog walker")
        })
        .unwrap();
    assert!(!ids(&hits).contains(&f.dog.as_str()));
    assert!(!hits.is_empty());
}

#[test]
fn query_by_note_reuses_its_vectors_and_leaves_it_out() {
    let f = fixture();
    let e_before = {
        // The fixture's embedder is private; count via a fresh index on the same store.
        let e = Arc::new(HashEmbedder::new("hash", 128));
        let index = SemanticIndex::open(f.store.clone(), e.clone())
            .unwrap()
            .with_presets(open_presets());
        let hits = index
            .search(&SearchRequest {
                query: Query::LikeNote(f.dog.clone()),
                scope: Scope::All,
                relevance: Relevance::Loose,
                hybrid: true,
                limit: None,
            })
            .unwrap();
        assert!(!ids(&hits).contains(&f.dog.as_str()));
        assert_eq!(hits[0].note_id, f.garden, "shares 'dog' and 'the'");
        e.calls()
    };
    assert_eq!(e_before, 0, "no embedding call for a by-note query");
    // An unindexed note gives no results, not an error.
    let hits = f
        .index
        .search(&SearchRequest {
            query: Query::LikeNote("f".repeat(32)),
            scope: Scope::All,
            relevance: Relevance::Loose,
            hybrid: false,
            limit: None,
        })
        .unwrap();
    assert!(hits.is_empty());
    assert!(
        f.index
            .search(&SearchRequest::text("   "))
            .unwrap()
            .is_empty()
    );
}

/// An embedder that knows three fixed directions; the query for a name is far from the note
/// carrying that name, so only the keyword half of the hybrid search can find it first.
struct FixedEmbedder;
impl Embedder for FixedEmbedder {
    fn model_id(&self) -> &str {
        "fixed"
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = if t.contains("windmill") {
                    vec![0.25, 0.97, 0.0]
                } else if t.contains("knight") {
                    vec![0.9, 0.43, 0.0]
                } else if t.contains("Quixote") {
                    vec![1.0, 0.0, 0.0]
                } else {
                    vec![0.0, 0.0, 1.0]
                };
                sidenote_index::embed::normalize(&mut v);
                v
            })
            .collect())
    }
}

#[test]
fn hybrid_lets_exact_names_win() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let named = note(&store, "Quixote", "tilting at a windmill", None);
    let similar = note(&store, "Errant", "a knight on a horse", None);
    note(&store, "Other", "unrelated", None);
    let index = SemanticIndex::open(store.clone(), Arc::new(FixedEmbedder)).unwrap();
    index.sync(&mut |_| {}, None).unwrap();
    let req = |hybrid| SearchRequest {
        hybrid,
        relevance: Relevance::Loose,
        ..SearchRequest::text("Quixote")
    };
    let vector_only = index.search(&req(false)).unwrap();
    assert_eq!(ids(&vector_only)[..2], [similar.as_str(), named.as_str()]);
    assert!(vector_only.iter().all(|h| h.keyword_rank.is_none()));
    let hybrid = index.search(&req(true)).unwrap();
    assert_eq!(hybrid[0].note_id, named, "{hybrid:?}");
    assert_eq!(hybrid[0].keyword_rank, Some(1));
    assert!(
        (hybrid[0].score - 0.25 / (0.25f32.hypot(0.97))).abs() < 1e-4,
        "score stays the cosine"
    );
    assert_eq!(hybrid[1].note_id, similar);
    // Strict (cut-off 0.35): the named note (cosine 0.25) is dropped as a vector hit, but
    // the keyword match keeps it.
    let strict = index
        .search(&SearchRequest {
            relevance: Relevance::Strict,
            ..SearchRequest::text("Quixote")
        })
        .unwrap();
    assert_eq!(strict[0].note_id, named);
    let strict_vec = index
        .search(&SearchRequest {
            relevance: Relevance::Strict,
            hybrid: false,
            ..SearchRequest::text("Quixote")
        })
        .unwrap();
    assert_eq!(ids(&strict_vec), vec![similar.as_str()]);
}

#[test]
fn the_background_indexer_follows_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    note(&store, "First", "alpha bravo", None);
    let index = Arc::new(open(&store, Arc::new(HashEmbedder::new("hash", 64))));
    let bg = BackgroundIndexer::spawn(index.clone(), Duration::from_millis(50)).unwrap();
    let wait = |pred: &dyn Fn(&Status) -> bool| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let s = index.status().unwrap();
            if pred(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "indexer did not catch up: {s:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait(&|s| s.is_complete() && s.indexed_notes == 1);
    let second = note(&store, "Second", "charlie delta echo", None);
    bg.poke();
    wait(&|s| s.is_complete() && s.indexed_notes == 2);
    let hits = index.search(&SearchRequest::text("charlie delta")).unwrap();
    assert_eq!(hits[0].note_id, second);
    // Keyword search is not blocked meanwhile.
    assert_eq!(store.search("charlie", 10).unwrap().total, 1);
    store.trash_note(&user(), &second).unwrap();
    bg.poke();
    wait(&|s| s.is_complete() && s.indexed_notes == 1 && s.total_notes == 1);
    assert!(bg.last_error().is_none());
    bg.stop();
}
