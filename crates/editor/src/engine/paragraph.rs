//! Paragraph spans.
//!
//! A paragraph is a maximal run of lines each of which is non-blank or lies inside a fenced
//! block. So a fenced block is one paragraph even when it contains blank lines, and a fence
//! written directly under a line of text belongs to that text's paragraph. Spans are byte ranges
//! from the first line's start to the last line's end, excluding the final line break.

use super::fence::{Fence, fence_at};
use super::{is_blank, line_end, line_start};
use std::ops::Range;

/// Span of the paragraph containing the line at byte `pos`, or `None` when that line is a
/// blank line outside any fence.
pub fn paragraph_at(text: &str, fences: &[Fence], pos: usize) -> Option<Range<usize>> {
    let (mut start, mut end) = match fence_at(fences, pos) {
        Some(f) => (f.start, f.end),
        None => {
            let ls = line_start(text, pos);
            let le = line_end(text, pos);
            if is_blank(&text[ls..le]) {
                return None;
            }
            (ls, le)
        }
    };
    // grow backwards
    while start > 0 {
        let prev = start - 1; // the '\n' ending the previous line
        if let Some(f) = fence_at(fences, prev) {
            start = f.start;
            continue;
        }
        let ps = line_start(text, prev);
        if is_blank(&text[ps..prev]) {
            break;
        }
        start = ps;
    }
    // grow forwards
    while end < text.len() {
        let next = end + 1; // start of the next line
        if let Some(f) = fence_at(fences, next).filter(|f| f.start == next) {
            end = f.end;
            continue;
        }
        let ne = line_end(text, next);
        if is_blank(&text[next..ne]) {
            break;
        }
        end = ne;
    }
    if end > start && text.as_bytes()[end - 1] == b'\r' {
        end -= 1;
    }
    Some(start..end)
}

/// Span of the paragraph(s) covering the non-whitespace part of `range`, or `None` when the
/// range holds only whitespace.
pub fn paragraphs_covering(
    text: &str,
    fences: &[Fence],
    range: Range<usize>,
) -> Option<Range<usize>> {
    let s = &text[range.clone()];
    let first = s.find(|c: char| !c.is_whitespace())?;
    let last = s.rfind(|c: char| !c.is_whitespace())?;
    let a = paragraph_at(text, fences, range.start + first)?;
    let b = paragraph_at(text, fences, range.start + last)?;
    Some(a.start.min(b.start)..a.end.max(b.end))
}

/// Extends a paragraph span so that deleting it also removes one blank-line separator: forward
/// to the next paragraph's first line, or (for the last paragraph) back to the previous
/// paragraph's end.
pub fn with_separator(text: &str, span: Range<usize>) -> Range<usize> {
    let mut pos = span.end;
    while pos < text.len() {
        let next = pos + 1;
        let ne = line_end(text, next);
        if !is_blank(&text[next..ne]) {
            return span.start..next;
        }
        pos = ne;
    }
    // no paragraph after: swallow the whitespace before the span instead
    let before = text[..span.start].trim_end().len();
    before..text.len().max(span.end)
}

#[cfg(test)]
mod tests {
    use super::super::fence::scan_fences;
    use super::*;

    fn para(t: &str, needle: &str) -> Option<String> {
        let f = scan_fences(t);
        let pos = t.find(needle)?;
        paragraph_at(t, &f, pos).map(|r| t[r].to_owned())
    }

    #[test]
    fn runs_of_non_blank_lines() {
        let t = "one\ntwo\n\nthree\n  \nfour";
        assert_eq!(para(t, "two").as_deref(), Some("one\ntwo"));
        assert_eq!(para(t, "three").as_deref(), Some("three"));
        assert_eq!(para(t, "four").as_deref(), Some("four"));
        assert_eq!(para(t, "\n\n").as_deref(), Some("one\ntwo"));
    }

    #[test]
    fn fenced_block_is_one_paragraph_even_with_blank_lines() {
        let t = "intro\n\n```js\na\n\nb\n```\n\nafter";
        assert_eq!(para(t, "b\n").as_deref(), Some("```js\na\n\nb\n```"));
        let t2 = "text line\n```\nx\n\ny\n```\nmore\n\nnext";
        assert_eq!(
            para(t2, "y").as_deref(),
            Some("text line\n```\nx\n\ny\n```\nmore"),
            "a fence inside a paragraph joins it"
        );
        assert_eq!(
            para(t2, "text").as_deref(),
            Some("text line\n```\nx\n\ny\n```\nmore")
        );
    }

    #[test]
    fn crlf_is_kept_out_of_the_span() {
        let t = "a\r\nb\r\n\r\nc";
        assert_eq!(para(t, "a").as_deref(), Some("a\r\nb"));
    }

    #[test]
    fn separator_extension() {
        let t = "a\n\nb\n\n\nc";
        let f = scan_fences(t);
        let b = paragraph_at(t, &f, 3).unwrap_or(0..0);
        assert_eq!(&t[with_separator(t, b)], "b\n\n\n");
        let c = paragraph_at(t, &f, t.len() - 1).unwrap_or(0..0);
        assert_eq!(&t[with_separator(t, c)], "\n\n\nc");
    }
}
