from __future__ import annotations

import pytest
from graphql import GraphQLSchema, parse, validate

from ingest import queries


@pytest.mark.parametrize("operation", queries.OPERATIONS)
def test_every_ingest_query_is_valid_against_githubs_schema(github_schema: GraphQLSchema, operation: str) -> None:
    errors = validate(github_schema, parse(queries.load(operation)))
    assert errors == []


def test_a_query_with_a_wrong_field_is_caught_by_the_same_validation(github_schema: GraphQLSchema) -> None:
    broken = queries.load("thread_comments").replace("diffHunk", "diffHunkk")
    assert validate(github_schema, parse(broken)) != []


def test_every_graphql_file_in_the_package_is_an_operation_or_the_fragments() -> None:
    from importlib import resources

    names = {p.name for p in resources.files("ingest.queries").iterdir() if p.name.endswith(".graphql")}
    assert names == {f"{o}.graphql" for o in queries.OPERATIONS} | {queries.FRAGMENTS_FILE}


def test_the_pull_request_page_asks_for_the_fields_the_evidence_needs() -> None:
    text = queries.load("pull_requests")
    for field in ("statusCheckRollup", "mergeCommit", "resolvedBy", "subjectType", "diffSide", "replyTo",
                  "originalCommit", "diffHunk", "authorAssociation", "UPDATED_AT", "isPrivate", "visibility"):
        assert field in text
