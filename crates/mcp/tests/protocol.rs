//! The MCP handler over a byte stream (what `sidenote mcp` does on stdio), driven with raw
//! JSON-RPC lines so every wire detail is checked: error codes, toggles, list_changed, actor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use sidenote_mcp::McpServer;
use sidenote_store::{Actor, Store};
use sidenote_tools::{Access, Registry, Tool, ToolCtx, ToolError, ToolOutput, ToolSource};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

struct TestTool {
    id: &'static str,
    access: Access,
    schema: Value,
    seen: Arc<Mutex<Vec<Actor>>>,
}

#[async_trait::async_trait]
impl Tool for TestTool {
    fn id(&self) -> &str {
        self.id
    }
    fn description(&self) -> &str {
        "a test tool"
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn access(&self) -> Access {
        self.access
    }
    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
        self.seen.lock().unwrap().push(ctx.actor.clone());
        match self.id {
            "boom" => Err(ToolError::internal("disk on fire")),
            "sorry" => Err(ToolError::recoverable("Note not found: abc")),
            "pic" => Ok(ToolOutput::Image {
                id: "0".repeat(32),
                mime_type: "image/png".into(),
                base64: "iVBORw0KGgo=".into(),
            }),
            _ => Ok(ToolOutput::Json(json!({"echo": input}))),
        }
    }
    async fn render(&self, input: &Value, _output: &Value) -> Option<Value> {
        (self.id == "echo").then(|| json!({"type": "text", "text": format!("rendered {input}")}))
    }
}

struct Rig {
    store: Store,
    registry: Registry,
    seen: Arc<Mutex<Vec<Actor>>>,
    tx: WriteHalf<DuplexStream>,
    rx: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: i64,
    _dir: tempfile::TempDir,
}

fn tool(id: &'static str, access: Access, seen: &Arc<Mutex<Vec<Actor>>>) -> Arc<dyn Tool> {
    Arc::new(TestTool {
        id,
        access,
        schema: json!({"type":"object","properties":{"n":{"type":"integer"}}}),
        seen: seen.clone(),
    })
}

impl Rig {
    async fn start() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let registry = Registry::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for (id, access) in [
            ("echo", Access::Read),
            ("writer", Access::Write),
            ("boom", Access::Read),
            ("sorry", Access::Read),
            ("pic", Access::Read),
        ] {
            registry
                .add(tool(id, access, &seen), ToolSource::Builtin)
                .unwrap();
        }
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server = McpServer::new(registry.clone(), store.clone())
            .with_toggle_poll(Duration::from_millis(100));
        tokio::spawn(server.serve_io(server_read, server_write));
        let (client_read, tx) = tokio::io::split(client_side);
        let rx = BufReader::new(client_read).lines();
        Rig {
            store,
            registry,
            seen,
            tx,
            rx,
            next_id: 0,
            _dir: dir,
        }
    }

    async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.tx.write_all(&line).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.rx.next_line())
            .await
            .expect("no message from the server within 5 s")
            .unwrap()
            .expect("server closed the stream");
        serde_json::from_str(&line).unwrap()
    }

    /// Send a request and return its response (skipping notifications in between).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        loop {
            let msg = self.recv().await;
            if msg.get("id") == Some(&json!(id)) {
                return msg;
            }
        }
    }

    async fn initialize(&mut self, version: &str, client: &str) -> Value {
        let resp = self
            .request(
                "initialize",
                json!({"protocolVersion":version,"capabilities":{},
                       "clientInfo":{"name":client,"version":"1"}}),
            )
            .await;
        self.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}))
            .await;
        resp
    }

    async fn tool_names(&mut self) -> Vec<String> {
        let resp = self.request("tools/list", json!({})).await;
        resp["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    async fn call(&mut self, name: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name":name,"arguments":args}))
            .await
    }

    async fn expect_list_changed(&mut self) {
        loop {
            let msg = self.recv().await;
            if msg["method"] == "notifications/tools/list_changed" {
                return;
            }
        }
    }
}

fn text_of(resp: &Value) -> String {
    resp["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn initialize_list_and_call_with_every_error_kind() {
    let mut rig = Rig::start().await;
    for version in ["2025-06-18"] {
        let init = rig.initialize(version, "rust-test").await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "sidenote");
        assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    }

    // Write tools are off by default, so hidden.
    assert_eq!(rig.tool_names().await, ["echo", "boom", "sorry", "pic"]);
    let list = rig.request("tools/list", json!({})).await;
    assert_eq!(
        list["result"]["tools"][0]["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(list["result"]["tools"][0]["inputSchema"]["type"], "object");

    // Valid call: pretty JSON text, not an error.
    let ok = rig.call("echo", json!({"n": 3})).await;
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    let v: Value = serde_json::from_str(&text_of(&ok)).unwrap();
    assert_eq!(v, json!({"echo":{"n":3}}));
    assert!(text_of(&ok).contains("\n  "), "pretty-printed");
    // The tool's RenderSpec travels in `_meta`, never in `content`.
    assert_eq!(
        ok["result"]["_meta"]["sidenote/render"],
        json!({"type": "text", "text": "rendered {\"n\":3}"}),
        "{ok}"
    );
    assert!(!text_of(&ok).contains("rendered"), "{ok}");

    // Invalid arguments: recoverable, names the field and the rule; handler never ran.
    let before = rig.seen.lock().unwrap().len();
    let bad = rig.call("echo", json!({"n": "three"})).await;
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(
        text_of(&bad).contains("'n'") && text_of(&bad).contains("integer"),
        "{bad}"
    );
    assert_eq!(rig.seen.lock().unwrap().len(), before);

    // ToolError::Recoverable → isError with the message.
    let sorry = rig.call("sorry", json!({})).await;
    assert_eq!(sorry["result"]["isError"], true);
    assert_eq!(text_of(&sorry), "Note not found: abc");

    // Image output → image content.
    let pic = rig.call("pic", json!({})).await;
    assert_eq!(pic["result"]["content"][0]["type"], "image", "{pic}");
    assert_eq!(pic["result"]["content"][0]["mimeType"], "image/png");
    assert_eq!(pic["result"]["content"][0]["data"], "iVBORw0KGgo=");

    // Internal error → JSON-RPC -32603, message without a stack.
    let boom = rig.call("boom", json!({})).await;
    assert_eq!(boom["error"]["code"], -32603, "{boom}");
    let msg = boom["error"]["message"].as_str().unwrap();
    assert!(msg.contains("disk on fire"), "{msg}");
    assert!(
        !msg.contains(".rs:") && !msg.contains("backtrace") && !msg.contains('\n'),
        "{msg}"
    );
    assert!(boom.get("result").is_none());

    // Unknown tool → JSON-RPC -32602.
    let unknown = rig.call("no_such_tool", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no_such_tool")
    );

    // Disabled tool → refused with how to enable it; handler never ran.
    let before = rig.seen.lock().unwrap().len();
    let off = rig.call("writer", json!({})).await;
    assert_eq!(off["result"]["isError"], true, "{off}");
    assert!(
        text_of(&off).contains("sidenote config set mcp.tool.writer.enabled true"),
        "{off}"
    );
    assert_eq!(rig.seen.lock().unwrap().len(), before);

    // Unknown method → -32601 at once.
    let nm = rig.request("no/such_method", json!({})).await;
    assert_eq!(nm["error"]["code"], -32601, "{nm}");

    // The client's name is the actor of every call.
    let seen = rig.seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|a| *a == Actor::Mcp("rust-test".into())),
        "{seen:?}"
    );
}

#[tokio::test]
async fn list_changed_is_sent_for_toggles_and_registry_changes() {
    let mut rig = Rig::start().await;
    rig.initialize("2025-11-25", "watcher").await;
    assert!(!rig.tool_names().await.contains(&"writer".to_string()));

    // A switch flipped in this process, announced through the registry.
    rig.store
        .set_setting("mcp.tool.writer.enabled", "true")
        .unwrap();
    rig.registry.notify_toggles_changed();
    rig.expect_list_changed().await;
    assert!(rig.tool_names().await.contains(&"writer".to_string()));
    let on = rig.call("writer", json!({})).await;
    assert_eq!(on["result"]["isError"], false, "{on}");

    // A switch flipped by another process (no registry event): noticed by polling.
    rig.store
        .set_setting("mcp.tool.echo.enabled", "false")
        .unwrap();
    rig.expect_list_changed().await;
    assert!(!rig.tool_names().await.contains(&"echo".to_string()));

    // A plugin tool added, then removed, at runtime.
    let extra = tool("plugin_tool", Access::Read, &rig.seen);
    rig.registry
        .add(extra, ToolSource::Plugin("p".into()))
        .unwrap();
    rig.expect_list_changed().await;
    assert!(rig.tool_names().await.contains(&"plugin_tool".to_string()));
    rig.registry.remove_plugin("p");
    rig.expect_list_changed().await;
    assert!(!rig.tool_names().await.contains(&"plugin_tool".to_string()));
}

#[tokio::test]
async fn stateless_2026_07_28_discover_and_call_without_initialize() {
    let mut rig = Rig::start().await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "2"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let disc = rig.request("server/discover", json!({"_meta": meta})).await;
    let versions = disc["result"]["supportedVersions"].as_array().unwrap();
    for v in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        assert!(versions.contains(&json!(v)), "{disc}");
    }
    assert_eq!(disc["result"]["capabilities"]["tools"]["listChanged"], true);

    let list = rig.request("tools/list", json!({"_meta": meta})).await;
    assert_eq!(list["result"]["ttlMs"], 0, "{list}");
    assert_eq!(list["result"]["cacheScope"], "private");
    let call = rig
        .request(
            "tools/call",
            json!({"_meta": meta, "name": "echo", "arguments": {"n": 1}}),
        )
        .await;
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    assert_eq!(
        rig.seen.lock().unwrap().last(),
        Some(&Actor::Mcp("modern-client".into()))
    );
}

#[tokio::test]
async fn a_nameless_client_is_journaled_as_mcp() {
    let mut rig = Rig::start().await;
    rig.initialize("2025-11-25", "  ").await;
    rig.call("echo", json!({})).await;
    assert_eq!(
        rig.seen.lock().unwrap().last(),
        Some(&Actor::Mcp("mcp".into()))
    );
}
