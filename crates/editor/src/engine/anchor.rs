//! Anchor search: exact, case-sensitive substring match (no whitespace normalisation, no fuzzy
//! matching). Occurrences may overlap. With several occurrences the one whose start is nearest
//! the cursor wins (measured in chars; a tie goes to the earlier one).

use crate::text::Doc;
use memchr::memmem;
use serde::{Deserialize, Serialize};

/// Which occurrence of an anchor a proposal used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorMatch {
    /// 0-based index of the chosen occurrence, in text order.
    pub occurrence: usize,
    /// How many occurrences the note holds.
    pub total: usize,
}

/// A located anchor (byte range in the searched text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorHit {
    /// Byte range of the chosen occurrence.
    pub range: std::ops::Range<usize>,
    /// Which occurrence it is.
    pub matched: AnchorMatch,
}

/// Finds `anchor` in `doc`, choosing the occurrence nearest `cursor` (a char offset).
pub fn find_anchor(doc: &Doc, anchor: &str, cursor: usize) -> Option<AnchorHit> {
    if anchor.is_empty() {
        return None;
    }
    let hay = doc.as_str().as_bytes();
    let finder = memmem::Finder::new(anchor.as_bytes());
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = finder.find(&hay[from..]) {
        starts.push(from + i);
        from += i + 1;
        if from >= hay.len() {
            break;
        }
    }
    if starts.is_empty() {
        return None;
    }
    let cursor_byte = doc.char_to_byte(cursor);
    let idx = starts.partition_point(|s| *s < cursor_byte);
    let occurrence = match (idx.checked_sub(1), starts.get(idx)) {
        (None, _) => 0,
        (Some(b), None) => b,
        (Some(b), Some(a)) => {
            let before = cursor - doc.byte_to_char(starts[b]).min(cursor);
            let after = doc.byte_to_char(*a).saturating_sub(cursor);
            if after < before { idx } else { b }
        }
    };
    let start = starts[occurrence];
    Some(AnchorHit {
        range: start..start + anchor.len(),
        matched: AnchorMatch {
            occurrence,
            total: starts.len(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_the_cursor_wins_ties_go_earlier() {
        let doc = Doc::new("x ab ab ab".to_owned());
        let hit = |c| find_anchor(&doc, "ab", c).map(|h| (h.range.start, h.matched));
        assert_eq!(hit(0).map(|h| h.0), Some(2));
        assert_eq!(hit(6).map(|h| h.0), Some(5));
        assert_eq!(hit(7).map(|h| h.0), Some(8));
        assert_eq!(
            hit(99).map(|h| h.1),
            Some(AnchorMatch {
                occurrence: 2,
                total: 3
            })
        );
        // cursor 5 is exactly on the second occurrence
        assert_eq!(hit(5).map(|h| h.1.occurrence), Some(1));
        // equidistant from 2 and 5 is impossible with integer steps of 3; use overlapping "aa"
        let doc2 = Doc::new("aaa".to_owned());
        let h = find_anchor(&doc2, "aa", 0);
        assert_eq!(
            h.map(|h| h.matched.total),
            Some(2),
            "occurrences may overlap"
        );
    }

    #[test]
    fn tie_goes_to_the_earlier_occurrence() {
        let doc = Doc::new("ab--ab".to_owned());
        // occurrences at 0 and 4; cursor 2 is 2 away from both
        assert_eq!(find_anchor(&doc, "ab", 2).map(|h| h.range.start), Some(0));
    }

    #[test]
    fn case_sensitive_and_distance_in_chars() {
        let doc = Doc::new("Gear ééééééé gear Gear".to_owned());
        assert_eq!(
            find_anchor(&doc, "gear", 0).map(|h| h.matched.total),
            Some(1)
        );
        assert!(find_anchor(&doc, "GEAR", 0).is_none());
        assert!(find_anchor(&doc, "", 0).is_none());
        // cursor at char 9: first "Gear" starts at char 0 (9 away), second at char 18 (9 away)
        // → tie → earlier; at char 10 the later one is nearer (8 vs 10).
        assert_eq!(
            find_anchor(&doc, "Gear", 9).map(|h| h.matched.occurrence),
            Some(0)
        );
        assert_eq!(
            find_anchor(&doc, "Gear", 10).map(|h| h.matched.occurrence),
            Some(1)
        );
    }
}
