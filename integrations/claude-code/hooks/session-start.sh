#!/usr/bin/env bash
# SessionStart hook of the Theurian plugin: say whether the daemon answers where the plugin's MCP entry connects
# (port THEURIAN_PORT, 7419 when unset, as .mcp.json expands it), and what to do when it does not.
# Its output is added to the session's context; it always exits 0, so a stopped daemon never blocks a session.
if ! command -v theurian >/dev/null 2>&1; then
  echo "Theurian: the theurian command is not on PATH; install Theurian (docs/install.md) to use its tools."
  exit 0
fi
expected="http://127.0.0.1:${THEURIAN_PORT:-7419}/mcp"
# `daemon status --json` prints one key a line; its "url" is the running daemon's address (null when stopped).
if status="$(theurian daemon status --json 2>/dev/null)"; then
  running="$(printf '%s\n' "$status" | sed -n 's/^ *"url": "\(.*\)",$/\1/p')"
  if [ "$running" = "$expected" ]; then
    echo "Theurian: the daemon is running; its MCP tools (system.capabilities first) answer for registered projects."
  else
    port="${running##*:}"
    port="${port%/mcp}"
    echo "Theurian: the daemon is running at $running, but this plugin connects to $expected, so its MCP tools" \
      "will fail. Ask the user to run \`export THEURIAN_PORT=$port\` before starting Claude Code."
  fi
else
  echo "Theurian: the daemon is not running, so its MCP tools will fail. Ask the user to run" \
    "\`theurian daemon start\` (or \`theurian setup\` to start it at every log-in), then reconnect with /mcp."
fi
if [ -z "${THEURIAN_MCP_TOKEN:-}" ]; then
  echo "Theurian: THEURIAN_MCP_TOKEN is not set, so the daemon will answer 401. Ask the user to run" \
    "\`export THEURIAN_MCP_TOKEN=\$(theurian auth token)\` before starting Claude Code."
fi
exit 0
