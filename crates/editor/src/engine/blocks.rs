//! Structured blocks: fenced blocks whose language tag is one of [`SUPPORTED_TAGS`].
//! The tag is the first word of the info string, compared case-insensitively. Plain code
//! fences are not structured blocks.

use super::fence::{Fence, parse_fence_line};
use crate::text::Doc;

/// The fenced-block tags `replace_structured_block` accepts.
pub const SUPPORTED_TAGS: [&str; 4] = ["mermaid", "jsoncanvas", "abc", "fountain"];

/// Whether a fence is a structured block.
pub fn is_structured(f: &Fence) -> bool {
    SUPPORTED_TAGS
        .iter()
        .any(|t| f.tag().eq_ignore_ascii_case(t))
}

/// The block with tag `tag` nearest the cursor (a char offset; tie → earlier), with its
/// occurrence index and the number of such blocks.
pub fn find_block<'f>(
    doc: &Doc,
    fences: &'f [Fence],
    tag: &str,
    cursor: usize,
) -> Option<(&'f Fence, usize, usize)> {
    let matching: Vec<&Fence> = fences
        .iter()
        .filter(|f| f.tag().eq_ignore_ascii_case(tag))
        .collect();
    let mut best: Option<(usize, usize)> = None; // (distance, index)
    for (i, f) in matching.iter().enumerate() {
        let d = doc.byte_to_char(f.start).abs_diff(cursor);
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, i));
        }
    }
    let (_, i) = best?;
    Some((matching[i], i, matching.len()))
}

/// Prepares the model's `text` as a block's inner content: a copy of the block's own fence
/// lines around the content is tolerated and stripped; a line that would close the fence early
/// is refused (`Err` names it). The result ends with a line break unless it is empty.
pub fn inner_content(fence: &Fence, text: &str) -> Result<String, String> {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let first_is_fence = lines
        .first()
        .and_then(|l| parse_fence_line(l.trim_end_matches('\n')))
        .is_some_and(|(_, _, rest)| !rest.trim().is_empty() || lines.len() > 1);
    if first_is_fence {
        let last_is_close = lines
            .iter()
            .rposition(|l| !l.trim().is_empty())
            .filter(|i| *i > 0)
            .and_then(|i| parse_fence_line(lines[i].trim_end_matches('\n')).map(|p| (i, p)))
            .filter(|(_, (_, _, rest))| rest.trim().is_empty());
        if let Some((i, _)) = last_is_close {
            lines.truncate(i);
            lines.remove(0);
        }
    }
    for l in &lines {
        if let Some((ch, run, rest)) = parse_fence_line(l.trim_end_matches('\n'))
            && ch == fence.ch
            && run >= fence.run
            && rest.trim().is_empty()
        {
            return Err(l.trim_end().to_owned());
        }
    }
    let mut inner: String = lines.concat();
    if !inner.is_empty() && !inner.ends_with('\n') {
        inner.push('\n');
    }
    Ok(inner)
}

#[cfg(test)]
mod tests {
    use super::super::fence::scan_fences;
    use super::*;

    #[test]
    fn tags_and_nearest_block() {
        let t = "```mermaid\na\n```\n\n```python\nx\n```\n\n```Mermaid {x}\nb\n```\n";
        let doc = Doc::new(t.to_owned());
        let f = scan_fences(t);
        assert_eq!(f.iter().filter(|f| is_structured(f)).count(), 2);
        let (b, occ, total) =
            find_block(&doc, &f, "mermaid", 0).map_or((None, 9, 9), |(b, o, n)| (Some(b), o, n));
        assert_eq!((occ, total), (0, 2));
        assert_eq!(b.map(|b| &t[b.inner()]), Some("a\n"));
        let far = find_block(&doc, &f, "mermaid", t.chars().count());
        assert_eq!(far.map(|(b, ..)| &t[b.inner()]), Some("b\n"));
        assert!(find_block(&doc, &f, "abc", 0).is_none());
    }

    #[test]
    fn inner_content_rules() {
        let f = &scan_fences("```mermaid\nx\n```")[0];
        assert_eq!(inner_content(f, "graph TD").as_deref(), Ok("graph TD\n"));
        assert_eq!(inner_content(f, "").as_deref(), Ok(""));
        assert_eq!(
            inner_content(f, "```mermaid\ngraph\n```").as_deref(),
            Ok("graph\n"),
            "the block's own fences are stripped"
        );
        assert_eq!(inner_content(f, "a\n```\nb"), Err("```".to_owned()));
        assert_eq!(inner_content(f, "a\n~~~\nb").as_deref(), Ok("a\n~~~\nb\n"));
    }
}
