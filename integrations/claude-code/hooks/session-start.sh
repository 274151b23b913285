#!/usr/bin/env bash
# SessionStart hook of the Theurian plugin: say whether the daemon answers where the plugin's MCP entry connects
# (port THEURIAN_PORT, 7419 when unset, as .mcp.json expands it), and what to do when it does not.
# Its output is added to the session's context; it always exits 0, so a stopped daemon never blocks a session.
if ! command -v theurian >/dev/null 2>&1; then
  echo "Theurian: the theurian command is not on PATH; install Theurian (docs/install.md) to use its tools."
  exit 0
fi
expected_host="127.0.0.1"  # the host the plugin's MCP entry connects to (.mcp.json)
expected_port="${THEURIAN_PORT:-7419}"
expected="http://$expected_host:$expected_port/mcp"
# `daemon status --json` prints one key a line; its "url" is the running daemon's address (null when stopped).
if status="$(theurian daemon status --json 2>/dev/null)"; then
  running="$(printf '%s\n' "$status" | sed -n 's/^ *"url": "\(.*\)",$/\1/p')"
  # http://HOST:PORT/mcp, HOST bracketed when it is an IPv6 address: host and port are compared apart, so each
  # mismatch is named for what it is.
  authority="${running#http://}"
  authority="${authority%/mcp}"
  port="${authority##*:}"
  host="${authority%:*}"
  host="${host#[}"
  host="${host%]}"
  # The daemon binds a name without a colon as IPv4, so `--host localhost` listens on 127.0.0.1: the same host.
  if [ "$host" = "localhost" ]; then
    same_host="$expected_host"
  else
    same_host="$host"
  fi
  if [ "$same_host" = "$expected_host" ] && [ "$port" = "$expected_port" ]; then
    echo "Theurian: the daemon is running; its MCP tools (system.capabilities first) answer for registered projects."
  elif [ "$same_host" = "$expected_host" ]; then
    echo "Theurian: the daemon is running at $running, but this plugin connects to $expected, so its MCP tools" \
      "will fail. Ask the user to run \`export THEURIAN_PORT=$port\` before starting Claude Code."
  else
    also=""
    if [ "$port" != "$expected_port" ]; then
      also=" The port differs too: ask the user to run \`export THEURIAN_PORT=$port\` before starting Claude Code."
    fi
    echo "Theurian: the daemon is running at $running, on host $host, but this plugin connects to host" \
      "$expected_host ($expected), so its MCP tools will fail. Ask the user to restart the daemon on" \
      "$expected_host: \`theurian daemon stop\`, then \`theurian daemon start --port $port\`.$also"
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
