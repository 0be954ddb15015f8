//! The panel's HTTP surface against a real server on 127.0.0.1:0 and the scripted fake
//! provider: sign-in and refusals, notes, chat turns over SSE (workspace and selection edits),
//! accept / reject / undo, Stop, conversations, turns revert, settings and tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::StreamExt;
use serde_json::{Value, json};
use sidenote_server::{ServeOptions, Server};
use sidenote_store::{Actor, JournalQuery, NewNote, Store};
use sidenote_testkit::{FakeProvider, Reply, Step};
use sidenote_tools::Registry;
use sidenote_tools::builtin::register_builtin;
use std::time::Duration;

const TOKEN: &str = "panel-test-token-0123456789abcdef0123456789abcdef";

struct Env {
    _dir: tempfile::TempDir,
    store: Store,
    url: String,
    http: reqwest::Client,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let registry = Registry::new();
    register_builtin(&registry, store.clone()).unwrap();
    let server = Server::bind(ServeOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        store: store.clone(),
        registry,
        token: TOKEN.into(),
        extra_hosts: vec![],
        plugins: None,
    })
    .await
    .unwrap();
    let url = server.url();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = rx.await;
    }));
    Env {
        _dir: dir,
        store,
        url,
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        shutdown: Some(tx),
    }
}

async fn send(req: reqwest::RequestBuilder) -> reqwest::Response {
    req.send().await.unwrap()
}

async fn status(req: reqwest::RequestBuilder) -> u16 {
    send(req).await.status().as_u16()
}

impl Env {
    /// A request to `path` on the server (no credentials attached).
    fn req(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.url))
    }
    async fn api(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut req = self.req(method, &format!("/api{path}")).bearer_auth(TOKEN);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }
    async fn get(&self, path: &str) -> Value {
        let (s, v) = self.api(reqwest::Method::GET, path, None).await;
        assert_eq!(s, 200, "{path}: {v}");
        v
    }
    async fn post(&self, path: &str, body: Value) -> Value {
        let (s, v) = self.api(reqwest::Method::POST, path, Some(body)).await;
        assert_eq!(s, 200, "{path}: {v}");
        v
    }
    fn use_fake(&self, fake: &FakeProvider) {
        self.store
            .set_setting("ai.chat.baseUrl", &fake.base_url())
            .unwrap();
        self.store
            .set_setting("ai.chat.model", "fake-model")
            .unwrap();
    }
    /// Start a chat turn; the response streams its SSE events.
    async fn chat_request(&self, body: &Value) -> reqwest::Response {
        let req = self.req(reqwest::Method::POST, "/api/chat");
        send(req.bearer_auth(TOKEN).json(body)).await
    }
    /// Run a chat turn and collect its SSE events.
    async fn chat(&self, body: Value) -> Vec<Value> {
        let resp = self.chat_request(&body).await;
        assert_eq!(resp.status().as_u16(), 200);
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        parse_sse(&resp.text().await.unwrap())
    }
    fn note(&self, title: &str, body: &str) -> String {
        self.store
            .create_note(
                &Actor::Cli,
                NewNote {
                    title: title.into(),
                    body: body.into(),
                    ..Default::default()
                },
            )
            .unwrap()
            .id
    }
}

fn parse_sse(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|block| {
            let data: Vec<&str> = block
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|l| l.strip_prefix(' ').unwrap_or(l))
                .collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn page_sign_in_and_refusals() {
    let e = env().await;
    let get = reqwest::Method::GET;
    // the page without a token: 401, and the token is nowhere in it
    let r = send(e.req(get.clone(), "/")).await;
    assert_eq!(r.status().as_u16(), 401);
    assert!(!r.text().await.unwrap().contains(TOKEN));
    assert_eq!(status(e.req(get.clone(), "/?token=wrong")).await, 401);
    // with the token: a cookie and a redirect to a clean URL
    let r = send(e.req(get.clone(), &format!("/?token={TOKEN}"))).await;
    assert_eq!(r.status().as_u16(), 303);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let r = send(e.req(get.clone(), "/").header("cookie", &pair)).await;
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .contains("default-src 'self'")
    );
    let html = r.text().await.unwrap();
    assert!(html.contains("/assets/app.js") && !html.contains(TOKEN));
    // assets are embedded
    let r = send(e.req(get.clone(), "/assets/app.js")).await;
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(r.text().await.unwrap().contains("/api/chat"));
    assert_eq!(status(e.req(get.clone(), "/assets/nope.js")).await, 404);
    // the API: cookie or bearer; nothing → 401; a foreign Origin → 403 even with the token
    assert_eq!(status(e.req(get.clone(), "/api/notebooks")).await, 401);
    let bad_cookie = e
        .req(get.clone(), "/api/notebooks")
        .header("cookie", "sidenote_token_1=x");
    assert_eq!(status(bad_cookie).await, 401);
    let with_cookie = e.req(get.clone(), "/api/notebooks").header("cookie", &pair);
    assert_eq!(status(with_cookie).await, 200);
    let foreign_origin = e
        .req(reqwest::Method::POST, "/api/notes")
        .header("cookie", &pair)
        .header("origin", "http://evil.example")
        .json(&json!({"title": "x"}));
    assert_eq!(status(foreign_origin).await, 403);
    let foreign_host = e
        .req(get, "/api/notebooks")
        .bearer_auth(TOKEN)
        .header("host", "evil.example");
    assert_eq!(status(foreign_host).await, 403);
    assert!(e.store.search("x", 10).unwrap().results.is_empty());
    // unknown API route: JSON 404
    let (s, v) = e.api(reqwest::Method::GET, "/nope", None).await;
    assert_eq!((s, v["code"].as_str()), (404, Some("not_found")));
}

#[tokio::test]
async fn notes_search_and_bad_queries() {
    let e = env().await;
    let nb = e.post("/notebooks", json!({"title": "Trips"})).await;
    let n = e
        .post(
            "/notes",
            json!({"title": "Packing", "body": "socks and tent", "parent_id": nb["id"]}),
        )
        .await;
    let id = n["id"].as_str().unwrap();
    let list = e
        .get(&format!("/notes?notebook={}", nb["id"].as_str().unwrap()))
        .await;
    assert_eq!(list["notes"][0]["id"], id);
    let found = e.get("/notes?q=tent").await;
    assert_eq!(found["total"], 1);
    assert_eq!(found["notes"][0]["title"], "Packing");
    let (s, v) = e
        .api(reqwest::Method::GET, "/notes?q=notebook%3A%22", None)
        .await;
    assert_eq!(s, 400, "{v}");
    let (s, _) = e
        .api(
            reqwest::Method::PUT,
            &format!("/notes/{id}"),
            Some(json!({"title": "Packing 2"})),
        )
        .await;
    assert_eq!(s, 200);
    let v = e
        .post(&format!("/notes/{id}/tags"), json!({"tag": "travel"}))
        .await;
    assert_eq!(v["tags"], json!(["travel"]));
    let (s, _) = e
        .api(reqwest::Method::DELETE, &format!("/notes/{id}"), None)
        .await;
    assert_eq!(s, 200);
    let (s, _) = e
        .api(reqwest::Method::GET, &format!("/notes/{id}"), None)
        .await;
    assert_eq!(s, 404);
}

#[tokio::test]
async fn a_workspace_turn_streams_persists_and_reverts() {
    let e = env().await;
    let fake = FakeProvider::start().await.unwrap();
    // not configured yet: a clear error
    let (s, v) = e
        .api(
            reqwest::Method::POST,
            "/chat",
            Some(json!({"message": "hi"})),
        )
        .await;
    assert_eq!(
        (s, v["code"].as_str()),
        (409, Some("not_configured")),
        "{v}"
    );
    e.use_fake(&fake);
    let id = e.note("Packing list — Lakes", "- [ ] tent");
    fake.push(Step::tool_call(
        "search_notes",
        json!({"query": "packing list"}),
    ));
    fake.push(Step::tool_call(
        "update_note",
        json!({"id": id, "append": "\n- [ ] socks"}),
    ));
    fake.push(Step::text("Added socks."));
    let events = e
        .chat(json!({"message": "add socks to my packing list"}))
        .await;
    let t = types(&events);
    assert_eq!(t.first(), Some(&"started"));
    assert_eq!(t.last(), Some(&"saved"));
    assert!(t.contains(&"finished"), "{t:?}");
    let starts: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_start")
        .map(|e| e["activity"].as_str().unwrap())
        .collect();
    assert_eq!(starts.len(), 2);
    assert!(starts[0].starts_with("Searching notes for"), "{starts:?}");
    let saved = events.last().unwrap();
    assert_eq!(saved["writes"], 1);
    let turn = saved["turn_id"].as_str().unwrap().to_string();
    assert_eq!(
        e.store.note(&id).unwrap().unwrap().body,
        "- [ ] tent\n- [ ] socks"
    );
    // persisted
    let conv = e.get("/conversations/workspace").await;
    let items = conv["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["text"], "add socks to my packing list");
    assert_eq!(items[1]["text"], "Added socks.");
    assert_eq!(items[1]["activity"].as_array().unwrap().len(), 2);
    assert_eq!(items[1]["writes"], 1);
    // the next turn continues the conversation
    fake.push(Step::text("You asked about socks."));
    e.chat(json!({"message": "what did I ask?"})).await;
    let last = fake.requests().last().unwrap().clone();
    assert!(
        last.messages()
            .iter()
            .any(|m| m.to_string().contains("add socks to my packing list"))
    );
    // turns list + revert
    let turns = e.get("/turns").await;
    assert_eq!(turns[0]["turn_id"], turn.as_str());
    let report = e.post(&format!("/turns/{turn}/revert"), json!({})).await;
    assert_eq!(report["reverted"].as_array().unwrap().len(), 1);
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, "- [ ] tent");
    let (s, _) = e
        .api(
            reqwest::Method::POST,
            "/turns/0000000000000000000000000000dead/revert",
            None,
        )
        .await;
    assert_eq!(s, 404);
    // reset
    let (s, _) = e
        .api(reqwest::Method::DELETE, "/conversations/workspace", None)
        .await;
    assert_eq!(s, 200);
    assert!(
        e.get("/conversations/workspace").await["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let (s, _) = e
        .api(reqwest::Method::GET, "/conversations/..%2Fx", None)
        .await;
    assert_eq!(s, 400);
    fake.assert_no_violations();
}

#[tokio::test]
async fn a_selection_edit_is_a_diff_accept_saves_once_and_undo_restores() {
    let e = env().await;
    let fake = FakeProvider::start().await.unwrap();
    e.use_fake(&fake);
    // an emoji before the selection: the browser's UTF-16 offsets differ from char offsets
    let body = "😀 The weather was really very nice.\nEnd.";
    let id = e.note("Diary", body);
    let opened = e.post(&format!("/editor/{id}/open"), json!({})).await;
    assert_eq!(opened["text"], body);
    let start16 = body.encode_utf16().count() - "really very nice.\nEnd.".encode_utf16().count();
    let end16 = start16 + "really very nice".len();
    fake.push(Step::tool_call("edit_selection", json!({"text": "lovely"})));
    fake.push(Step::text("Done."));
    let events = e
        .chat(json!({"message": "shorter", "note_id": id, "selection": {"start": start16, "end": end16}}))
        .await;
    assert!(
        types(&events).contains(&"edit_proposed"),
        "{:?}",
        types(&events)
    );
    // the model saw the selection
    let first = fake.requests()[0].clone();
    assert!(first.tool_names().contains(&"edit_selection".to_string()));
    assert!(first.messages()[0].to_string().contains("really very nice"));
    let st = e.get(&format!("/editor/{id}")).await;
    let pending = st["state"]["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["before"], "really very nice");
    assert_eq!(st["text"], body, "nothing applied yet");
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, body);
    let pid = pending[0]["id"].as_u64().unwrap();
    let acc = e
        .post(&format!("/editor/{id}/accept"), json!({"ids": [pid]}))
        .await;
    let edited = "😀 The weather was lovely.\nEnd.";
    assert_eq!(acc["text"], edited);
    assert_eq!(acc["outcome"]["accepted"], json!([pid]));
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, edited);
    let turn = events[0]["turn_id"].as_str().unwrap();
    let rows = e
        .store
        .journal(&JournalQuery {
            actor: Some(format!("agent:{turn}")),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        rows.len(),
        1,
        "the accepted batch is one revision under the turn"
    );
    let undone = e.post(&format!("/editor/{id}/undo"), json!({})).await;
    assert_eq!(undone["text"], body);
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, body);
    assert_eq!(undone["state"]["can_redo"], true);
    let redone = e.post(&format!("/editor/{id}/redo"), json!({})).await;
    assert_eq!(redone["text"], edited);

    // typing goes through the session and is saved; reject leaves the text alone
    let typed = format!("{edited}\nMore.");
    let v = e
        .post(&format!("/editor/{id}/edit"), json!({"text": typed}))
        .await;
    assert_eq!(v["text"], typed);
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, typed);
    fake.push(Step::tool_call("append_to_note", json!({"text": "P.S."})));
    fake.push(Step::text("Appended."));
    e.chat(json!({"message": "add a ps", "note_id": id})).await;
    let st = e.get(&format!("/editor/{id}")).await;
    assert_eq!(st["state"]["pending"].as_array().unwrap().len(), 1);
    let rej = e.post(&format!("/editor/{id}/reject"), json!({})).await;
    assert_eq!(rej["rejected"].as_array().unwrap().len(), 1);
    assert_eq!(rej["text"], typed);
    assert_eq!(e.store.note(&id).unwrap().unwrap().body, typed);
    let (s, _) = e
        .api(
            reqwest::Method::POST,
            &format!("/editor/{id}/accept"),
            Some(json!({"ids": [999]})),
        )
        .await;
    assert_eq!(s, 404);
    // the note's conversation is separate from the workspace one
    assert_eq!(
        e.get(&format!("/conversations/{id}")).await["items"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert!(
        e.get("/conversations/workspace").await["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    fake.assert_no_violations();
}

#[tokio::test]
async fn stop_cancels_a_slow_turn() {
    let e = env().await;
    let fake = FakeProvider::start().await.unwrap();
    e.use_fake(&fake);
    fake.push(Step::Delay {
        delay_ms: 30_000,
        step: Box::new(Step::text("too late")),
    });
    let resp = e.chat_request(&json!({"message": "slow"})).await;
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let turn = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(ev) = parse_sse(&buf).into_iter().find(|e| e["type"] == "started") {
            break ev["turn_id"].as_str().unwrap().to_string();
        }
    };
    // a second turn in the same conversation is refused while this one runs
    let (s, v) = e
        .api(
            reqwest::Method::POST,
            "/chat",
            Some(json!({"message": "again"})),
        )
        .await;
    assert_eq!((s, v["code"].as_str()), (409, Some("busy")));
    let t0 = std::time::Instant::now();
    e.post(&format!("/chat/{turn}/stop"), json!({})).await;
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
    {
        buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
    }
    assert!(t0.elapsed() < Duration::from_secs(10));
    let events = parse_sse(&buf);
    let failed = events
        .iter()
        .find(|e| e["type"] == "failed")
        .expect("a failed event");
    assert_eq!(failed["error"]["code"], "cancelled");
    assert_eq!(events.last().unwrap()["type"], "saved");
    let (s, _) = e
        .api(reqwest::Method::POST, &format!("/chat/{turn}/stop"), None)
        .await;
    assert_eq!(s, 404, "no longer running");
    let conv = e.get("/conversations/workspace").await;
    assert_eq!(conv["items"][1]["error"]["code"], "cancelled");
}

#[tokio::test]
async fn settings_tools_and_the_provider_test() {
    let e = env().await;
    let fake = FakeProvider::start().await.unwrap();
    let v = e.get("/settings").await;
    assert_eq!(v["api_key_set"], false);
    assert_eq!(v["mcp_token"], TOKEN);
    assert!(v["mcp_url"].as_str().unwrap().ends_with("/mcp"));
    let (s, _) = e
        .api(
            reqwest::Method::PUT,
            "/settings",
            Some(json!({"base_url": "ftp://x"})),
        )
        .await;
    assert_eq!(s, 400);
    let (s, v) = e
        .api(
            reqwest::Method::PUT,
            "/settings",
            Some(json!({"provider_type": "openai-compatible", "base_url": fake.base_url(), "model": "m", "api_key": "sk-secret"})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(v["api_key_set"], true);
    assert!(
        !v.to_string().contains("sk-secret"),
        "the key is never sent back"
    );
    assert_eq!(
        e.store.setting("ai.chat.apiKey").unwrap().as_deref(),
        Some("sk-secret")
    );
    fake.push(Step::text("OK"));
    fake.push(Step::Reply(
        Reply::default().tool("get_secret_word", json!({"topic": "sidenote"})),
    ));
    fake.push(Step::text("pomegranate"));
    let report = e.post("/settings/test", json!({})).await;
    assert!(
        report["verdict"].as_str().unwrap().starts_with("PASS"),
        "{report}"
    );
    // a remote provider is refused unless allowed
    e.store
        .set_setting("ai.chat.baseUrl", "https://api.example.com/v1")
        .unwrap();
    let (s, v) = e
        .api(
            reqwest::Method::POST,
            "/chat",
            Some(json!({"message": "hi"})),
        )
        .await;
    assert_eq!(
        (s, v["code"].as_str()),
        (409, Some("remote_blocked")),
        "{v}"
    );
    // tools and switches
    let tools = e.get("/tools").await;
    let update = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "update_note")
        .unwrap()
        .clone();
    assert_eq!(
        (
            update["ai_enabled"].as_bool(),
            update["mcp_enabled"].as_bool()
        ),
        (Some(true), Some(false))
    );
    let (s, _) = e
        .api(
            reqwest::Method::PUT,
            "/tools/update_note",
            Some(json!({"surface": "mcp", "enabled": true})),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        e.store
            .setting("mcp.tool.update_note.enabled")
            .unwrap()
            .as_deref(),
        Some("true")
    );
    let (s, _) = e
        .api(
            reqwest::Method::PUT,
            "/tools/nope",
            Some(json!({"surface": "mcp", "enabled": true})),
        )
        .await;
    assert_eq!(s, 404);
    let (s, _) = e
        .api(
            reqwest::Method::PUT,
            "/tools/update_note",
            Some(json!({"surface": "x", "enabled": true})),
        )
        .await;
    assert_eq!(s, 400);
    assert_eq!(e.get("/plugins").await, json!([]));
}
