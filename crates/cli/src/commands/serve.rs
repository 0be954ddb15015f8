//! `sidenote serve`: the panel (the local web app) at `/`, its API at `/api` and MCP at `/mcp`,
//! on one port. Prints `sidenote listening on http://ADDR`, `MCP: http://ADDR/mcp` and
//! `Panel: http://ADDR/?token=TOKEN` (in that order; the real port when `--addr` asks for
//! port 0) on stdout, then serves until Ctrl-C / SIGTERM. `--open` also opens the panel in
//! the default browser.

use crate::app::App;
use crate::toolset::Toolset;
use sidenote_server::{DEFAULT_ADDR, ServeOptions, Server, ensure_api_token};
use std::io::Write;
use std::net::SocketAddr;

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on. Keep it on 127.0.0.1 unless you know why not; port 0 picks a free
    /// port (the real one is printed).
    #[arg(long, default_value = DEFAULT_ADDR)]
    addr: SocketAddr,
    /// Also accept requests whose Host/Origin is this name (repeatable), e.g. when listening
    /// on a LAN address behind a hostname. Loopback names are always accepted.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_host: Vec<String>,
    /// Open the panel in the default web browser once the server listens.
    #[arg(long)]
    open: bool,
}

pub async fn run(app: &App, args: Args) -> anyhow::Result<()> {
    // The one registry (built-ins, semantic search, plugins; the plugins folder is rescanned
    // so installs from another process show up). Kept alive until the server stops.
    let tools = Toolset::open(app, true).await?;
    let token = ensure_api_token(&app.store)?;
    if !args.addr.ip().is_loopback() {
        tracing::warn!(
            "listening on {} — reachable from other machines; the API token is the only guard",
            args.addr
        );
    }
    let server = Server::bind(ServeOptions {
        addr: args.addr,
        store: app.store.clone(),
        registry: tools.registry.clone(),
        token: token.clone(),
        extra_hosts: args.allow_host,
        plugins: tools.plugins.clone(),
    })
    .await?;
    let panel = server.panel_url(&token);
    // Tests and scripts read these lines; a reader that goes away must not stop the server,
    // so write errors (EPIPE) are ignored.
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "sidenote listening on {}", server.url());
        let _ = writeln!(out, "MCP: {}", server.mcp_url());
        let _ = writeln!(out, "Panel: {panel}");
        let _ = writeln!(
            out,
            "(open the Panel link in your browser; MCP clients send `Authorization: Bearer <token>`, \
             the token: `sidenote config get api.token`)"
        );
        let _ = out.flush();
    }
    if args.open {
        open_browser(&panel);
    }
    let result = server.run(shutdown_signal()).await;
    drop(tools);
    result
}

/// Start the platform's URL opener; failure is only logged (the link is printed anyway).
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    match std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        Ok(_) => {}
        Err(e) => {
            tracing::warn!("cannot open a browser ({program}: {e}); open the Panel link by hand")
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
