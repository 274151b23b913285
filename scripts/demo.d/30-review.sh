# Sourced by scripts/demo.sh ($THEURIAN, $PROJECT, $DEMO set): ingest review history with the real client from a
# loopback fake GitHub serving the bundled fixture corpus and the labelled review threads (no network, no real token), then build the review store.
FAKE_URL_FILE="$DEMO/fake-github.url"
.venv/bin/python scripts/demo_fake_github.py "$FAKE_URL_FILE" &
FAKE_PID=$!
for _ in $(seq 100); do [ -s "$FAKE_URL_FILE" ] && break; sleep 0.1; done
[ -s "$FAKE_URL_FILE" ] || { echo "the loopback fake GitHub did not start" >&2; exit 1; }
"$THEURIAN" review allow Acme/Widgets --project "$PROJECT"
"$THEURIAN" review allow Acme/Reviews --project "$PROJECT"  # the labelled threads review.findSimilar answers from
GITHUB_TOKEN="demo-token-for-the-loopback-fake" GITHUB_API_URL="$(cat "$FAKE_URL_FILE")" \
  "$THEURIAN" review ingest --project "$PROJECT"
kill -TERM "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null || true
"$THEURIAN" review build --project "$PROJECT"
