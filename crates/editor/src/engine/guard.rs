//! The destructive-edit guard: an anchored edit may not replace more than half of a long note.

/// Notes shorter than this (in chars) are never "long": rewriting most of a short note is fine.
pub const LONG_NOTE_CHARS: usize = 1000;

/// `Err((replaced, total))` when replacing `replaced` chars of a `total`-char note is refused.
pub fn check(replaced: usize, total: usize) -> Result<(), (usize, usize)> {
    if total >= LONG_NOTE_CHARS && replaced.saturating_mul(2) > total {
        Err((replaced, total))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_notes_and_only_over_half() {
        assert!(check(900, 999).is_ok());
        assert!(check(500, 1000).is_ok());
        assert_eq!(check(501, 1000), Err((501, 1000)));
    }
}
