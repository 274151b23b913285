from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLSchema

from tests.support import fake_github
from tests.support.fake_github import SCHEMA_PATH as SCHEMA_PATH  # test_schema_copy reads it from here

REPO_ROOT = Path(__file__).resolve().parents[2]
# GitHub's public schema is bundled at SCHEMA_PATH (fixtures/github/SCHEMA-SOURCE.md): a clone with nothing beside
# it tests too.
# The team's shared copy, which the bundled one must stay identical to wherever it sits beside the checkout.
SHARED_SCHEMA_PATH = REPO_ROOT.parent / "shared" / "github" / "schema.graphql"


@pytest.fixture(scope="session")
def github_schema() -> GraphQLSchema:
    """GitHub's public schema, the very object the loopback fake validates and costs queries against (built once
    per process, about 1-3 s, by `fake_github.github_schema`): a worker running both kinds of test builds it once.
    Built with assume_valid: GitHub's own SDL fails graphql-core's type-system check
    (fixtures/github/SCHEMA-SOURCE.md)."""
    return fake_github.github_schema()
