//! OpenAI-compatible `/v1/embeddings` (Ollama, LM Studio, OpenAI, vLLM, ...).
//!
//! The privacy gate of `sidenote-ai` applies: a non-loopback base URL is refused unless
//! `ai.allowRemote` is true, before any connection. Requests run on a small worker thread
//! with its own runtime, so `embed` can be called from any blocking context.

use super::{Embedder, normalize};
use crate::error::{IndexError, Result};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

/// Texts per request.
pub const REQUEST_BATCH: usize = 64;

#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiEmbedConfig {
    /// E.g. `http://127.0.0.1:11434/v1`; requests go to `{base_url}/embeddings`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub allow_remote: bool,
}

impl std::fmt::Debug for OpenAiEmbedConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("allow_remote", &self.allow_remote)
            .finish()
    }
}

type Job = (Vec<String>, mpsc::Sender<Result<Vec<Vec<f32>>>>);

pub struct OpenAiEmbedder {
    id: String,
    tx: Mutex<Option<mpsc::Sender<Job>>>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl OpenAiEmbedder {
    /// Checks the privacy gate and starts the worker; no request is made yet.
    pub fn new(cfg: OpenAiEmbedConfig) -> Result<Self> {
        sidenote_ai::privacy::check(&cfg.base_url, cfg.allow_remote).map_err(|e| {
            IndexError::NotConfigured(format!("embedding provider {}: {e}", cfg.base_url))
        })?;
        if cfg.model.trim().is_empty() {
            return Err(IndexError::NotConfigured(
                "ai.embeddings.model is empty".into(),
            ));
        }
        let id = format!(
            "openai:{}:{}",
            cfg.base_url.trim_end_matches('/'),
            cfg.model
        );
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| IndexError::Embed(format!("HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = std::thread::Builder::new()
            .name("sidenote-embed-http".into())
            .spawn(move || {
                while let Ok((texts, reply)) = rx.recv() {
                    let r = runtime.block_on(request(&client, &cfg, &texts));
                    let _ = reply.send(r);
                }
            })?;
        Ok(OpenAiEmbedder {
            id,
            tx: Mutex::new(Some(tx)),
            worker: Some(worker),
        })
    }

    fn call(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>> {
        let (reply_tx, reply_rx) = mpsc::channel();
        {
            let guard = self.tx.lock().unwrap_or_else(|p| p.into_inner());
            let tx = guard
                .as_ref()
                .ok_or_else(|| IndexError::Embed("the embedding worker has stopped".into()))?;
            tx.send((texts, reply_tx))
                .map_err(|_| IndexError::Embed("the embedding worker has stopped".into()))?;
        }
        reply_rx
            .recv()
            .map_err(|_| IndexError::Embed("the embedding worker has stopped".into()))?
    }
}

impl Drop for OpenAiEmbedder {
    fn drop(&mut self) {
        self.tx.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

async fn request(
    client: &reqwest::Client,
    cfg: &OpenAiEmbedConfig,
    texts: &[String],
) -> Result<Vec<Vec<f32>>> {
    let url = format!("{}/embeddings", cfg.base_url.trim_end_matches('/'));
    let mut req = client
        .post(&url)
        .json(&json!({ "model": cfg.model, "input": texts }));
    if let Some(key) = &cfg.api_key {
        req = req.bearer_auth(key);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| IndexError::Embed(format!("POST {url}: {e}")))?;
    let status = resp.status();
    let body = resp
        .text()
        .await
        .map_err(|e| IndexError::Embed(format!("POST {url}: reading the response: {e}")))?;
    if !status.is_success() {
        let detail: String = body.chars().take(300).collect();
        return Err(IndexError::Embed(format!(
            "POST {url}: HTTP {status}: {detail}"
        )));
    }
    let v: Value = serde_json::from_str(&body)
        .map_err(|e| IndexError::Embed(format!("POST {url}: response is not JSON: {e}")))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| IndexError::Embed(format!("POST {url}: response has no \"data\" array")))?;
    if data.len() != texts.len() {
        return Err(IndexError::Embed(format!(
            "POST {url}: asked for {} vectors, got {}",
            texts.len(),
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for (pos, item) in data.iter().enumerate() {
        let idx = item
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(pos);
        let emb = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| IndexError::Embed(format!("POST {url}: item {pos} has no embedding")))?;
        let mut vec: Vec<f32> = emb
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| IndexError::Embed(format!("POST {url}: non-numeric embedding")))?;
        if vec.is_empty() {
            return Err(IndexError::Embed(format!("POST {url}: empty embedding")));
        }
        normalize(&mut vec);
        let slot = out
            .get_mut(idx)
            .ok_or_else(|| IndexError::Embed(format!("POST {url}: bad index {idx}")))?;
        *slot = Some(vec);
    }
    let out: Vec<Vec<f32>> = out
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| IndexError::Embed(format!("POST {url}: duplicate indexes")))?;
    let dim = out.first().map_or(0, Vec::len);
    if out.iter().any(|v| v.len() != dim) {
        return Err(IndexError::Embed(format!(
            "POST {url}: vectors of different sizes"
        )));
    }
    Ok(out)
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(REQUEST_BATCH) {
            out.extend(self.call(batch.to_vec())?);
        }
        Ok(out)
    }
}
