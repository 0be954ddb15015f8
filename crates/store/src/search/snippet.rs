//! Snippets: ~240 chars of the body around the first keyword found.

pub(crate) const SNIPPET_CHARS: usize = 240;

/// Collapse whitespace, then cut `SNIPPET_CHARS` chars starting a third of that before the
/// first keyword (in keyword order) found case-insensitively; `…` marks cut ends. Works on
/// chars, so it never splits a UTF-8 sequence.
pub(crate) fn snippet(body: &str, keywords: &[String]) -> String {
    let text: Vec<char> = body
        .split_whitespace()
        .flat_map(|w| std::iter::once(' ').chain(w.chars()))
        .skip(1)
        .collect();
    if text.is_empty() {
        return String::new();
    }
    if text.len() <= SNIPPET_CHARS {
        return text.into_iter().collect();
    }
    let lower: Vec<char> = text.iter().map(|c| fold(*c)).collect();
    let found = keywords.iter().find_map(|k| {
        let k: Vec<char> = k.chars().map(fold).collect();
        if k.is_empty() {
            return None;
        }
        lower.windows(k.len()).position(|w| w == k.as_slice())
    });
    let Some(idx) = found else {
        let head: String = text[..SNIPPET_CHARS].iter().collect();
        return format!("{}…", head.trim_end());
    };
    let start = idx.saturating_sub(SNIPPET_CHARS / 3);
    let end = (start + SNIPPET_CHARS).min(text.len());
    let mid: String = text[start..end].iter().collect();
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        mid.trim(),
        if end < text.len() { "…" } else { "" }
    )
}

/// One char to one char lowercase (keeps indexes aligned).
fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_bodies_are_whole_and_collapsed() {
        assert_eq!(snippet("  a\n\n b\tc ", &[]), "a b c");
        assert_eq!(snippet("", &["x".into()]), "");
        assert_eq!(snippet(" \n ", &["x".into()]), "");
    }

    #[test]
    fn long_bodies_anchor_on_first_keyword() {
        let body = format!("{} NEEDLE {}", "é".repeat(300), "z".repeat(300));
        let s = snippet(&body, &["missing".into(), "needle".into()]);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("NEEDLE"));
        let n = s.chars().count();
        assert!((240..=242).contains(&n), "{n}");
        // 80 chars of context before the keyword
        let before = s
            .trim_start_matches('…')
            .split("NEEDLE")
            .next()
            .unwrap_or("");
        assert_eq!(before.chars().count(), 80);
    }

    #[test]
    fn no_keyword_gives_the_head() {
        let body = "word ".repeat(100);
        let s = snippet(&body, &["nothing".into()]);
        assert!(s.ends_with('…'));
        assert!(!s.starts_with('…'));
        assert_eq!(s.chars().count(), 240);
    }

    #[test]
    fn keyword_near_start_has_no_leading_ellipsis() {
        let body = format!("intro needle {}", "y ".repeat(300));
        let s = snippet(&body, &["needle".into()]);
        assert!(s.starts_with("intro needle"));
        assert!(s.ends_with('…'));
    }
}
