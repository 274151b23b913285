"""The GraphQL documents the ingest sends: `.graphql` files, each completed with the fragments it uses, the
batched follow-up document built for each round of follow-ups (`follow_ups`), and the document asking for pull
requests by number (`pull_requests_by_number`)."""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from typing import Final

from graphql import FragmentDefinitionNode, FragmentSpreadNode, Visitor, parse, print_ast, visit

FRAGMENTS_FILE: Final = "fragments.graphql"
OPERATIONS: Final = ("pull_requests", "pull_request")
FOLLOW_UP_OPERATION: Final = "FollowUps"
BY_NUMBER_OPERATION: Final = "PullRequestsByNumber"
# Each connection a follow-up continues: the type of the node holding it, and the fragment of its nodes. A thread
# fetched by a follow-up carries the first page of its comments, sized by the document's `$comments`.
FOLLOW_UP_KINDS: Final = {
    "reviews": ("PullRequest", "ReviewFields"),
    "reviewThreads": ("PullRequest", "ThreadFields"),
    "comments": ("PullRequestReviewThread", "CommentFields"),
}


def _read(file_name: str) -> str:
    return resources.files(__name__).joinpath(file_name).read_text(encoding="utf-8")


class _Spreads(Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def enter_fragment_spread(self, node: FragmentSpreadNode, *_: object) -> None:
        self.names.add(node.name.value)


def _spreads(node: object) -> set[str]:
    collector = _Spreads()
    visit(node, collector)  # type: ignore[arg-type]
    return collector.names


@cache
def _fragments() -> dict[str, FragmentDefinitionNode]:
    definitions = parse(_read(FRAGMENTS_FILE)).definitions
    return {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}


def _with_fragments(text: str) -> str:
    """`text` plus every fragment it reaches: GraphQL refuses a document with an unused fragment."""
    fragments = _fragments()
    needed: set[str] = set()
    pending = _spreads(parse(text))
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending |= _spreads(fragments[name])
    return text + "".join("\n" + print_ast(fragments[name]) + "\n" for name in sorted(needed))


@cache
def load(operation: str) -> str:
    """The document for `operation` (one of OPERATIONS): its file plus every fragment it reaches."""
    if operation not in OPERATIONS:
        raise KeyError(operation)
    return _with_fragments(_read(f"{operation}.graphql"))


def alias(index: int) -> str:
    """The response key of the follow-up at `index` in a batch."""
    return f"f{index}"


@lru_cache(maxsize=256)
def follow_ups(kinds: tuple[str, ...]) -> str:
    """One document continuing len(kinds) connections at once: field `f<i>` is `node(id: $id<i>)` holding the
    connection kinds[i] (a FOLLOW_UP_KINDS key) from `$after<i>`, `$first<i>` nodes. `nodes(ids:)` would be one
    field, but it cannot carry a cursor per parent. Variables: id<i>, first<i>, after<i>, and `comments` (the
    first page of comments of each thread fetched) when a kind is reviewThreads.

    Raises:
        KeyError: a kind that is not a FOLLOW_UP_KINDS key.
    """
    declared, fields = [], []
    for index, kind in enumerate(kinds):
        holder, fragment = FOLLOW_UP_KINDS[kind]
        declared.append(f"$id{index}: ID!, $first{index}: Int!, $after{index}: String")
        fields.append(
            f"  {alias(index)}: node(id: $id{index}) {{\n    ... on {holder} {{\n"
            f"      {kind}(first: $first{index}, after: $after{index}) {{\n"
            f"        totalCount\n        pageInfo {{\n          ...PageInfoFields\n        }}\n"
            f"        nodes {{\n          ...{fragment}\n        }}\n      }}\n    }}\n  }}\n"
        )
    if "reviewThreads" in kinds:
        declared.append("$comments: Int!")
    text = (f"# The rest of {len(kinds)} connections, each from its own cursor, in one request.\n"
            f"query {FOLLOW_UP_OPERATION}({', '.join(declared)}) {{\n"
            "  rateLimit {\n    ...RateLimitFields\n  }\n" + "".join(fields) + "}\n")
    return _with_fragments(text)


def number_alias(index: int) -> str:
    """The response key, inside `repository`, of the pull request at `index` of a by-number document."""
    return f"n{index}"


@lru_cache(maxsize=128)
def pull_requests_by_number(count: int) -> str:
    """One document asking for `count` pull requests of one repository by number, each as a page of pull requests
    carries it: field `n<i>` of `repository(owner:, name:)` is `pullRequest(number: $number<i>)`. The visibility
    fields ride along, as on a page. Variables: owner, name, number<i>, reviews, threads, comments.

    Raises:
        ValueError: `count` is below 1.
    """
    if count < 1:
        raise ValueError(f"a by-number document asks for at least one pull request, not {count}")
    declared = "".join(f", $number{index}: Int!" for index in range(count))
    fields = "".join(f"    {number_alias(index)}: pullRequest(number: $number{index}) {{\n"
                     "      ...PullRequestFields\n    }\n" for index in range(count))
    text = (f"# {count} pull requests by number: those a run lists as withheld and its window did not read.\n"
            f"query {BY_NUMBER_OPERATION}($owner: String!, $name: String!, $reviews: Int!, $threads: Int!, "
            f"$comments: Int!{declared}) {{\n"
            "  rateLimit {\n    ...RateLimitFields\n  }\n"
            "  repository(owner: $owner, name: $name) {\n    nameWithOwner\n    isPrivate\n    visibility\n"
            + fields + "  }\n}\n")
    return _with_fragments(text)
