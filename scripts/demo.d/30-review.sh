# Sourced by scripts/demo.sh ($THEURIAN, $PROJECT, $THEURIAN_HOME set): serve review.search on bundled data.
# The sample lake is copied in only when the project has no evidence of its own; the build is the real CLI.
if [ ! -d "$PROJECT/.theurian/review" ] || [ -z "$(ls -A "$PROJECT/.theurian/review" 2>/dev/null)" ]; then
  mkdir -p "$PROJECT/.theurian/review"
  cp -R fixtures/evidence/. "$PROJECT/.theurian/review/"
fi
"$THEURIAN" review build --project "$PROJECT"
