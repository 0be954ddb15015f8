#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use sidenote_store::*;
use std::collections::BTreeMap;
use std::path::Path;

fn open(dir: &Path) -> Store {
    Store::open(dir).unwrap()
}

fn import(store: &Store, path: &Path) -> (ImportReport, Vec<ImportProgress>) {
    let mut seen = Vec::new();
    let r = store
        .import(path, &Actor::Import, &mut |p| seen.push(p))
        .unwrap();
    (r, seen)
}

/// Notebook path ("A/B") of every notebook id.
fn nb_paths(s: &Store) -> BTreeMap<String, String> {
    let all = s.all_notebooks().unwrap();
    let by: BTreeMap<_, _> = all.iter().map(|n| (n.id.clone(), n.clone())).collect();
    all.iter()
        .map(|n| {
            let mut parts = vec![n.title.clone()];
            let mut cur = n.parent_id.clone();
            while let Some(p) = cur {
                parts.push(by[&p].title.clone());
                cur = by[&p].parent_id.clone();
            }
            parts.reverse();
            (n.id.clone(), parts.join("/"))
        })
        .collect()
}

/// Everything that must survive a round trip, keyed by note id.
fn snapshot(s: &Store) -> BTreeMap<String, (Note, String, Vec<String>)> {
    let paths = nb_paths(s);
    s.all_notes(false)
        .unwrap()
        .into_iter()
        .map(|mut n| {
            let path = paths[&n.parent_id].clone();
            n.parent_id = String::new();
            let tags = s
                .note_tags(&n.id)
                .unwrap()
                .into_iter()
                .map(|t| t.title)
                .collect();
            (n.id.clone(), (n, path, tags))
        })
        .collect()
}

#[test]
fn export_then_import_is_lossless() {
    let a_dir = tempfile::tempdir().unwrap();
    let a = open(a_dir.path());
    let work = a.create_notebook(&Actor::Cli, "Work", None).unwrap();
    let proj = a
        .create_notebook(&Actor::Cli, "Projects: 2024/Q1", Some(&work.id))
        .unwrap();
    let empty = a.create_notebook(&Actor::Cli, "Empty", None).unwrap();
    let res = a
        .add_resource(&Actor::Cli, "pic", "pic.png", "image/png", b"\x89PNG\0\x01")
        .unwrap();
    let mk = |nb: &str, title: &str, body: &str, f: &dyn Fn(&mut NewNote)| {
        let mut n = NewNote {
            parent_id: Some(nb.into()),
            title: title.into(),
            body: body.into(),
            created_time: Some(1_600_000_000_123),
            updated_time: Some(1_700_000_000_456),
            ..Default::default()
        };
        f(&mut n);
        a.create_note(&Actor::Cli, n).unwrap()
    };
    let n1 = mk(
        &work.id,
        "Plan: \"big\" — ünïcode",
        "\nleading newline\n---\nnot front matter\n  trailing  ",
        &|_| {},
    );
    let n2 = mk(&proj.id, "Todo done", "x", &|n| {
        n.is_todo = true;
        n.todo_completed = 1_700_000_001_000;
        n.todo_due = 1_700_100_000_000;
        n.source_url = "https://example.com/a?b=c".into();
    });
    let n3 = mk(&proj.id, "Todo done", "same title, other note", &|n| {
        n.is_todo = true
    });
    let _n4 = mk(
        &a.default_notebook_id().unwrap(),
        "",
        &format!("![pic](:/{})", res.id),
        &|_| {},
    );
    let _n5 = mk(&empty.id, "---", "", &|_| {});
    a.add_tag(&Actor::Cli, &n1.id, "alpha").unwrap();
    a.add_tag(&Actor::Cli, &n1.id, "Beta Tag").unwrap();
    a.add_tag(&Actor::Cli, &n2.id, "alpha").unwrap();
    let trashed = mk(&work.id, "gone", "", &|_| {});
    a.trash_note(&Actor::Cli, &trashed.id).unwrap();
    let _ = n3;

    let out = tempfile::tempdir().unwrap();
    let exp = out.path().join("export");
    let rep = a.export_markdown(&exp).unwrap();
    assert_eq!(
        rep,
        ExportReport {
            notes: 5,
            notebooks: 4,
            resources: 1
        }
    );
    assert!(
        a.export_markdown(&exp).is_err(),
        "refuses a non-empty directory"
    );

    let b_dir = tempfile::tempdir().unwrap();
    let b = open(b_dir.path());
    let (r, _) = import(&b, &exp);
    assert_eq!(r.skipped, vec![]);
    assert_eq!(r.imported, 5);
    assert_eq!(r.resources, 1);
    assert_eq!(snapshot(&b), snapshot(&a));
    let mut pa: Vec<_> = nb_paths(&a).into_values().collect();
    let mut pb: Vec<_> = nb_paths(&b).into_values().collect();
    pa.sort();
    pb.sort();
    // titles with '/' and ':' survive through `.notebook.yaml`
    assert_eq!(pb, pa);
    assert!(
        b.notebook(&proj.id).unwrap().is_some(),
        "notebook ids are kept"
    );
    let got = b.resource(&res.id).unwrap().unwrap();
    assert_eq!(got, res);
    assert_eq!(
        std::fs::read(b.resource_path(&got)).unwrap(),
        b"\x89PNG\0\x01"
    );
    assert_eq!(b.search("resource:image/png", 5).unwrap().total, 1);

    // and again: export of the import equals the first export's notes
    let exp2 = out.path().join("export2");
    b.export_markdown(&exp2).unwrap();
    let c_dir = tempfile::tempdir().unwrap();
    let c = open(c_dir.path());
    import(&c, &exp2);
    assert_eq!(snapshot(&c), snapshot(&a));
}

#[test]
fn odd_folder_imports_everything_else_and_reports_the_rest() {
    let src = tempfile::tempdir().unwrap();
    let p = src.path();
    let w = |rel: &str, bytes: &[u8]| {
        let f = p.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, bytes).unwrap();
    };
    w("top.md", b"# Top\nplain note");
    w("Work/plan.md", b"---\ntitle: The Plan\ntags: [work, q1]\ncreated: 2021-05-01T10:00:00Z\nupdated: 2021-05-02T10:00:00Z\n---\n\nbody of plan");
    w("Work/Deep/Deeper/leaf.md", b"leaf");
    w("Work/dup.md", b"---\ntitle: Same\n---\none");
    w("Home/dup.md", b"---\ntitle: Same\n---\ntwo");
    w("Home/Dup.MD", b"three");
    w(
        "Home/todo.md",
        b"---\ncompleted?: no\ndue: 2030-01-01\n---\ntodo body",
    );
    w("binary.md", b"PK\x03\x04\x00\x00\x00binary");
    w("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00");
    w("latin1.md", b"caf\xe9 au lait");
    w("badfm.md", b"---\ntitle: [unclosed\n---\nbody");
    w("unterminated.md", b"---\ntitle: x\nbody without end");
    w("baddate.md", b"---\ncreated: next tuesday\n---\nbody");
    w(".hidden/secret.md", b"ignored");
    w(".DS_Store", b"\x00\x01");

    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let (r, progress) = import(&s, p);
    let mut skipped: Vec<(String, String)> = r
        .skipped
        .iter()
        .map(|k| {
            (
                k.path.strip_prefix(p).unwrap().display().to_string(),
                k.reason.clone(),
            )
        })
        .collect();
    skipped.sort();
    let names: Vec<&str> = skipped.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "baddate.md",
            "badfm.md",
            "binary.md",
            "latin1.md",
            "photo.png",
            "unterminated.md"
        ]
    );
    let reason = |n: &str| skipped.iter().find(|(p, _)| p == n).unwrap().1.clone();
    assert!(reason("binary.md").contains("binary"));
    assert!(reason("latin1.md").contains("UTF-8"));
    assert!(reason("photo.png").contains("not a Markdown file"));
    assert!(reason("badfm.md").contains("invalid front matter"));
    assert!(reason("unterminated.md").contains("no closing"));
    assert!(reason("baddate.md").contains("'created'"));
    assert_eq!(r.imported, 7);
    assert_eq!(r.summary(), "7 imported, 6 skipped");
    assert_eq!(r.notebooks, 4); // Work, Deep, Deeper, Home
    assert_eq!(r.tags, 2);

    // progress: starts at 0, ends at total, never decreases
    assert_eq!(progress.first().unwrap().done, 0);
    let last = progress.last().unwrap();
    assert_eq!(last.done, last.total);
    assert_eq!(last.total, 13);
    assert!(progress.windows(2).all(|w| w[0].done <= w[1].done));

    let plan = &s.search("title:plan", 5).unwrap().results[0];
    let n = s.note(&plan.id).unwrap().unwrap();
    assert_eq!(n.title, "The Plan");
    assert_eq!(n.body, "body of plan");
    assert_eq!(n.created_time, 1_619_863_200_000);
    assert_eq!(n.updated_time, 1_619_949_600_000);
    assert_eq!(s.search("tag:q1", 5).unwrap().total, 1);
    assert_eq!(s.search("notebook:work", 10).unwrap().total, 3);
    assert_eq!(s.search("notebook:deeper", 10).unwrap().total, 1);
    assert_eq!(s.search("title:same", 10).unwrap().total, 2);
    assert_eq!(
        s.search("type:todo iscompleted:0 due:2029", 10)
            .unwrap()
            .total,
        1
    );
    let top = &s.search("top", 5).unwrap().results[0];
    assert_eq!(top.notebook_id, s.default_notebook_id().unwrap());
    // without front matter: file name as title, file time as times
    let leaf = s
        .note(&s.search("leaf", 5).unwrap().results[0].id)
        .unwrap()
        .unwrap();
    assert_eq!(leaf.title, "leaf");
    assert!(leaf.updated_time > 1_600_000_000_000);
    // every imported item is journaled as `import`
    let j = s
        .journal(&JournalQuery {
            actor: Some("import".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        j.iter()
            .filter(|e| e.kind == JournalKind::NoteCreate)
            .count(),
        7
    );
}

fn raw_item(title: &str, body: Option<&str>, props: &[(&str, &str)]) -> String {
    let mut parts = vec![title.to_string()];
    if let Some(b) = body {
        parts.push(b.to_string());
    }
    parts.push(
        props
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    parts.join("\n\n")
}

const F1: &str = "f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1";
const F2: &str = "f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2f2";
const N1: &str = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
const N2: &str = "a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2a2";
const R1: &str = "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1";
const T1: &str = "d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1d1";

fn write_raw(dir: &Path) {
    std::fs::create_dir_all(dir.join("resources")).unwrap();
    let w = |name: &str, text: String| std::fs::write(dir.join(name), text).unwrap();
    w(
        &format!("{F2}.md"),
        raw_item(
            "Child",
            None,
            &[
                ("id", F2),
                ("parent_id", F1),
                ("created_time", "2020-01-01T00:00:00.000Z"),
                ("updated_time", "2020-01-01T00:00:00.000Z"),
                ("type_", "2"),
            ],
        ),
    );
    w(
        &format!("{F1}.md"),
        raw_item(
            "Parent",
            None,
            &[("id", F1), ("parent_id", ""), ("type_", "2")],
        ),
    );
    w(
        &format!("{N1}.md"),
        raw_item(
            "Joplin note",
            Some(&format!("Hello **world**\n\nsee ![img](:/{R1})")),
            &[
                ("id", N1),
                ("parent_id", F2),
                ("created_time", "2021-02-03T04:05:06.789Z"),
                ("updated_time", "2022-02-03T04:05:06.789Z"),
                ("is_todo", "1"),
                ("todo_due", "1700000000000"),
                ("todo_completed", "0"),
                ("source_url", "https://joplinapp.org"),
                ("type_", "1"),
            ],
        ),
    );
    w(
        &format!("{N2}.md"),
        raw_item(
            "Root note",
            Some("in parent"),
            &[
                ("id", N2),
                ("parent_id", F1),
                ("created_time", "2021-01-01T00:00:00.000Z"),
                ("updated_time", "2021-01-01T00:00:00.000Z"),
                ("type_", "1"),
            ],
        ),
    );
    w(
        &format!("{R1}.md"),
        raw_item(
            "image.png",
            None,
            &[
                ("id", R1),
                ("mime", "image/png"),
                ("filename", ""),
                ("file_extension", "png"),
                ("size", "3"),
                ("type_", "4"),
            ],
        ),
    );
    std::fs::write(dir.join("resources").join(format!("{R1}.png")), b"PNG").unwrap();
    w(
        &format!("{T1}.md"),
        raw_item("joplin-tag", None, &[("id", T1), ("type_", "5")]),
    );
    w(
        "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1.md",
        raw_item(
            "",
            None,
            &[
                ("id", "e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1"),
                ("note_id", N1),
                ("tag_id", T1),
                ("type_", "6"),
            ],
        ),
    );
    w(
        "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0.md",
        "this is not a joplin item\n\nat all".to_string(),
    );
    std::fs::write(
        dir.join("b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1b1.md"),
        b"\xff\xfe bad",
    )
    .unwrap();
}

fn check_raw_import(s: &Store, r: &ImportReport) {
    assert_eq!(r.imported, 2, "{r:?}");
    assert_eq!(r.notebooks, 2);
    assert_eq!(r.resources, 1);
    assert_eq!(r.tags, 1);
    assert_eq!(r.skipped.len(), 2, "{r:?}");
    let n = s.note(N1).unwrap().unwrap();
    assert_eq!(n.title, "Joplin note");
    assert_eq!(n.body, format!("Hello **world**\n\nsee ![img](:/{R1})"));
    assert_eq!(n.parent_id, F2);
    assert!(n.is_todo);
    assert_eq!(n.todo_due, 1_700_000_000_000);
    assert_eq!(n.source_url, "https://joplinapp.org");
    assert_eq!(n.created_time, 1_612_325_106_789);
    assert_eq!(n.updated_time, 1_643_861_106_789);
    assert_eq!(
        s.notebook(F2).unwrap().unwrap().parent_id.as_deref(),
        Some(F1)
    );
    assert_eq!(
        s.note_tags(N1).unwrap(),
        vec![Tag {
            id: T1.into(),
            title: "joplin-tag".into()
        }]
    );
    let res = s.resource(R1).unwrap().unwrap();
    assert_eq!(res.mime, "image/png");
    assert_eq!(std::fs::read(s.resource_path(&res)).unwrap(), b"PNG");
    assert_eq!(s.search("notebook:parent", 5).unwrap().total, 2);
    assert_eq!(s.search("resource:image/png", 5).unwrap().total, 1);
}

#[test]
fn imports_a_joplin_raw_directory() {
    let src = tempfile::tempdir().unwrap();
    write_raw(src.path());
    assert_eq!(
        ImportFormat::detect(src.path()).unwrap(),
        ImportFormat::JoplinRaw
    );
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let (r, _) = import(&s, src.path());
    check_raw_import(&s, &r);
    // a second import does not duplicate: notes are reported as already there
    let (r2, _) = import(&s, src.path());
    assert_eq!(r2.imported, 0);
    assert!(
        r2.skipped
            .iter()
            .any(|k| k.reason.contains("already exists"))
    );
    assert_eq!(s.list_notes(None, false, 100).unwrap().len(), 2);
}

#[test]
fn imports_a_jex_archive() {
    let src = tempfile::tempdir().unwrap();
    write_raw(src.path());
    let jex = src.path().join("export.jex");
    {
        let f = std::fs::File::create(&jex).unwrap();
        let mut b = tar::Builder::new(f);
        for e in std::fs::read_dir(src.path()).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                b.append_path_with_name(e.path(), &name).unwrap();
            }
        }
        b.append_path_with_name(
            src.path().join("resources").join(format!("{R1}.png")),
            format!("resources/{R1}.png"),
        )
        .unwrap();
        b.finish().unwrap();
    }
    assert_eq!(ImportFormat::detect(&jex).unwrap(), ImportFormat::Jex);
    let d = tempfile::tempdir().unwrap();
    let s = open(d.path());
    let (r, _) = import(&s, &jex);
    check_raw_import(&s, &r);

    // not an archive
    let bogus = src.path().join("bogus.jex");
    std::fs::write(&bogus, b"").unwrap();
    assert!(s.import(&bogus, &Actor::Import, &mut |_| {}).is_err());
    assert!(
        s.import(&src.path().join("missing"), &Actor::Import, &mut |_| {})
            .is_err()
    );
}
