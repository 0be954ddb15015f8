//! The local in-process embedder: sentence-transformers/all-MiniLM-L6-v2 (384-d) on candle.
//!
//! Tokenizer padding to the batch's longest text, truncation at 256 tokens, BERT forward,
//! mean pooling with the attention mask, L2 normalisation — what sentence-transformers does
//! for this model.

use super::{Embedder, normalize};
use crate::chunk::content_hash;
use crate::error::{IndexError, Result};
use crate::model::check_model_dir;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

/// Tokens per text after truncation.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass.
pub const BATCH: usize = 32;

pub struct MiniLmEmbedder {
    id: String,
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn embed_err(what: &str) -> impl Fn(candle_core::Error) -> IndexError + '_ {
    move |e| IndexError::Embed(format!("{what}: {e}"))
}

impl MiniLmEmbedder {
    /// Load from a model directory (`model.safetensors`, `tokenizer.json`, `config.json`).
    pub fn load(dir: &Path) -> Result<Self> {
        check_model_dir(dir)?;
        let config_text = std::fs::read_to_string(dir.join("config.json"))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| IndexError::Embed(format!("{}: bad config.json: {e}", dir.display())))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| {
            IndexError::Embed(format!("{}: bad tokenizer.json: {e}", dir.display()))
        })?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| IndexError::Embed(format!("tokenizer truncation: {e}")))?;
        let device = Device::Cpu;
        let weights = std::fs::read(dir.join("model.safetensors"))?;
        let weights_len = weights.len();
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(embed_err("model.safetensors"))?;
        let model = BertModel::load(vb, &config).map_err(embed_err("loading the BERT weights"))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("model")
            .to_string();
        let fingerprint = content_hash(&format!("{config_text}\n{weights_len}"));
        let id = format!("local:{name}:{}", &fingerprint[..12]);
        Ok(MiniLmEmbedder {
            id,
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            device,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| IndexError::Embed(format!("tokenizing: {e}")))?;
        let rows = encodings.len();
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for e in &encodings {
            if e.get_ids().len() != len {
                return Err(IndexError::Embed("tokenizer did not pad the batch".into()));
            }
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (rows, len), &self.device).map_err(embed_err("ids"))?;
        let mask = Tensor::from_vec(mask, (rows, len), &self.device).map_err(embed_err("mask"))?;
        let types = ids.zeros_like().map_err(embed_err("token types"))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(embed_err("model forward"))?;
        // Mean pooling over real tokens.
        let maskf = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(embed_err("mask"))?;
        let summed = hidden
            .broadcast_mul(&maskf)
            .and_then(|h| h.sum(1))
            .map_err(embed_err("pooling"))?;
        let counts = maskf
            .sum(1)
            .and_then(|c| c.clamp(1e-9f32, f32::MAX))
            .map_err(embed_err("pooling"))?;
        let pooled = summed
            .broadcast_div(&counts)
            .map_err(embed_err("pooling"))?;
        let mut out: Vec<Vec<f32>> = pooled.to_vec2().map_err(embed_err("pooling"))?;
        for v in &mut out {
            normalize(v);
        }
        Ok(out)
    }
}

impl Embedder for MiniLmEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        // Batch texts of similar length together so padding wastes little.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for batch in order.chunks(BATCH) {
            let refs: Vec<&str> = batch.iter().map(|&i| texts[i].as_str()).collect();
            let vecs = self.forward(&refs)?;
            if vecs.len() != batch.len() {
                return Err(IndexError::Embed(
                    "the model returned a wrong vector count".into(),
                ));
            }
            for (&i, v) in batch.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
