//! Small helpers shared by the built-in tools: argument access, the "live note" lookup
//! every note tool uses, and running blocking store work off the async executor.

use crate::ToolError;
use serde_json::Value;
use sidenote_store::{Note, Store};

/// A string argument, `None` when absent or `null` (the schema already checked the type).
pub(crate) fn opt_str<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

/// A string argument that is present but may be blank ("" and whitespace count as absent).
pub(crate) fn opt_nonblank<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    opt_str(input, key).filter(|s| !s.trim().is_empty())
}

/// A required string argument that must not be blank; the error is `Missing "<key>" parameter`.
pub(crate) fn required_str<'a>(input: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    opt_nonblank(input, key).ok_or_else(|| missing(key))
}

pub(crate) fn missing(key: &str) -> ToolError {
    ToolError::recoverable(format!("Missing \"{key}\" parameter"))
}

pub(crate) fn opt_bool(input: &Value, key: &str) -> Option<bool> {
    input.get(key).and_then(Value::as_bool)
}

/// A non-negative integer argument (the schema already checked `minimum: 0`).
pub(crate) fn opt_usize(input: &Value, key: &str) -> Option<usize> {
    input
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Ids pasted from markdown links come as `:/<id>`; accept that form too.
pub(crate) fn strip_link_prefix(id: &str) -> &str {
    let id = id.trim();
    id.strip_prefix(":/")
        .or_else(|| id.strip_prefix('/'))
        .unwrap_or(id)
}

pub(crate) fn note_not_found(id: &str) -> ToolError {
    ToolError::recoverable(format!("Note not found: {id}"))
}

/// The note with this id unless it is missing or in the trash (both: `Note not found: <id>`).
pub(crate) fn live_note(store: &Store, id: &str) -> Result<Note, ToolError> {
    match store.note(id)? {
        Some(n) if !n.is_trashed() => Ok(n),
        _ => Err(note_not_found(id)),
    }
}

/// Run blocking store/CPU work on tokio's blocking pool when a runtime is present (so a
/// slow query never stalls the executor), inline otherwise. A panic in `f` becomes an
/// internal error.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .map_err(|_| ToolError::internal("the tool task stopped unexpectedly"))?,
        Err(_) => f(),
    }
}

/// `1 note` / `3 notes`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A string input shown in an activity line, shortened to a readable length.
pub(crate) fn short(s: &str) -> String {
    const MAX: usize = 60;
    let s = s.trim();
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let cut: String = s.chars().take(MAX).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn argument_helpers() {
        let v = json!({"a": "  ", "b": "x", "n": 5, "t": true});
        assert_eq!(opt_nonblank(&v, "a"), None);
        assert_eq!(opt_str(&v, "a"), Some("  "));
        assert_eq!(required_str(&v, "b"), Ok("x"));
        assert_eq!(
            required_str(&v, "a"),
            Err(ToolError::Recoverable("Missing \"a\" parameter".into()))
        );
        assert_eq!(opt_usize(&v, "n"), Some(5));
        assert_eq!(opt_bool(&v, "t"), Some(true));
        assert_eq!(strip_link_prefix(":/abc"), "abc");
        assert_eq!(strip_link_prefix("/abc"), "abc");
        assert_eq!(plural(1, "note", "notes"), "1 note");
        assert_eq!(plural(0, "note", "notes"), "0 notes");
        assert_eq!(short(&"é".repeat(70)).chars().count(), 61);
    }
}
