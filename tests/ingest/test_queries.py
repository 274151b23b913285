from __future__ import annotations

import pytest
from graphql import GraphQLSchema, parse, validate

from ingest import queries
from ingest.follow_ups import Caps, Follow
from tests.support.github_cost import query_cost

# Every mix of kinds a round of follow-ups can hold, alone and together, in either order.
FOLLOW_UP_MIXES = [("reviews",), ("reviewThreads",), ("comments",), ("comments", "reviews"),
                   ("reviewThreads", "comments", "reviews", "reviewThreads"), ("comments",) * 40]


@pytest.mark.parametrize("operation", queries.OPERATIONS)
def test_every_ingest_query_is_valid_against_githubs_schema(github_schema: GraphQLSchema, operation: str) -> None:
    errors = validate(github_schema, parse(queries.load(operation)))
    assert errors == []


@pytest.mark.parametrize("kinds", FOLLOW_UP_MIXES, ids=lambda kinds: "+".join(kinds)[:60])
def test_every_batch_of_follow_ups_is_valid_against_githubs_schema(github_schema: GraphQLSchema,
                                                                   kinds: tuple[str, ...]) -> None:
    errors = validate(github_schema, parse(queries.follow_ups(kinds)))
    assert errors == []


def test_a_follow_up_kind_the_ingest_does_not_know_is_refused() -> None:
    with pytest.raises(KeyError):
        queries.follow_ups(("labels",))


def test_a_query_with_a_wrong_field_is_caught_by_the_same_validation(github_schema: GraphQLSchema) -> None:
    broken = queries.follow_ups(("comments",)).replace("diffHunk", "diffHunkk")
    assert validate(github_schema, parse(broken)) != []


def test_a_batch_charges_what_githubs_documented_rule_charges_for_its_document(github_schema: GraphQLSchema) -> None:
    """The ingest sizes a batch by its own reckoning of the charge; it must be GitHub's rule's own figure."""
    caps = Caps(reviews=100, threads=100, comments=100, thread_comments=7)
    follows = [Follow("reviewThreads", "PR_1", [{}] * 5, 130, "c"), Follow("comments", "PRRT_1", [{}] * 3, 250, "c"),
               Follow("reviews", "PR_2", [{}] * 25, 31, "c"), Follow("reviewThreads", "PR_3", [{}] * 2, 9, "c")]
    variables: dict[str, object] = {"comments": caps.thread_comments}
    for index, follow in enumerate(follows):
        variables |= {f"id{index}": follow.node_id, f"first{index}": caps.first(follow), f"after{index}": "c"}
    cost = query_cost(github_schema, parse(queries.follow_ups(tuple(f.kind for f in follows))), variables)
    requests = sum(caps.charge(f)[0] for f in follows)
    nodes = sum(caps.charge(f)[1] for f in follows)
    assert (cost.requests, cost.nodes) == (requests, nodes) == (1 + 100 + 1 + 1 + 1 + 7, 100 * 8 + 100 + 6 + 7 * 8)


def test_every_graphql_file_in_the_package_is_an_operation_or_the_fragments() -> None:
    from importlib import resources

    names = {p.name for p in resources.files("ingest.queries").iterdir() if p.name.endswith(".graphql")}
    assert names == {f"{o}.graphql" for o in queries.OPERATIONS} | {queries.FRAGMENTS_FILE}


def test_the_pull_request_page_asks_for_the_fields_the_evidence_needs() -> None:
    text = queries.load("pull_requests")
    for field in ("statusCheckRollup", "mergeCommit", "resolvedBy", "subjectType", "diffSide", "replyTo",
                  "originalCommit", "diffHunk", "authorAssociation", "UPDATED_AT", "isPrivate", "visibility",
                  "totalCount"):
        assert field in text


def test_the_fakes_cost_rule_gives_githubs_own_worked_example(github_schema: GraphQLSchema) -> None:
    """docs.github.com, "Rate limits and query limits for the GraphQL API": 1 + 100 + 5,000 requests, 51 points;
    its node count example shape gives 305,100 nodes."""
    example = parse("query { viewer { login repositories(first: 100) { edges { node { id issues(first: 50) { "
                    "edges { node { id labels(first: 60) { edges { node { id name } } } } } } } } } } }")
    cost = query_cost(github_schema, example, {})
    assert (cost.requests, cost.points, cost.nodes) == (5101, 51, 100 + 100 * 50 + 100 * 50 * 60)
    assert query_cost(github_schema, parse("query { viewer { login } }"), {}).points == 1  # the least a call costs


@pytest.mark.parametrize("count", [1, 2, 100])
def test_every_by_number_document_is_valid_against_githubs_schema(github_schema: GraphQLSchema, count: int) -> None:
    errors = validate(github_schema, parse(queries.pull_requests_by_number(count)))
    assert errors == []


def test_a_by_number_document_for_no_pull_request_is_refused() -> None:
    assert queries.pull_requests_by_number(1).count("pullRequest(number:") == 1
    with pytest.raises(ValueError, match="at least one"):
        queries.pull_requests_by_number(0)


def test_a_hundred_pull_requests_by_number_cost_what_a_page_of_a_hundred_costs(github_schema: GraphQLSchema) -> None:
    """Asking again for what a run withheld is charged as reading it on a page was: per pull request, its reviews
    and threads connections once, and the comments of each thread slot."""
    sizes = {"reviews": 25, "threads": 5, "comments": 5}
    numbered = {"owner": "o", "name": "n", **sizes} | {f"number{i}": i + 1 for i in range(100)}
    paged = {"owner": "o", "name": "n", "first": 100, "after": None, "states": None, **sizes}
    by_number = query_cost(github_schema, parse(queries.pull_requests_by_number(100)), numbered)
    page = query_cost(github_schema, parse(queries.load("pull_requests")), paged)
    assert by_number.points == page.points == 7
    assert by_number.requests == page.requests - 1  # the page's own pullRequests connection
