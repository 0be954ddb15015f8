//! Fenced code blocks.
//!
//! A fence opens on a line indented by at most three spaces that starts with three or more
//! backticks or tildes (a backtick fence's info string may not contain a backtick). It closes on
//! a line (same indentation limit) made of the same character, at least as many of them, and
//! nothing but whitespace after. An unclosed fence runs to the end of the text. Fences inside
//! block quotes or list items are not recognised (they are ordinary lines here).

use memchr::memmem;

/// One fenced block, in byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// Start of the opening fence line.
    pub start: usize,
    /// End of the opening fence line (its `\n`, or the text's end).
    pub open_line_end: usize,
    /// Start of the closing fence line (the text's end when unclosed).
    pub close_start: usize,
    /// End of the closing fence line, excluding its `\n` (the text's end when unclosed).
    pub end: usize,
    /// The fence character (`` ` `` or `~`).
    pub ch: u8,
    /// Number of fence characters on the opening line.
    pub run: usize,
    /// The info string, trimmed.
    pub info: String,
    /// Whether a closing fence was found.
    pub closed: bool,
}

impl Fence {
    /// The first word of the info string (the block's language tag).
    pub fn tag(&self) -> &str {
        self.info.split_whitespace().next().unwrap_or("")
    }

    /// Byte range of the inner content (between the fence lines).
    pub fn inner(&self) -> std::ops::Range<usize> {
        // the content starts after the opening line's `\n` (there is none when the opening
        // line ends the text; then the content is empty)
        (self.open_line_end + 1).min(self.close_start)..self.close_start
    }
}

/// A parsed fence line: (char, run length, rest of the line after the run).
pub(crate) fn parse_fence_line(line: &str) -> Option<(u8, usize, &str)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let indent = line.bytes().take_while(|b| *b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = rest.bytes().take_while(|b| *b == ch).count();
    if run < 3 {
        return None;
    }
    Some((ch, run, &rest[run..]))
}

fn candidate_lines(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    for needle in ["```", "~~~"] {
        for pos in memmem::find_iter(bytes, needle.as_bytes()) {
            let ls = super::line_start(text, pos);
            if pos - ls <= 3 && bytes[ls..pos].iter().all(|b| *b == b' ') {
                starts.push(ls);
            }
        }
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// All fenced blocks in `text`, in order.
pub fn scan_fences(text: &str) -> Vec<Fence> {
    let mut out = Vec::new();
    let mut open: Option<Fence> = None;
    for ls in candidate_lines(text) {
        let le = super::line_end(text, ls);
        let Some((ch, run, rest)) = parse_fence_line(&text[ls..le]) else {
            continue;
        };
        match open.take() {
            None => {
                if ch == b'`' && rest.contains('`') {
                    continue;
                }
                open = Some(Fence {
                    start: ls,
                    open_line_end: le,
                    close_start: text.len(),
                    end: text.len(),
                    ch,
                    run,
                    info: rest.trim().to_owned(),
                    closed: false,
                });
            }
            Some(mut f) => {
                if ch == f.ch && run >= f.run && rest.trim().is_empty() && ls > f.start {
                    f.close_start = ls;
                    f.end = le;
                    f.closed = true;
                    out.push(f);
                } else {
                    open = Some(f);
                }
            }
        }
    }
    if let Some(f) = open {
        out.push(f);
    }
    out
}

/// The fence whose lines contain byte `pos`, if any.
pub fn fence_at(fences: &[Fence], pos: usize) -> Option<&Fence> {
    let i = fences.partition_point(|f| f.start <= pos);
    let f = fences.get(i.checked_sub(1)?)?;
    (pos <= f.end).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_backtick_and_tilde_fences() {
        let t = "a\n```mermaid\ngraph\n\n```\nb\n~~~~\nx\n~~~\n~~~~\n";
        let f = scan_fences(t);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].tag(), "mermaid");
        assert_eq!(&t[f[0].inner()], "graph\n\n");
        assert_eq!(&t[f[0].start..f[0].end], "```mermaid\ngraph\n\n```");
        assert_eq!(&t[f[1].inner()], "x\n~~~\n", "a shorter run does not close");
    }

    #[test]
    fn unclosed_runs_to_end_and_indent_limits() {
        let t = "    ```\nnot a fence\n   ```abc\ncontent";
        let f = scan_fences(t);
        assert_eq!(f.len(), 1);
        assert!(!f[0].closed);
        assert_eq!(f[0].tag(), "abc");
        assert_eq!(&t[f[0].inner()], "content");
    }

    #[test]
    fn backtick_info_with_backtick_is_not_a_fence() {
        assert!(scan_fences("``` a`b\nx\n").is_empty());
    }
}
