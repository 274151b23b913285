from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLSchema, build_schema

REPO_ROOT = Path(__file__).resolve().parents[2]
# GitHub's public schema, bundled (fixtures/github/SCHEMA-SOURCE.md): a clone with nothing beside it tests too.
SCHEMA_PATH = REPO_ROOT / "fixtures" / "github" / "schema.graphql"
# The team's shared copy, which the bundled one must stay identical to wherever it sits beside the checkout.
SHARED_SCHEMA_PATH = REPO_ROOT.parent / "shared" / "github" / "schema.graphql"


@pytest.fixture(scope="session")
def github_schema() -> GraphQLSchema:
    """GitHub's public schema, built once per session (about 1-3 s); assume_valid because GitHub's own SDL
    fails graphql-core's type-system check (fixtures/github/SCHEMA-SOURCE.md)."""
    return build_schema(SCHEMA_PATH.read_text(encoding="utf-8"), assume_valid=True)
