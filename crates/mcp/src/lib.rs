//! The MCP face of the tool registry: one rmcp handler, served over stdio (`sidenote mcp`)
//! or Streamable HTTP (mounted at `/mcp` by `sidenote-server`). rmcp types stay in this crate.
//!
//! What the handler does:
//! - `tools/list`: the registry's tools that are switched on for MCP (`mcp.tool.<id>.enabled`;
//!   read tools on, write tools off by default), with `readOnlyHint` from the tool's access.
//! - `tools/call`: unknown tool → JSON-RPC −32602; a tool that exists but is switched off →
//!   `isError: true` with the message saying how to enable it; arguments are validated by the
//!   registry against the tool's schema; `ToolError::Recoverable` → `isError: true` with the
//!   message as text; `ToolError::Internal` → JSON-RPC −32603 (message only, no stack).
//!   The caller recorded in the store's journal is `Actor::Mcp(<clientInfo.name>)` (`mcp`
//!   when the client gave no name).
//! - `notifications/tools/list_changed` is advertised, and sent to every initialized session
//!   when the set of visible tools changes: on a registry change (add/remove/toggles) at once,
//!   and, for switches flipped by another process (`sidenote config set ...`), within one poll
//!   interval ([`McpServer::with_toggle_poll`], default 1 s).
//! - Protocol versions: every revision rmcp knows, including 2025-06-18 and 2025-11-25 via
//!   `initialize` and the stateless 2026-07-28 revision via `server/discover`. Unknown
//!   methods are answered at once with JSON-RPC −32601.

mod http;

pub use http::{McpHttpService, McpResponseBody};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use sidenote_store::{Actor, Store};
use sidenote_tools::toggles::{self, Surface};
use sidenote_tools::{Access, Registry, RegistryChange, ToolCtx, ToolError, ToolInfo, ToolOutput};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast::error::RecvError;

/// The name this server gives in `serverInfo`.
pub const SERVER_NAME: &str = "sidenote";

/// The journal actor name used when a client sends no `clientInfo.name`.
pub const DEFAULT_CLIENT_NAME: &str = "mcp";

/// The MCP server over one workspace: its tool registry and store. Cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    registry: Registry,
    store: Store,
    toggle_poll: Duration,
}

impl McpServer {
    pub fn new(registry: Registry, store: Store) -> Self {
        McpServer {
            registry,
            store,
            toggle_poll: Duration::from_secs(1),
        }
    }

    /// How often an initialized session re-reads the MCP switches to notice changes made by
    /// another process (registry changes in this process are seen at once).
    pub fn with_toggle_poll(mut self, every: Duration) -> Self {
        self.toggle_poll = every.max(Duration::from_millis(50));
        self
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Serve MCP on this process's stdin/stdout until the client closes stdin.
    /// Nothing but JSON-RPC is written to stdout.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serve MCP (newline-delimited JSON-RPC) on any byte stream pair until the reader ends.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> anyhow::Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let handler = Handler::new(self);
        match handler.serve((reader, writer)).await {
            Ok(running) => {
                let reason = running.waiting().await?;
                tracing::debug!(?reason, "MCP stdio session ended");
                Ok(())
            }
            Err(e) => {
                // A client that connects and leaves before its first request is not an error
                // worth failing the process for; anything else is.
                let msg = e.to_string();
                if msg.contains("closed") {
                    tracing::debug!("MCP client left before initializing: {msg}");
                    Ok(())
                } else {
                    Err(anyhow::anyhow!("MCP session failed to start: {msg}"))
                }
            }
        }
    }

    /// A tower service speaking MCP Streamable HTTP (sessions for `initialize` clients,
    /// stateless for 2026-07-28). It does NOT check `Host`/`Origin` or auth: the HTTP server
    /// in front of it does. Cancelling `cancel` ends every session (graceful shutdown).
    pub fn http_service(&self, cancel: tokio_util::sync::CancellationToken) -> McpHttpService {
        http::build(self.clone(), cancel)
    }

    /// The tools a client sees now (switched on for MCP), in registry order.
    pub fn visible_tools(&self) -> Result<Vec<ToolInfo>, sidenote_store::StoreError> {
        toggles::enabled_tools(&self.store, Surface::Mcp, &self.registry)
    }
}

/// One rmcp handler per connection (stdio) or per HTTP session.
#[derive(Clone)]
pub(crate) struct Handler {
    server: McpServer,
    watching: Arc<AtomicBool>,
}

impl Handler {
    pub(crate) fn new(server: McpServer) -> Self {
        Handler {
            server,
            watching: Arc::new(AtomicBool::new(false)),
        }
    }

    fn actor(context: &RequestContext<RoleServer>) -> Actor {
        let name = context
            .client_info()
            .map(|i| i.name.trim().to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| DEFAULT_CLIENT_NAME.to_string());
        // Keep journal actors short and printable.
        let name: String = name.chars().filter(|c| !c.is_control()).take(64).collect();
        Actor::Mcp(name)
    }

    /// Start (once per session) the task that tells the client when its tool list changes.
    fn start_list_changed_watcher(&self, peer: Peer<RoleServer>) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let server = self.server.clone();
        tokio::spawn(async move {
            let alive = || !peer.is_transport_closed();
            watch_visible_tools(&server, alive, || async {
                match peer.notify_tool_list_changed().await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::debug!("tools/list_changed not delivered, stopping: {e}");
                        false
                    }
                }
            })
            .await;
        });
    }
}

/// Call `notify` each time the set of tools visible over MCP changes, until `notify` returns
/// false, `alive` says the session is gone, or the registry is dropped. Registry changes are seen at once; switches changed by
/// another process within one poll interval.
async fn watch_visible_tools<A, F, Fut>(server: &McpServer, alive: A, mut notify: F)
where
    A: Fn() -> bool,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut changes = server.registry.subscribe();
    let mut last = server.visible_tools().ok();
    let mut tick = tokio::time::interval(server.toggle_poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            change = changes.recv() => match change {
                Ok(RegistryChange::Added(_) | RegistryChange::Removed(_) | RegistryChange::TogglesChanged)
                | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
            _ = tick.tick() => {}
        }
        // A session that ended (closed stdio, expired or deleted HTTP session) stops here,
        // even if its tool list never changes again.
        if !alive() {
            return;
        }
        let now = match server.visible_tools() {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!("cannot read MCP tool switches: {e}");
                continue;
            }
        };
        if now != last {
            last = now;
            if !notify().await {
                return;
            }
        }
    }
}

fn to_mcp_tool(info: &ToolInfo) -> Option<rmcp::model::Tool> {
    let schema = match &info.input_schema {
        Value::Object(_) => info.input_schema.clone(),
        _ => json!({"type": "object"}),
    };
    let value = json!({
        "name": info.id,
        "description": info.description,
        "inputSchema": schema,
        "annotations": {
            "readOnlyHint": info.access == Access::Read,
            "destructiveHint": false,
        },
    });
    match serde_json::from_value(value) {
        Ok(t) => Some(t),
        Err(e) => {
            tracing::warn!("tool '{}' cannot be described over MCP: {e}", info.id);
            None
        }
    }
}

/// The `_meta` key under which a tool's RenderSpec (plugin `render`) is sent with its result.
pub const RENDER_META_KEY: &str = "sidenote/render";

/// A successful tool output as MCP content: strings as-is, other JSON pretty-printed (two
/// spaces), images as image content.
fn output_to_result(out: ToolOutput) -> Result<CallToolResult, McpError> {
    let block = match out {
        ToolOutput::Json(Value::Null) => ContentBlock::text(""),
        ToolOutput::Json(Value::String(s)) => ContentBlock::text(s),
        ToolOutput::Json(v) => {
            ContentBlock::text(serde_json::to_string_pretty(&v).map_err(|e| {
                McpError::internal_error(format!("cannot serialise the tool output: {e}"), None)
            })?)
        }
        ToolOutput::Image {
            mime_type, base64, ..
        } => ContentBlock::image(base64, mime_type),
    };
    Ok(CallToolResult::success(vec![block]))
}

fn store_error(e: sidenote_store::StoreError) -> McpError {
    tracing::error!("MCP: store error: {e}");
    McpError::internal_error(format!("internal error: {e}"), None)
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools over the user's sidenote notes workspace: search, read and list notes, \
                 notebooks and tags. Write tools appear only when the user enables them.",
            )
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.start_list_changed_watcher(context.peer);
    }

    /// 2026-07-28 clients have no session: they open `subscriptions/listen` to hear about
    /// tool-list changes.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        (requested.tools_list_changed == Some(true))
            .then(|| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let server = self.server.clone();
        tokio::select! {
            _ = context.cancelled() => {}
            _ = watch_visible_tools(&server, || true, || async {
                context.sink().notify_tool_list_changed().await.is_ok()
            }) => {}
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = self.server.visible_tools().map_err(store_error)?;
        Ok(ListToolsResult::with_all_items(
            tools.iter().filter_map(to_mcp_tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some(tool) = self.server.registry.get(&name) else {
            return Err(McpError::invalid_params(
                format!("Unknown tool: '{name}'"),
                None,
            ));
        };
        let enabled =
            toggles::is_tool_enabled(&self.server.store, Surface::Mcp, &name, tool.access())
                .map_err(store_error)?;
        if !enabled {
            return Ok(
                CallToolResult::error(vec![ContentBlock::text(toggles::disabled_message(
                    Surface::Mcp,
                    &name,
                ))])
                .into(),
            );
        }
        let input = Value::Object(request.arguments.unwrap_or_default());
        let ctx = ToolCtx::new(Self::actor(&context));
        match self.server.registry.call(&name, input.clone(), &ctx).await {
            Ok(out) => {
                // The RenderSpec is for the human: it travels in `_meta`, never in `content`.
                let render = tool.render(&input, &out.to_json()).await;
                let mut result = output_to_result(out)?;
                if let Some(spec) = render {
                    let mut meta = serde_json::Map::new();
                    meta.insert(RENDER_META_KEY.to_string(), spec);
                    result.meta = Some(rmcp::model::MetaObject(meta));
                }
                Ok(result.into())
            }
            Err(ToolError::Recoverable(msg)) => {
                Ok(CallToolResult::error(vec![ContentBlock::text(msg)]).into())
            }
            Err(e @ ToolError::Internal(_)) => {
                tracing::error!("MCP tool '{name}' failed: {e}");
                Err(McpError::internal_error(e.to_string(), None))
            }
        }
    }
}
