#!/usr/bin/env python3
# Usage: python3 xcheck_minilm.py MODEL_DIR   (needs numpy, safetensors, tokenizers; dev aid only)
# Independent cross-check of the MiniLM cosine: numpy BERT forward from the safetensors weights.
import sys, json, numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer
d = sys.argv[1]
W = load_file(f"{d}/model.safetensors")
cfg = json.load(open(f"{d}/config.json"))
tok = Tokenizer.from_file(f"{d}/tokenizer.json"); tok.no_padding(); tok.enable_truncation(256)
p = "" if "embeddings.word_embeddings.weight" in W else "bert."
def ln(x, g, b, eps=1e-12):
    m = x.mean(-1, keepdims=True); v = ((x-m)**2).mean(-1, keepdims=True)
    return (x-m)/np.sqrt(v+eps)*g + b
from math import erf, sqrt
verf = np.vectorize(erf)
def gelu(x): return 0.5*x*(1+verf(x/sqrt(2)))
def embed(text):
    ids = np.array(tok.encode(text).ids)
    n = len(ids); H = cfg["hidden_size"]; nh = cfg["num_attention_heads"]; hd = H//nh
    x = W[p+"embeddings.word_embeddings.weight"][ids] + W[p+"embeddings.position_embeddings.weight"][:n] + W[p+"embeddings.token_type_embeddings.weight"][0]
    x = ln(x, W[p+"embeddings.LayerNorm.weight"], W[p+"embeddings.LayerNorm.bias"])
    for l in range(cfg["num_hidden_layers"]):
        q = lambda name: W[f"{p}encoder.layer.{l}.{name}"]
        Q = x@q("attention.self.query.weight").T + q("attention.self.query.bias")
        K = x@q("attention.self.key.weight").T + q("attention.self.key.bias")
        V = x@q("attention.self.value.weight").T + q("attention.self.value.bias")
        Q,K,V = [m.reshape(n,nh,hd).transpose(1,0,2) for m in (Q,K,V)]
        a = Q@K.transpose(0,2,1)/np.sqrt(hd); a = np.exp(a-a.max(-1,keepdims=True)); a/=a.sum(-1,keepdims=True)
        o = (a@V).transpose(1,0,2).reshape(n,H)
        o = o@q("attention.output.dense.weight").T + q("attention.output.dense.bias")
        x = ln(x+o, q("attention.output.LayerNorm.weight"), q("attention.output.LayerNorm.bias"))
        i = gelu(x@q("intermediate.dense.weight").T + q("intermediate.dense.bias"))
        o = i@q("output.dense.weight").T + q("output.dense.bias")
        x = ln(x+o, q("output.LayerNorm.weight"), q("output.LayerNorm.bias"))
    v = x.mean(0); return v/np.linalg.norm(v)
a = embed("A man is eating food."); b = embed("A man is eating a piece of bread.")
print(f"numpy cosine = {float(a@b):.6f}")
