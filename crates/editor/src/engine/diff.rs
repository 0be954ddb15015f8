//! Unified-diff hunks for one replacement, computed with `similar` on a line-aligned window
//! around the change (so a 1 MB note costs only its changed lines plus context).

use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};
use std::fmt::Write as _;
use std::ops::Range;

/// Lines of context around each change.
pub const CONTEXT_LINES: usize = 3;

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    /// `' '` context, `'-'` removed, `'+'` added.
    pub op: char,
    /// The line without its line break.
    pub text: String,
}

/// A unified-diff hunk. Line numbers are 1-based, as in `@@ -a,b +c,d @@`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffHunk {
    /// First line in the old text.
    pub old_start: usize,
    /// Number of old lines.
    pub old_lines: usize,
    /// First line in the new text.
    pub new_start: usize,
    /// Number of new lines.
    pub new_lines: usize,
    /// The lines.
    pub lines: Vec<DiffLine>,
}

impl DiffHunk {
    /// The hunk in unified-diff text form (header line included, lines end with `\n`).
    pub fn to_unified(&self) -> String {
        let mut s = format!(
            "@@ -{},{} +{},{} @@\n",
            self.old_start, self.old_lines, self.new_start, self.new_lines
        );
        for l in &self.lines {
            let _ = writeln!(s, "{}{}", l.op, l.text);
        }
        s
    }
}

fn skip_lines_back(text: &str, mut pos: usize, n: usize) -> usize {
    for _ in 0..n {
        if pos == 0 {
            break;
        }
        pos = super::line_start(text, pos - 1);
    }
    pos
}

fn skip_lines_forward(text: &str, mut pos: usize, n: usize) -> usize {
    for _ in 0..n {
        if pos >= text.len() {
            break;
        }
        pos = (super::line_end(text, pos) + 1).min(text.len());
    }
    pos
}

/// Hunks for replacing byte range `range` of `text` with `with`.
pub fn hunks(text: &str, range: Range<usize>, with: &str) -> Vec<DiffHunk> {
    let ws = skip_lines_back(text, super::line_start(text, range.start), CONTEXT_LINES);
    let after = if range.end > range.start && text.as_bytes()[range.end - 1] == b'\n' {
        range.end
    } else {
        (super::line_end(text, range.end) + 1).min(text.len())
    };
    let we = skip_lines_forward(text, after, CONTEXT_LINES);
    let old = &text[ws..we];
    let new = format!("{}{}{}", &text[ws..range.start], with, &text[range.end..we]);
    let first_line = memchr::memchr_iter(b'\n', &text.as_bytes()[..ws]).count();
    let diff = TextDiff::from_lines(old, new.as_str());
    let mut out = Vec::new();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_r = first.old_range().start..last.old_range().end;
        let new_r = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let op = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let v = change.value();
                let v = v.strip_suffix('\n').unwrap_or(v);
                lines.push(DiffLine {
                    op,
                    text: v.strip_suffix('\r').unwrap_or(v).to_owned(),
                });
            }
        }
        // unified-diff convention: an empty side starts at the line before it
        let start = |r: &Range<usize>| {
            if r.is_empty() {
                first_line + r.start
            } else {
                first_line + r.start + 1
            }
        };
        out.push(DiffHunk {
            old_start: start(&old_r),
            old_lines: old_r.len(),
            new_start: start(&new_r),
            new_lines: new_r.len(),
            lines,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_numbers_and_context() {
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let s = text.find("line 10").unwrap_or(0);
        let h = hunks(&text, s..s + "line 10".len(), "ten");
        assert_eq!(h.len(), 1);
        assert_eq!(
            h[0].to_unified(),
            "@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n line 13\n"
        );
    }

    #[test]
    fn pure_insertion_at_end() {
        let text = "a\nb";
        let h = hunks(text, 3..3, "\n\nc");
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].to_unified(), "@@ -1,2 +1,4 @@\n a\n-b\n+b\n+\n+c\n");
    }

    #[test]
    fn no_change_no_hunk() {
        assert!(hunks("abc", 1..2, "b").is_empty());
    }
}
