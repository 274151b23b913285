"""detect-secrets plugins of our own, for token families its 1.5.0 plugins miss (docs/secrets.md, the gaps).

detect-secrets loads a custom plugin from a file (`{"name": <class>, "path": "file://<this file>"}` in its
settings), so this module is executed a second time under detect-secrets' importer: it must import nothing of
ours and do nothing at import but define the classes. Each pattern yields the whole token (no capturing group),
and is bounded on both sides so a longer run of token characters is not a token of the documented shape.
"""

from __future__ import annotations

import re
from typing import Final

from detect_secrets.plugins.base import RegexBasedDetector

# GitHub's fine-grained personal access token: `github_pat_` and 82 characters of [A-Za-z0-9_] (22 + `_` + 59).
GITHUB_FINE_GRAINED: Final = re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9_])")
# npm's access tokens (granular, automation, publish): `npm_` and 36 base62 characters, wherever they stand
# (detect-secrets' NpmDetector finds one only in an `.npmrc` `_authToken` line).
NPM_ACCESS_TOKEN: Final = re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])")


class GitHubFineGrainedTokenDetector(RegexBasedDetector):
    """Scans for GitHub fine-grained personal access tokens (`github_pat_…`)."""

    secret_type = "GitHub Fine-Grained Token"  # noqa: S105 - a type name detect-secrets reports, not a password
    denylist = (GITHUB_FINE_GRAINED,)


class NpmAccessTokenDetector(RegexBasedDetector):
    """Scans for npm access tokens (`npm_…`) anywhere in a line."""

    secret_type = "NPM Access Token"  # noqa: S105 - a type name, not a password
    denylist = (NPM_ACCESS_TOKEN,)
