//! Keyword search: Joplin's query grammar over the FTS5 index.
//!
//! Ranking: notes with a keyword in the title first, then BM25 (title weighted above body),
//! then completed to-dos after the rest, then most recently updated. Trashed notes never
//! match.

mod parser;
mod snippet;

use crate::*;
use parser::{Col, Cond, DateField, Query};
use rusqlite::types::Value as SqlValue;
use std::collections::HashMap;

/// Column weights for bm25(): title, body.
const BM25_WEIGHTS: &str = "5.0, 1.0";

struct Built {
    sql: String,
    params: Vec<SqlValue>,
}

fn text_expr(col: Col, fts: &str) -> String {
    match col {
        Col::Any => fts.to_string(),
        Col::Title => format!("title : ({fts})"),
        Col::Body => format!("body : ({fts})"),
    }
}

/// Notebook ids whose (lowercased) title matches `glob`, plus all their descendants.
fn notebook_ids(all: &[Notebook], glob: &str) -> Vec<String> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for nb in all {
        if let Some(p) = &nb.parent_id {
            children.entry(p.as_str()).or_default().push(&nb.id);
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut stack: Vec<&str> = all
        .iter()
        .filter(|nb| glob_match(glob, &db::tag_key(&nb.title)))
        .map(|nb| nb.id.as_str())
        .collect();
    while let Some(id) = stack.pop() {
        if out.iter().any(|o| o == id) {
            continue;
        }
        out.push(id.to_string());
        if let Some(c) = children.get(id) {
            stack.extend(c.iter().copied());
        }
    }
    out
}

/// `*` matches any run of chars; everything else literally.
pub(crate) fn glob_match(glob: &str, s: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == s;
    }
    let mut rest = s;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(pos) = rest.find(part) {
            rest = &rest[pos + part.len()..];
        } else {
            return false;
        }
    }
    true
}

fn build(q: &Query, notebooks: &[Notebook]) -> Built {
    let mut params: Vec<SqlValue> = Vec::new();
    fn p(v: SqlValue, params: &mut Vec<SqlValue>) -> String {
        params.push(v);
        format!("?{}", params.len())
    }

    let pos_text: Vec<String> = q
        .terms
        .iter()
        .filter(|t| !t.negated)
        .filter_map(|t| match &t.cond {
            Cond::Text { col, fts } => Some(text_expr(*col, fts)),
            _ => None,
        })
        .collect();
    let title_text: Vec<String> = q
        .terms
        .iter()
        .filter(|t| !t.negated)
        .filter_map(|t| match &t.cond {
            Cond::Text {
                col: Col::Any | Col::Title,
                fts,
            } => Some(fts.clone()),
            _ => None,
        })
        .collect();

    // scope (always AND), negations (always AND), positives (AND, or OR with any:1)
    let mut scope: Vec<String> = vec!["n.deleted_time = 0".into()];
    let mut positives: Vec<String> = Vec::new();
    let mut positive_notebooks: Vec<String> = Vec::new();
    let text_driven = !pos_text.is_empty() && !q.any;
    if !pos_text.is_empty() && q.any {
        positives.push("m.rid IS NOT NULL".into());
    }
    for t in &q.terms {
        let cond = match &t.cond {
            Cond::Text { col, fts } => {
                if !t.negated {
                    continue; // handled through the match subquery
                }
                let ph = p(SqlValue::Text(text_expr(*col, fts)), &mut params);
                format!("n.rid IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH {ph})")
            }
            Cond::Tag(like) => {
                let ph = p(SqlValue::Text(like.clone()), &mut params);
                // a per-note probe of the (note_id, tag_id) key; an IN-list of every note of
                // a popular tag makes SQLite drive the query from that list instead
                format!(
                    "EXISTS (SELECT 1 FROM note_tags nt WHERE nt.note_id = n.id AND nt.tag_id IN \
                     (SELECT t.id FROM tags t WHERE t.title_key LIKE {ph} ESCAPE '\\'))"
                )
            }
            Cond::Notebook(glob) => {
                let ids = notebook_ids(notebooks, glob);
                let json = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into());
                let ph = p(SqlValue::Text(json), &mut params);
                let c = format!("n.parent_id IN (SELECT value FROM json_each({ph}))");
                if t.negated {
                    scope.push(format!("NOT ({c})"));
                } else {
                    positive_notebooks.push(c);
                }
                continue;
            }
            Cond::IsTodo(todo) => {
                scope.push(format!("n.is_todo = {}", i64::from(*todo)));
                continue;
            }
            Cond::Completed(done) => {
                scope.push(if *done {
                    "(n.is_todo = 1 AND n.todo_completed > 0)".into()
                } else {
                    "(n.is_todo = 1 AND n.todo_completed = 0)".into()
                });
                continue;
            }
            Cond::Date(field, ms) => {
                let ph = p(SqlValue::Integer(*ms), &mut params);
                let col = match field {
                    DateField::Created => "n.created_time",
                    DateField::Updated => "n.updated_time",
                    DateField::Due => "n.todo_due",
                };
                if t.negated {
                    // "before": a note without a due date is not due before anything
                    let c = format!("{col} < {ph}");
                    let c = if *field == DateField::Due {
                        format!("(n.todo_due > 0 AND {c})")
                    } else {
                        c
                    };
                    scope.push(c);
                    continue;
                }
                let c = format!("{col} >= {ph}");
                if *field == DateField::Due {
                    format!("(n.todo_due > 0 AND {c})")
                } else {
                    c
                }
            }
            Cond::SourceUrl(like) => {
                let ph = p(SqlValue::Text(like.clone()), &mut params);
                format!("n.source_url LIKE {ph} ESCAPE '\\'")
            }
            Cond::Resource(like) => {
                let ph = p(SqlValue::Text(like.clone()), &mut params);
                format!(
                    "EXISTS (SELECT 1 FROM note_resources nr WHERE nr.note_id = n.id AND \
                     nr.resource_id IN (SELECT r.id FROM resources r \
                     WHERE lower(r.mime) LIKE {ph} ESCAPE '\\'))"
                )
            }
            Cond::Id(id) => {
                let ph = p(SqlValue::Text(id.clone()), &mut params);
                format!("n.id = {ph}")
            }
        };
        if t.negated {
            scope.push(format!("NOT ({cond})"));
        } else {
            positives.push(cond);
        }
    }
    if !positive_notebooks.is_empty() {
        scope.push(format!("({})", positive_notebooks.join(" OR ")));
    }

    let title_hit = if title_text.is_empty() {
        String::new()
    } else {
        let expr = format!("title : ({})", title_text.join(" OR "));
        let ph = p(SqlValue::Text(expr), &mut params);
        format!("(n.rid IN (SELECT rowid FROM notes_fts WHERE notes_fts MATCH {ph})) DESC, ")
    };

    let from = if pos_text.is_empty() {
        "notes n".to_string()
    } else {
        let joiner = if q.any { " OR " } else { " AND " };
        let expr = pos_text
            .iter()
            .map(|e| format!("({e})"))
            .collect::<Vec<_>>()
            .join(joiner);
        let ph = p(SqlValue::Text(expr), &mut params);
        let m = format!(
            "(SELECT rowid AS rid, bm25(notes_fts, {BM25_WEIGHTS}) AS score \
             FROM notes_fts WHERE notes_fts MATCH {ph}) m"
        );
        if text_driven {
            format!("{m} JOIN notes n ON n.rid = m.rid")
        } else {
            format!("notes n LEFT JOIN {m} ON m.rid = n.rid")
        }
    };

    let score = if pos_text.is_empty() {
        ""
    } else {
        "COALESCE(m.score, 0.0) ASC, "
    };
    let mut wher = scope;
    if !positives.is_empty() {
        let joiner = if q.any { " OR " } else { " AND " };
        wher.push(format!("({})", positives.join(joiner)));
    }
    let sql = format!(
        "SELECT n.rid FROM {from} \
         WHERE {} \
         ORDER BY {title_hit}{score}\
                  (n.is_todo = 1 AND n.todo_completed > 0) ASC, n.updated_time DESC, n.id",
        wher.join(" AND ")
    );
    Built { sql, params }
}

pub(crate) fn run(store: &Store, query: &str, limit: usize) -> Result<SearchResults> {
    let parsed = parser::parse(query)?;
    let notebooks = if parsed
        .terms
        .iter()
        .any(|t| matches!(t.cond, Cond::Notebook(_)))
    {
        store.all_notebooks()?
    } else {
        Vec::new()
    };
    let built = build(&parsed, &notebooks);
    let conn = store.conn();
    let rids: Vec<i64> = {
        let mut st = conn.prepare_cached(&built.sql).map_err(fts_error)?;
        let it = st
            .query_map(rusqlite::params_from_iter(built.params.iter()), |r| {
                r.get(0)
            })
            .map_err(fts_error)?;
        it.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(fts_error)?
    };
    let total = rids.len();
    let top: Vec<i64> = rids.into_iter().take(limit).collect();
    // details and bodies only for the returned hits
    let mut rows: HashMap<i64, (String, String, String, i64, String)> = HashMap::new();
    if !top.is_empty() {
        let json = serde_json::to_string(&top).unwrap_or_else(|_| "[]".into());
        let mut st = conn.prepare_cached(
            "SELECT n.rid, n.id, n.title, n.parent_id, n.updated_time, b.body \
             FROM notes n JOIN note_bodies b ON b.rid = n.rid \
             WHERE n.rid IN (SELECT value FROM json_each(?1))",
        )?;
        let it = st.query_map([json], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?),
            ))
        })?;
        for row in it {
            let (rid, data) = row?;
            rows.insert(rid, data);
        }
    }
    drop(conn);
    let keywords = parser::snippet_keywords(query);
    let results = top
        .into_iter()
        .filter_map(|rid| rows.remove(&rid))
        .map(|(id, title, notebook_id, updated_time, body)| SearchHit {
            snippet: snippet::snippet(&body, &keywords),
            id,
            title,
            notebook_id,
            updated_time,
        })
        .collect();
    Ok(SearchResults { results, total })
}

/// An FTS5 syntax complaint is the query's fault, not the database's.
fn fts_error(e: rusqlite::Error) -> StoreError {
    let msg = e.to_string();
    if msg.contains("fts5") {
        StoreError::Query(QueryError {
            message: format!("the search index rejected the query: {msg}"),
        })
    } else {
        e.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("work", "work"));
        assert!(!glob_match("work", "workshop"));
        assert!(glob_match("work*", "workshop"));
        assert!(glob_match("*shop", "workshop"));
        assert!(glob_match("w*k*p", "workshop"));
        assert!(!glob_match("w*z", "workshop"));
        assert!(glob_match("*", ""));
    }
}
