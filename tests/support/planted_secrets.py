"""Planted credentials, one per token family the scanner covers: made-up values in each family's exact shape.

Each is built from parts so that no whole credential stands in the source; `PLANTED[type]` is the value the
scanner must find whole (the private key from its BEGIN line to its END line).
"""

from __future__ import annotations

from typing import Final

_B64: Final = "Zm9vYmFyYmF6cXV4" * 6
PRIVATE_KEY_BLOCK: Final = (
    "-----BEGIN RSA " "PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAq7Zb2" + "x9Lw3Kd" * 6 + "\n" + "Qm4Tz" * 12
    + "\n-----END RSA " "PRIVATE KEY-----"
)
PLANTED: Final = {
    "github-token": "ghp_" + "Q7vT2mX9pL4kR8sW1nB6" + "yH3cJ5dF0gA2eZ7u",
    # 22 + "_" + 59 characters after the prefix, as GitHub documents the fine-grained token.
    "github-fine-grained-token": ("github_" "pat_" + "11AQ7VT2M0X9pL4kR8sW1n" + "_"
                                  + "B6yH3cJ5dF0gA2eZ7uWq4Ls8Nk1Pv6Tx9Rm2Bz5Hc8Dj4Fy" + "7Gt3Kw9Xp2Vn"),
    "gitlab-token": "glpat-" + "Xy7Qp2Lm9Rt4Vw8Kn3Bd",
    "aws-access-key": "AKIA" + "Q7VT2MX9PL4KR8SW",
    "slack-token": "xoxb-" + "284917365012-3918274650193-" + "Qm7Tz2Lp9Wx4Kv8Rn3Bd6Hs",
    "stripe-key": "sk_live_" + "Q7vT2mX9pL4kR8sW1nB6yH3c",
    "openai-token": "sk-proj-" + "Q7vT2mX9pL4kR8sW1nB6" + "T3BlbkFJ" + "yH3cJ5dF0gA2eZ7uWq4Ls8Nk",
    "json-web-token": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiJ3aWRnZXRzIn0."
                       + "Qm7Tz2Lp9Wx4Kv8Rn3Bd6HsXy1"),
    "basic-auth-password": "Tr0ub4dor" + "Wq4Ls8",
    "npm-token": "npm_" + "Q7vT2mX9pL4kR8sW1nB6yH3cJ5dF0gA2eZ7u",
    "twilio-key": "SK" + "9f3a7c1e5b2d8f4a" + "6c0e9b3d7f1a5c2e",
    "sendgrid-key": "SG." + "Q7vT2mX9pL4kR8sW1nB6yH" + "." + "3cJ5dF0gA2eZ7uWq4Ls8Nk1Pv6Tx9Rm2Bz5Hc8Dj4Fy",
    "discord-bot-token": "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    "azure-storage-key": "AccountKey=" + _B64[:86] + "==",
    "private-key": PRIVATE_KEY_BLOCK,
}


def in_prose(kind: str) -> str:
    """The planted value of `kind` as a reviewer pastes it into a comment."""
    value = PLANTED[kind]
    if kind == "basic-auth-password":
        return f"It fails against https://deploy:{value}@build.example.com/api — see the log."
    if kind == "azure-storage-key":
        return f"The connection string is DefaultEndpointsProtocol=https;AccountName=w;{value};EndpointSuffix=x"
    if kind == "npm-token":
        return f"Publish with NPM_TOKEN={value}, the automation token."
    if kind == "private-key":
        return f"The key that was committed:\n{value}\nplease rotate it."
    return f"Here is the failing request: Authorization: Bearer {value} (from CI)."


def in_npmrc(token: str) -> str:
    """`token` where detect-secrets' own npm plugin finds one: an `.npmrc` `_authToken` line."""
    return f"CI's .npmrc had //registry.npmjs.org/:_authToken={token} in it, and more after"


# What the scanner must never find: review prose, commit shas, URLs, a long identifier.
CLEAN_TEXTS: Final = (
    "Take the lock after the reads; otherwise a slow reader holds it for the whole request.",
    "Fixed in 3f786850e387550fdab836ed7e6dc881de23001b, see https://github.com/Acme/Widgets/pull/12#discussion_r1",
    "The method OrderRepositoryTransactionalWriterFactory is long but clear.",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "The github_pat_ prefix marks a fine-grained token; npm_ marks an npm one (see npm_config_registry).",
)
