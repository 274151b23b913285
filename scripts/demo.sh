#!/usr/bin/env bash
# `make demo`: copy the bundled sample project to .demo/, register it in a demo installation (never your real
# registry), and serve it. Every step is the real CLI an operator would run.
set -euo pipefail
cd "$(dirname "$0")/.."
THEURIAN=".venv/bin/theurian"
DEMO="$PWD/.demo"
PORT="${THEURIAN_DEMO_PORT:-7419}"

rm -rf "$DEMO"
mkdir -p "$DEMO"
export THEURIAN_HOME="$DEMO/installation"
cp -R fixtures/sample-project "$DEMO/sample-project"
PROJECT="$DEMO/sample-project"

"$THEURIAN" init "$PROJECT" >/dev/null 2>&1 || true   # the sample ships its .theurian/ already
"$THEURIAN" project register "$PROJECT" --id sample
for step in scripts/demo.d/*.sh; do
  [ -e "$step" ] && source "$step"
done

cat <<TEXT

Theurian demo: project "sample" is registered in a demo installation at $THEURIAN_HOME.
Connect an MCP client to  http://127.0.0.1:$PORT/mcp  (Streamable HTTP), for example:
  Claude Code:     claude mcp add --transport http theurian http://127.0.0.1:$PORT/mcp
  MCP Inspector:   npx @modelcontextprotocol/inspector --cli http://127.0.0.1:$PORT/mcp --method tools/list
  VS Code / Claude Desktop: see docs/clients.md
Then call system.capabilities, or project.list to see "sample". Ctrl-C stops the daemon.

TEXT
exec "$THEURIAN" serve --port "$PORT"
