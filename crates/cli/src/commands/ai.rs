use crate::app::App;

#[derive(clap::Subcommand)]
pub enum Cmd {}

pub async fn run(_app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {}
}
