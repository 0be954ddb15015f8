//! Semantic index benchmarks.
//!
//! - `scan/10k`, `scan/100k`: one query against 10 000 / 100 000 random 384-d unit vectors
//!   (top-10, no cut-off: the worst case for the heap).
//! - `embed/64_chunks` and `sync/100_notes` (feature `local-model`, with
//!   `SIDENOTE_EMBED_MODEL_DIR` pointing at all-MiniLM-L6-v2): indexing throughput with the
//!   real model — chunks embedded per second, one query embedding, and whole syncs of 100
//!   generated notes (3-paragraph and one-paragraph).
//!
//! `SIDENOTE_EMBED_MODEL_DIR=.tmp/embed-model/all-MiniLM-L6-v2 \
//!  cargo bench -p sidenote-index --features local-model --bench scan`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sidenote_index::vectors::{Filter, VectorSet};
use std::collections::HashSet;
use std::hint::black_box;

const DIM: usize = 384;

/// xorshift64*: deterministic pseudo-random numbers without a dependency.
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545F4914F6CDD1D);
        ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn unit(&mut self) -> Vec<f32> {
        let mut v: Vec<f32> = (0..DIM).map(|_| self.next_f32()).collect();
        sidenote_index::embed::normalize(&mut v);
        v
    }
}

fn vector_set(chunks: usize) -> VectorSet {
    let mut rng = Rng(0x9E3779B97F4A7C15);
    let mut set = VectorSet::new(DIM);
    // ~4 chunks per note, like a workspace of medium-sized notes.
    for i in 0..chunks {
        set.push(&format!("{:032x}", i / 4), (i % 4) as u32, &rng.unit());
    }
    set
}

fn scan(c: &mut Criterion) {
    let mut g = c.benchmark_group("scan");
    let none = HashSet::new();
    for n in [10_000usize, 100_000] {
        let set = vector_set(n);
        let q = vec![Rng(42).unit()];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::from_parameter(n), &set, |b, set| {
            b.iter(|| {
                let f = Filter {
                    only: None,
                    exclude: &none,
                };
                black_box(set.top_k(black_box(&q), 10, -1.0, &f))
            })
        });
    }
    g.finish();
}

#[cfg(feature = "local-model")]
fn real_model(c: &mut Criterion) {
    use sidenote_index::embed::Embedder;
    use sidenote_index::embed::local::MiniLmEmbedder;
    use std::sync::Arc;
    let Ok(dir) = std::env::var("SIDENOTE_EMBED_MODEL_DIR") else {
        eprintln!("SIDENOTE_EMBED_MODEL_DIR not set: skipping the real-model benchmarks");
        return;
    };
    let model = Arc::new(MiniLmEmbedder::load(std::path::Path::new(&dir)).unwrap());
    let words = [
        "meeting", "garden", "invoice", "travel", "recipe", "budget", "project", "deadline",
        "family", "doctor", "holiday", "review", "kitchen", "library", "train", "weather",
    ];
    let mut rng = Rng(7);
    let mut body = |paras: usize| {
        (0..paras)
            .map(|_| {
                (0..60)
                    .map(|_| words[((rng.next_f32() + 1.0) * 7.99) as usize % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ")
                    + "."
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    // Realistic chunk sizes: what the chunker makes of generated notes.
    let cfg = sidenote_index::chunk::ChunkConfig::default();
    let chunks: Vec<String> = (0..32)
        .flat_map(|i| sidenote_index::chunk::chunk_note(&format!("Note {i}"), &body(5), &cfg))
        .map(|c| c.embed_text)
        .take(64)
        .collect();
    let tokens: usize = chunks.iter().map(|c| c.split_whitespace().count()).sum();
    eprintln!("embed: {} chunks, {tokens} words", chunks.len());
    let mut g = c.benchmark_group("embed");
    g.sample_size(10);
    g.throughput(Throughput::Elements(chunks.len() as u64));
    g.bench_function(format!("{}_chunks", chunks.len()), |b| {
        b.iter(|| black_box(model.embed(&chunks).unwrap()))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("query", |b| {
        b.iter(|| {
            black_box(
                model
                    .embed_query("the note about pet sitters for my dog")
                    .unwrap(),
            )
        })
    });
    g.finish();

    // Whole syncs: 100 notes of 3 paragraphs (~2 chunks each) and 100 one-paragraph notes.
    let long: Vec<(String, String)> = (0..100).map(|i| (format!("Note {i}"), body(3))).collect();
    let short: Vec<(String, String)> = (0..100).map(|i| (format!("Memo {i}"), body(1))).collect();
    let mut g = c.benchmark_group("sync");
    g.sample_size(10);
    for (name, notes) in [("100_notes", &long), ("100_short_notes", &short)] {
        let chunks: usize = notes
            .iter()
            .map(|(t, b)| sidenote_index::chunk::chunk_note(t, b, &cfg).len())
            .sum();
        eprintln!("sync/{name}: {chunks} chunks");
        g.throughput(Throughput::Elements(notes.len() as u64));
        g.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let dir = tempfile::tempdir().unwrap();
                    let store = sidenote_store::Store::open(dir.path()).unwrap();
                    let new: Vec<sidenote_store::NewNote> = notes
                        .iter()
                        .map(|(t, b)| sidenote_store::NewNote {
                            title: t.clone(),
                            body: b.clone(),
                            ..Default::default()
                        })
                        .collect();
                    store
                        .create_notes_bulk(&sidenote_store::Actor::Import, new)
                        .unwrap();
                    let index = sidenote_index::SemanticIndex::open(store, model.clone()).unwrap();
                    (dir, index)
                },
                |(dir, index)| {
                    let r = index.sync(&mut |_| {}, None).unwrap();
                    assert_eq!(r.notes_indexed, 100);
                    drop(index);
                    drop(dir);
                },
                criterion::BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

#[cfg(not(feature = "local-model"))]
fn real_model(_c: &mut Criterion) {}

criterion_group!(benches, scan, real_model);
criterion_main!(benches);
