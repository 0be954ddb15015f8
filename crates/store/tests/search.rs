#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every filter of the query grammar against a small fixed corpus.

use pretty_assertions::assert_eq;
use sidenote_store::*;

const DAY: i64 = 86_400_000;

struct Fx {
    _dir: tempfile::TempDir,
    s: Store,
    work: String,
    proj: String,
    home: String,
}

fn add(s: &Store, nb: &str, title: &str, body: &str, f: impl FnOnce(&mut NewNote)) -> String {
    let mut n = NewNote {
        parent_id: Some(nb.to_string()),
        title: title.into(),
        body: body.into(),
        ..Default::default()
    };
    f(&mut n);
    s.create_note(&Actor::Cli, n).unwrap().id
}

fn fixture() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    let work = s.create_notebook(&Actor::Cli, "Work", None).unwrap().id;
    let proj = s
        .create_notebook(&Actor::Cli, "Projects", Some(&work))
        .unwrap()
        .id;
    let home = s
        .create_notebook(&Actor::Cli, "Home Life", None)
        .unwrap()
        .id;
    let now = now_ms();
    let old = 1_577_880_000_000; // 2020-01-01T12:00Z
    let a = add(
        &s,
        &work,
        "Meeting notes",
        "Discussed the budget with Anna. Crème brûlée at lunch.",
        |n| {
            n.created_time = Some(old);
            n.updated_time = Some(old);
        },
    );
    let b = add(
        &s,
        &proj,
        "Roadmap",
        "The meeting about the roadmap went well. Budgeting later.",
        |n| {
            n.source_url = "https://example.com/roadmap".into();
        },
    );
    let c = add(&s, &home, "Groceries", "milk, eggs, bread", |n| {
        n.is_todo = true;
        n.todo_due = now + 3 * DAY;
    });
    add(&s, &home, "Taxes", "file the tax return", |n| {
        n.is_todo = true;
        n.todo_completed = now;
        n.todo_due = now - 10 * DAY;
    });
    let res = s
        .add_resource(&Actor::Cli, "photo", "p.png", "image/png", b"png")
        .unwrap();
    let e = add(
        &s,
        &home,
        "Holiday photo",
        &format!("![beach](:/{})", res.id),
        |_| {},
    );
    s.add_tag(&Actor::Cli, &a, "important").unwrap();
    s.add_tag(&Actor::Cli, &b, "important").unwrap();
    s.add_tag(&Actor::Cli, &b, "project-x").unwrap();
    s.add_tag(&Actor::Cli, &c, "errands").unwrap();
    s.add_tag(&Actor::Cli, &e, "archived").unwrap();
    Fx {
        _dir: dir,
        s,
        work,
        proj,
        home,
    }
}

impl Fx {
    fn titles(&self, q: &str) -> Vec<String> {
        let r = self.s.search(q, 100).unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(r.total, r.results.len());
        r.results.into_iter().map(|h| h.title).collect()
    }
    fn set(&self, q: &str) -> Vec<String> {
        let mut t = self.titles(q);
        t.sort();
        t
    }
    fn err(&self, q: &str) -> String {
        match self.s.search(q, 10) {
            Err(StoreError::Query(e)) => e.to_string(),
            other => panic!("{q}: expected a query error, got {other:?}"),
        }
    }
}

fn v(x: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = x.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[test]
fn plain_terms_are_anded_and_case_and_accent_insensitive() {
    let f = fixture();
    assert_eq!(f.set("meeting"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("meeting anna"), v(&["Meeting notes"]));
    assert_eq!(f.set("CREME brulee"), v(&["Meeting notes"]));
    assert_eq!(f.set("nothingmatches"), v(&[]));
}

#[test]
fn phrases_wildcards_and_negation() {
    let f = fixture();
    assert_eq!(f.set("\"meeting about\""), v(&["Roadmap"]));
    assert_eq!(f.set("\"about meeting\""), v(&[]));
    assert_eq!(f.set("budget"), v(&["Meeting notes"]));
    assert_eq!(f.set("budget*"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("meeting -anna"), v(&["Roadmap"]));
    assert_eq!(f.set("meeting -\"went well\""), v(&["Meeting notes"]));
    // a negation alone filters everything else
    assert_eq!(
        f.set("-meeting"),
        v(&["Groceries", "Taxes", "Holiday photo"])
    );
}

#[test]
fn any_switches_to_or() {
    let f = fixture();
    assert_eq!(f.set("any:1 anna milk"), v(&["Meeting notes", "Groceries"]));
    assert_eq!(f.set("any:0 anna milk"), v(&[]));
    assert_eq!(
        f.set("any:1 milk tag:important"),
        v(&["Meeting notes", "Roadmap", "Groceries"])
    );
}

#[test]
fn title_and_body_filters() {
    let f = fixture();
    assert_eq!(f.set("title:roadmap"), v(&["Roadmap"]));
    assert_eq!(f.set("body:roadmap"), v(&["Roadmap"]));
    assert_eq!(f.set("title:meeting"), v(&["Meeting notes"]));
    assert_eq!(f.set("body:meeting"), v(&["Roadmap"]));
    assert_eq!(f.set("title:\"meeting notes\""), v(&["Meeting notes"]));
    assert_eq!(f.set("title:meeting-notes"), v(&["Meeting notes"]));
    assert_eq!(f.set("title:road*"), v(&["Roadmap"]));
    assert_eq!(f.set("meeting -title:meeting"), v(&["Roadmap"]));
    assert_eq!(f.set("-body:meeting meeting"), v(&["Meeting notes"]));
}

#[test]
fn tag_filter_with_wildcards_and_negation() {
    let f = fixture();
    assert_eq!(f.set("tag:important"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("tag:IMPORTANT"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("tag:proj*"), v(&["Roadmap"]));
    assert_eq!(f.set("tag:*ant"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("tag:important tag:project-x"), v(&["Roadmap"]));
    assert_eq!(f.set("tag:important -tag:project-x"), v(&["Meeting notes"]));
    assert_eq!(
        f.set("-tag:archived -tag:important"),
        v(&["Groceries", "Taxes"])
    );
    assert_eq!(f.set("tag:nosuchtag"), v(&[]));
}

#[test]
fn notebook_filter_includes_sub_notebooks() {
    let f = fixture();
    assert_eq!(f.set("notebook:work"), v(&["Meeting notes", "Roadmap"]));
    assert_eq!(f.set("notebook:projects"), v(&["Roadmap"]));
    assert_eq!(
        f.set("notebook:\"Home Life\""),
        v(&["Groceries", "Taxes", "Holiday photo"])
    );
    assert_eq!(
        f.set("notebook:home*"),
        v(&["Groceries", "Taxes", "Holiday photo"])
    );
    assert_eq!(
        f.set("notebook:work meeting -notebook:projects"),
        v(&["Meeting notes"])
    );
    assert_eq!(f.set("notebook:nope"), v(&[]));
    let _ = (&f.work, &f.proj, &f.home);
}

#[test]
fn type_and_completion() {
    let f = fixture();
    assert_eq!(f.set("type:todo"), v(&["Groceries", "Taxes"]));
    assert_eq!(
        f.set("type:note"),
        v(&["Meeting notes", "Roadmap", "Holiday photo"])
    );
    assert_eq!(f.set("iscompleted:1"), v(&["Taxes"]));
    assert_eq!(f.set("type:todo iscompleted:0"), v(&["Groceries"]));
}

#[test]
fn date_filters_absolute_and_relative() {
    let f = fixture();
    assert_eq!(f.set("created:2019"), f.set("-tag:zzz"));
    assert_eq!(f.set("-created:2021"), v(&["Meeting notes"]));
    assert_eq!(
        f.set("created:20200101 -created:20200102"),
        v(&["Meeting notes"])
    );
    assert_eq!(
        f.set("created:202001 -created:202002"),
        v(&["Meeting notes"])
    );
    assert_eq!(
        f.set("updated:day-1"),
        v(&["Roadmap", "Groceries", "Taxes", "Holiday photo"])
    );
    assert_eq!(f.set("-updated:year-1"), v(&["Meeting notes"]));
    assert_eq!(
        f.set("updated:week-1 updated:month-1"),
        f.set("updated:day-1")
    );
    // due: todos with a due date on/after the bound; -due: before it
    assert_eq!(f.set("due:day-1"), v(&["Groceries"]));
    assert_eq!(f.set("due:day-30"), v(&["Groceries", "Taxes"]));
    assert_eq!(f.set("-due:day+1"), v(&["Taxes"]));
    assert_eq!(
        f.set("type:todo iscompleted:0 due:day+1 -due:day+7"),
        v(&["Groceries"])
    );
}

#[test]
fn sourceurl_resource_and_id() {
    let f = fixture();
    assert_eq!(
        f.set("sourceurl:https://example.com/roadmap"),
        v(&["Roadmap"])
    );
    assert_eq!(f.set("sourceurl:*example.com*"), v(&["Roadmap"]));
    assert_eq!(f.set("sourceurl:https://other.org"), v(&[]));
    assert_eq!(f.set("resource:image/png"), v(&["Holiday photo"]));
    assert_eq!(f.set("resource:image/*"), v(&["Holiday photo"]));
    assert_eq!(f.set("resource:application/pdf"), v(&[]));
    let id = f.s.search("roadmap", 1).unwrap().results[0].id.clone();
    assert_eq!(f.set(&format!("id:{id}")), v(&["Roadmap"]));
}

#[test]
fn combinations() {
    let f = fixture();
    assert_eq!(
        f.set("notebook:work tag:important -anna created:2020"),
        v(&["Roadmap"])
    );
    assert_eq!(
        f.set("any:1 title:groceries title:taxes"),
        v(&["Groceries", "Taxes"])
    );
    assert_eq!(f.set("any:1 anna milk -tag:errands"), v(&["Meeting notes"]));
    assert_eq!(
        f.set("type:todo any:1 milk tax"),
        v(&["Groceries", "Taxes"])
    );
}

#[test]
fn trashed_notes_never_match_and_come_back_on_restore() {
    let f = fixture();
    let id = f.s.search("roadmap", 5).unwrap().results[0].id.clone();
    f.s.trash_note(&Actor::Cli, &id).unwrap();
    assert_eq!(f.set("roadmap"), v(&[]));
    assert_eq!(f.set("tag:project-x"), v(&[]));
    assert!(!f.set("-anna").contains(&"Roadmap".to_string()));
    f.s.restore_note(&Actor::Cli, &id).unwrap();
    assert_eq!(f.set("roadmap"), v(&["Roadmap"]));
}

#[test]
fn edits_are_reindexed() {
    let f = fixture();
    let id = f.s.search("groceries", 5).unwrap().results[0].id.clone();
    f.s.update_note(
        &Actor::Cli,
        &id,
        NotePatch {
            title: Some("Shopping".into()),
            body: Some("cheese".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(f.set("groceries"), v(&[]));
    assert_eq!(f.set("milk"), v(&[]));
    assert_eq!(f.set("cheese title:shopping"), v(&["Shopping"]));
}

#[test]
fn ranking_title_first_then_bm25_then_recency() {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(dir.path()).unwrap();
    let nb = s.default_notebook_id().unwrap();
    let mk = |title: &str, body: &str, t: i64| {
        add(&s, &nb, title, body, |n| {
            n.created_time = Some(t);
            n.updated_time = Some(t);
        })
    };
    // body-only, one mention among many words, newest
    mk("Other", &format!("alpha {}", "filler ".repeat(50)), 5_000);
    // body-only, dense mentions
    mk("Dense", "alpha alpha alpha beta", 1_000);
    // title hit, oldest
    mk("Alpha in title", "nothing here", 10);
    // identical bodies: recency decides
    mk("Twin old", "gamma", 100);
    mk("Twin new", "gamma", 200);
    let titles = |q: &str| -> Vec<String> {
        s.search(q, 10)
            .unwrap()
            .results
            .into_iter()
            .map(|h| h.title)
            .collect()
    };
    assert_eq!(titles("alpha"), vec!["Alpha in title", "Dense", "Other"]);
    assert_eq!(titles("gamma"), vec!["Twin new", "Twin old"]);
    // no text terms: newest first
    assert_eq!(titles("type:note")[0], "Other");
}

#[test]
fn hits_carry_fields_snippet_limit_and_total() {
    let f = fixture();
    let r = f.s.search("meeting", 1).unwrap();
    assert_eq!(r.total, 2);
    assert_eq!(r.results.len(), 1);
    let h = &r.results[0];
    assert_eq!(h.title, "Meeting notes");
    assert_eq!(h.notebook_id, f.work);
    let n = f.s.note(&h.id).unwrap().unwrap();
    assert_eq!(h.updated_time, n.updated_time);
    assert_eq!(h.snippet, n.body);

    // a long body gets a window anchored on the keyword
    let long = format!(
        "{} the secret word is zanzibar. {}",
        "lorem ipsum ".repeat(60),
        "dolor ".repeat(60)
    );
    let nb = f.s.default_notebook_id().unwrap();
    add(&f.s, &nb, "Long", &long, |_| {});
    let h = &f.s.search("zanzibar", 5).unwrap().results[0];
    assert!(
        h.snippet.starts_with('…') && h.snippet.ends_with('…'),
        "{}",
        h.snippet
    );
    assert!(h.snippet.contains("zanzibar"));
    assert!(h.snippet.chars().count() <= 242);
    assert_eq!(f.s.search("zanzibar", 0).unwrap().total, 1);
}

#[test]
fn malformed_queries_are_errors_naming_the_bad_part() {
    let f = fixture();
    assert!(f.err("foo:bar").contains("unknown filter 'foo:'"));
    assert!(
        f.err("created:2024131")
            .contains("bad date 'created:2024131'")
    );
    assert!(f.err("meeting \"unclosed").contains("unterminated quote"));
    assert!(f.err("-type:todo").contains("can't be negated"));
    assert!(f.err("type:bogus").contains("type"));
    assert!(f.err("").contains("empty"));
    assert!(f.err("tag:\"\"").contains("missing value"));
    // odd but valid input never fails
    for q in [
        "*",
        "a*",
        "-",
        "\"\"",
        "(",
        ")",
        "AND",
        "OR NOT",
        "NEAR(a b)",
        "a^b",
        "c++",
        "#tag",
        "'x'",
    ] {
        assert!(f.s.search(q, 5).is_ok(), "{q}");
    }
}
