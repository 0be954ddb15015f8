#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The store commands, run through the built `sidenote` binary.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

struct Ws {
    dir: tempfile::TempDir,
}

impl Ws {
    fn new() -> Ws {
        Ws {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sidenote"))
            .arg("--workspace")
            .arg(self.path().join("ws"))
            .args(args)
            .env_remove("SIDENOTE_WORKSPACE")
            .env("SIDENOTE_LOG", "error")
            .output()
            .unwrap()
    }
    /// Run, expect success, return stdout.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }
    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
    /// Run, expect failure, return stderr.
    fn fail(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(!o.status.success(), "{args:?} should fail");
        String::from_utf8(o.stderr).unwrap()
    }
}

#[test]
fn first_run_creates_welcome_notebook_and_token() {
    let ws = Ws::new();
    let nbs = ws.json(&["notebook", "list", "--json"]);
    let titles: Vec<&str> = nbs["notebooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert!(titles.contains(&"Welcome"), "{titles:?}");
    let token = ws.ok(&["config", "get", "api.token"]);
    assert_eq!(token.trim().len(), 32);
    // a second run does not add another welcome notebook
    let again = ws.json(&["notebook", "list", "--json"]);
    assert_eq!(again["notebooks"].as_array().unwrap().len(), titles.len());
    let hits = ws.json(&["search", "--json", "welcome"]);
    assert!(hits["total"].as_u64().unwrap() >= 1);
}

#[test]
fn workspace_from_environment() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sidenote"))
        .args(["note", "create", "--title", "env note"])
        .env("SIDENOTE_WORKSPACE", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(dir.path().join("sidenote.db").is_file());
}

#[test]
fn note_lifecycle() {
    let ws = Ws::new();
    let nb = ws.ok(&["notebook", "create", "Work"]).trim().to_string();
    let sub = ws
        .ok(&["notebook", "create", "Deep", "--parent", "work"])
        .trim()
        .to_string();
    assert_eq!(nb.len(), 32);
    let id = ws
        .ok(&[
            "note",
            "create",
            "--title",
            "Quarterly plan",
            "--body",
            "budget and roadmap",
            "--notebook",
            &sub,
            "--tag",
            "plan",
        ])
        .trim()
        .to_string();
    let shown = ws.json(&["note", "show", &id, "--json"]);
    assert_eq!(shown["title"], "Quarterly plan");
    assert_eq!(shown["parent_id"], sub.as_str());
    assert_eq!(shown["tags"], serde_json::json!(["plan"]));
    let text = ws.ok(&["note", "show", &id]);
    assert!(text.contains("# Quarterly plan") && text.contains("budget and roadmap"));

    ws.ok(&[
        "note",
        "edit",
        &id,
        "--append",
        " (revised)",
        "--tag",
        "q3",
        "--untag",
        "plan",
    ]);
    let shown = ws.json(&["note", "show", &id, "--json"]);
    assert_eq!(shown["body"], "budget and roadmap (revised)");
    assert_eq!(shown["tags"], serde_json::json!(["q3"]));

    // notebook: includes sub-notebooks
    let r = ws.json(&["search", "notebook:work", "--json"]);
    assert_eq!(r["total"], 1);
    assert_eq!(r["results"][0]["id"], id.as_str());

    ws.ok(&["note", "trash", &id]);
    assert_eq!(ws.json(&["search", "--json", "budget"])["total"], 0);
    let listed = ws.json(&["note", "list", "--trashed", "--json"]);
    assert!(
        listed["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["id"] == id.as_str())
    );
    ws.ok(&["note", "restore", &id]);
    assert_eq!(ws.json(&["search", "--json", "budget"])["total"], 1);

    let tags = ws.json(&["tag", "list", "--json"]);
    assert_eq!(tags["tags"][0]["title"], "q3");

    // errors: one line, non-zero exit
    let e = ws.fail(&["note", "show", "0123456789abcdef0123456789abcdef"]);
    assert_eq!(
        e.trim(),
        "error: Note not found: 0123456789abcdef0123456789abcdef"
    );
    let e = ws.fail(&["note", "create", "--title", "x", "--notebook", "nope"]);
    assert!(e.starts_with("error: no notebook titled 'nope'"), "{e}");
    assert_eq!(e.trim().lines().count(), 1);
    let e = ws.fail(&["note", "edit", &id]);
    assert!(e.contains("nothing to change"));
}

#[test]
fn search_options_negation_and_errors() {
    let ws = Ws::new();
    for (t, tag) in [
        ("alpha one", "keep"),
        ("alpha two", "drop"),
        ("alpha three", "keep"),
    ] {
        ws.ok(&["note", "create", "--title", t, "--tag", tag]);
    }
    let r = ws.json(&["search", "alpha", "-tag:drop", "--json", "--limit", "1"]);
    assert_eq!(r["total"], 2);
    assert_eq!(r["results"].as_array().unwrap().len(), 1);
    let r = ws.json(&["search", "--json", "-n", "5", "alpha"]);
    assert_eq!(r["total"], 3);
    let text = ws.ok(&["search", "alpha", "--limit", "2"]);
    assert!(text.contains("(2 of 3 matches"), "{text}");
    let e = ws.fail(&["search", "foo:bar"]);
    assert_eq!(
        e.trim(),
        "error: invalid search query: unknown filter 'foo:' in 'foo:bar'"
    );
    let e = ws.fail(&["search", "created:2024131"]);
    assert!(e.contains("bad date 'created:2024131'"), "{e}");
    let e = ws.fail(&["search", "\"open"]);
    assert!(e.contains("unterminated quote"), "{e}");
}

#[test]
fn import_export_round_trip() {
    let ws = Ws::new();
    let src = ws.path().join("src");
    std::fs::create_dir_all(src.join("Work")).unwrap();
    std::fs::write(
        src.join("Work/a.md"),
        "---\ntitle: A note\ntags: [x]\n---\n\nalpha body",
    )
    .unwrap();
    std::fs::write(src.join("b.md"), "beta body").unwrap();
    std::fs::write(src.join("bad.md"), b"\xff\xfe\x00 binary").unwrap();
    std::fs::write(src.join("broken.md"), "---\ntitle: [oops\n---\n").unwrap();
    let out = ws.ok(&["import", src.to_str().unwrap()]);
    assert!(out.starts_with("2 imported, 2 skipped"), "{out}");
    assert!(out.contains("bad.md: binary file"), "{out}");
    assert!(out.contains("broken.md: invalid front matter"), "{out}");
    let rep = ws.json(&["import", "--json", src.join("Work").to_str().unwrap()]);
    assert_eq!(rep["imported"], 1);

    let exp = ws.path().join("exp");
    let out = ws.ok(&["export", exp.to_str().unwrap()]);
    assert!(out.starts_with("exported 4 notes"), "{out}"); // 3 imported + welcome
    let e = ws.fail(&["export", exp.to_str().unwrap()]);
    assert!(e.contains("not empty"), "{e}");

    let ws2 = Ws::new();
    let out = ws2.ok(&["import", exp.to_str().unwrap()]);
    assert!(out.starts_with("4 imported, 0 skipped"), "{out}");
    let a = ws.json(&["search", "--json", "alpha"]);
    let b = ws2.json(&["search", "--json", "alpha"]);
    assert_eq!(a["results"][0]["id"], b["results"][0]["id"]);
    assert_eq!(
        a["results"][0]["updated_time"],
        b["results"][0]["updated_time"]
    );
    // a.md was imported twice (whole folder, then Work/ alone): both copies carry tag x
    assert_eq!(ws2.json(&["search", "--json", "tag:x"])["total"], 2);

    let e = ws.fail(&["import", ws.path().join("missing").to_str().unwrap()]);
    assert!(e.contains("does not exist"), "{e}");
}

#[test]
fn config_get_set_list_masks_secrets() {
    let ws = Ws::new();
    assert_eq!(
        ws.ok(&["config", "get", "ai.chat.providerType"]).trim(),
        "openai-compatible"
    );
    ws.ok(&["config", "set", "ai.chat.model", "llama3"]);
    ws.ok(&["config", "set", "ai.chat.apiKey", "sk-supersecretvalue123"]);
    assert_eq!(ws.ok(&["config", "get", "ai.chat.model"]).trim(), "llama3");
    assert_eq!(
        ws.ok(&["config", "get", "ai.chat.apiKey"]).trim(),
        "sk-supersecretvalue123"
    );
    let list = ws.ok(&["config", "list"]);
    assert!(list.contains("ai.chat.model = llama3"), "{list}");
    assert!(!list.contains("supersecret"), "{list}");
    assert!(list.contains("ai.chat.apiKey = sk-s…"), "{list}");
    let token = ws.ok(&["config", "get", "api.token"]);
    assert!(!list.contains(token.trim()));
    let j = ws.json(&["config", "list", "--json"]);
    assert_eq!(j["ai.chat.model"], "llama3");
    assert!(!j["ai.chat.apiKey"].as_str().unwrap().contains("secret"));
    let e = ws.fail(&["config", "get", "no.such.key"]);
    assert_eq!(e.trim(), "error: setting 'no.such.key' is not set");
    let e = ws.fail(&["config", "set", "bad key", "x"]);
    assert!(e.contains("bad setting key"), "{e}");
    ws.ok(&["config", "unset", "ai.chat.model"]);
    assert_eq!(ws.ok(&["config", "get", "ai.chat.model"]).trim(), "");
}
