#!/usr/bin/env bash
# SessionStart hook of the Theurian plugin: say whether the daemon answers, and what to do when it does not.
# Its output is added to the session's context; it always exits 0, so a stopped daemon never blocks a session.
if ! command -v theurian >/dev/null 2>&1; then
  echo "Theurian: the theurian command is not on PATH; install Theurian (docs/install.md) to use its tools."
  exit 0
fi
if theurian daemon status >/dev/null 2>&1; then
  echo "Theurian: the daemon is running; its MCP tools (system.capabilities first) answer for registered projects."
else
  echo "Theurian: the daemon is not running, so its MCP tools will fail. Ask the user to run" \
    "\`theurian daemon start\` (or \`theurian setup\` to start it at every log-in), then reconnect with /mcp."
fi
if [ -z "${THEURIAN_MCP_TOKEN:-}" ]; then
  echo "Theurian: THEURIAN_MCP_TOKEN is not set, so the daemon will answer 401. Ask the user to run" \
    "\`export THEURIAN_MCP_TOKEN=\$(theurian auth token)\` before starting Claude Code."
fi
exit 0
