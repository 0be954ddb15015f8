use crate::app::App;

#[derive(clap::Args)]
pub struct Args {}

pub async fn run(_app: &App, _args: Args) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
