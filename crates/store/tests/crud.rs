#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::json;
use sidenote_store::*;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

fn note(store: &Store, title: &str, body: &str) -> Note {
    store
        .create_note(
            &Actor::Cli,
            NewNote {
                title: title.into(),
                body: body.into(),
                ..Default::default()
            },
        )
        .unwrap()
}

#[test]
fn open_creates_schema_default_notebook_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let (default_id, note_id) = {
        let store = Store::open(dir.path()).unwrap();
        assert!(dir.path().join("sidenote.db").is_file());
        assert!(dir.path().join("resources").is_dir());
        let id = store.default_notebook_id().unwrap();
        assert!(is_id(&id));
        let nbs = store.list_notebooks().unwrap();
        assert_eq!(nbs.len(), 1);
        assert_eq!(nbs[0].id, id);
        assert_eq!(
            store.journal_head().unwrap(),
            0,
            "bootstrap is not journaled"
        );
        let n = note(&store, "kept", "body");
        (id, n.id)
    };
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.default_notebook_id().unwrap(), default_id);
    assert_eq!(store.note(&note_id).unwrap().unwrap().title, "kept");
    assert_eq!(store.list_notebooks().unwrap().len(), 1);
}

#[test]
fn store_is_clone_send_sync() {
    fn check<T: Clone + Send + Sync + 'static>() {}
    check::<Store>();
}

#[test]
fn notebooks_nest_and_count_direct_notes() {
    let (_d, store) = open();
    let work = store.create_notebook(&Actor::Panel, "Work", None).unwrap();
    let proj = store
        .create_notebook(&Actor::Panel, "Project", Some(&work.id))
        .unwrap();
    assert_eq!(proj.parent_id.as_deref(), Some(work.id.as_str()));
    store
        .create_note(
            &Actor::Cli,
            NewNote {
                parent_id: Some(proj.id.clone()),
                title: "in project".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let list = store.list_notebooks().unwrap();
    let get = |id: &str| list.iter().find(|n| n.id == id).unwrap().clone();
    assert_eq!(get(&work.id).note_count, 0);
    assert_eq!(get(&proj.id).note_count, 1);
    assert_eq!(
        list.iter().map(|n| n.title.as_str()).collect::<Vec<_>>(),
        vec!["Notes", "Project", "Work"]
    );
    let mut sub = store.notebook_subtree(&work.id).unwrap();
    sub.sort();
    let mut want = vec![work.id.clone(), proj.id.clone()];
    want.sort();
    assert_eq!(sub, want);

    // bad input
    assert!(matches!(
        store.create_notebook(&Actor::Panel, "  ", None),
        Err(StoreError::Invalid(_))
    ));
    let e = store
        .create_notebook(&Actor::Panel, "x", Some("0123456789abcdef0123456789abcdef"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Parent notebook not found: 0123456789abcdef0123456789abcdef"
    );
    // cycles are refused
    let e = store
        .update_notebook(&Actor::Panel, &work.id, None, Some(Some(&proj.id)))
        .unwrap_err();
    assert!(e.to_string().contains("inside itself"), "{e}");
    let moved = store
        .update_notebook(&Actor::Panel, &proj.id, Some("Renamed"), Some(None))
        .unwrap();
    assert_eq!(moved.parent_id, None);
    assert_eq!(moved.title, "Renamed");
}

#[test]
fn notes_create_read_update_list() {
    let (_d, store) = open();
    let n = note(&store, "Hello", "World");
    assert!(is_id(&n.id));
    assert_eq!(n.parent_id, store.default_notebook_id().unwrap());
    assert_eq!(store.note(&n.id).unwrap().unwrap(), n);
    assert_eq!(
        store.note("0123456789abcdef0123456789abcdef").unwrap(),
        None
    );

    let u = store
        .update_note(
            &Actor::Agent("t1".into()),
            &n.id,
            NotePatch {
                body: Some("World!".into()),
                todo_completed: Some(5),
                is_todo: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(u.body, "World!");
    assert_eq!(u.title, "Hello");
    assert!(u.is_todo);
    assert_eq!(u.todo_completed, 5);
    assert!(u.updated_time > n.updated_time);

    // optimistic concurrency
    let e = store
        .update_note(
            &Actor::Cli,
            &n.id,
            NotePatch {
                title: Some("x".into()),
                if_updated_time: Some(n.updated_time),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert!(matches!(e, StoreError::Conflict { .. }));
    assert_eq!(store.note(&n.id).unwrap().unwrap().title, "Hello");
    // moving to a missing notebook fails and leaves the note unchanged
    let e = store
        .update_note(
            &Actor::Cli,
            &n.id,
            NotePatch {
                parent_id: Some("0123456789abcdef0123456789abcdef".into()),
                title: Some("changed".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Notebook not found: 0123456789abcdef0123456789abcdef"
    );
    assert_eq!(store.note(&n.id).unwrap().unwrap(), u);
    let e = store
        .update_note(
            &Actor::Cli,
            "0123456789abcdef0123456789abcdef",
            NotePatch::default(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Note not found: 0123456789abcdef0123456789abcdef"
    );

    // import-style explicit id and times
    let imported = store
        .create_note(
            &Actor::Import,
            NewNote {
                id: Some("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into()),
                title: "old".into(),
                created_time: Some(1000),
                updated_time: Some(2000),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!((imported.created_time, imported.updated_time), (1000, 2000));
    assert!(matches!(
        store.create_note(
            &Actor::Import,
            NewNote {
                id: Some("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into()),
                ..Default::default()
            }
        ),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.create_note(
            &Actor::Import,
            NewNote {
                id: Some("XYZ".into()),
                ..Default::default()
            }
        ),
        Err(StoreError::Invalid(_))
    ));

    let list = store.list_notes(None, false, 10).unwrap();
    assert_eq!(
        list.iter().map(|n| n.title.as_str()).collect::<Vec<_>>(),
        vec!["Hello", "old"]
    );
    assert_eq!(store.list_notes(None, false, 1).unwrap().len(), 1);
}

#[test]
fn trash_and_restore_are_reversible() {
    let (_d, store) = open();
    let n = note(&store, "bin me", "");
    let t = store.trash_note(&Actor::Cli, &n.id).unwrap();
    assert!(t.is_trashed());
    assert!(store.note(&n.id).unwrap().unwrap().is_trashed());
    assert!(store.list_notes(None, false, 10).unwrap().is_empty());
    assert_eq!(store.list_notes(None, true, 10).unwrap().len(), 1);
    assert_eq!(store.list_notebooks().unwrap()[0].note_count, 0);
    assert!(matches!(
        store.trash_note(&Actor::Cli, &n.id),
        Err(StoreError::Invalid(_))
    ));
    let r = store.restore_note(&Actor::Cli, &n.id).unwrap();
    assert!(!r.is_trashed());
    assert_eq!(r.parent_id, n.parent_id);
    assert_eq!(store.list_notes(None, false, 10).unwrap().len(), 1);
    assert!(matches!(
        store.restore_note(&Actor::Cli, &n.id),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn tags_are_case_insensitive_and_idempotent() {
    let (_d, store) = open();
    let a = note(&store, "a", "");
    let b = note(&store, "b", "");
    let t1 = store.add_tag(&Actor::Cli, &a.id, "Idea").unwrap();
    let t2 = store.add_tag(&Actor::Cli, &b.id, " idea ").unwrap();
    assert_eq!(t1, t2);
    assert_eq!(t1.title, "Idea");
    store.add_tag(&Actor::Cli, &a.id, "IDEA").unwrap();
    store.add_tag(&Actor::Cli, &a.id, "zeta").unwrap();
    assert_eq!(
        store
            .note_tags(&a.id)
            .unwrap()
            .iter()
            .map(|t| t.title.as_str())
            .collect::<Vec<_>>(),
        vec!["Idea", "zeta"]
    );
    assert!(matches!(
        store.add_tag(&Actor::Cli, &a.id, " "),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.add_tag(&Actor::Cli, "0123456789abcdef0123456789abcdef", "x"),
        Err(StoreError::NotFound { .. })
    ));

    assert!(store.remove_tag(&Actor::Cli, &a.id, "ZETA").unwrap());
    assert!(!store.remove_tag(&Actor::Cli, &a.id, "zeta").unwrap());
    assert!(!store.remove_tag(&Actor::Cli, &a.id, "never").unwrap());
    // zeta has no notes now; idea is on a note
    let all: Vec<_> = store
        .list_tags(false)
        .unwrap()
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(all, vec!["Idea", "zeta"]);
    let with: Vec<_> = store
        .list_tags(true)
        .unwrap()
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(with, vec!["Idea"]);
    store.trash_note(&Actor::Cli, &a.id).unwrap();
    store.trash_note(&Actor::Cli, &b.id).unwrap();
    assert!(store.list_tags(true).unwrap().is_empty());
    assert_eq!(store.tag_by_title("IDEA").unwrap().unwrap().id, t1.id);
}

#[test]
fn resources_store_bytes_in_workspace() {
    let (dir, store) = open();
    let r = store
        .add_resource(&Actor::Panel, "Cat", "cat.PNG", "image/png", b"\x89PNGdata")
        .unwrap();
    assert!(is_id(&r.id));
    assert_eq!(r.size, 8);
    let path = store.resource_path(&r);
    assert_eq!(
        path,
        dir.path().join("resources").join(format!("{}.png", r.id))
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"\x89PNGdata");
    assert_eq!(store.resource(&r.id).unwrap().unwrap(), r);
    assert!(
        store
            .resource("0123456789abcdef0123456789abcdef")
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        store.add_resource(&Actor::Panel, "x", "x", " ", b""),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn settings_roundtrip() {
    let (_d, store) = open();
    assert_eq!(store.setting("ai.chat.model").unwrap(), None);
    store.set_setting("ai.chat.model", "llama").unwrap();
    store.set_setting("ai.chat.model", "qwen").unwrap();
    assert_eq!(
        store.setting("ai.chat.model").unwrap().as_deref(),
        Some("qwen")
    );
    assert!(
        store
            .settings()
            .unwrap()
            .contains(&("ai.chat.model".into(), "qwen".into()))
    );
    assert!(store.unset_setting("ai.chat.model").unwrap());
    assert_eq!(store.setting("ai.chat.model").unwrap(), None);
    assert!(store.set_setting("", "x").is_err());
}

#[test]
fn every_write_kind_is_journaled_with_actor_before_and_after() {
    let (_d, store) = open();
    let agent = Actor::Agent("turn1".into());
    let nb = store.create_notebook(&Actor::Panel, "NB", None).unwrap();
    let nb2 = store
        .update_notebook(&Actor::Panel, &nb.id, Some("NB2"), None)
        .unwrap();
    let n = store
        .create_note(
            &agent,
            NewNote {
                parent_id: Some(nb.id.clone()),
                title: "t".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let u = store
        .update_note(
            &Actor::Mcp("claude".into()),
            &n.id,
            NotePatch {
                body: Some("b".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let tr = store
        .trash_note(&Actor::Plugin("p1".into()), &n.id)
        .unwrap();
    let rs = store.restore_note(&Actor::Cli, &n.id).unwrap();
    store.add_tag(&agent, &n.id, "x").unwrap();
    store.add_tag(&agent, &n.id, "x").unwrap(); // no-op: no row
    store.remove_tag(&agent, &n.id, "x").unwrap();
    let res = store
        .add_resource(&Actor::Import, "r", "r.txt", "text/plain", b"hi")
        .unwrap();

    let all = store.journal(&JournalQuery::default()).unwrap();
    let kinds: Vec<_> = all.iter().map(|e| (e.kind, e.actor.as_str())).collect();
    assert_eq!(
        kinds,
        vec![
            (JournalKind::NotebookCreate, "panel"),
            (JournalKind::NotebookUpdate, "panel"),
            (JournalKind::NoteCreate, "agent:turn1"),
            (JournalKind::NoteUpdate, "mcp:claude"),
            (JournalKind::NoteTrash, "plugin:p1"),
            (JournalKind::NoteRestore, "cli"),
            (JournalKind::TagAdd, "agent:turn1"),
            (JournalKind::TagRemove, "agent:turn1"),
            (JournalKind::ResourceCreate, "import"),
        ]
    );
    let to = |v: &dyn erased::Ser| v.json();
    assert_eq!(all[0].before, serde_json::Value::Null);
    assert_eq!(all[0].after, to(&nb));
    assert_eq!(all[1].before, to(&nb));
    assert_eq!(all[1].after, to(&nb2));
    assert_eq!(all[2].item_id, n.id);
    assert_eq!(all[2].after, to(&n));
    assert_eq!(all[3].before, to(&n));
    assert_eq!(all[3].after, to(&u));
    assert_eq!(all[4].after, to(&tr));
    assert_eq!(all[5].before, to(&tr));
    assert_eq!(all[5].after, to(&rs));
    assert_eq!(all[6].item_id, n.id);
    assert_eq!(all[6].after, json!({"note_id": n.id, "tag": "x"}));
    assert_eq!(all[7].before, json!({"note_id": n.id, "tag": "x"}));
    assert_eq!(all[7].after, serde_json::Value::Null);
    assert_eq!(all[8].item_id, res.id);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    assert!(all.iter().all(|e| e.time > 0));
    assert_eq!(store.journal_head().unwrap(), all[8].seq);

    // filters
    let q = |q: JournalQuery| store.journal(&q).unwrap().len();
    assert_eq!(
        q(JournalQuery {
            actor: Some("panel".into()),
            ..Default::default()
        }),
        2
    );
    assert_eq!(
        q(JournalQuery {
            actor_prefix: Some("agent:".into()),
            ..Default::default()
        }),
        3
    );
    assert_eq!(
        q(JournalQuery {
            item_id: Some(n.id.clone()),
            ..Default::default()
        }),
        6
    );
    assert_eq!(
        q(JournalQuery {
            after_seq: Some(all[6].seq),
            ..Default::default()
        }),
        2
    );
    assert_eq!(
        q(JournalQuery {
            limit: Some(4),
            ..Default::default()
        }),
        4
    );
}

#[test]
fn failed_writes_leave_no_journal_rows() {
    let (_d, store) = open();
    let n = note(&store, "a", "");
    let head = store.journal_head().unwrap();
    let _ = store.update_note(
        &Actor::Cli,
        &n.id,
        NotePatch {
            if_updated_time: Some(1),
            body: Some("x".into()),
            ..Default::default()
        },
    );
    let _ = store.create_notebook(&Actor::Cli, "", None);
    assert_eq!(store.journal_head().unwrap(), head);
}

mod erased {
    pub trait Ser {
        fn json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap()
        }
    }
}

#[test]
fn change_tags_is_one_all_or_nothing_transaction() {
    let (_d, store) = open();
    let n = note(&store, "n", "");
    store.add_tag(&Actor::Cli, &n.id, "old").unwrap();
    store
        .add_tag(&Actor::Cli, &note(&store, "m", "").id, "elsewhere")
        .unwrap();
    let head = store.journal_head().unwrap();
    let (added, removed) = store
        .change_tags(
            &Actor::Mcp("c".into()),
            &n.id,
            &["A", " b ", "a"],
            &["OLD", "elsewhere", "missing"],
        )
        .unwrap();
    assert_eq!(
        added.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(),
        vec!["A", "b"]
    );
    assert_eq!(
        removed.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(),
        vec!["old", "elsewhere"]
    );
    let tags: Vec<_> = store
        .note_tags(&n.id)
        .unwrap()
        .into_iter()
        .map(|t| t.title)
        .collect();
    assert_eq!(tags, vec!["A", "b"]);
    let rows = store
        .journal(&JournalQuery {
            after_seq: Some(head),
            ..Default::default()
        })
        .unwrap();
    let kinds: Vec<_> = rows.iter().map(|e| (e.kind, e.actor.as_str())).collect();
    assert_eq!(
        kinds,
        vec![
            (JournalKind::TagAdd, "mcp:c"),
            (JournalKind::TagAdd, "mcp:c"),
            (JournalKind::TagRemove, "mcp:c"),
        ]
    );
    // by id
    assert_eq!(store.tag(&added[0].id).unwrap(), Some(added[0].clone()));
    assert_eq!(store.tag("0123456789abcdef0123456789abcdef").unwrap(), None);
    // errors change nothing
    let head = store.journal_head().unwrap();
    assert!(matches!(
        store.change_tags(&Actor::Cli, &n.id, &["x", " "], &[]),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.change_tags(&Actor::Cli, &n.id, &["x"], &["X"]),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.change_tags(&Actor::Cli, "0123456789abcdef0123456789abcdef", &["x"], &[]),
        Err(StoreError::NotFound { .. })
    ));
    assert_eq!(store.journal_head().unwrap(), head);
    assert!(store.tag_by_title("x").unwrap().is_none());
}
