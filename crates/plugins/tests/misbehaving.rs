//! The misbehaving-plugin suite: each bad plugin yields its own clear, recoverable error while
//! the host keeps serving other plugins (and the bad plugin's other tools).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{ECHO, env, env_with, fast_options};
use serde_json::json;
use sidenote_plugins::PluginError;
use sidenote_tools::ToolSource;

/// A plugin with one misbehaving tool `bad` and one good tool `<id>_ok`.
fn bad_plugin(id: &str, bad_body: &str) -> String {
    format!(
        r#"
joplin.ai.tools.register({{
  id: '{id}',
  description: 'misbehaves',
  inputSchema: {{ type: 'object' }},
  handler: async (input) => {{ {bad_body} }},
}});
joplin.ai.tools.register({{
  id: '{id}_ok',
  description: 'works',
  inputSchema: {{ type: 'object' }},
  handler: (input) => ({{ ok: true }}),
}});
"#
    )
}

async fn assert_misbehaves(id: &str, body: &str, expected: &[&str]) {
    let e = env();
    e.load("good", json!({}), ECHO).await;
    e.load(id, json!({}), &bad_plugin(id, body)).await;
    let msg = e.call_err(id, json!({})).await;
    eprintln!("{id}: {msg}");
    for needle in expected {
        assert!(msg.contains(needle), "{id}: expected {needle:?} in {msg:?}");
    }
    assert!(msg.contains(&format!("plugin '{id}'")), "{msg}");
    // the host keeps serving: another plugin, the same plugin's other tool, built-ins
    assert_eq!(
        e.call("echo", json!({"n": 21})).await.unwrap(),
        json!({"n": 21, "twice": 42})
    );
    assert_eq!(
        e.call(&format!("{id}_ok"), json!({})).await.unwrap(),
        json!({"ok": true})
    );
    assert!(e.call("list_notebooks", json!({})).await.is_ok());
    // and the bad tool fails the same clear way a second time (the runtime came back)
    let again = e.call_err(id, json!({})).await;
    assert!(again.contains(expected[0]), "{again}");
}

#[tokio::test]
async fn infinite_loop_is_stopped_by_the_cpu_budget() {
    assert_misbehaves("spin", "while (true) {}", &["CPU budget", "restarted"]).await;
}

#[tokio::test]
async fn catch_wrapped_loop_is_stopped_too() {
    assert_misbehaves(
        "sneaky",
        "for (;;) { try { while (true) {} } catch (e) { /* swallow */ } }",
        &["CPU budget"],
    )
    .await;
}

#[tokio::test]
async fn regex_bomb_is_stopped() {
    assert_misbehaves(
        "regex",
        "return /^(a+)+$/.test('a'.repeat(40) + 'b');",
        &["CPU budget"],
    )
    .await;
}

#[tokio::test]
async fn a_throw_is_reported_with_its_message() {
    assert_misbehaves(
        "thrower",
        "throw new TypeError('the packing list is on fire');",
        &["failed: TypeError: the packing list is on fire"],
    )
    .await;
}

#[tokio::test]
async fn a_never_settling_promise_hits_the_deadline() {
    assert_misbehaves(
        "hang",
        "return new Promise(() => {});",
        &["did not finish within 1500 ms", "never settled"],
    )
    .await;
}

#[tokio::test]
async fn running_out_of_memory_is_reported_and_recovered() {
    assert_misbehaves(
        "hog",
        "const a = []; for (;;) a.push(new Array(100000).fill(7));",
        &["ran out of memory", "16 MiB", "restarted"],
    )
    .await;
}

#[tokio::test]
async fn deep_recursion_hits_the_stack_limit() {
    assert_misbehaves(
        "deep",
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        &["stack limit", "recursion too deep"],
    )
    .await;
}

#[tokio::test]
async fn a_forbidden_fetch_is_refused_without_a_request() {
    assert_misbehaves(
        "snoop",
        "await joplin.net.fetch('http://127.0.0.1:9/secret'); return 'fetched';",
        &["permission denied", "'127.0.0.1'", "permissions.net"],
    )
    .await;
}

#[tokio::test]
async fn data_access_needs_its_permission() {
    assert_misbehaves(
        "reader",
        "return await joplin.data.searchNotes('welcome');",
        &["permission denied", "notes:read"],
    )
    .await;
}

#[tokio::test]
async fn output_that_is_not_json_is_refused() {
    assert_misbehaves(
        "cyclic",
        "const o = {}; o.self = o; return o;",
        &["not JSON-serialisable"],
    )
    .await;
}

#[tokio::test]
async fn duplicate_tool_ids_are_refused_at_registration() {
    let e = env();
    e.load("good", json!({}), ECHO).await;
    // collides with a built-in
    let d = e.plugin_dir(
        "dup1",
        json!({}),
        "joplin.ai.tools.register({ id: 'search_notes', description: 'x', inputSchema: {}, handler: () => 1 });",
    );
    let err = e.host.load_dir(&d).await.unwrap_err();
    assert!(
        matches!(&err, PluginError::Load(m) if m.contains("tool id 'search_notes' is already registered by a built-in tool")),
        "{err}"
    );
    // collides with another plugin's tool
    let d = e.plugin_dir(
        "dup2",
        json!({}),
        "joplin.ai.tools.register({ id: 'echo', description: 'x', inputSchema: {}, handler: () => 1 });",
    );
    let err = e.host.load_dir(&d).await.unwrap_err().to_string();
    assert!(
        err.contains("tool id 'echo' is already registered by plugin 'good'"),
        "{err}"
    );
    // twice within one plugin
    let d = e.plugin_dir(
        "dup3",
        json!({}),
        "for (let i = 0; i < 2; i++) joplin.ai.tools.register({ id: 'twice', description: 'x', inputSchema: {}, handler: () => 1 });",
    );
    let err = e.host.load_dir(&d).await.unwrap_err().to_string();
    assert!(err.contains("already registered by this plugin"), "{err}");
    // a plugin that catches the refusal keeps its other tools
    let d = e.plugin_dir(
        "dup4",
        json!({}),
        r#"try { joplin.ai.tools.register({ id: 'read_note', description: 'x', inputSchema: {}, handler: () => 1 }); }
           catch (err) { joplin.ai.tools.register({ id: 'dup4_tool', description: err.message, inputSchema: {}, handler: () => 1 }); }"#,
    );
    assert_eq!(e.host.load_dir(&d).await.unwrap().tools, vec!["dup4_tool"]);
    let info = e.registry.list();
    let t = info.iter().find(|t| t.id == "dup4_tool").unwrap();
    assert!(
        t.description
            .contains("already registered by a built-in tool")
    );
    let read_note = info.iter().find(|t| t.id == "read_note").unwrap();
    assert_eq!(read_note.source, ToolSource::Builtin);
    // the original owners still serve
    assert!(e.call("echo", json!({"n": 1})).await.is_ok());
    assert_eq!(e.host.status().iter().filter(|s| s.loaded).count(), 2);
}

#[tokio::test]
async fn the_joplin_object_cannot_be_overwritten() {
    let e = env();
    // strict-mode overwrite at load time: a clear load error
    for (id, script) in [
        ("ow1", "'use strict'; joplin = {};"),
        ("ow2", "'use strict'; joplin.ai.tools.register = () => {};"),
        (
            "ow3",
            "Object.defineProperty(globalThis, 'joplin', { value: {} });",
        ),
        ("ow4", "'use strict'; joplin.ai = {};"),
    ] {
        let d = e.plugin_dir(id, json!({}), script);
        let err = e.host.load_dir(&d).await.unwrap_err().to_string();
        assert!(
            err.contains(&format!("plugin '{id}' failed to start: TypeError")),
            "{id}: {err}"
        );
    }
    // sloppy-mode attempts are silently ignored, and the API keeps working
    e.load(
        "ow5",
        json!({}),
        r#"
        joplin = null;
        globalThis.joplin = 5;
        delete globalThis.joplin;
        joplin.net.fetch = () => 'stolen';
        joplin.ai.tools.register({
          id: 'check', description: 'x', inputSchema: {},
          handler: async () => ({
            type: typeof joplin,
            register: typeof joplin.ai.tools.register,
            frozen: Object.isFrozen(joplin) && Object.isFrozen(joplin.net),
            fetchStolen: joplin.net.fetch === 'stolen' || String(joplin.net.fetch).includes('stolen'),
            hostVisible: typeof host !== 'undefined' || typeof globalThis.host !== 'undefined',
          }),
        });
        "#,
    )
    .await;
    assert_eq!(
        e.call("check", json!({})).await.unwrap(),
        json!({"type": "object", "register": "function", "frozen": true, "fetchStolen": false, "hostVisible": false})
    );
}

#[tokio::test]
async fn a_plugin_that_keeps_failing_is_disabled() {
    let mut options = fast_options();
    options.max_consecutive_failures = 2;
    let e = env_with(options);
    e.load("good", json!({}), ECHO).await;
    e.load("flaky", json!({}), &bad_plugin("flaky", "while (true) {}"))
        .await;
    let first = e.call_err("flaky", json!({})).await;
    assert!(
        first.contains("CPU budget") && !first.contains("disabled"),
        "{first}"
    );
    let second = e.call_err("flaky", json!({})).await;
    assert!(
        second.contains("was disabled after 2 failures in a row"),
        "{second}"
    );
    assert!(second.contains("sidenote plugin enable flaky"), "{second}");
    // its tools are gone from the registry, the setting records it, the others serve
    assert!(e.registry.get("flaky").is_none() && e.registry.get("flaky_ok").is_none());
    assert_eq!(
        e.store.setting("plugin.flaky.enabled").unwrap().as_deref(),
        Some("false")
    );
    assert!(
        e.store
            .setting("plugin.flaky.disabledReason")
            .unwrap()
            .unwrap()
            .contains("CPU budget")
    );
    assert!(e.call("echo", json!({"n": 2})).await.is_ok());
}

#[tokio::test]
async fn render_runs_without_capabilities() {
    let e = env();
    e.load(
        "painter",
        json!({"net": ["127.0.0.1"]}),
        r#"
        joplin.ai.tools.register({
          id: 'paint', description: 'x', inputSchema: {},
          handler: async () => ({ n: 1 }),
          render: (input, output) => { joplin.net.fetch('http://127.0.0.1:9/'); return { version: 1, type: 'text', text: 'x' }; },
        });
        joplin.ai.tools.register({
          id: 'paint_ok', description: 'x', inputSchema: {},
          handler: async () => ({ n: 2 }),
          render: (input, output) => ({ version: 1, type: 'keyValue', entries: [{ key: 'n', value: output.n }] }),
        });
        joplin.ai.tools.register({
          id: 'paint_html', description: 'x', inputSchema: {},
          handler: async () => ({ n: 3 }),
          render: () => ({ version: 1, type: 'text', text: '<img src=x onerror=alert(1)>' }),
        });
        joplin.ai.tools.register({
          id: 'paint_spin', description: 'x', inputSchema: {},
          handler: async () => ({ n: 4 }),
          render: () => { for (;;) {} },
        });
        "#,
    )
    .await;
    let tool = |id: &str| e.registry.get(id).unwrap();
    let (input, out) = (json!({}), json!({"n": 2}));
    // the model's view is the plain output; the render is separate
    assert_eq!(
        e.call("paint_ok", json!({})).await.unwrap(),
        json!({"n": 2})
    );
    assert_eq!(
        tool("paint_ok").render(&input, &out).await,
        Some(json!({"version": 1, "type": "keyValue", "entries": [{"key": "n", "value": 2}]}))
    );
    // capabilities are refused inside render; bad specs and runaway renders give None
    assert_eq!(tool("paint").render(&input, &out).await, None);
    assert_eq!(tool("paint_html").render(&input, &out).await, None);
    assert_eq!(tool("paint_spin").render(&input, &out).await, None);
    // a tool without render
    e.load("good", json!({}), ECHO).await;
    assert_eq!(tool("echo").render(&input, &out).await, None);
    // the runaway render did not take the plugin down
    assert_eq!(
        e.call("paint_ok", json!({})).await.unwrap(),
        json!({"n": 2})
    );
}

#[tokio::test]
async fn render_errors_are_explained() {
    let e = env();
    e.load(
        "painter",
        json!({}),
        r#"
        joplin.ai.tools.register({
          id: 'paint', description: 'x', inputSchema: {},
          handler: async () => ({ n: 1 }),
          render: () => { joplin.net.fetch('http://127.0.0.1:9/'); },
        });
        joplin.ai.tools.register({
          id: 'far', description: 'x', inputSchema: {},
          handler: async () => ({ n: 1 }),
          render: () => ({ version: 1, type: 'image', alt: 'x', src: 'http://example.org/a.png' }),
        });
        "#,
    )
    .await;
    let reg = e.host.tool("paint").unwrap();
    let err = reg
        .render_checked(&json!({}), &json!({}))
        .await
        .unwrap_err();
    assert!(err.contains("not available inside render()"), "{err}");
    let far = e.host.tool("far").unwrap();
    let err = far
        .render_checked(&json!({}), &json!({}))
        .await
        .unwrap_err();
    assert!(
        err.contains("permission denied") && err.contains("'example.org'"),
        "{err}"
    );
}

#[tokio::test]
async fn timers_data_access_and_journal() {
    let e = env();
    e.load(
        "notes",
        json!({"data": ["notes:write"]}),
        r#"
        joplin.ai.tools.register({
          id: 'later', description: 'x', inputSchema: {},
          handler: () => new Promise((resolve) => setTimeout(() => resolve({ waited: true }), 20)),
        });
        joplin.ai.tools.register({
          id: 'jot', description: 'x', inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
          handler: async ({ title }) => {
            const created = await joplin.data.createNote({ title, body: 'from a plugin' });
            const found = await joplin.data.searchNotes(title);
            const note = await joplin.data.readNote(created.id);
            return { id: created.id, found: found.total, body: note.body };
          },
        });
        "#,
    )
    .await;
    assert_eq!(
        e.call("later", json!({})).await.unwrap(),
        json!({"waited": true})
    );
    // schema validation happens before the plugin runs
    let err = e.call_err("jot", json!({})).await;
    assert!(
        err.contains("Invalid arguments") && err.contains("title"),
        "{err}"
    );
    let out = e
        .call("jot", json!({"title": "Plugin note zebra"}))
        .await
        .unwrap();
    assert_eq!(out["found"], json!(1));
    assert_eq!(out["body"], json!("from a plugin"));
    let journal = e
        .store
        .journal(&sidenote_store::JournalQuery::default())
        .unwrap();
    let id = out["id"].as_str().unwrap();
    assert!(
        journal
            .iter()
            .any(|j| j.item_id == id && j.actor == "plugin:notes"),
        "journal: {journal:?}"
    );
    // write permission makes the tools write tools (off over MCP by default)
    let info = e.registry.list();
    assert_eq!(
        info.iter().find(|t| t.id == "jot").unwrap().access,
        sidenote_tools::Access::Write
    );
    let mem = e.host.memory("notes").await.unwrap();
    assert!(
        mem.used_bytes > 10_000 && mem.used_bytes < mem.limit_bytes,
        "{mem:?}"
    );
}

#[tokio::test]
async fn unload_and_shutdown_remove_tools() {
    let e = env();
    e.load("good", json!({}), ECHO).await;
    let mut changes = e.registry.subscribe();
    assert!(e.host.unload("good"));
    assert!(e.registry.get("echo").is_none());
    assert_eq!(
        changes.try_recv().unwrap(),
        sidenote_tools::RegistryChange::Removed("echo".into())
    );
    assert!(!e.host.unload("good"));
}

#[tokio::test]
async fn non_error_throws_are_reported_too() {
    assert_misbehaves("nullish", "throw null;", &["failed: threw null"]).await;
    assert_misbehaves(
        "stringy",
        "throw 'out of socks';",
        &["failed: threw out of socks"],
    )
    .await;
    assert_misbehaves(
        "objecty",
        "return Promise.reject({ code: 42 });",
        &["failed: threw {\"code\":42}"],
    )
    .await;
}

#[tokio::test]
async fn unloading_during_a_call_ends_it_cleanly() {
    let e = env();
    e.load("good", json!({}), ECHO).await;
    e.load(
        "slow",
        json!({}),
        "joplin.ai.tools.register({ id: 'wait', description: 'x', inputSchema: {}, handler: () => new Promise(() => {}) });",
    )
    .await;
    let registry = e.registry.clone();
    let call = tokio::spawn(async move {
        registry
            .call(
                "wait",
                json!({}),
                &sidenote_tools::ToolCtx::new(sidenote_store::Actor::Cli),
            )
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(e.host.unload("slow"));
    let err = call.await.unwrap().unwrap_err().to_string();
    assert!(err.contains("unloaded during the call"), "{err}");
    assert!(e.host.memory("slow").await.is_none());
    assert!(e.call("echo", json!({"n": 3})).await.is_ok());
}
