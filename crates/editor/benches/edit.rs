//! Propose + accept one edit on a 1 MB note.
//!
//! Run: `CARGO_TARGET_DIR=/work/target cargo bench -p sidenote-editor --bench edit`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use sidenote_editor::{EditorSession, dispatch};
use std::hint::black_box;

/// About `bytes` of Markdown: headed paragraphs, a few fenced blocks, a unique marker paragraph
/// in the middle. `accent` mixes in non-ASCII text (so char and byte offsets differ).
fn note(bytes: usize, accent: bool) -> String {
    let word = if accent { "café" } else { "cafe" };
    let mut s = String::with_capacity(bytes + 1024);
    let mut i = 0usize;
    while s.len() < bytes {
        if i == 4480 {
            s.push_str("The unique marker paragraph sits in the middle of the note.\n\n");
        }
        if i.is_multiple_of(50) {
            s.push_str(&format!(
                "## Section {i}\n\n```mermaid\ngraph TD\n  A{i}-->B\n```\n\n"
            ));
        }
        s.push_str(&format!(
            "Paragraph {i} talks about the {word} near the lake and the gear we packed.\nA second line keeps it a real paragraph.\n\n"
        ));
        i += 1;
    }
    s
}

fn bench(c: &mut Criterion) {
    for accent in [false, true] {
        let text = note(1 << 20, accent);
        let base = EditorSession::new("0123456789abcdef0123456789abcdef", text.as_str());
        let label = if accent { "non-ascii" } else { "ascii" };
        let mut group = c.benchmark_group(format!("editor_1mb_{label}"));
        group.bench_function("rewrite_paragraph+accept", |b| {
            b.iter_batched(
                || base.clone(),
                |mut s| {
                    let out = dispatch(
                        &mut s,
                        "rewrite_paragraph",
                        &json!({"anchor": "unique marker", "text": "A rewritten middle paragraph."}),
                    )
                    .unwrap();
                    black_box(&out);
                    let acc = s.accept_all();
                    assert!(acc.changed);
                    s
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function("insert_after_anchor+accept", |b| {
            b.iter_batched(
                || base.clone(),
                |mut s| {
                    let out = dispatch(
                        &mut s,
                        "insert_after_anchor",
                        &json!({"anchor": "unique marker", "text": " (edited)"}),
                    )
                    .unwrap();
                    black_box(&out);
                    assert!(s.accept_all().changed);
                    s
                },
                BatchSize::LargeInput,
            )
        });
        group.bench_function("append_to_note+accept+undo", |b| {
            b.iter_batched(
                || base.clone(),
                |mut s| {
                    dispatch(&mut s, "append_to_note", &json!({"text": "PS: done."})).unwrap();
                    assert!(s.accept_all().changed);
                    assert!(s.undo());
                    s
                },
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
