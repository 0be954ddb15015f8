//! `sidenote mcp`: MCP over stdio for Claude Desktop and other stdio clients. stdout carries
//! nothing but JSON-RPC; logs go to stderr (`SIDENOTE_LOG=info` for more).

use crate::app::App;
use crate::toolset::Toolset;
use sidenote_mcp::McpServer;

#[derive(clap::Args)]
pub struct Args {}

pub async fn run(app: &App, _args: Args) -> anyhow::Result<()> {
    let tools = Toolset::open(app, true).await?;
    tracing::info!(workspace = %app.workspace.display(), "MCP on stdio");
    McpServer::new(tools.registry.clone(), app.store.clone())
        .serve_stdio()
        .await
}
