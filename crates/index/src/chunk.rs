//! Heading- and paragraph-aware Markdown chunking.
//!
//! The body is split into top-level Markdown blocks (headings, paragraphs, lists, code
//! blocks, tables, ...) with pulldown-cmark's source ranges. Blocks are packed into chunks of
//! about `target_tokens` (never more than `max_tokens`, estimated at ~4 characters per
//! token, which keeps MiniLM's 256-token truncation out of the way); a heading closes the
//! current chunk once it holds a little text, so sections stay together. A small trailing
//! block is carried into the next chunk as overlap, and a single block longer than
//! `max_tokens` is cut into overlapping windows at whitespace.
//!
//! Every chunk is keyed by a content hash of exactly what gets embedded (title for the
//! first chunk, the section heading, the text), so unchanged chunks are never re-embedded.

use pulldown_cmark::{Event, Options, Parser, Tag};
use sha2::{Digest, Sha256};

/// Sizes in estimated tokens (characters / 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkConfig {
    pub target_tokens: usize,
    pub max_tokens: usize,
    pub overlap_tokens: usize,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            target_tokens: 160,
            max_tokens: 224,
            overlap_tokens: 32,
        }
    }
}

/// One chunk of a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub index: u32,
    /// The chunk's Markdown, as shown to the user / the model.
    pub text: String,
    /// What is embedded: the note title (first chunk only), the enclosing heading when the
    /// chunk does not start with it, then the text.
    pub embed_text: String,
    /// Hex SHA-256 of `embed_text`.
    pub hash: String,
}

/// Estimated tokens of `s` (≈ 4 characters per token, at least 1 for non-empty text).
pub fn estimate_tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

pub fn content_hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[derive(Debug, Clone)]
struct Block {
    text: String,
    heading: bool,
}

/// Remove Joplin-style resource links' ids (`(:/<32 hex>)`), which carry no meaning.
fn strip_item_ids(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i + 2 <= bytes.len() {
        if bytes[i] == b':' && bytes.get(i + 1) == Some(&b'/') {
            let hex_end = i + 2 + 32;
            let is_id = hex_end <= bytes.len()
                && bytes[i + 2..hex_end]
                    .iter()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
                && bytes.get(hex_end).is_none_or(|b| !b.is_ascii_hexdigit());
            if is_id {
                // Drop surrounding parentheses too: "(:/id)".
                let (start, end) =
                    if i > 0 && bytes[i - 1] == b'(' && bytes.get(hex_end) == Some(&b')') {
                        (i - 1, hex_end + 1)
                    } else {
                        (i, hex_end)
                    };
                if start >= last {
                    out.push_str(&text[last..start]);
                    last = end;
                }
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&text[last.min(text.len())..]);
    out
}

fn blocks(body: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut heading = false;
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for (event, range) in Parser::new_ext(body, opts).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    start = range.start;
                    heading = matches!(tag, Tag::Heading { .. });
                }
                depth += 1;
            }
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let text = body.get(start..range.end).unwrap_or("").trim();
                    if !text.is_empty() {
                        out.push(Block {
                            text: text.to_string(),
                            heading,
                        });
                    }
                }
            }
            Event::Rule => {}
            _ if depth == 0 => {
                let text = body.get(range).unwrap_or("").trim();
                if !text.is_empty() {
                    out.push(Block {
                        text: text.to_string(),
                        heading: false,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Cut a long text into windows of at most `max_chars` characters that overlap by about
/// `overlap_chars`, preferring to cut at whitespace.
fn windows(text: &str, max_chars: usize, overlap_chars: usize) -> Vec<String> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let n = chars.len();
    if n <= max_chars {
        return vec![text.to_string()];
    }
    let byte_at = |ci: usize| chars.get(ci).map_or(text.len(), |&(b, _)| b);
    let mut out = Vec::new();
    let mut s = 0usize;
    loop {
        let mut e = (s + max_chars).min(n);
        if e < n {
            // Back off to the last whitespace in the second half of the window.
            let floor = s + max_chars / 2;
            if let Some(ws) = (floor..e).rev().find(|&i| chars[i].1.is_whitespace()) {
                e = ws;
            }
        }
        let piece = text[byte_at(s)..byte_at(e)].trim();
        if !piece.is_empty() {
            out.push(piece.to_string());
        }
        if e >= n {
            break;
        }
        let mut next = e.saturating_sub(overlap_chars).max(s + 1);
        // Start the next window at a word boundary.
        while next < e && !chars[next - 1].1.is_whitespace() {
            next += 1;
        }
        s = next;
    }
    out
}

/// Chunk a note. Empty title and body → no chunks.
pub fn chunk_note(title: &str, body: &str, cfg: &ChunkConfig) -> Vec<Chunk> {
    let title = title.trim();
    let body = strip_item_ids(body);
    let max_chars = cfg.max_tokens.max(8) * 4;
    let target = cfg.target_tokens.clamp(1, cfg.max_tokens.max(1));
    let overlap = cfg.overlap_tokens.min(cfg.max_tokens / 2);

    // Pieces no longer than max_chars, each with the heading it falls under.
    let mut pieces: Vec<(Block, Option<String>)> = Vec::new();
    let mut current_heading: Option<String> = None;
    for b in blocks(&body) {
        if b.heading {
            current_heading = Some(b.text.clone());
        }
        for w in windows(&b.text, max_chars, overlap * 4) {
            pieces.push((
                Block {
                    text: w,
                    heading: b.heading,
                },
                current_heading.clone(),
            ));
        }
    }

    let mut groups: Vec<(Vec<Block>, Option<String>)> = Vec::new();
    let mut cur: Vec<Block> = Vec::new();
    let mut cur_heading: Option<String> = None;
    let mut cur_tokens = 0usize;
    for (piece, heading) in pieces {
        let t = estimate_tokens(&piece.text);
        let heading_break = piece.heading && cur_tokens >= target / 4;
        let full = cur_tokens + t > cfg.max_tokens || cur_tokens >= target;
        if !cur.is_empty() && (heading_break || full) {
            // Carry a small last block over as overlap (not at a section break).
            let carry = if !heading_break {
                cur.last()
                    .filter(|b| !b.heading && estimate_tokens(&b.text) <= overlap)
                    .filter(|b| estimate_tokens(&b.text) + t <= cfg.max_tokens)
                    .cloned()
            } else {
                None
            };
            groups.push((std::mem::take(&mut cur), cur_heading.take()));
            cur_tokens = 0;
            if let Some(c) = carry {
                cur_tokens += estimate_tokens(&c.text);
                cur.push(c);
            }
        }
        if cur.is_empty() || cur_heading.is_none() {
            cur_heading = heading;
        }
        cur_tokens += t;
        cur.push(piece);
    }
    if !cur.is_empty() {
        groups.push((cur, cur_heading));
    }

    let mut out = Vec::new();
    if groups.is_empty() {
        if title.is_empty() {
            return out;
        }
        groups.push((Vec::new(), None));
    }
    for (i, (blocks, heading)) in groups.into_iter().enumerate() {
        let text = blocks
            .iter()
            .map(|b| b.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let mut embed = String::new();
        if i == 0 && !title.is_empty() {
            embed.push_str(title);
            embed.push_str("\n\n");
        }
        if let Some(h) = heading.filter(|h| !text.starts_with(h.as_str())) {
            embed.push_str(&h);
            embed.push_str("\n\n");
        }
        embed.push_str(&text);
        let embed_text = embed.trim().to_string();
        let text = if text.is_empty() {
            title.to_string()
        } else {
            text
        };
        out.push(Chunk {
            index: u32::try_from(i).unwrap_or(u32::MAX),
            hash: content_hash(&embed_text),
            text,
            embed_text,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn para(words: usize, seed: &str) -> String {
        (0..words)
            .map(|i| format!("{seed}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn empty_note_has_no_chunks_and_title_only_has_one() {
        assert!(chunk_note("", "  \n", &ChunkConfig::default()).is_empty());
        let c = chunk_note("Groceries", "", &ChunkConfig::default());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].text, "Groceries");
        assert_eq!(c[0].embed_text, "Groceries");
    }

    #[test]
    fn short_note_is_one_chunk_with_title_in_embed_text() {
        let c = chunk_note(
            "Dog",
            "Walk Rex at 7.\n\nFeed him twice.",
            &ChunkConfig::default(),
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].text, "Walk Rex at 7.\n\nFeed him twice.");
        assert_eq!(c[0].embed_text, "Dog\n\nWalk Rex at 7.\n\nFeed him twice.");
        assert_eq!(c[0].hash, content_hash(&c[0].embed_text));
    }

    #[test]
    fn chunks_respect_max_size_and_follow_headings() {
        let cfg = ChunkConfig::default();
        let mut body = String::new();
        for s in 0..4 {
            body.push_str(&format!("## Section {s}\n\n"));
            for p in 0..3 {
                body.push_str(&para(40, &format!("w{s}{p}x")));
                body.push_str("\n\n");
            }
        }
        let chunks = chunk_note("T", &body, &cfg);
        assert!(chunks.len() >= 4, "{} chunks", chunks.len());
        for c in &chunks {
            assert!(
                estimate_tokens(&c.text) <= cfg.max_tokens,
                "{}",
                c.text.len()
            );
        }
        // Every chunk that does not start with its heading gets it in the embed text.
        for c in &chunks[1..] {
            assert!(c.embed_text.starts_with("## Section"), "{}", c.embed_text);
        }
        // Sections start chunks: each heading begins some chunk.
        for s in 0..4 {
            let h = format!("## Section {s}");
            assert!(chunks.iter().any(|c| c.text.starts_with(&h)), "{h}");
        }
        let idx: Vec<u32> = chunks.iter().map(|c| c.index).collect();
        assert_eq!(idx, (0..chunks.len() as u32).collect::<Vec<_>>());
    }

    #[test]
    fn a_huge_paragraph_is_windowed_with_overlap() {
        let cfg = ChunkConfig::default();
        let body = para(1000, "tok");
        let chunks = chunk_note("", &body, &cfg);
        assert!(chunks.len() >= 5);
        for pair in chunks.windows(2) {
            assert!(estimate_tokens(&pair[0].text) <= cfg.max_tokens);
            // The first word of the next window appears in the previous one (overlap).
            let first = pair[1].text.split_whitespace().next().unwrap();
            assert!(
                pair[0].text.split_whitespace().any(|w| w == first),
                "{first}"
            );
        }
        // Nothing lost: the last word is in the last chunk.
        assert!(chunks.last().unwrap().text.ends_with("tok999"));
    }

    #[test]
    fn unchanged_paragraphs_keep_their_hash_when_another_changes() {
        let cfg = ChunkConfig::default();
        let sections: Vec<String> = (0..3)
            .map(|s| format!("## S{s}\n\n{}", para(150, &format!("p{s}"))))
            .collect();
        let a = chunk_note("T", &sections.join("\n\n"), &cfg);
        let mut changed = sections.clone();
        changed[2] = format!("## S2\n\n{}", para(150, "q2"));
        let b = chunk_note("T", &changed.join("\n\n"), &cfg);
        assert_eq!(a.len(), b.len());
        let same = a.iter().zip(&b).filter(|(x, y)| x.hash == y.hash).count();
        assert!(same >= 1 && same < a.len(), "same={same} of {}", a.len());
    }

    #[test]
    fn resource_ids_are_removed() {
        let id = "0123456789abcdef0123456789abcdef";
        let c = chunk_note(
            "",
            &format!("see ![img](:/{id}) and [x](:/{id})."),
            &ChunkConfig::default(),
        );
        assert_eq!(c[0].text, "see ![img] and [x].");
    }

    #[test]
    fn windows_never_loop_on_text_without_spaces() {
        let s = "x".repeat(5000);
        let w = windows(&s, 800, 128);
        assert!(w.len() >= 6 && w.len() < 20, "{}", w.len());
        assert!(w.iter().all(|p| p.chars().count() <= 800));
    }
}
