//! The built-in tools through `Registry::call` on a real store in a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine as _;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use sidenote_store::{Actor, JournalKind, JournalQuery, NewNote, Store};
use sidenote_tools::builtin::read_image;
use sidenote_tools::builtin::semantic_search_notes::{SemanticStatus, SemanticText};
use sidenote_tools::builtin::{
    BUILTIN_IDS, Relevance, SemanticHit, SemanticQuery, SemanticScope, SemanticSearch,
    SemanticSlot, register_builtin, register_builtin_with,
};
use sidenote_tools::{Access, Registry, ToolCtx, ToolError, ToolOutput};
use std::sync::{Arc, Mutex};
use tempfile::TempDir;

struct Ws {
    _dir: TempDir,
    store: Store,
    reg: Registry,
}

fn ws() -> Ws {
    ws_with(SemanticSlot::new())
}

fn ws_with(slot: SemanticSlot) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let reg = Registry::new();
    register_builtin_with(&reg, store.clone(), slot).unwrap();
    Ws {
        _dir: dir,
        store,
        reg,
    }
}

fn ctx() -> ToolCtx {
    ToolCtx::new(Actor::Mcp("test-client".into()))
}

impl Ws {
    async fn ok(&self, tool: &str, args: Value) -> Value {
        match self.reg.call(tool, args.clone(), &ctx()).await {
            Ok(ToolOutput::Json(v)) => v,
            other => panic!("{tool}({args}) -> {other:?}"),
        }
    }

    /// The recoverable error text of a call that must fail.
    async fn err(&self, tool: &str, args: Value) -> String {
        match self.reg.call(tool, args.clone(), &ctx()).await {
            Err(ToolError::Recoverable(m)) => m,
            other => panic!("{tool}({args}) should fail recoverably, got {other:?}"),
        }
    }

    fn note(&self, title: &str, body: &str) -> String {
        self.store
            .create_note(
                &Actor::Cli,
                NewNote {
                    title: title.into(),
                    body: body.into(),
                    ..NewNote::default()
                },
            )
            .unwrap()
            .id
    }

    fn head(&self) -> i64 {
        self.store.journal_head().unwrap()
    }
}

#[tokio::test]
async fn registers_the_eleven_tools_in_order_with_compact_descriptions() {
    let w = ws();
    let list = w.reg.list();
    let ids: Vec<&str> = list.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, BUILTIN_IDS);
    let writes: Vec<&str> = list
        .iter()
        .filter(|t| t.access == Access::Write)
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(
        writes,
        [
            "create_note",
            "update_note",
            "delete_note",
            "manage_tags",
            "create_notebook"
        ]
    );
    let mut total = 0;
    for t in &list {
        let max = if t.id == "search_notes" { 480 } else { 240 };
        assert!(
            t.description.chars().count() <= max,
            "{} description is {} chars",
            t.id,
            t.description.len()
        );
        assert_eq!(t.input_schema["type"], "object", "{}", t.id);
        total += t.description.len() + t.input_schema.to_string().len();
    }
    // the whole list must fit comfortably in a 4096-token context (~4 chars per token)
    assert!(total < 7000, "tool list is {total} chars");
    // registering twice is refused (ids are taken)
    assert!(register_builtin(&w.reg, w.store.clone()).is_err());
}

#[tokio::test]
async fn create_read_update_search_tag_trash_round_trip() {
    let w = ws();
    let nb = w.ok("create_notebook", json!({"title": "Travel"})).await;
    let nb_id = nb["id"].as_str().unwrap().to_string();
    assert_eq!(nb["parent_id"], Value::Null);

    let created = w
        .ok(
            "create_note",
            json!({"title": "Packing — Lakes", "body": "tent\nstove", "notebook_id": nb_id}),
        )
        .await;
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["notebook_id"], nb_id.as_str());
    assert_eq!(created["title"], "Packing — Lakes");

    let read = w.ok("read_note", json!({"id": id})).await;
    assert_eq!(read["body"], "tent\nstove");
    assert_eq!(read["notebook_title"], "Travel");
    assert_eq!(read["has_more"], false);
    assert_eq!(read["tags"], json!([]));
    assert_eq!(read["is_todo"], false);

    let upd = w
        .ok(
            "update_note",
            json!({"id": id, "append": "\nkayak paddles", "replace_text": {"find": "stove", "replace": "camp stove"}}),
        )
        .await;
    assert_eq!(upd["id"], id.as_str());
    let read = w.ok("read_note", json!({"id": format!(":/{id}")})).await;
    assert_eq!(read["body"], "tent\ncamp stove\nkayak paddles");
    assert_eq!(read["updated_time"], upd["updated_time"]);

    let found = w.ok("search_notes", json!({"query": "kayak"})).await;
    assert_eq!(found["total"], 1);
    assert_eq!(found["results"][0]["id"], id.as_str());
    assert_eq!(found["results"][0]["notebook_id"], nb_id.as_str());
    assert!(
        found["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("kayak")
    );

    let tags = w
        .ok(
            "manage_tags",
            json!({"note_id": id, "add": ["trip", " gear ", "Trip", ""]}),
        )
        .await;
    assert_eq!(tags["added"], json!(["trip", "gear"]));
    assert_eq!(tags["tags"], json!(["gear", "trip"]));
    let tags = w
        .ok(
            "manage_tags",
            json!({"note_id": id, "remove": ["GEAR", "never-there"]}),
        )
        .await;
    assert_eq!(tags["removed"], json!(["gear"]));
    assert_eq!(tags["tags"], json!(["trip"]));
    let listed = w.ok("list_tags", json!({})).await;
    assert_eq!(
        listed["tags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["trip"]
    );
    let by_tag = w.ok("search_notes", json!({"query": "tag:trip"})).await;
    assert_eq!(by_tag["total"], 1);

    let nbs = w.ok("list_notebooks", json!({})).await;
    let travel = nbs["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == nb_id.as_str())
        .unwrap()
        .clone();
    assert_eq!(travel["note_count"], 1);

    let del = w.ok("delete_note", json!({"id": id})).await;
    assert_eq!(del["trashed"], true);
    assert!(w.store.note(&id).unwrap().unwrap().is_trashed());
    assert_eq!(
        w.err("read_note", json!({"id": id})).await,
        format!("Note not found: {id}")
    );
    assert_eq!(
        w.err("delete_note", json!({"id": id})).await,
        format!("Note not found: {id}")
    );
    let found = w.ok("search_notes", json!({"query": "kayak"})).await;
    assert_eq!(found["total"], 0);
    let listed = w.ok("list_tags", json!({})).await;
    assert_eq!(listed["tags"], json!([]));
}

#[tokio::test]
async fn every_write_is_journaled_with_the_callers_actor() {
    let w = ws();
    let before = w.head();
    let nb = w.ok("create_notebook", json!({"title": "J"})).await;
    let n = w
        .ok(
            "create_note",
            json!({"title": "t", "notebook_id": nb["id"], "is_todo": true}),
        )
        .await;
    let id = n["id"].as_str().unwrap();
    w.ok(
        "update_note",
        json!({"id": id, "title": "t2", "body": "b", "todo_completed": true}),
    )
    .await;
    w.ok("manage_tags", json!({"note_id": id, "add": ["x"]}))
        .await;
    w.ok("manage_tags", json!({"note_id": id, "remove": ["x"]}))
        .await;
    w.ok("delete_note", json!({"id": id})).await;
    let rows = w
        .store
        .journal(&JournalQuery {
            after_seq: Some(before),
            ..JournalQuery::default()
        })
        .unwrap();
    let kinds: Vec<JournalKind> = rows.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        [
            JournalKind::NotebookCreate,
            JournalKind::NoteCreate,
            JournalKind::NoteUpdate,
            JournalKind::TagAdd,
            JournalKind::TagRemove,
            JournalKind::NoteTrash,
        ]
    );
    assert!(
        rows.iter().all(|r| r.actor == "mcp:test-client"),
        "{rows:?}"
    );
    // the single update row carries all three changes
    assert_eq!(rows[2].after["title"], "t2");
    assert_eq!(rows[2].after["body"], "b");
    assert!(rows[2].after["todo_completed"].as_i64().unwrap() > 0);
}

#[tokio::test]
async fn failed_writes_change_nothing() {
    let w = ws();
    let id = w.note("Recipe", "salt and salt and pepper");
    let note_before = w.store.note(&id).unwrap().unwrap();
    let head = w.head();
    let missing_nb = "0123456789abcdef0123456789abcdef";

    let e = w
        .err(
            "update_note",
            json!({"id": id, "replace_text": {"find": "salt", "replace": "sugar"}}),
        )
        .await;
    assert!(e.contains("appears 2 times"), "{e}");
    let e = w
        .err(
            "update_note",
            json!({"id": id, "title": "new", "replace_text": {"find": "cumin", "replace": "x"}}),
        )
        .await;
    assert!(e.contains("not found in body"), "{e}");
    let e = w
        .err(
            "update_note",
            json!({"id": id, "replace_text": {"find": "", "replace": "x"}}),
        )
        .await;
    assert_eq!(e, "\"replace_text.find\" must not be empty");
    let e = w
        .err("update_note", json!({"id": id, "body": "x", "append": "y"}))
        .await;
    assert!(e.contains("not both"), "{e}");
    let e = w
        .err(
            "update_note",
            json!({"id": id, "title": "moved", "notebook_id": missing_nb}),
        )
        .await;
    assert_eq!(e, format!("Notebook not found: {missing_nb}"));
    let e = w.err("update_note", json!({"id": id})).await;
    assert!(e.starts_with("Nothing to update"), "{e}");
    let e = w
        .err(
            "create_note",
            json!({"title": "x", "notebook_id": missing_nb}),
        )
        .await;
    assert_eq!(e, format!("Notebook not found: {missing_nb}"));
    let e = w
        .err(
            "create_notebook",
            json!({"title": "x", "parent_id": missing_nb}),
        )
        .await;
    assert_eq!(e, format!("Parent notebook not found: {missing_nb}"));
    let e = w
        .err(
            "manage_tags",
            json!({"note_id": id, "add": ["a"], "remove": ["A"]}),
        )
        .await;
    assert!(e.contains("both"), "{e}");
    let e = w
        .err("manage_tags", json!({"note_id": missing_nb, "add": ["a"]}))
        .await;
    assert_eq!(e, format!("Note not found: {missing_nb}"));

    assert_eq!(w.head(), head, "a failed call wrote a journal row");
    assert_eq!(w.store.note(&id).unwrap().unwrap(), note_before);
    assert_eq!(w.store.list_tags(false).unwrap(), vec![]);
    assert_eq!(w.store.all_notes(true).unwrap().len(), 1);
    assert_eq!(w.store.list_notebooks().unwrap().len(), 1);
}

#[tokio::test]
async fn update_note_partial_edits_move_and_todo() {
    let w = ws();
    let id = w.note("Log", "middle");
    let nb = w.ok("create_notebook", json!({"title": "Archive"})).await;
    let out = w
        .ok(
            "update_note",
            json!({"id": id, "prepend": "top\n", "append": "\nend", "notebook_id": nb["id"]}),
        )
        .await;
    assert_eq!(out["title"], "Log");
    let n = w.store.note(&id).unwrap().unwrap();
    assert_eq!(n.body, "top\nmiddle\nend");
    assert_eq!(n.parent_id, nb["id"].as_str().unwrap());
    // replace_text sees the body after prepend/append, and handles multi-byte text
    w.ok(
        "update_note",
        json!({"id": id, "replace_text": {"find": "middle", "replace": "mïddle ✓"}}),
    )
    .await;
    assert_eq!(
        w.store.note(&id).unwrap().unwrap().body,
        "top\nmïddle ✓\nend"
    );
    w.ok("update_note", json!({"id": id, "todo_completed": true}))
        .await;
    assert!(w.store.note(&id).unwrap().unwrap().todo_completed > 0);
    w.ok("update_note", json!({"id": id, "todo_completed": false}))
        .await;
    assert_eq!(w.store.note(&id).unwrap().unwrap().todo_completed, 0);
    // a full rewrite, and an empty title is allowed
    w.ok("update_note", json!({"id": id, "body": "", "title": ""}))
        .await;
    let n = w.store.note(&id).unwrap().unwrap();
    assert_eq!((n.title.as_str(), n.body.as_str()), ("", ""));
    // overlapping matches count as more than one
    let id2 = w.note("o", "aaa");
    let e = w
        .err(
            "update_note",
            json!({"id": id2, "replace_text": {"find": "aa", "replace": "b"}}),
        )
        .await;
    assert!(e.contains("appears 2 times"), "{e}");
}

#[tokio::test]
async fn read_note_pages_by_characters() {
    let w = ws();
    let body = "αβγ✓é日本語🙂z";
    let id = w.note("Multi", body);
    let total = body.chars().count();
    assert_eq!(total, 10);
    let mut got = String::new();
    let mut offset = 0;
    let mut pages = 0;
    loop {
        let p = w
            .ok(
                "read_note",
                json!({"id": id, "offset": offset, "max_chars": 3}),
            )
            .await;
        assert_eq!(p["body_length"], total);
        assert_eq!(p["body_offset"], offset);
        let chunk = p["body"].as_str().unwrap();
        assert_eq!(p["body_returned_chars"], chunk.chars().count());
        got.push_str(chunk);
        pages += 1;
        if p["has_more"] == false {
            assert_eq!(p["next_offset"], Value::Null);
            break;
        }
        offset = p["next_offset"].as_u64().unwrap() as usize;
        assert!(pages < 10);
    }
    assert_eq!(got, body);
    assert_eq!(pages, 4);
    let p = w
        .ok("read_note", json!({"id": id, "offset": 7, "max_chars": 2}))
        .await;
    assert_eq!(p["body"], "語🙂");
    let p = w.ok("read_note", json!({"id": id, "offset": 99})).await;
    assert_eq!(
        (p["body"].clone(), p["has_more"].clone()),
        (json!(""), json!(false))
    );
    let e = w.err("read_note", json!({"id": id, "offset": -1})).await;
    assert!(e.contains("'offset'"), "{e}");
}

#[tokio::test]
async fn invalid_arguments_are_recoverable_and_name_the_field() {
    let w = ws();
    let cases: Vec<(&str, Value, &str)> = vec![
        ("search_notes", json!({}), "query"),
        (
            "search_notes",
            json!({"query": "   "}),
            "Missing \"query\" parameter",
        ),
        ("search_notes", json!({"query": "x", "limit": 0}), "'limit'"),
        (
            "search_notes",
            json!({"query": "x", "limit": 101}),
            "'limit'",
        ),
        (
            "semantic_search_notes",
            json!({"query": " "}),
            "Missing \"query\" parameter",
        ),
        (
            "semantic_search_notes",
            json!({"query": "x", "relevance": "maybe"}),
            "'relevance'",
        ),
        ("read_note", json!({}), "id"),
        ("read_note", json!({"id": ""}), "Missing \"id\" parameter"),
        ("read_note", json!({"id": 5}), "'id'"),
        (
            "read_note",
            json!({"id": "0123456789abcdef0123456789abcdef"}),
            "Note not found: 0123456789abcdef0123456789abcdef",
        ),
        ("create_note", json!({"body": "x"}), "title"),
        (
            "create_note",
            json!({"title": "  "}),
            "Missing or invalid \"title\" parameter",
        ),
        (
            "create_note",
            json!({"title": "x", "is_todo": "false"}),
            "'is_todo'",
        ),
        ("update_note", json!({"title": "x"}), "id"),
        (
            "update_note",
            json!({"id": " ", "title": "x"}),
            "Missing \"id\" parameter",
        ),
        (
            "update_note",
            json!({"id": "x", "replace_text": {"find": "a"}}),
            "replace",
        ),
        (
            "update_note",
            json!({"id": "x", "todo_completed": 1}),
            "'todo_completed'",
        ),
        ("delete_note", json!({}), "id"),
        ("delete_note", json!({"id": "nope"}), "Note not found: nope"),
        ("manage_tags", json!({"add": ["a"]}), "note_id"),
        ("manage_tags", json!({"note_id": "x", "add": "a"}), "'add'"),
        (
            "manage_tags",
            json!({"note_id": "x", "add": [1]}),
            "'add.0'",
        ),
        (
            "manage_tags",
            json!({"note_id": "x", "add": [" "], "remove": []}),
            "Pass at least one of \"add\" or \"remove\"",
        ),
        ("create_notebook", json!({}), "title"),
        (
            "create_notebook",
            json!({"title": " "}),
            "Missing \"title\" parameter",
        ),
        ("read_image", json!({}), "id"),
        ("read_image", json!({"id": "abc"}), "Invalid ID: abc"),
        (
            "read_image",
            json!({"id": "0123456789abcdef0123456789abcdef", "resolution": "ultra"}),
            "'resolution'",
        ),
        (
            "read_image",
            json!({"id": ":/0123456789abcdef0123456789abcdef"}),
            "Resource not found: 0123456789abcdef0123456789abcdef",
        ),
        ("list_notebooks", json!([]), "arguments"),
        ("list_tags", json!("x"), "arguments"),
        ("no_such_tool", json!({}), "Unknown tool"),
    ];
    let head = w.head();
    for (tool, args, needle) in cases {
        let e = w.err(tool, args.clone()).await;
        assert!(e.contains(needle), "{tool}({args}): {e:?} lacks {needle:?}");
    }
    assert_eq!(w.head(), head);
}

#[tokio::test]
async fn search_notes_limits_and_reports_bad_queries() {
    let w = ws();
    for i in 0..25 {
        w.note(&format!("lake note {i}"), "the lake was calm");
    }
    w.note("other", "mountains");
    let r = w.ok("search_notes", json!({"query": "lake"})).await;
    assert_eq!(r["total"], 25);
    assert_eq!(r["results"].as_array().unwrap().len(), 20);
    let r = w
        .ok("search_notes", json!({"query": "lake", "limit": 3}))
        .await;
    assert_eq!(r["results"].as_array().unwrap().len(), 3);
    assert_eq!(r["total"], 25);
    let keys: Vec<&String> = r["results"][0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 5, "{keys:?}");
    let r = w.ok("search_notes", json!({"query": "lake -calm"})).await;
    assert_eq!(r["total"], 0);
    // a malformed filter is a recoverable error naming the problem, not a crash
    let e = w
        .err("search_notes", json!({"query": "created:notadate"}))
        .await;
    assert!(!e.is_empty());
}

struct FakeIndex {
    hits: Vec<SemanticHit>,
    seen: Mutex<Vec<SemanticQuery>>,
    status: Option<SemanticStatus>,
}

impl FakeIndex {
    fn new(hits: Vec<SemanticHit>, status: Option<SemanticStatus>) -> Arc<Self> {
        Arc::new(FakeIndex {
            hits,
            seen: Mutex::new(Vec::new()),
            status,
        })
    }
    fn seen(&self) -> Vec<SemanticQuery> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl SemanticSearch for FakeIndex {
    async fn search(&self, query: SemanticQuery) -> Result<Vec<SemanticHit>, ToolError> {
        self.seen.lock().unwrap().push(query);
        Ok(self.hits.clone())
    }
    fn status(&self) -> Option<SemanticStatus> {
        self.status.clone()
    }
}

fn sem_hit(id: &str, score: f32) -> SemanticHit {
    SemanticHit {
        note_id: id.into(),
        chunk_index: 0,
        chunk_text: "Anna walks Rex".into(),
        score,
    }
}

fn sem_status(indexed: usize, total: usize) -> SemanticStatus {
    SemanticStatus {
        indexed_notes: indexed,
        total_notes: total,
        model: "test-model".into(),
        complete: indexed == total,
    }
}

#[tokio::test]
async fn semantic_search_reports_missing_index_then_uses_a_plugged_one() {
    let slot = SemanticSlot::new();
    let w = ws_with(slot.clone());
    let e = w
        .err("semantic_search_notes", json!({"query": "dog sitter"}))
        .await;
    assert!(e.starts_with("semantic index not available"), "{e}");
    assert!(e.contains("search_notes"), "{e}");
    let e = w
        .err(
            "semantic_search_notes",
            json!({"query": "x", "notebook_id": "a", "tag_id": "b"}),
        )
        .await;
    assert_eq!(e, "Pass either \"notebook_id\" or \"tag_id\", not both");

    let live = w.note("Pet sitters", "Anna walks Rex");
    let gone = w.note("Old", "trashed");
    w.store.trash_note(&Actor::Cli, &gone).unwrap();
    let index = FakeIndex::new(vec![sem_hit(&live, 0.91234), sem_hit(&gone, 0.5)], None);
    slot.set(Some(index.clone()));
    let nb = w.store.default_notebook_id().unwrap();
    let r = w
        .ok(
            "semantic_search_notes",
            json!({"query": " dog sitter ", "notebook_id": nb, "relevance": "strict"}),
        )
        .await;
    assert_eq!(r["total"], 1);
    assert_eq!(r["results"][0]["note_id"], live.as_str());
    assert_eq!(r["results"][0]["title"], "Pet sitters");
    assert_eq!(r["results"][0]["notebook_id"], nb.as_str());
    assert_eq!(r["results"][0]["score"], 0.912);
    // an index that reports no status adds neither "index" nor "message"
    assert!(
        r.get("index").is_none() && r.get("message").is_none(),
        "{r}"
    );
    let seen = index.seen();
    assert_eq!(seen[0].query, SemanticText::Text("dog sitter".into()));
    assert_eq!(seen[0].scope, SemanticScope::Notebook(nb));
    assert_eq!(seen[0].relevance, Relevance::Strict);
    assert_eq!(seen[0].hybrid, None);
    let e = w
        .err(
            "semantic_search_notes",
            json!({"query": "x", "tag_id": "0123456789abcdef0123456789abcdef"}),
        )
        .await;
    assert!(e.starts_with("Tag not found"), "{e}");
    slot.set(None);
    let e = w.err("semantic_search_notes", json!({"query": "x"})).await;
    assert!(e.starts_with("semantic index not available"), "{e}");
}

#[tokio::test]
async fn semantic_search_by_note_id_and_inside_one_note() {
    let source = "0123456789abcdef0123456789abcdef";
    let slot = SemanticSlot::new();
    let w = ws_with(slot.clone());
    let dog = w.note("Dog walker", "Anna walks Rex");
    let sitter = w.note("Dog sitter", "Ben sits Rex");
    let gone = w.note("Old", "trashed");
    w.store.trash_note(&Actor::Cli, &gone).unwrap();
    // the index returns the source note too: the tool leaves it out anyway
    let index = FakeIndex::new(vec![sem_hit(&dog, 0.9), sem_hit(&sitter, 0.8)], None);
    slot.set(Some(index.clone()));
    let r = w
        .ok(
            "semantic_search_notes",
            json!({"note_id": format!(":/{dog}"), "hybrid": false}),
        )
        .await;
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(r["results"][0]["note_id"], sitter.as_str());
    let q = index.seen().pop().unwrap();
    assert_eq!(q.query, SemanticText::LikeNote(dog.clone()));
    assert_eq!(q.scope, SemanticScope::All);
    assert_eq!(q.hybrid, Some(false));

    let r = w
        .ok(
            "semantic_search_notes",
            json!({"query": "walks", "in_note_id": sitter, "hybrid": true}),
        )
        .await;
    assert_eq!(r["total"], 2, "{r}");
    let q = index.seen().pop().unwrap();
    assert_eq!(q.query, SemanticText::Text("walks".into()));
    assert_eq!(q.scope, SemanticScope::Note(sitter.clone()));
    assert_eq!(q.hybrid, Some(true));
    let r = w
        .ok(
            "semantic_search_notes",
            json!({"note_id": dog, "in_note_id": sitter}),
        )
        .await;
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(
        index.seen().pop().unwrap(),
        SemanticQuery {
            scope: SemanticScope::Note(sitter.clone()),
            ..SemanticQuery::like_note(dog.clone())
        }
    );

    let calls = index.seen().len();
    let cases: Vec<(Value, String)> = vec![
        (
            json!({"query": "x", "note_id": dog}),
            "Pass either \"query\" or \"note_id\", not both".into(),
        ),
        (json!({}), "Missing \"query\" parameter".into()),
        (
            json!({"note_id": "  "}),
            "Missing \"query\" parameter".into(),
        ),
        (
            json!({"note_id": source}),
            format!("Note not found: {source}"),
        ),
        (json!({"note_id": gone}), format!("Note not found: {gone}")),
        (
            json!({"query": "x", "in_note_id": source}),
            format!("Note not found: {source}"),
        ),
        (
            json!({"note_id": dog, "in_note_id": dog}),
            "\"note_id\" and \"in_note_id\" are the same note".into(),
        ),
        (
            json!({"query": "x", "tag_id": "t", "in_note_id": dog}),
            "Pass either \"tag_id\" or \"in_note_id\", not both".into(),
        ),
        (
            json!({"query": "x", "notebook_id": "n", "tag_id": "t", "in_note_id": dog}),
            "Pass only one of \"notebook_id\", \"tag_id\" and \"in_note_id\"".into(),
        ),
        (json!({"query": "x", "hybrid": "no"}), "'hybrid'".into()),
    ];
    for (args, needle) in cases {
        let e = w.err("semantic_search_notes", args.clone()).await;
        assert!(e.contains(&needle), "{args}: {e:?} lacks {needle:?}");
    }
    // invalid calls never reach the index
    assert_eq!(index.seen().len(), calls);
}

#[tokio::test]
async fn semantic_search_output_carries_the_index_status() {
    let slot = SemanticSlot::with(FakeIndex::new(Vec::new(), Some(sem_status(3, 10))));
    let w = ws_with(slot.clone());
    let live = w.note("Pet sitters", "Anna walks Rex");
    // nothing found while the index is being built: the output says why
    let r = w
        .ok("semantic_search_notes", json!({"query": "dog sitter"}))
        .await;
    assert_eq!(r["total"], 0);
    assert_eq!(
        r["index"],
        json!({"indexed_notes": 3, "total_notes": 10, "model": "test-model", "complete": false})
    );
    let msg = r["message"].as_str().unwrap();
    assert!(
        msg.starts_with(
            "No passages found yet: the semantic index is still being built (3/10 notes indexed)"
        ),
        "{msg}"
    );
    assert!(msg.contains("search_notes"), "{msg}");
    let tool = w.reg.get("semantic_search_notes").unwrap();
    assert_eq!(
        tool.activity(&json!({}), Some(&ToolOutput::Json(r))),
        "Found 0 passages (index still being built)"
    );

    // found something, still building: results plus a warning
    slot.set(Some(FakeIndex::new(
        vec![sem_hit(&live, 0.7)],
        Some(sem_status(3, 10)),
    )));
    let r = w
        .ok("semantic_search_notes", json!({"query": "dog sitter"}))
        .await;
    assert_eq!(r["total"], 1);
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .starts_with("Results may be incomplete"),
        "{r}"
    );

    // complete: the status without a message
    slot.set(Some(FakeIndex::new(Vec::new(), Some(sem_status(10, 10)))));
    let r = w
        .ok("semantic_search_notes", json!({"query": "dog sitter"}))
        .await;
    assert_eq!(r["index"]["complete"], true);
    assert_eq!(r["index"]["indexed_notes"], 10);
    assert!(r.get("message").is_none(), "{r}");
    assert_eq!(
        tool.activity(&json!({}), Some(&ToolOutput::Json(r))),
        "Found 0 passages"
    );
    assert_eq!(
        tool.activity(&json!({"note_id": live}), None),
        format!("Finding notes similar to {live}")
    );
}

fn png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 128, 255])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn image_of(out: &ToolOutput) -> (String, Vec<u8>) {
    match out {
        ToolOutput::Image {
            mime_type, base64, ..
        } => (
            mime_type.clone(),
            base64::engine::general_purpose::STANDARD
                .decode(base64)
                .unwrap(),
        ),
        other => panic!("expected an image, got {other:?}"),
    }
}

#[tokio::test]
async fn read_image_scales_to_the_requested_resolution() {
    let w = ws();
    let big = w
        .store
        .add_resource(&Actor::Cli, "Map", "map.png", "image/png", &png(1000, 500))
        .unwrap();
    for (res, want) in [
        ("low", (256, 128)),
        ("medium", (768, 384)),
        ("high", (1000, 500)),
    ] {
        let out = w
            .reg
            .call(
                "read_image",
                json!({"id": big.id, "resolution": res}),
                &ctx(),
            )
            .await
            .unwrap();
        let (mime, bytes) = image_of(&out);
        assert_eq!(mime, "image/png");
        let img = image::load_from_memory(&bytes).unwrap();
        assert_eq!((img.width(), img.height()), want, "{res}");
    }
    // default resolution is medium; `:/id` is accepted; small images are sent as stored
    let small_bytes = png(40, 30);
    let small = w
        .store
        .add_resource(&Actor::Cli, "Icon", "icon.png", "image/png", &small_bytes)
        .unwrap();
    let out = w
        .reg
        .call(
            "read_image",
            json!({"id": format!(":/{}", small.id)}),
            &ctx(),
        )
        .await
        .unwrap();
    assert_eq!(image_of(&out), ("image/png".to_string(), small_bytes));
    let tool = w.reg.get("read_image").unwrap();
    assert_eq!(
        tool.activity(&json!({"id": small.id}), Some(&out)),
        "Read image: Icon"
    );
    if let ToolOutput::Image { id, .. } = &out {
        assert_eq!(id, &small.id);
    }

    // undecodable but small: sent as stored
    let svg = b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec();
    let vector = w
        .store
        .add_resource(&Actor::Cli, "Logo", "logo.svg", "image/svg+xml", &svg)
        .unwrap();
    let out = w
        .reg
        .call("read_image", json!({"id": vector.id}), &ctx())
        .await
        .unwrap();
    assert_eq!(image_of(&out), ("image/svg+xml".to_string(), svg));

    // a large JPEG is scaled and stays JPEG
    let mut jpeg = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
        900,
        1200,
        image::Rgb([9, 99, 199]),
    ))
    .write_to(&mut jpeg, image::ImageFormat::Jpeg)
    .unwrap();
    let photo = w
        .store
        .add_resource(
            &Actor::Cli,
            "Photo",
            "p.jpg",
            "image/jpeg",
            &jpeg.into_inner(),
        )
        .unwrap();
    let out = w
        .reg
        .call(
            "read_image",
            json!({"id": photo.id, "resolution": "low"}),
            &ctx(),
        )
        .await
        .unwrap();
    let (mime, bytes) = image_of(&out);
    assert_eq!(mime, "image/jpeg");
    let img = image::load_from_memory(&bytes).unwrap();
    assert_eq!((img.width(), img.height()), (192, 256));

    // undecodable and too large to send as is: a recoverable error
    let junk = vec![0x42u8; read_image::RAW_FALLBACK_MAX_BYTES + 1];
    let blob = w
        .store
        .add_resource(&Actor::Cli, "Blob", "blob.png", "image/png", &junk)
        .unwrap();
    let e = w.err("read_image", json!({"id": blob.id})).await;
    assert!(
        e.starts_with(&format!("Cannot read image {}", blob.id)),
        "{e}"
    );

    // not an image
    let pdf = w
        .store
        .add_resource(
            &Actor::Cli,
            "Doc",
            "doc.pdf",
            "application/pdf",
            b"%PDF-1.4",
        )
        .unwrap();
    assert_eq!(
        w.err("read_image", json!({"id": pdf.id})).await,
        "Unsupported image MIME type: application/pdf"
    );
}

#[tokio::test]
async fn activity_lines_are_short_and_human() {
    let w = ws();
    let id = w.note("Packing — Lakes", "tent");
    let search = w.reg.get("search_notes").unwrap();
    let input = json!({"query": "packing list"});
    assert_eq!(
        search.activity(&input, None),
        "Searching notes for \"packing list\""
    );
    let out = ToolOutput::Json(json!({"results": [], "total": 3}));
    assert_eq!(search.activity(&input, Some(&out)), "Found 3 notes");

    let read = w.reg.get("read_note").unwrap();
    let input = json!({"id": id});
    let out = w
        .reg
        .call("read_note", input.clone(), &ctx())
        .await
        .unwrap();
    assert_eq!(
        read.activity(&input, Some(&out)),
        "Read note: Packing — Lakes"
    );

    let create = w.reg.get("create_note").unwrap();
    let input = json!({"title": "X"});
    let out = w
        .reg
        .call("create_note", input.clone(), &ctx())
        .await
        .unwrap();
    assert_eq!(create.activity(&input, Some(&out)), "Created note: X");

    let tags = w.reg.get("manage_tags").unwrap();
    let input = json!({"note_id": id, "add": ["a", "b"], "remove": []});
    let out = w
        .reg
        .call("manage_tags", input.clone(), &ctx())
        .await
        .unwrap();
    assert_eq!(tags.activity(&input, Some(&out)), "Added tags: a, b");
    let input = json!({"note_id": id, "remove": ["a"]});
    let out = w
        .reg
        .call("manage_tags", input.clone(), &ctx())
        .await
        .unwrap();
    assert_eq!(tags.activity(&input, Some(&out)), "Removed tag: a");

    let del = w.reg.get("delete_note").unwrap();
    let input = json!({"id": id});
    let out = w
        .reg
        .call("delete_note", input.clone(), &ctx())
        .await
        .unwrap();
    assert_eq!(
        del.activity(&input, Some(&out)),
        "Moved note to trash: Packing — Lakes"
    );
}

#[test]
fn tools_run_without_a_tokio_runtime() {
    // the agent may drive the registry from another executor: store work then runs inline
    let w = ws();
    let id = w.note("Plain", "no runtime");
    let out = futures_lite_block_on(w.reg.call("read_note", json!({"id": id}), &ctx()));
    match out {
        Ok(ToolOutput::Json(v)) => assert_eq!(v["body"], "no runtime"),
        other => panic!("{other:?}"),
    }
}

/// A minimal single-future executor (no runtime), to prove tools do not need tokio.
fn futures_lite_block_on<F: std::future::Future>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Noop;
    impl Wake for Noop {
        fn wake(self: Arc<Self>) {}
    }
    let waker = Waker::from(Arc::new(Noop));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}
