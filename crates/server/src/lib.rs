//! `sidenote serve`: the HTTP server — the panel (the local web app) at `/`, its JSON API
//! under `/api` (chat turns stream over SSE) and MCP (Streamable HTTP) at `/mcp`, one port.
//!
//! Every request first passes the DNS-rebinding guard (a `Host` or `Origin` that is not this
//! machine's loopback name or an explicitly allowed host → 403). `/mcp` then needs the
//! workspace API token: `Authorization: Bearer <api.token>` or `?token=<api.token>`; `/api`
//! accepts those or the panel's `HttpOnly` cookie, set when `/` is opened with `?token=`
//! (see [`panel`]). Missing or wrong → 401 with a JSON `{"error": ...}` body. The page's
//! HTML, script and style sheet are embedded in the binary; nothing is fetched at run time.

mod guard;
pub mod panel;

pub use guard::HostPolicy;
pub use panel::{Conversations, cookie_name};

use anyhow::Context;
use axum::Router;
use sidenote_mcp::McpServer;
use sidenote_store::Store;
use sidenote_tools::Registry;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The settings key of the API token.
pub const API_TOKEN_KEY: &str = "api.token";

/// The default listen address of `sidenote serve`.
pub const DEFAULT_ADDR: &str = "127.0.0.1:41185";

/// Return the workspace's API token, generating and saving one (64 hex chars, 256 random
/// bits from the OS RNG via UUIDv4) when there is none yet.
pub fn ensure_api_token(store: &Store) -> anyhow::Result<String> {
    if let Some(t) = store.setting(API_TOKEN_KEY)?
        && !t.trim().is_empty()
    {
        return Ok(t.trim().to_string());
    }
    let token: String = (0..2)
        .map(|_| uuid::Uuid::new_v4().simple().to_string())
        .collect();
    store.set_setting(API_TOKEN_KEY, &token)?;
    Ok(token)
}

/// What the server needs.
#[derive(Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    pub store: Store,
    pub registry: Registry,
    /// The token `/mcp` (and later `/api`) requires.
    pub token: String,
    /// Extra `Host` names accepted besides loopback (e.g. when bound to a LAN address).
    pub extra_hosts: Vec<String>,
    /// The plugin host (listed and switched on/off in the panel's settings), if plugins are loaded.
    pub plugins: Option<sidenote_plugins::PluginHost>,
}

/// Shared state of the protected routes.
#[derive(Clone)]
pub(crate) struct AuthState {
    pub token: Arc<str>,
}

/// The full router: guard → (`/`, `/assets/*`; auth → `/api/*`; auth → `/mcp`). `cancel` ends
/// MCP sessions on shutdown. Fails only when the panel's conversation table cannot be opened.
pub fn router(opts: &ServeOptions, cancel: CancellationToken) -> anyhow::Result<Router> {
    let mcp = McpServer::new(opts.registry.clone(), opts.store.clone()).http_service(cancel);
    let auth = AuthState {
        token: Arc::from(opts.token.as_str()),
    };
    let protected =
        Router::new()
            .route_service("/mcp", mcp)
            .route_layer(axum::middleware::from_fn_with_state(
                auth,
                guard::require_token,
            ));
    let state = panel::PanelState::new(
        opts.store.clone(),
        opts.registry.clone(),
        opts.plugins.clone(),
        &opts.token,
        opts.addr.port(),
        format!("http://{}/mcp", opts.addr),
    )?;
    let api = panel::api_router(state.clone()).route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        panel::require_api_token,
    ));
    let policy = Arc::new(HostPolicy::new(opts.addr, &opts.extra_hosts));
    Ok(Router::new()
        .merge(protected)
        .merge(api)
        .merge(panel::page_router(state))
        .fallback(guard::not_found)
        .layer(axum::middleware::from_fn_with_state(
            policy,
            guard::check_host_and_origin,
        )))
}

/// A bound, not yet running server.
pub struct Server {
    listener: TcpListener,
    router: Router,
    cancel: CancellationToken,
    local_addr: SocketAddr,
}

impl Server {
    /// Bind `opts.addr` (port 0 picks a free port; read it back with [`Server::local_addr`]).
    pub async fn bind(opts: ServeOptions) -> anyhow::Result<Server> {
        let listener = TcpListener::bind(opts.addr)
            .await
            .with_context(|| format!("cannot listen on {}", opts.addr))?;
        let local_addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let opts = ServeOptions {
            addr: local_addr,
            ..opts
        };
        let router = router(&opts, cancel.clone())?;
        Ok(Server {
            listener,
            router,
            cancel,
            local_addr,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://HOST:PORT` of the bound socket.
    pub fn url(&self) -> String {
        format!("http://{}", self.local_addr)
    }

    /// The MCP endpoint URL.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.url())
    }

    /// The panel's sign-in link: `http://HOST:PORT/?token=TOKEN` (the server swaps the token
    /// for a cookie and redirects to `/`).
    pub fn panel_url(&self, token: &str) -> String {
        format!("{}/?token={token}", self.url())
    }

    /// Serve until `shutdown` resolves, then close MCP sessions and stop.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let cancel = self.cancel.clone();
        // Small SSE events and JSON replies must not wait for delayed ACKs (Nagle).
        let listener = axum::serve::ListenerExt::tap_io(self.listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY: {e}");
            }
        });
        axum::serve(listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                // Open SSE streams would otherwise keep the graceful shutdown waiting.
                cancel.cancel();
            })
            .await
            .context("HTTP server failed")
    }
}
