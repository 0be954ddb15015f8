//! Streamable HTTP: a tower service wrapping rmcp's, so callers see only `http` types.

use crate::{Handler, McpServer};
use bytes::Bytes;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;

/// The response body of [`McpHttpService`] (JSON or an SSE stream).
pub type McpResponseBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// MCP over Streamable HTTP as a `tower::Service<http::Request<B>>`. Mount it at `/mcp`
/// behind your own auth and `Host`/`Origin` checks.
#[derive(Clone)]
pub struct McpHttpService {
    inner: StreamableHttpService<Handler, LocalSessionManager>,
}

pub(crate) fn build(server: McpServer, cancel: CancellationToken) -> McpHttpService {
    // Host/Origin are checked by the HTTP server in front of us (it knows the address it
    // was told to bind), so rmcp's own allow-list is turned off here. Sessions (clients that
    // `initialize`) get SSE streams; stateless 2026-07-28 requests get a plain JSON response
    // when the handler sends nothing before it (an SSE stream costs a few ms to close).
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_json_response(true)
        .with_cancellation_token(cancel);
    let inner = StreamableHttpService::new(
        move || Ok(Handler::new(server.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    McpHttpService { inner }
}

impl<B> tower::Service<http::Request<B>> for McpHttpService
where
    B: http_body::Body + Send + 'static,
    B::Error: Display,
    B::Data: Send + 'static,
{
    type Response = http::Response<McpResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        tower::Service::<http::Request<B>>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        Box::pin(self.inner.call(req))
    }
}
