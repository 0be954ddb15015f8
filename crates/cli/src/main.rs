//! `sidenote` — the command-line entry point. Each subcommand lives in `commands/<name>.rs`
//! with its own clap `Args` and an async `run`.

mod app;
mod commands;
mod semantic;
mod toolset;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "sidenote",
    version,
    about = "Local-first notes with a tool-using AI sidebar"
)]
struct Cli {
    /// Workspace directory (default: $XDG_DATA_HOME/sidenote or ~/.local/share/sidenote).
    #[arg(long, global = true, env = "SIDENOTE_WORKSPACE")]
    workspace: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the panel, its API and MCP (Streamable HTTP at /mcp) on 127.0.0.1.
    Serve(commands::serve::Args),
    /// Speak MCP on stdin/stdout (for Claude Desktop and other stdio clients).
    Mcp(commands::mcp::Args),
    /// Import a folder of Markdown files, a Joplin RAW export directory or a .jex archive.
    Import(commands::import::Args),
    /// Export every note as Markdown with front matter.
    Export(commands::export::Args),
    /// Search notes with Joplin's query syntax.
    Search(commands::search::Args),
    /// List, show, create, edit, trash and restore notes.
    #[command(subcommand)]
    Note(commands::note::Cmd),
    /// List and create notebooks.
    #[command(subcommand)]
    Notebook(commands::notebook::Cmd),
    /// List tags.
    #[command(subcommand)]
    Tag(commands::tag::Cmd),
    /// Read and change settings (Joplin-style keys).
    #[command(subcommand)]
    Config(commands::config::Cmd),
    /// Check and inspect the AI provider.
    #[command(subcommand)]
    Ai(commands::ai::Cmd),
    /// Build or update the semantic (embeddings) index; `--status` shows its progress.
    Index(commands::index::Args),
    /// Install and check the local embedding model.
    #[command(subcommand)]
    Model(commands::model::Cmd),
    /// Install, list, remove, enable and disable plugins (sandboxed JS tools).
    #[command(subcommand)]
    Plugin(commands::plugin::Cmd),
    /// One agent turn: ask the AI sidebar's agent from the command line.
    Chat(commands::chat::Args),
    /// List recent agent turns and revert one.
    #[command(subcommand)]
    Turns(commands::turns::Cmd),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr only: stdout belongs to command output (and to JSON-RPC for `mcp`).
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SIDENOTE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let app = app::App::open(cli.workspace)?;
    match cli.command {
        Command::Serve(a) => commands::serve::run(&app, a).await,
        Command::Mcp(a) => commands::mcp::run(&app, a).await,
        Command::Import(a) => commands::import::run(&app, a).await,
        Command::Export(a) => commands::export::run(&app, a).await,
        Command::Search(a) => commands::search::run(&app, a).await,
        Command::Note(c) => commands::note::run(&app, c).await,
        Command::Notebook(c) => commands::notebook::run(&app, c).await,
        Command::Tag(c) => commands::tag::run(&app, c).await,
        Command::Config(c) => commands::config::run(&app, c).await,
        Command::Ai(c) => commands::ai::run(&app, c).await,
        Command::Index(a) => commands::index::run(&app, a).await,
        Command::Model(c) => commands::model::run(&app, c).await,
        Command::Plugin(c) => commands::plugin::run(&app, c).await,
        Command::Chat(a) => commands::chat::run(&app, a).await,
        Command::Turns(c) => commands::turns::run(&app, c).await,
    }
}
