#!/usr/bin/env bash
# `make demo`: the whole path on bundled data, every step the real CLI an operator would run, in a demo
# installation (never your real registry): knowledge migrations applied and indexed, review findings built from a
# git history, review history ingested from a loopback fake GitHub and projected, the daemon started, a real MCP
# client's first answers printed, then the daemon handed to you until Ctrl-C.
#
# THEURIAN_DEMO_DIR (default .demo) and THEURIAN_DEMO_PORT (default 7419) move it; THEURIAN_DEMO_NO_SERVE=1 stops
# after the client's answers (the tests run the demo that way). The demo folder is replaced whole on every run, so
# a folder that is not empty and that this script did not make is refused, untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
THEURIAN="$PWD/.venv/bin/theurian"
DEMO="$(realpath -m "${THEURIAN_DEMO_DIR:-.demo}")"
PORT="${THEURIAN_DEMO_PORT:-7419}"

# What says a folder is one this script made, and so may be replaced whole: its mark — or, for the default folder
# only, a demo made before the mark existed (a project folder anywhere else may well hold `sample-project/`).
MARK="$DEMO/.theurian-demo"
LEGACY_DEMO=""
if [ "$DEMO" = "$PWD/.demo" ] && [ -d "$DEMO/sample-project/.theurian" ]; then LEGACY_DEMO=1; fi
if [ -e "$DEMO" ] && [ ! -e "$MARK" ] && [ -z "$LEGACY_DEMO" ] && [ -n "$(ls -A "$DEMO" 2>/dev/null)" ]; then
  echo "demo: $DEMO is not empty and is not a demo folder this script made; nothing was removed. Point" \
    "THEURIAN_DEMO_DIR at a new or empty folder (the demo replaces its folder whole on every run)." >&2
  exit 1
fi
# A port taken by another daemon is found out now, before a minute of building, and again just before serving.
if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
  echo "demo: something already answers on 127.0.0.1:$PORT; stop it, or run THEURIAN_DEMO_PORT=<free port> make demo" >&2
  exit 1
fi
rm -rf "$DEMO"
mkdir -p "$DEMO"
touch "$MARK"
export THEURIAN_HOME="$DEMO/installation"
unset GITHUB_TOKEN GH_TOKEN GITHUB_API_URL
cp -R fixtures/sample-project "$DEMO/sample-project"
PROJECT="$DEMO/sample-project"

"$THEURIAN" project register "$PROJECT" --id sample
for step in scripts/demo.d/*.sh; do
  echo "== ${step#scripts/demo.d/}"
  source "$step"
done

echo "== starting the daemon"
# Another daemon already answering on the port would take this demo's calls (and print its answers as ours):
# stop here instead, and name the knob that moves the demo.
if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
  echo "demo: something already answers on 127.0.0.1:$PORT; stop it, or run THEURIAN_DEMO_PORT=<free port> make demo" >&2
  exit 1
fi
"$THEURIAN" serve --port "$PORT" &
DAEMON_PID=$!
trap 'kill -INT "$DAEMON_PID" 2>/dev/null || true; wait "$DAEMON_PID" 2>/dev/null || true' EXIT
# Up to 30 s for this demo's own daemon to answer; it may have exited instead (the port taken meanwhile, say:
# its own words said why), and an answer then would come from whoever took the port, so it is checked after too.
for _ in $(seq 150); do
  kill -0 "$DAEMON_PID" 2>/dev/null || break
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  sleep 0.2
done
if ! kill -0 "$DAEMON_PID" 2>/dev/null || ! curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then
  echo "demo: the daemon did not start on 127.0.0.1:$PORT" >&2
  exit 1
fi
# Every /mcp request carries the installation's bearer token; a client script takes it from the environment.
THEURIAN_MCP_TOKEN="$("$THEURIAN" auth token)"
export THEURIAN_MCP_TOKEN
.venv/bin/python scripts/demo_client.py "http://127.0.0.1:$PORT/mcp"

# The line connecting one client to this demo's daemon. setup's own note on stderr (which address it used) is for a
# person typing it; the demo names the address above. A setup that fails says so instead of printing nothing.
client_line() {
  "$THEURIAN" setup --client "$1" --port "$PORT" 2>/dev/null \
    || echo "(could not be made here: run THEURIAN_HOME=$THEURIAN_HOME $THEURIAN setup --client $1 --port $PORT)"
}

cat <<TEXT

Theurian demo: project "sample" is served at  http://127.0.0.1:$PORT/mcp  (Streamable HTTP).
Every request needs its bearer token: THEURIAN_HOME=$THEURIAN_HOME $THEURIAN auth token
Connect an agent, for example:
  Claude Code:    $(client_line claude-code)
  MCP Inspector:  $(client_line inspector)
  VS Code, Claude Desktop, Cursor, Codex, Gemini CLI (the demo's own installation, never yours):
    THEURIAN_HOME=$THEURIAN_HOME $THEURIAN setup --client vscode --port $PORT   (or claude-desktop, cursor, codex, gemini-cli; docs/clients.md)
Every project-scoped tool takes "projectId": "sample". Ctrl-C stops the daemon.
TEXT
if [ "${THEURIAN_DEMO_NO_SERVE:-0}" = "1" ]; then
  exit 0
fi
wait "$DAEMON_PID"
