//! The real all-MiniLM-L6-v2 (feature `local-model`). These tests are ignored by default;
//! `scripts/test.d/30-embeddings.sh` fetches the model and runs them with
//! `SIDENOTE_EMBED_MODEL_DIR` set and `--include-ignored`. When they run without a loadable
//! model they FAIL — they never pass silently.
#![cfg(feature = "local-model")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sidenote_index::embed::local::MiniLmEmbedder;
use sidenote_index::embed::{Embedder, dot};
use sidenote_index::*;
use sidenote_store::{Actor, NewNote, Store};
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

fn model() -> Arc<MiniLmEmbedder> {
    static MODEL: OnceLock<Arc<MiniLmEmbedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var("SIDENOTE_EMBED_MODEL_DIR").expect(
                "SIDENOTE_EMBED_MODEL_DIR must point at the all-MiniLM-L6-v2 directory \
                 (scripts/test.d/30-embeddings.sh sets it)",
            );
            Arc::new(
                MiniLmEmbedder::load(std::path::Path::new(&dir)).unwrap_or_else(|e| panic!("{e}")),
            )
        })
        .clone()
}

fn sim(a: &str, b: &str) -> f32 {
    let v = model().embed(&[a.to_string(), b.to_string()]).unwrap();
    assert_eq!(v[0].len(), 384);
    dot(&v[0], &v[1])
}

#[test]
#[ignore = "needs the real model: run scripts/test.d/30-embeddings.sh"]
fn reproduces_the_known_minilm_similarity() {
    let s = sim("A man is eating food.", "A man is eating a piece of bread.");
    eprintln!("cosine = {s:.6}");
    // Reference value of sentence-transformers/all-MiniLM-L6-v2 for this pair (≈ 0.755);
    // an independent numpy forward pass over the same weights (tests/xcheck_minilm.py)
    // gives 0.755337, which this implementation matches to 6 digits.
    assert!((s - 0.755337).abs() < 1e-3, "cosine {s}");
    // Vectors are unit length, and a batch gives the same vectors as single texts.
    let one = model().embed_query("A man is eating food.").unwrap();
    assert!((dot(&one, &one) - 1.0).abs() < 1e-4);
    let batch = model()
        .embed(&[
            "A man is eating food.".into(),
            "a much longer sentence that forces padding of the shorter one in the batch".into(),
        ])
        .unwrap();
    assert!(
        dot(&one, &batch[0]) > 0.9999,
        "padding must not change the vector"
    );
    // Unrelated text is far.
    assert!(sim("A man is eating food.", "The quarterly tax return is due.") < 0.2);
}

#[test]
#[ignore = "needs the real model: run scripts/test.d/30-embeddings.sh"]
fn texts_longer_than_256_tokens_are_truncated_not_rejected() {
    let long = "word ".repeat(2000);
    let v = model().embed(&[long]).unwrap();
    assert_eq!(v[0].len(), 384);
    assert!(v[0].iter().all(|x| x.is_finite()));
}

const DOG_TITLE: &str = "Rex's walker";
const DOG_BODY: &str = "Maria walks our beagle Rex on Tuesdays and Thursdays at noon. Leash hangs \
by front door; treats are in a blue jar. She charges 15 per walk; call her if Rex is unwell or \
if a vet visit moves.";

fn corpus() -> Vec<(&'static str, &'static str)> {
    vec![
        (DOG_TITLE, DOG_BODY),
        (
            "Sourdough",
            "Feed the starter with rye flour, bulk ferment overnight, bake at 250 C in the dutch oven.",
        ),
        (
            "Tax return 2025",
            "Collect the bank statements, the mortgage interest letter and the pension contributions before April.",
        ),
        (
            "Team meeting",
            "Agenda: roadmap review, hiring the backend engineer, on-call rotation for December.",
        ),
        (
            "Lisbon trip",
            "Flights booked for May; hotel in Alfama; visit Belem tower and eat pasteis de nata.",
        ),
        (
            "Car maintenance",
            "Oil change every 15000 km, tyres rotated in October, brake pads are worn.",
        ),
        (
            "Reading list",
            "Finish Middlemarch, then start the new Le Guin collection and a history of Rome.",
        ),
        (
            "Garden",
            "Plant tomatoes after the last frost; water the roses twice a week; prune the apple tree in winter.",
        ),
        (
            "Running plan",
            "Three easy runs a week, one long run on Sunday, aim for a half marathon in autumn.",
        ),
        (
            "Wifi",
            "Router admin page is at 192.168.1.1, the guest network password is on the fridge.",
        ),
        (
            "Kitchen renovation",
            "Quotes from three builders; the worktop is oak; the sink must move under the window.",
        ),
        (
            "Cat vaccination",
            "Milo needs his booster shot in March at the clinic on Oak street.",
        ),
        (
            "Piano practice",
            "Scales for ten minutes, then the Chopin nocturne, slow hands separately.",
        ),
        (
            "Budget",
            "Rent, utilities, groceries and savings: keep spending under the monthly limit.",
        ),
        (
            "Birthday ideas",
            "Anna would like a pottery class or a good pair of hiking boots.",
        ),
    ]
}

fn add(store: &Store, title: &str, body: &str) -> String {
    store
        .create_note(
            &Actor::Cli,
            NewNote {
                title: title.into(),
                body: body.into(),
                ..Default::default()
            },
        )
        .unwrap()
        .id
}

fn words(s: &str) -> HashSet<String> {
    s.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "needs the real model: run scripts/test.d/30-embeddings.sh"]
fn finds_the_dog_walker_note_without_a_shared_keyword() {
    let query = "the note about pet sitters for my dog";
    // Sanity of the fixture: not one word in common (stop words included).
    let shared: Vec<String> = words(query)
        .intersection(&words(&format!("{DOG_TITLE} {DOG_BODY}")))
        .cloned()
        .collect();
    assert!(
        shared.is_empty(),
        "fixture shares words with the query: {shared:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut ids = Vec::new();
    for (t, b) in corpus() {
        ids.push(add(&store, t, b));
    }
    let dog = ids[0].clone();
    let index = SemanticIndex::open(store.clone(), model()).unwrap();
    let r = index.sync(&mut |_| {}, None).unwrap();
    assert_eq!(r.notes_indexed, ids.len());

    let calib = index
        .search(&SearchRequest {
            relevance: Relevance::Loose,
            limit: Some(50),
            hybrid: false,
            query: Query::Text(query.into()),
            scope: Scope::All,
        })
        .unwrap();
    eprintln!("all scores for {query:?}:");
    for h in &calib {
        eprintln!(
            "  {:.3}  {}",
            h.score,
            store.note(&h.note_id).unwrap().unwrap().title
        );
    }
    for hybrid in [true, false] {
        let hits = index
            .search(&SearchRequest {
                hybrid,
                ..SearchRequest::text(query)
            })
            .unwrap();
        eprintln!("hybrid={hybrid}");
        for h in &hits {
            let title = store.note(&h.note_id).unwrap().unwrap().title;
            eprintln!("  {:.3}  {title}", h.score);
        }
        assert_eq!(
            hits.first().map(|h| h.note_id.as_str()),
            Some(dog.as_str()),
            "hybrid={hybrid}"
        );
    }

    // Calibration: print all scores for the query, then check the presets' cut-offs behave.
    let all = index
        .search(&SearchRequest {
            relevance: Relevance::Loose,
            limit: Some(50),
            hybrid: false,
            ..SearchRequest::text(query)
        })
        .unwrap();
    let dog_score = all[0].score;
    let presets = Presets::MINILM;
    assert!(dog_score >= presets.normal.min_score, "{dog_score}");
    let strict = index
        .search(&SearchRequest {
            relevance: Relevance::Strict,
            hybrid: false,
            ..SearchRequest::text(query)
        })
        .unwrap();
    assert!(strict.iter().all(|h| h.score >= presets.strict.min_score));
    let loose = index
        .search(&SearchRequest {
            relevance: Relevance::Loose,
            hybrid: false,
            ..SearchRequest::text(query)
        })
        .unwrap();
    assert!(loose.len() >= strict.len());
    // An unrelated query finds (almost) nothing at the strict level.
    let none = index
        .search(&SearchRequest {
            relevance: Relevance::Strict,
            hybrid: false,
            ..SearchRequest::text("quantum chromodynamics lecture")
        })
        .unwrap();
    eprintln!("strict hits for an unrelated query: {}", none.len());
    assert!(none.is_empty(), "{none:?}");

    // Other by-meaning queries.
    for (q, want) in [
        ("how do I make bread", "Sourdough"),
        ("vacation in Portugal", "Lisbon trip"),
        (
            "what should I give my friend for her birthday",
            "Birthday ideas",
        ),
        ("the cat's shots at the vet", "Cat vaccination"),
    ] {
        let hits = index
            .search(&SearchRequest {
                relevance: Relevance::Loose,
                ..SearchRequest::text(q)
            })
            .unwrap();
        let title = store.note(&hits[0].note_id).unwrap().unwrap().title;
        eprintln!(
            "{q:?} -> {title} ({:.3}), next best {:.3}",
            hits[0].score,
            hits.get(1).map_or(0.0, |h| h.score)
        );
        assert_eq!(title, want, "{q}");
    }
}
