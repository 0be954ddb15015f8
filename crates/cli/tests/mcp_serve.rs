//! `sidenote serve` and `sidenote mcp`, the real binary: printed URL with the real port, auth,
//! the DNS-rebinding guard, and an MCP write journaled under the client's name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use sidenote_store::{JournalQuery, Store};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_sidenote");

fn sidenote(ws: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("--workspace")
        .arg(ws)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sidenote {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

struct Serve {
    child: Child,
    mcp_url: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(ws: &Path) -> Serve {
    let mut child = Command::new(BIN)
        .arg("--workspace")
        .arg(ws)
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    let base = first
        .strip_prefix("sidenote listening on ")
        .expect(&first)
        .to_string();
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0, "must print the real port: {first}");
    assert!(base.starts_with("http://127.0.0.1:"), "{first}");
    let mcp_url = second.strip_prefix("MCP: ").expect(&second).to_string();
    assert_eq!(mcp_url, format!("{base}/mcp"));
    Serve { child, mcp_url }
}

const ACCEPT: &str = "application/json, text/event-stream";

/// The JSON-RPC message in a JSON or SSE body.
fn message(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body:?}"))
}

fn meta(client: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[tokio::test]
async fn serve_guards_and_journals_mcp_writes_under_the_client_name() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    sidenote(
        &ws,
        &["config", "set", "mcp.tool.create_note.enabled", "true"],
    );
    let token = sidenote(&ws, &["config", "get", "api.token"])
        .trim()
        .to_string();
    let s = serve(&ws);
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}});

    // No token / wrong token → 401 with a JSON error.
    let r = http
        .post(&s.mcp_url)
        .header("accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(
        r.json::<Value>().await.unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("token")
    );
    let r = http
        .post(&s.mcp_url)
        .bearer_auth("nope")
        .header("accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    // Foreign Host or Origin → 403, whatever the token.
    let r = http
        .post(&s.mcp_url)
        .bearer_auth(&token)
        .header("host", "attacker.example")
        .header("accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = http
        .post(&s.mcp_url)
        .bearer_auth(&token)
        .header("origin", "https://attacker.example")
        .header("accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);

    // Right token: 2025-06-18 initialize is answered with that version.
    let r = http
        .post(format!("{}?token={token}", s.mcp_url))
        .header("accept", ACCEPT)
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let m = message(&r.text().await.unwrap());
    assert_eq!(m["result"]["protocolVersion"], "2025-06-18", "{m}");

    // A stateless (2026-07-28) write, journaled as mcp:<clientInfo.name>.
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "_meta": meta("journal-check"), "name":"create_note",
        "arguments":{"title":"From MCP","body":"hello"}}});
    let r = http
        .post(&s.mcp_url)
        .bearer_auth(&token)
        .header("accept", ACCEPT)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "create_note")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let m = message(&r.text().await.unwrap());
    assert_eq!(m["result"]["isError"], false, "{m}");
    let created: Value =
        serde_json::from_str(m["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let id = created["id"].as_str().unwrap().to_string();

    let store = Store::open(&ws).unwrap();
    let rows = store
        .journal(&JournalQuery {
            item_id: Some(id.clone()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].actor, "mcp:journal-check");
    assert_eq!(store.note(&id).unwrap().unwrap().title, "From MCP");
}

#[test]
fn mcp_stdio_writes_only_json_rpc_to_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let mut child = Command::new(BIN)
        .arg("--workspace")
        .arg(&ws)
        .arg("mcp")
        .env("SIDENOTE_LOG", "debug") // logs must still go to stderr only
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    // drain stderr meanwhile so debug logs cannot fill the pipe and stall the server
    let stderr = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).unwrap();
        buf
    });
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    for msg in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_notebooks","arguments":{}}}),
    ] {
        writeln!(stdin, "{msg}").unwrap();
    }
    // Close stdin only once the last request is answered, then collect the rest up to EOF.
    let mut lines = Vec::new();
    loop {
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("no answer to request 3 ({e}); stdout so far: {lines:?}"));
        let last = serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == 3);
        lines.push(line);
        if last {
            break;
        }
    }
    drop(stdin);
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    let status = child.wait().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(status.success(), "{}", String::from_utf8_lossy(&stderr));
    let stdout = lines.join("\n");
    let msgs: Vec<Value> = lines
        .iter()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON-RPC on stdout: {l:?}"))
        })
        .collect();
    assert!(msgs.iter().all(|m| m["jsonrpc"] == "2.0"));
    let ids: Vec<i64> = msgs.iter().filter_map(|m| m["id"].as_i64()).collect();
    assert_eq!(ids, [1, 2, 3], "{stdout}");
    assert!(!stderr.is_empty(), "debug logs should have gone to stderr");
}
