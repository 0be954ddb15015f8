//! Text storage and offset conversion.
//!
//! Every offset in this crate's public API is a **char offset**: a count of Unicode scalar
//! values (Rust `char`s) from the start of the text. The browser counts in UTF-16 code units;
//! convert at that edge with [`utf16_to_char`] and [`char_to_utf16`].
//!
//! Internally the text is a plain `String`. [`Doc`] pairs it with a small block index (the
//! number of chars that start before every 4 KiB of bytes) so that converting between char and
//! byte offsets costs at most one 4 KiB scan, even on a 1 MB note.

use crate::engine::fence::{Fence, scan_fences};
use std::ops::Range;
use std::sync::OnceLock;

const BLOCK: usize = 4096;

#[inline]
fn is_char_start(b: u8) -> bool {
    // Continuation bytes are 0b10xx_xxxx.
    (b as i8) >= -0x40
}

/// Number of chars starting in `bytes` (= bytes that are not UTF-8 continuation bytes).
/// Counted in `u8` lanes over short chunks, which the compiler vectorises.
fn count_char_starts(bytes: &[u8]) -> usize {
    if bytes.is_ascii() {
        return bytes.len();
    }
    bytes
        .chunks(248)
        .map(|c| {
            c.iter()
                .map(|b| u8::from(is_char_start(*b)))
                .fold(0u8, u8::wrapping_add) as usize
        })
        .sum()
}

/// A string plus an index for O(4 KiB) char <-> byte offset conversion.
#[derive(Debug, Clone, Default)]
pub struct Doc {
    text: String,
    /// `blocks[i]` = number of chars starting in bytes `[0, i * BLOCK)`.
    blocks: Vec<usize>,
    chars: usize,
    /// Fenced blocks, scanned on first use.
    fences: OnceLock<Vec<Fence>>,
}

impl Doc {
    /// Wraps `text`, building its index.
    pub fn new(text: String) -> Self {
        let mut doc = Doc {
            text,
            blocks: Vec::new(),
            chars: 0,
            fences: OnceLock::new(),
        };
        doc.reindex_from(0);
        doc
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text's fenced blocks (scanned once per version of the text).
    pub fn fences(&self) -> &[Fence] {
        self.fences.get_or_init(|| scan_fences(&self.text))
    }

    /// Length in chars.
    pub fn len_chars(&self) -> usize {
        self.chars
    }

    /// Length in bytes.
    pub fn len_bytes(&self) -> usize {
        self.text.len()
    }

    /// Whether every char is one byte (then char, byte and UTF-16 offsets coincide).
    pub fn is_ascii(&self) -> bool {
        self.chars == self.text.len()
    }

    /// Recomputes the index for everything at or after byte `byte` (text before it unchanged).
    fn reindex_from(&mut self, byte: usize) {
        let byte = byte.min(self.text.len());
        self.blocks.truncate(byte / BLOCK + 1);
        if self.blocks.is_empty() {
            self.blocks.push(0);
        }
        let bytes = self.text.as_bytes();
        let mut i = self.blocks.len() - 1;
        let mut acc = self.blocks[i];
        loop {
            let start = i * BLOCK;
            if start + BLOCK <= bytes.len() {
                acc += count_char_starts(&bytes[start..start + BLOCK]);
                self.blocks.push(acc);
                i += 1;
            } else {
                acc += count_char_starts(bytes.get(start..).unwrap_or(&[]));
                break;
            }
        }
        self.chars = acc;
    }

    /// Byte offset of char offset `c` (clamped to the end).
    pub fn char_to_byte(&self, c: usize) -> usize {
        if c >= self.chars {
            return self.text.len();
        }
        if self.is_ascii() {
            return c;
        }
        let i = self.blocks.partition_point(|&n| n <= c).saturating_sub(1);
        let mut k = c - self.blocks[i];
        let start = i * BLOCK;
        for (j, b) in self.text.as_bytes()[start..].iter().enumerate() {
            if is_char_start(*b) {
                if k == 0 {
                    return start + j;
                }
                k -= 1;
            }
        }
        self.text.len()
    }

    /// Char offset of byte offset `b` (clamped; a byte inside a char counts that char as
    /// not yet started).
    pub fn byte_to_char(&self, b: usize) -> usize {
        let b = b.min(self.text.len());
        if self.is_ascii() {
            return b;
        }
        let i = (b / BLOCK).min(self.blocks.len() - 1);
        let start = i * BLOCK;
        self.blocks[i] + count_char_starts(&self.text.as_bytes()[start..b])
    }

    /// Byte range of a char range (clamped, start <= end).
    pub fn byte_range(&self, r: &Range<usize>) -> Range<usize> {
        let s = self.char_to_byte(r.start);
        let e = if r.end <= r.start {
            s
        } else {
            self.char_to_byte(r.end)
        };
        s..e
    }

    /// Char range of a byte range.
    pub fn char_range(&self, r: &Range<usize>) -> Range<usize> {
        let s = self.byte_to_char(r.start);
        let e = if r.end <= r.start {
            s
        } else {
            self.byte_to_char(r.end)
        };
        s..e
    }

    /// The text of a char range (clamped).
    pub fn slice_chars(&self, r: &Range<usize>) -> &str {
        let br = self.byte_range(r);
        self.text.get(br).unwrap_or("")
    }

    /// Replaces the chars in `r` (clamped) with `with`; returns the removed text.
    pub fn replace_chars(&mut self, r: &Range<usize>, with: &str) -> String {
        let br = self.byte_range(r);
        let removed = self.text.get(br.clone()).unwrap_or("").to_owned();
        self.text.replace_range(br.clone(), with);
        self.reindex_from(br.start);
        self.fences = OnceLock::new();
        removed
    }

    /// Replaces the whole text.
    pub fn set(&mut self, text: String) {
        self.text = text;
        self.fences = OnceLock::new();
        self.blocks.clear();
        self.reindex_from(0);
    }
}

/// Converts a UTF-16 code-unit offset (what a browser reports) to a char offset.
///
/// Clamped: an offset past the end gives the text's char length; an offset that falls between
/// the two halves of a surrogate pair rounds down to the start of that char. Never panics.
pub fn utf16_to_char(text: &str, utf16_offset: usize) -> usize {
    let mut units = 0usize;
    for (i, ch) in text.chars().enumerate() {
        let next = units + ch.len_utf16();
        if next > utf16_offset {
            return i;
        }
        units = next;
    }
    text.chars().count()
}

/// Converts a char offset to a UTF-16 code-unit offset (clamped to the text's end).
pub fn char_to_utf16(text: &str, char_offset: usize) -> usize {
    text.chars().take(char_offset).map(char::len_utf16).sum()
}

/// Converts many char offsets to UTF-16 offsets in one pass over the text (each clamped to the
/// end; any order).
pub fn chars_to_utf16(text: &str, char_offsets: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..char_offsets.len()).collect();
    order.sort_by_key(|i| char_offsets[*i]);
    let mut out = vec![0; char_offsets.len()];
    let mut chars = text.chars();
    let (mut at_char, mut at_u16) = (0usize, 0usize);
    for i in order {
        while at_char < char_offsets[i] {
            match chars.next() {
                Some(c) => {
                    at_char += 1;
                    at_u16 += c.len_utf16();
                }
                None => break,
            }
        }
        out[i] = at_u16;
    }
    out
}

/// Number of whitespace-separated words (used in the model-facing confirmations).
pub fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(doc: &Doc) {
        let s = doc.as_str();
        let starts: Vec<usize> = s.char_indices().map(|(b, _)| b).collect();
        assert_eq!(doc.len_chars(), starts.len());
        for (c, b) in starts.iter().enumerate() {
            assert_eq!(doc.char_to_byte(c), *b, "char {c}");
            assert_eq!(doc.byte_to_char(*b), c, "byte {b}");
        }
        assert_eq!(doc.char_to_byte(starts.len()), s.len());
        assert_eq!(doc.byte_to_char(s.len()), starts.len());
    }

    #[test]
    fn index_matches_char_indices_across_blocks() {
        let mut s = String::new();
        for i in 0..3000 {
            s.push_str(if i % 7 == 0 { "é😀x" } else { "ab" });
        }
        let mut doc = Doc::new(s);
        check(&doc);
        doc.replace_chars(&(100..5000), "ß\n");
        check(&doc);
        doc.replace_chars(&(0..0), "😀");
        check(&doc);
        let n = doc.len_chars();
        doc.replace_chars(&(n - 3..n), "");
        check(&doc);
        doc.set(String::new());
        check(&doc);
    }

    #[test]
    fn exact_block_multiple_lengths() {
        for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK] {
            let doc = Doc::new("é".repeat(len / 2) + &"a".repeat(len % 2));
            check(&doc);
        }
    }

    #[test]
    fn utf16_conversion_clamps_inside_surrogates_and_past_end() {
        let s = "a😀b";
        assert_eq!(char_to_utf16(s, 0), 0);
        assert_eq!(char_to_utf16(s, 1), 1);
        assert_eq!(char_to_utf16(s, 2), 3);
        assert_eq!(char_to_utf16(s, 3), 4);
        assert_eq!(char_to_utf16(s, 99), 4);
        assert_eq!(utf16_to_char(s, 1), 1);
        assert_eq!(
            utf16_to_char(s, 2),
            1,
            "inside the surrogate pair rounds down"
        );
        assert_eq!(utf16_to_char(s, 3), 2);
        assert_eq!(utf16_to_char(s, 4), 3);
        assert_eq!(utf16_to_char(s, 1000), 3);
        assert_eq!(chars_to_utf16(s, &[3, 0, 2, 1, 9]), vec![4, 0, 3, 1, 4]);
    }
}
