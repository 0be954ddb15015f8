//! The in-memory vector set: every indexed chunk's unit vector, grouped by note, scanned in
//! Rust with a dot product (= cosine for unit vectors) and a bounded min-heap for top-k.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// One note's chunk vectors, row-major (`chunks.len() × dim`).
#[derive(Debug, Clone, Default)]
pub struct NoteVectors {
    pub chunks: Vec<u32>,
    pub data: Vec<f32>,
}

/// A scored chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub note_id: String,
    pub chunk_index: u32,
    pub score: f32,
}

#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    dim: usize,
    notes: HashMap<String, NoteVectors>,
    rows: usize,
}

/// Which notes a scan may return.
pub struct Filter<'a> {
    /// Only these notes (`None` = all).
    pub only: Option<&'a HashSet<String>>,
    /// Never these notes.
    pub exclude: &'a HashSet<String>,
}

struct HeapItem<'a> {
    score: f32,
    note: &'a str,
    chunk: u32,
}
impl PartialEq for HeapItem<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for HeapItem<'_> {}
impl PartialOrd for HeapItem<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapItem<'_> {
    // Reversed so the BinaryHeap (a max-heap) keeps the worst item on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .score
            .total_cmp(&self.score)
            .then_with(|| self.note.cmp(other.note))
            .then_with(|| self.chunk.cmp(&other.chunk))
    }
}

impl VectorSet {
    pub fn new(dim: usize) -> Self {
        VectorSet {
            dim,
            notes: HashMap::new(),
            rows: 0,
        }
    }
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Number of chunk vectors.
    pub fn len(&self) -> usize {
        self.rows
    }
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
    pub fn note(&self, note_id: &str) -> Option<&NoteVectors> {
        self.notes.get(note_id)
    }
    /// Replace a note's vectors (`data.len()` must be `chunks.len() × dim`).
    pub fn set_note(&mut self, note_id: &str, v: NoteVectors) -> bool {
        if v.data.len() != v.chunks.len() * self.dim {
            return false;
        }
        self.remove_note(note_id);
        self.rows += v.chunks.len();
        if !v.chunks.is_empty() {
            self.notes.insert(note_id.to_string(), v);
        }
        true
    }
    /// Append one chunk vector to a note (used while loading, in chunk order).
    pub fn push(&mut self, note_id: &str, chunk: u32, vector: &[f32]) -> bool {
        if vector.len() != self.dim {
            return false;
        }
        let e = self.notes.entry(note_id.to_string()).or_default();
        e.chunks.push(chunk);
        e.data.extend_from_slice(vector);
        self.rows += 1;
        true
    }
    pub fn remove_note(&mut self, note_id: &str) {
        if let Some(old) = self.notes.remove(note_id) {
            self.rows -= old.chunks.len();
        }
    }

    /// The best `k` chunks with score ≥ `min_score` against any of `queries` (max over
    /// queries), best first.
    pub fn top_k<'a>(
        &'a self,
        queries: &[Vec<f32>],
        k: usize,
        min_score: f32,
        filter: &Filter,
    ) -> Vec<Scored> {
        if k == 0 || queries.is_empty() {
            return Vec::new();
        }
        let dim = self.dim;
        let queries: Vec<&[f32]> = queries
            .iter()
            .filter(|q| q.len() == dim)
            .map(Vec::as_slice)
            .collect();
        let mut heap: BinaryHeap<HeapItem> = BinaryHeap::with_capacity(k + 1);
        let mut visit = |note: &'a str, nv: &'a NoteVectors| {
            visit_note(&mut heap, &queries, dim, k, min_score, filter, note, nv);
        };
        match filter.only {
            // A small scope: look its notes up instead of scanning everything.
            Some(only) if only.len() < self.notes.len() => {
                for id in only {
                    if let Some((k, nv)) = self.notes.get_key_value(id.as_str()) {
                        visit(k, nv);
                    }
                }
            }
            Some(only) => {
                for (id, nv) in &self.notes {
                    if only.contains(id) {
                        visit(id, nv);
                    }
                }
            }
            None => {
                for (id, nv) in &self.notes {
                    visit(id, nv);
                }
            }
        }
        let mut out: Vec<Scored> = heap
            .into_iter()
            .map(|h| Scored {
                note_id: h.note.to_string(),
                chunk_index: h.chunk,
                score: h.score,
            })
            .collect();
        out.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.note_id.cmp(&b.note_id))
                .then_with(|| a.chunk_index.cmp(&b.chunk_index))
        });
        out
    }

    /// A note's best chunk against the query vectors.
    pub fn best_chunk(&self, note_id: &str, queries: &[Vec<f32>]) -> Option<(u32, f32)> {
        let nv = self.notes.get(note_id)?;
        let dim = self.dim;
        let mut best: Option<(u32, f32)> = None;
        for (row, &chunk) in nv.chunks.iter().enumerate() {
            let v = &nv.data[row * dim..(row + 1) * dim];
            let s = queries
                .iter()
                .filter(|q| q.len() == dim)
                .map(|q| dot(q, v))
                .fold(f32::MIN, f32::max);
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((chunk, s));
            }
        }
        best
    }
}

#[allow(clippy::too_many_arguments)]
fn visit_note<'a>(
    heap: &mut BinaryHeap<HeapItem<'a>>,
    queries: &[&[f32]],
    dim: usize,
    k: usize,
    min_score: f32,
    filter: &Filter,
    note: &'a str,
    nv: &'a NoteVectors,
) {
    if filter.exclude.contains(note) {
        return;
    }
    for (row, &chunk) in nv.chunks.iter().enumerate() {
        let v = &nv.data[row * dim..(row + 1) * dim];
        let mut score = f32::MIN;
        for q in queries {
            score = score.max(dot(q, v));
        }
        if score < min_score {
            continue;
        }
        if heap.len() == k {
            if let Some(worst) = heap.peek()
                && worst.score >= score
            {
                continue;
            }
            heap.pop();
        }
        heap.push(HeapItem { score, note, chunk });
    }
}

/// Dot product, unrolled in 8 lanes (the compiler vectorises it).
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let chunks = n / 8;
    for i in 0..chunks {
        let (x, y) = (&a[i * 8..i * 8 + 8], &b[i * 8..i * 8 + 8]);
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        s += a[i] * b[i];
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        crate::embed::normalize(&mut v);
        v
    }

    #[test]
    fn top_k_orders_filters_and_respects_min_score() {
        let mut s = VectorSet::new(3);
        s.push("a", 0, &unit(&[1.0, 0.0, 0.0]));
        s.push("a", 1, &unit(&[0.0, 1.0, 0.0]));
        s.push("b", 0, &unit(&[0.9, 0.1, 0.0]));
        s.push("c", 0, &unit(&[0.0, 0.0, 1.0]));
        assert_eq!(s.len(), 4);
        let q = vec![unit(&[1.0, 0.0, 0.0])];
        let none = HashSet::new();
        let all = Filter {
            only: None,
            exclude: &none,
        };
        let r = s.top_k(&q, 2, -1.0, &all);
        assert_eq!(
            r.iter()
                .map(|h| (h.note_id.as_str(), h.chunk_index))
                .collect::<Vec<_>>(),
            vec![("a", 0), ("b", 0)]
        );
        assert!((r[0].score - 1.0).abs() < 1e-6);
        // min score drops weak hits.
        assert_eq!(s.top_k(&q, 10, 0.5, &all).len(), 2);
        // exclusion and scope.
        let ex: HashSet<String> = ["a".to_string()].into();
        let r = s.top_k(
            &q,
            10,
            0.5,
            &Filter {
                only: None,
                exclude: &ex,
            },
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].note_id, "b");
        let only: HashSet<String> = ["c".to_string()].into();
        let r = s.top_k(
            &q,
            10,
            -1.0,
            &Filter {
                only: Some(&only),
                exclude: &none,
            },
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].note_id, "c");
        // replace and remove keep the row count right.
        assert!(s.set_note(
            "a",
            NoteVectors {
                chunks: vec![0],
                data: unit(&[0.0, 0.0, 1.0])
            }
        ));
        assert_eq!(s.len(), 3);
        s.remove_note("c");
        assert_eq!(s.len(), 2);
        assert!(!s.set_note(
            "x",
            NoteVectors {
                chunks: vec![0],
                data: vec![1.0]
            }
        ));
        assert_eq!(s.best_chunk("a", &q).map(|(c, _)| c), Some(0));
    }

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..384).map(|i| (i as f32 * 0.37).sin()).collect();
        let b: Vec<f32> = (0..384).map(|i| (i as f32 * 0.11).cos()).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }
}
