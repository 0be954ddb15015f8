#!/usr/bin/env bash
# Browser end-to-end tests of the panel: a real headless Chromium (Debian's `chromium`,
# installed here with apt-get when /usr/bin/chromium is missing) driven by playwright-core
# (pinned in tests/e2e/package-lock.json, installed with `npm ci`) against `sidenote serve`
# and the scripted `fake-provider` server, on a fresh temporary workspace with the example
# plugin installed. Screenshots go to test-artifacts/e2e/. Everything started here is
# stopped on exit.
set -euo pipefail

ROOT="${SIDENOTE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}"
TMP="${SIDENOTE_TMP:-$ROOT/.tmp}"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="${SIDENOTE_BIN:-$TARGET/debug/sidenote}"
FAKE_BIN="${FAKE_PROVIDER_BIN:-$TARGET/debug/fake-provider}"
E2E="$ROOT/tests/e2e"
ARTIFACTS="$ROOT/test-artifacts/e2e"

for b in "$BIN" "$FAKE_BIN"; do
  [ -x "$b" ] || { echo "50-e2e-browser: no binary at $b (run cargo build first)" >&2; exit 1; }
done
mkdir -p "$TMP" "$ARTIFACTS"

# --- Chromium (Debian package) --------------------------------------------------------------
if [ ! -x /usr/bin/chromium ]; then
  echo "-- installing Debian's chromium"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
fi

# --- playwright-core (npm ci, skipped when the lock file has not changed) ---------------------
stamp="$(cat "$E2E/package.json" "$E2E/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [ ! -d "$E2E/node_modules/playwright-core" ] || [ "$(cat "$E2E/node_modules/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "-- npm ci in tests/e2e"
  (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$stamp" > "$E2E/node_modules/.stamp"
fi

# --- the servers ------------------------------------------------------------------------------
WS="$(mktemp -d "$TMP/e2e-ws.XXXXXX")"
LOGS="$(mktemp -d "$TMP/e2e-logs.XXXXXX")"
FAKE_PID=""; SERVER_PID=""
cleanup() {
  for pid in "$SERVER_PID" "$FAKE_PID"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  for pid in "$SERVER_PID" "$FAKE_PID"; do
    [ -n "$pid" ] && wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WS" "$LOGS"
}
trap cleanup EXIT

mkdir -p "$WS/plugins"
cp -r "$ROOT/examples/plugins/vacation-packing" "$WS/plugins/vacation-packing"

wait_for_line() { # FILE SED-EXPR PID
  local out=""
  for _ in $(seq 1 200); do
    out="$(sed -n "$2" "$1" | head -1)"
    [ -n "$out" ] && { echo "$out"; return 0; }
    kill -0 "$3" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}

"$FAKE_BIN" > "$LOGS/fake.out" 2> "$LOGS/fake.err" &
FAKE_PID=$!
FAKE_URL="$(wait_for_line "$LOGS/fake.out" 's#^\(http://127\.0\.0\.1:[0-9]*/v1\)$#\1#p' "$FAKE_PID")" || {
  echo "50-e2e-browser: fake-provider did not start" >&2; cat "$LOGS/fake.err" >&2; exit 1; }

RUST_LOG="${RUST_LOG:-warn}" "$BIN" --workspace "$WS" serve --addr 127.0.0.1:0 > "$LOGS/serve.out" 2> "$LOGS/serve.err" &
SERVER_PID=$!
URL="$(wait_for_line "$LOGS/serve.out" 's#^sidenote listening on \(http://127\.0\.0\.1:[0-9]*\)$#\1#p' "$SERVER_PID")" || {
  echo "50-e2e-browser: sidenote serve did not start" >&2; cat "$LOGS/serve.err" >&2; exit 1; }
TOKEN="$("$BIN" --workspace "$WS" config get api.token)"

echo "-- browser tests against $URL (fake provider $FAKE_URL)"
status=0
(cd "$E2E" && SIDENOTE_URL="$URL" SIDENOTE_TOKEN="$TOKEN" FAKE_URL="$FAKE_URL" ARTIFACTS="$ARTIFACTS" \
  node --test --test-concurrency=1 panel.test.mjs) || status=$?
if [ "$status" -ne 0 ]; then
  echo "50-e2e-browser: FAILED (server log follows)" >&2
  tail -40 "$LOGS/serve.err" >&2
  exit "$status"
fi
echo "screenshots: $ARTIFACTS"
echo "50-e2e-browser: ok"
