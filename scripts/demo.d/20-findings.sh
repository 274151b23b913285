# Sourced by scripts/demo.sh ($THEURIAN, $PROJECT set): a git history whose commits carry Review-Finding trailers,
# as a team's reviewers would leave them, then the findings store built from it.
(
  cd "$PROJECT"
  export GIT_AUTHOR_NAME="Demo Reviewer" GIT_AUTHOR_EMAIL="reviewer@example.invalid"
  export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"
  git init --quiet --initial-branch=main .
  git add -A
  GIT_AUTHOR_DATE="2026-10-01T09:00:00Z" GIT_COMMITTER_DATE="2026-10-01T09:00:00Z" \
    git commit --quiet -m "Sample project" -m "Review-Finding: security HIGH — session tokens are compared with == instead of a constant-time check"
  echo "retries acquire the lock after reading" > retry-notes.md
  git add retry-notes.md
  GIT_AUTHOR_DATE="2026-10-02T09:00:00Z" GIT_COMMITTER_DATE="2026-10-02T09:00:00Z" \
    git commit --quiet -m "Acquire locks after the reads in the retry path" \
      -m "Review-Finding: adversarial HIGH — a retry that takes the lock before reading can deadlock against the sweeper
Review-Finding: code-review LOW — the retry budget is a magic number; name it"
)
"$THEURIAN" findings build --project "$PROJECT"
