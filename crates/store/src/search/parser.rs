//! Joplin's keyword-query grammar, parsed into conditions.
//!
//! Tokens are split on whitespace outside double quotes. `name:value` is a filter when `name`
//! (case-insensitive, optional `-` prefix) is a known filter; other `word:value` tokens whose
//! name is a plain word are reported as unknown filters (URLs such as `http://…` and times such
//! as `10:30` stay plain text). A leading `-` negates. `any:1` joins the positive conditions
//! with OR instead of AND.

use crate::QueryError;
use crate::db::normalize;
use chrono::{Datelike, Duration, Local, LocalResult, NaiveDate, TimeZone};

/// Which indexed columns a text term looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Col {
    Any,
    Title,
    Body,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateField {
    Created,
    Updated,
    Due,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cond {
    /// `fts` is an FTS5 phrase expression (`"word"`, `"word" *`, `"a phrase"`).
    Text {
        col: Col,
        fts: String,
    },
    /// LIKE pattern over normalised tag titles.
    Tag(String),
    /// LIKE-style glob over notebook titles (lowercase, `*` wildcard).
    Notebook(String),
    IsTodo(bool),
    Completed(bool),
    /// Unix ms lower bound (inclusive).
    Date(DateField, i64),
    SourceUrl(String),
    Resource(String),
    Id(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Term {
    pub negated: bool,
    pub cond: Cond,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query {
    pub terms: Vec<Term>,
    /// `any:1`: positive conditions are joined with OR.
    pub any: bool,
}

const FILTERS: &[&str] = &[
    "any",
    "title",
    "body",
    "tag",
    "notebook",
    "created",
    "updated",
    "type",
    "iscompleted",
    "due",
    "latitude",
    "longitude",
    "altitude",
    "resource",
    "sourceurl",
    "id",
];

fn err(message: impl Into<String>) -> QueryError {
    QueryError {
        message: message.into(),
    }
}

/// Split on whitespace outside double quotes; quotes are kept.
pub(crate) fn tokenize(q: &str) -> Result<Vec<String>, QueryError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_quote = false;
    for c in q.chars() {
        if c == '"' {
            in_quote = !in_quote;
            cur.push(c);
        } else if c.is_whitespace() && !in_quote {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if in_quote {
        return Err(err(format!("unterminated quote in '{cur}'")));
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
}

fn is_quoted(v: &str) -> bool {
    v.len() >= 2 && v.starts_with('"') && v.ends_with('"')
}

fn unquote(v: &str) -> &str {
    if is_quoted(v) { &v[1..v.len() - 1] } else { v }
}

/// True when the normalised text has something the tokenizer indexes.
fn has_token_chars(s: &str) -> bool {
    s.chars().any(char::is_alphanumeric)
}

/// An FTS5 expression for one word or phrase (`*` at the end = prefix search). `None` when
/// the text holds nothing searchable (a lone `*`, punctuation).
fn fts_phrase(raw_token: &str, text: &str) -> Result<Option<String>, QueryError> {
    let prefix = text.ends_with('*');
    let core = text.trim_end_matches('*');
    if core.contains('*') {
        return Err(err(format!(
            "'*' is only allowed at the end of a word: '{raw_token}'"
        )));
    }
    let norm = normalize(core);
    if !has_token_chars(&norm) {
        return Ok(None);
    }
    let quoted = format!("\"{}\"", norm.replace('"', "\"\""));
    Ok(Some(if prefix {
        format!("{quoted} *")
    } else {
        quoted
    }))
}

/// Glob (`*` wildcard) to a SQL LIKE pattern with `\` as escape.
pub(crate) fn glob_to_like(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len());
    for c in glob.chars() {
        match c {
            '\\' | '%' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '*' => out.push('%'),
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn parse(q: &str) -> Result<Query, QueryError> {
    let mut query = Query::default();
    let mut saw_anything = false;
    for raw in tokenize(q)? {
        let (negated, rest) = match raw.strip_prefix('-') {
            Some(r) if !r.is_empty() => (true, r),
            _ => (false, raw.as_str()),
        };
        let filter = rest.split_once(':').and_then(|(name, value)| {
            let lname = name.to_ascii_lowercase();
            if FILTERS.contains(&lname.as_str()) {
                Some((lname, value))
            } else {
                None
            }
        });
        let Some((name, value)) = filter else {
            // not a known filter
            if let Some((name, value)) = rest.split_once(':')
                && !name.is_empty()
                && !name.starts_with('"')
                && name.chars().all(|c| c.is_ascii_alphabetic())
                && !value.starts_with("//")
            {
                return Err(err(format!("unknown filter '{name}:' in '{raw}'")));
            }
            saw_anything = true;
            let text = unquote(rest);
            if let Some(fts) = fts_phrase(&raw, text)? {
                query.terms.push(Term {
                    negated,
                    cond: Cond::Text { col: Col::Any, fts },
                });
            }
            continue;
        };
        saw_anything = true;
        let value_unq = unquote(value).trim();
        if value_unq.is_empty() {
            return Err(err(format!("missing value for filter '{name}:'")));
        }
        let no_neg = |query_name: &str| -> Result<(), QueryError> {
            if negated {
                Err(err(format!("'{query_name}' can't be negated: '{raw}'")))
            } else {
                Ok(())
            }
        };
        let mut push = |cond: Cond| query.terms.push(Term { negated, cond });
        match name.as_str() {
            "any" => {
                no_neg("any")?;
                query.any = match value_unq {
                    "1" => true,
                    "0" => false,
                    _ => {
                        return Err(err(format!(
                            "the value of 'any:' must be 0 or 1, not '{value_unq}'"
                        )));
                    }
                };
            }
            "title" | "body" => {
                let col = if name == "title" {
                    Col::Title
                } else {
                    Col::Body
                };
                if is_quoted(value) {
                    if let Some(fts) = fts_phrase(&raw, value_unq)? {
                        push(Cond::Text { col, fts });
                    }
                } else {
                    for w in value_unq
                        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
                        .filter(|w| !w.is_empty())
                    {
                        if let Some(fts) = fts_phrase(&raw, w)? {
                            push(Cond::Text { col, fts });
                        }
                    }
                }
            }
            "tag" => push(Cond::Tag(glob_to_like(&crate::db::tag_key(value_unq)))),
            "notebook" => push(Cond::Notebook(crate::db::tag_key(value_unq))),
            "type" => {
                no_neg("type")?;
                match value_unq.to_ascii_lowercase().as_str() {
                    "note" => push(Cond::IsTodo(false)),
                    "todo" => push(Cond::IsTodo(true)),
                    _ => {
                        return Err(err(format!(
                            "the value of 'type:' must be \"note\" or \"todo\", not '{value_unq}'"
                        )));
                    }
                }
            }
            "iscompleted" => {
                no_neg("iscompleted")?;
                match value_unq {
                    "1" => push(Cond::Completed(true)),
                    "0" => push(Cond::Completed(false)),
                    _ => {
                        return Err(err(format!(
                            "the value of 'iscompleted:' must be 0 or 1, not '{value_unq}'"
                        )));
                    }
                }
            }
            "created" | "updated" | "due" => {
                let field = match name.as_str() {
                    "created" => DateField::Created,
                    "updated" => DateField::Updated,
                    _ => DateField::Due,
                };
                let ms = parse_date(value_unq)
                    .ok_or_else(|| err(format!("bad date '{name}:{value_unq}' (use YYYYMMDD, YYYYMM, YYYY or day-N, week-N, month-N, year-N)")))?;
                push(Cond::Date(field, ms));
            }
            "sourceurl" => push(Cond::SourceUrl(glob_to_like(value_unq))),
            "resource" => push(Cond::Resource(glob_to_like(
                &value_unq.to_ascii_lowercase(),
            ))),
            "id" => push(Cond::Id(value_unq.to_ascii_lowercase())),
            other => {
                return Err(err(format!(
                    "filter '{other}:' is not supported (notes have no location)"
                )));
            }
        }
    }
    if !saw_anything {
        return Err(err("the query is empty"));
    }
    Ok(query)
}

fn local_midnight(d: NaiveDate) -> Option<i64> {
    let naive = d.and_hms_opt(0, 0, 0)?;
    match Local.from_local_datetime(&naive) {
        LocalResult::Single(t) => Some(t.timestamp_millis()),
        LocalResult::Ambiguous(a, _) => Some(a.timestamp_millis()),
        // midnight skipped by a DST change: one hour later exists
        LocalResult::None => Local
            .from_local_datetime(&(naive + Duration::hours(1)))
            .earliest()
            .map(|t| t.timestamp_millis()),
    }
}

/// `YYYYMMDD`, `YYYYMM`, `YYYY` (start of that local day/month/year) or a relative
/// `day±N`, `week±N`, `month±N`, `year±N` (start of the current unit moved by N).
pub(crate) fn parse_date(v: &str) -> Option<i64> {
    parse_date_at(v, Local::now().date_naive())
}

pub(crate) fn parse_date_at(v: &str, today: NaiveDate) -> Option<i64> {
    let v = v.trim().to_ascii_lowercase();
    if v.chars().all(|c| c.is_ascii_digit()) {
        let num = |r: std::ops::Range<usize>| v.get(r).and_then(|s| s.parse::<u32>().ok());
        let year = num(0..4)? as i32;
        let d = match v.len() {
            8 => NaiveDate::from_ymd_opt(year, num(4..6)?, num(6..8)?)?,
            6 => NaiveDate::from_ymd_opt(year, num(4..6)?, 1)?,
            4 => NaiveDate::from_ymd_opt(year, 1, 1)?,
            _ => return None,
        };
        return local_midnight(d);
    }
    let split = v.find(['-', '+']).unwrap_or(v.len());
    let (unit, offset) = v.split_at(split);
    let n: i64 = if offset.is_empty() {
        0
    } else {
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let digits = &offset[1..];
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) || digits.len() > 6 {
            return None;
        }
        sign * digits.parse::<i64>().ok()?
    };
    let d = match unit {
        "day" => today.checked_add_signed(Duration::days(n))?,
        "week" => {
            // weeks start on Sunday
            let start = today - Duration::days(i64::from(today.weekday().num_days_from_sunday()));
            start.checked_add_signed(Duration::weeks(n))?
        }
        "month" => {
            let total = i64::from(today.year()) * 12 + i64::from(today.month0()) + n;
            let y = i32::try_from(total.div_euclid(12)).ok()?;
            let m = u32::try_from(total.rem_euclid(12)).ok()? + 1;
            NaiveDate::from_ymd_opt(y, m, 1)?
        }
        "year" => NaiveDate::from_ymd_opt(today.year().checked_add(i32::try_from(n).ok()?)?, 1, 1)?,
        _ => return None,
    };
    local_midnight(d)
}

/// Words the snippet is anchored on: whitespace-split tokens without `:` and not starting
/// with `-`, surrounding quotes and `*` stripped, lowercased.
pub(crate) fn snippet_keywords(q: &str) -> Vec<String> {
    q.split_whitespace()
        .filter(|t| !t.contains(':') && !t.starts_with('-'))
        .map(|t| t.trim_matches(|c| c == '"' || c == '*').to_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn msg(q: &str) -> String {
        parse(q).unwrap_err().message
    }

    #[test]
    fn tokenizes_with_quotes() {
        assert_eq!(
            tokenize(r#"a  notebook:"My Work" "x y"-z"#).unwrap(),
            vec!["a", r#"notebook:"My Work""#, r#""x y"-z"#]
        );
        assert!(msg(r#"say "hello"#).contains("unterminated quote"));
    }

    #[test]
    fn plain_terms_phrases_prefixes() {
        let q = parse(r#"Crème "big deal" foo* -bar *"#).unwrap();
        let t: Vec<_> = q
            .terms
            .iter()
            .map(|t| (t.negated, t.cond.clone()))
            .collect();
        assert_eq!(
            t,
            vec![
                (
                    false,
                    Cond::Text {
                        col: Col::Any,
                        fts: "\"creme\"".into()
                    }
                ),
                (
                    false,
                    Cond::Text {
                        col: Col::Any,
                        fts: "\"big deal\"".into()
                    }
                ),
                (
                    false,
                    Cond::Text {
                        col: Col::Any,
                        fts: "\"foo\" *".into()
                    }
                ),
                (
                    true,
                    Cond::Text {
                        col: Col::Any,
                        fts: "\"bar\"".into()
                    }
                ),
            ]
        );
        assert!(!q.any);
        assert!(parse("any:1 a b").unwrap().any);
    }

    #[test]
    fn field_filters() {
        let q = parse(r#"title:hello-big_world body:"x y" tag:Pro* notebook:"My Work" sourceurl:https://a.b/* resource:image/*"#).unwrap();
        let c: Vec<_> = q.terms.iter().map(|t| t.cond.clone()).collect();
        assert_eq!(
            c,
            vec![
                Cond::Text {
                    col: Col::Title,
                    fts: "\"hello\"".into()
                },
                Cond::Text {
                    col: Col::Title,
                    fts: "\"big\"".into()
                },
                Cond::Text {
                    col: Col::Title,
                    fts: "\"world\"".into()
                },
                Cond::Text {
                    col: Col::Body,
                    fts: "\"x y\"".into()
                },
                Cond::Tag("pro%".into()),
                Cond::Notebook("my work".into()),
                Cond::SourceUrl("https://a.b/%".into()),
                Cond::Resource("image/%".into()),
            ]
        );
        assert_eq!(glob_to_like("50%_a*"), "50\\%\\_a%");
    }

    #[test]
    fn errors_name_the_bad_part() {
        assert_eq!(msg("foo:bar"), "unknown filter 'foo:' in 'foo:bar'");
        assert!(msg("created:2024131").contains("bad date 'created:2024131'"));
        assert!(msg("due:20241301").contains("bad date"));
        assert!(msg("updated:week-x").contains("bad date"));
        assert!(msg("-type:todo").contains("can't be negated"));
        assert!(msg("-iscompleted:1").contains("can't be negated"));
        assert!(msg("type:task").contains("\"note\" or \"todo\""));
        assert!(msg("iscompleted:2").contains("0 or 1"));
        assert!(msg("any:yes").contains("0 or 1"));
        assert!(msg("tag:").contains("missing value for filter 'tag:'"));
        assert!(msg("fo*o").contains("only allowed at the end"));
        assert!(msg("latitude:1").contains("not supported"));
        assert_eq!(msg("   "), "the query is empty");
        // URLs and times are plain text, filter names are case-insensitive
        assert!(parse("http://example.com 10:30").is_ok());
        assert_eq!(parse("TAG:x").unwrap().terms[0].cond, Cond::Tag("x".into()));
    }

    #[test]
    fn dates() {
        let today = NaiveDate::from_ymd_opt(2024, 3, 14).unwrap(); // a Thursday
        let at = |y, m, d| local_midnight(NaiveDate::from_ymd_opt(y, m, d).unwrap()).unwrap();
        assert_eq!(parse_date_at("20240105", today), Some(at(2024, 1, 5)));
        assert_eq!(parse_date_at("202402", today), Some(at(2024, 2, 1)));
        assert_eq!(parse_date_at("2023", today), Some(at(2023, 1, 1)));
        assert_eq!(parse_date_at("day-1", today), Some(at(2024, 3, 13)));
        assert_eq!(parse_date_at("day+7", today), Some(at(2024, 3, 21)));
        assert_eq!(parse_date_at("week-1", today), Some(at(2024, 3, 3)));
        assert_eq!(parse_date_at("month-3", today), Some(at(2023, 12, 1)));
        assert_eq!(parse_date_at("year-1", today), Some(at(2023, 1, 1)));
        assert_eq!(parse_date_at("day", today), Some(at(2024, 3, 14)));
        for bad in [
            "2024131", "20240230", "202413", "24", "days-1", "day-", "day-1x",
        ] {
            assert_eq!(parse_date_at(bad, today), None, "{bad}");
        }
    }

    #[test]
    fn keywords_for_snippets() {
        assert_eq!(
            snippet_keywords(r#"Hello "big deal" tag:x -no foo* *"#),
            vec!["hello", "big", "deal", "foo"]
        );
    }
}
