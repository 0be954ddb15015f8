//! The panel: the web app at `/` (embedded HTML/CSS/JS) and its JSON API under `/api`.
//!
//! # Authentication
//! `sidenote serve` prints `http://ADDR/?token=<api.token>`. Loading `/` with the right token
//! sets an `HttpOnly; SameSite=Strict` cookie (`sidenote_token_<port>`, so two servers on
//! different ports do not clash) and redirects to `/`; later page loads and every `/api` call
//! carry the cookie. `/api` also accepts `Authorization: Bearer <token>` or `?token=` (scripts).
//! Without any of them `/` answers a 401 page saying where the link is, `/api` a JSON 401. The
//! DNS-rebinding guard in front of everything refuses a foreign `Host` or `Origin` with 403,
//! so another web site can neither read the page nor call the API. The token never appears in
//! the served HTML.
//!
//! # API (JSON; errors are `{"error": "...", "code": "..."}`)
//! - `GET /api/notebooks`, `GET /api/notes?notebook=ID|q=QUERY`, `GET|PUT|DELETE /api/notes/{id}`,
//!   `POST /api/notes`, `GET /api/tags`, `POST /api/notes/{id}/tags`, `DELETE /api/notes/{id}/tags/{tag}`
//! - editor sessions: `POST /api/editor/{id}/open`, `GET /api/editor/{id}`,
//!   `POST /api/editor/{id}/edit|selection|accept|reject|undo|redo`
//! - chat: `POST /api/chat` (an SSE stream of [`sidenote_agent::TurnEvent`]s, then
//!   `{"type":"saved","turn_id","writes"}`), `POST /api/chat/{turn}/stop`,
//!   `GET|DELETE /api/conversations/{key}` (`key` = a note id or `workspace`)
//! - `GET /api/turns`, `POST /api/turns/{id}/revert`
//! - `GET|PUT /api/settings`, `POST /api/settings/test`, `GET /api/tools`, `PUT /api/tools/{id}`,
//!   `GET /api/plugins`, `POST /api/plugins/{id}/enable|disable`

mod chat;
mod conversations;
mod editor;
mod notes;
mod page;
mod settings;

pub use conversations::Conversations;
pub use page::{INDEX_HTML, cookie_name};

use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use sidenote_agent::{CancellationToken, SharedSession};
use sidenote_ai::{ChatProvider, ProviderConfig};
use sidenote_plugins::PluginHost;
use sidenote_store::{Store, StoreError};
use sidenote_tools::Registry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// A built provider and the configuration it was built from.
pub(crate) type CachedProvider = (ProviderConfig, Arc<dyn ChatProvider>);

/// Everything the panel's handlers share. Cheap to clone.
#[derive(Clone)]
pub struct PanelState {
    pub(crate) store: Store,
    pub(crate) registry: Registry,
    pub(crate) plugins: Option<PluginHost>,
    pub(crate) token: Arc<str>,
    pub(crate) cookie: Arc<str>,
    pub(crate) mcp_url: Arc<str>,
    /// The last provider built and the configuration it was built from.
    pub(crate) provider_cache: Arc<Mutex<Option<CachedProvider>>>,
    pub(crate) sessions: Arc<Mutex<HashMap<String, SharedSession>>>,
    /// Running turns: turn id → (conversation key, cancel token).
    pub(crate) turns: Arc<Mutex<HashMap<String, (String, CancellationToken)>>>,
    pub(crate) conversations: Conversations,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl PanelState {
    pub(crate) fn new(
        store: Store,
        registry: Registry,
        plugins: Option<PluginHost>,
        token: &str,
        port: u16,
        mcp_url: String,
    ) -> anyhow::Result<PanelState> {
        let conversations = Conversations::open(store.root())?;
        Ok(PanelState {
            store,
            registry,
            plugins,
            token: Arc::from(token),
            cookie: Arc::from(cookie_name(port).as_str()),
            mcp_url: Arc::from(mcp_url.as_str()),
            provider_cache: Arc::new(Mutex::new(None)),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            turns: Arc::new(Mutex::new(HashMap::new())),
            conversations,
        })
    }
}

/// An API error: status, a stable `code` and a message that says what to do.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!("panel API: {}", self.message);
        }
        (
            self.status,
            axum::Json(serde_json::json!({"error": self.message, "code": self.code})),
        )
            .into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::NotFound { .. } => ApiError::not_found(e.to_string()),
            StoreError::Invalid(_) | StoreError::Query(_) => ApiError::bad_request(e.to_string()),
            StoreError::Conflict { .. } => {
                ApiError::new(StatusCode::CONFLICT, "conflict", e.to_string())
            }
            _ => ApiError::internal(e.to_string()),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        ApiError::internal(format!("{e:#}"))
    }
}

pub(crate) type ApiResult<T> = Result<T, ApiError>;

/// `/api/*` routes (the caller adds the token check).
pub(crate) fn api_router(state: PanelState) -> Router {
    Router::new()
        .route(
            "/api/notebooks",
            get(notes::notebooks).post(notes::create_notebook),
        )
        .route("/api/notes", get(notes::list).post(notes::create))
        .route(
            "/api/notes/{id}",
            get(notes::read).put(notes::update).delete(notes::trash),
        )
        .route("/api/notes/{id}/tags", post(notes::add_tag))
        .route(
            "/api/notes/{id}/tags/{tag}",
            axum::routing::delete(notes::remove_tag),
        )
        .route("/api/tags", get(notes::tags))
        .route("/api/editor/{id}", get(editor::get_state))
        .route("/api/editor/{id}/open", post(editor::open))
        .route("/api/editor/{id}/edit", post(editor::edit))
        .route("/api/editor/{id}/selection", post(editor::selection))
        .route("/api/editor/{id}/accept", post(editor::accept))
        .route("/api/editor/{id}/reject", post(editor::reject))
        .route("/api/editor/{id}/undo", post(editor::undo))
        .route("/api/editor/{id}/redo", post(editor::redo))
        .route("/api/chat", post(chat::start))
        .route("/api/chat/{turn}/stop", post(chat::stop))
        .route(
            "/api/conversations/{key}",
            get(chat::conversation).delete(chat::reset_conversation),
        )
        .route("/api/turns", get(chat::turns))
        .route("/api/turns/{id}/revert", post(chat::revert))
        .route("/api/settings", get(settings::get).put(settings::put))
        .route("/api/settings/test", post(settings::test))
        .route("/api/tools", get(settings::tools))
        .route("/api/tools/{id}", put(settings::set_tool))
        .route("/api/plugins", get(settings::plugins))
        .route("/api/plugins/{id}/{action}", post(settings::plugin_action))
        .route("/api/{*rest}", axum::routing::any(api_not_found))
        .with_state(state)
}

async fn api_not_found() -> ApiError {
    ApiError::not_found("no such API route")
}

/// The page and its assets (no token needed for the assets; the page itself checks it).
pub(crate) fn page_router(state: PanelState) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/assets/{file}", get(page::asset))
        .with_state(state)
}

pub(crate) use page::require_api_token;
