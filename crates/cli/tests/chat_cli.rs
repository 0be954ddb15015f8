//! `sidenote chat` and `sidenote turns` end to end: the real binary against the fake
//! provider server (both wire formats, streaming and not).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use sidenote_store::{Actor, JournalQuery, NewNote, Store};
use sidenote_testkit::{FakeProvider, Step};
use std::path::Path;
use std::process::Output;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "not one JSON object ({e}):\n{}\nstderr: {}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts the run succeeded (`context` prefixes the failure message), then [`Run::json`].
    fn ok_json(&self, context: &str) -> Value {
        assert_eq!(self.code, 0, "{context}{}\n{}", self.stdout, self.stderr);
        self.json()
    }
}

async fn sidenote(ws: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sidenote"));
    cmd.arg("--workspace").arg(ws).args(args);
    for k in [
        "SIDENOTE_AI_PROVIDER",
        "SIDENOTE_AI_BASE_URL",
        "SIDENOTE_AI_MODEL",
        "SIDENOTE_AI_API_KEY",
        "SIDENOTE_WORKSPACE",
    ] {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().copied());
    let out: Output = cmd.output().await.unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn env_for<'a>(
    fake: &FakeProvider,
    provider: &'a str,
    url: &'a mut String,
) -> Vec<(&'a str, &'a str)> {
    *url = fake.base_url();
    vec![
        ("SIDENOTE_AI_PROVIDER", provider),
        ("SIDENOTE_AI_BASE_URL", url.as_str()),
        ("SIDENOTE_AI_MODEL", "fake-model"),
    ]
}

fn note(store: &Store, notebook: &str, title: &str, body: &str, t: i64) -> String {
    store
        .create_note(
            &Actor::Import,
            NewNote {
                parent_id: Some(notebook.into()),
                title: title.into(),
                body: body.into(),
                created_time: Some(t),
                updated_time: Some(t),
                ..Default::default()
            },
        )
        .unwrap()
        .id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packing_list_then_turns_revert_in_both_wires() {
    for (provider, streaming) in [("openai-compatible", "true"), ("anthropic", "false")] {
        let dir = tempfile::tempdir().unwrap();
        let (newest, others) = {
            let store = Store::open(dir.path()).unwrap();
            store.set_setting("ai.chat.streaming", streaming).unwrap();
            let a = store
                .create_notebook(&Actor::Cli, "Camping", None)
                .unwrap()
                .id;
            let b = store
                .create_notebook(&Actor::Cli, "Travel", None)
                .unwrap()
                .id;
            let old = note(
                &store,
                &b,
                "Packing list Rome",
                "- [x] hat",
                1_700_000_000_000,
            );
            let newest = note(
                &store,
                &a,
                "Packing list Lakes",
                "- [ ] tent",
                1_720_000_000_000,
            );
            let other = note(
                &store,
                &b,
                "Packing list Paris",
                "- [x] map",
                1_710_000_000_000,
            );
            (newest, vec![old, other])
        };
        let fake = FakeProvider::start().await.unwrap();
        sidenote_testkit::scenario::packing_list(&fake);
        let mut url = String::new();
        let env = env_for(&fake, provider, &mut url);
        let r = sidenote(
            dir.path(),
            &env,
            &[
                "chat",
                "--json",
                "Find my last packing list and add socks to it",
            ],
        )
        .await;
        let out = r.ok_json(&format!("{provider}: "));
        for key in ["reply", "edits", "transcript", "usage", "turn_id"] {
            assert!(out.get(key).is_some(), "{key} missing: {out}");
        }
        assert_eq!(out["reply"], "Added socks to \"Packing list Lakes\".");
        let tools: Vec<&str> = out["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tool"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["search_notes", "read_note", "update_note"]);
        let turn_id = out["turn_id"].as_str().unwrap().to_string();
        fake.assert_no_violations();

        let store = Store::open(dir.path()).unwrap();
        assert_eq!(
            store.note(&newest).unwrap().unwrap().body,
            "- [ ] tent\n- [ ] socks"
        );
        for id in &others {
            let n = store.note(id).unwrap().unwrap();
            assert!(!n.body.contains("socks"), "{}", n.title);
        }
        let rows = store
            .journal(&JournalQuery {
                actor: Some(format!("agent:{turn_id}")),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].item_id, newest);

        let list = sidenote(dir.path(), &[], &["turns", "list"]).await;
        assert_eq!(list.code, 0, "{}", list.stderr);
        assert!(
            list.stdout.contains(&turn_id) && list.stdout.contains("Packing list Lakes"),
            "{}",
            list.stdout
        );

        let rev = sidenote(dir.path(), &[], &["turns", "revert", &turn_id]).await;
        assert_eq!(rev.code, 0, "{}", rev.stderr);
        assert!(
            rev.stdout.contains("reverted  Packing list Lakes"),
            "{}",
            rev.stdout
        );
        assert_eq!(store.note(&newest).unwrap().unwrap().body, "- [ ] tent");

        let listed = sidenote(dir.path(), &[], &["turns", "list", "--json"]).await;
        let turns: Value = serde_json::from_str(&listed.stdout).unwrap();
        assert_eq!(
            turns.as_array().unwrap().len(),
            2,
            "the revert is a turn too"
        );
        let unknown = sidenote(dir.path(), &[], &["turns", "revert", "nope"]).await;
        assert_ne!(unknown.code, 0);
        assert!(
            unknown.stderr.contains("no writes are recorded"),
            "{}",
            unknown.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_stay_pending_unless_apply() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let store = Store::open(dir.path()).unwrap();
        let nb = store.default_notebook_id().unwrap();
        note(&store, &nb, "Trip", "Tent\n\nBoots\n", 1_700_000_000_000)
    };
    let fake = FakeProvider::start().await.unwrap();
    let mut url = String::new();
    let env = env_for(&fake, "openai-compatible", &mut url);

    // streamed text output without --apply: diff shown, note unchanged
    fake.push_all([
        Step::tool_call(
            "insert_after_anchor",
            json!({"anchor": "Tent", "text": "\nSocks"}),
        ),
        Step::text("I proposed adding socks."),
    ]);
    let r = sidenote(dir.path(), &env, &["chat", "--note", &id, "add", "socks"]).await;
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("→ Proposing an edit (insert_after_anchor)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Proposed edit #1 (insert_after_anchor)"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("+Socks"), "{}", r.stdout);
    assert!(
        r.stdout.contains("I proposed adding socks."),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("pending"), "{}", r.stdout);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.note(&id).unwrap().unwrap().body, "Tent\n\nBoots\n");

    // --apply --json: accepted and saved once as the turn
    fake.push_all([
        Step::tool_call(
            "insert_after_anchor",
            json!({"anchor": "Tent", "text": "\nSocks"}),
        ),
        Step::tool_call("append_to_note", json!({"text": "Hat"})),
        Step::text("Added."),
    ]);
    let r = sidenote(
        dir.path(),
        &env,
        &[
            "chat",
            "--note",
            &id,
            "--apply",
            "--json",
            "add socks and a hat",
        ],
    )
    .await;
    let out = r.ok_json("");
    assert_eq!(out["edits"].as_array().unwrap().len(), 2, "{out}");
    assert!(
        out["edits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["status"] == "accepted"),
        "{out}"
    );
    let body = store.note(&id).unwrap().unwrap().body;
    assert!(
        body.starts_with("Tent\nSocks")
            && body.contains("Boots")
            && body.trim_end().ends_with("Hat"),
        "{body:?}"
    );
    let turn = out["turn_id"].as_str().unwrap();
    let rows = store
        .journal(&JournalQuery {
            actor: Some(format!("agent:{turn}")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(rows.len(), 1, "one revision");
    let rev = sidenote(dir.path(), &[], &["turns", "revert", turn]).await;
    assert_eq!(rev.code, 0, "{}", rev.stderr);
    assert_eq!(store.note(&id).unwrap().unwrap().body, "Tent\n\nBoots\n");
    fake.assert_no_violations();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn selection_scope_and_failures() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let store = Store::open(dir.path()).unwrap();
        let nb = store.default_notebook_id().unwrap();
        note(
            &store,
            &nb,
            "Trip",
            "Bring a tent. And boots.",
            1_700_000_000_000,
        )
    };
    let fake = FakeProvider::start().await.unwrap();
    let mut url = String::new();
    let env = env_for(&fake, "anthropic", &mut url);
    fake.push_all([
        Step::tool_call("append_to_note", json!({"text": "x"})),
        Step::tool_call("edit_selection", json!({"text": "Bring a big tent."})),
        Step::text("Done."),
    ]);
    let r = sidenote(
        dir.path(),
        &env,
        &[
            "chat",
            "--note",
            &id,
            "--selection",
            "0..13",
            "--apply",
            "--json",
            "bigger",
        ],
    )
    .await;
    let out = r.ok_json("");
    assert!(
        out["transcript"][0]["error"]
            .as_str()
            .unwrap()
            .contains("only edit_selection")
    );
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        store.note(&id).unwrap().unwrap().body,
        "Bring a big tent. And boots."
    );
    let names = fake.requests()[0].tool_names();
    assert!(
        names.contains(&"edit_selection".to_string())
            && !names.contains(&"append_to_note".to_string())
    );

    // the 8-step cap: `{error: {code, message}, transcript}` and a non-zero exit
    fake.set_fallback(|req| Step::tool_call("list_tags", json!({"n": req.index})));
    let r = sidenote(dir.path(), &env, &["chat", "--json", "loop"]).await;
    assert_ne!(r.code, 0);
    let out = r.json();
    assert_eq!(out["error"]["code"], "max_steps_exceeded", "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains('8'));
    assert_eq!(out["transcript"].as_array().unwrap().len(), 8);

    // bad selection and unknown note: clear errors, no model call
    let before = fake.requests().len();
    let r = sidenote(
        dir.path(),
        &env,
        &[
            "chat",
            "--note",
            &id,
            "--selection",
            "5..500",
            "--json",
            "x",
        ],
    )
    .await;
    assert_ne!(r.code, 0);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("past the end")
    );
    let r = sidenote(dir.path(), &env, &["chat", "--note", "0123", "x"]).await;
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("not found"), "{}", r.stderr);
    assert_eq!(fake.requests().len(), before);
    // no provider configured
    let r = sidenote(dir.path(), &[], &["chat", "--json", "hi"]).await;
    assert_ne!(r.code, 0);
    assert_eq!(r.json()["error"]["code"], "not_configured");
}
