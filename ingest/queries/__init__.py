"""The GraphQL documents the ingest sends: `.graphql` files, each completed with the fragments it uses."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Final

from graphql import FragmentDefinitionNode, FragmentSpreadNode, Visitor, parse, print_ast, visit

FRAGMENTS_FILE: Final = "fragments.graphql"
OPERATIONS: Final = ("pull_requests", "pull_request", "pull_request_reviews", "pull_request_threads", "thread_comments")


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
def load(operation: str) -> str:
    """The document for `operation` (one of OPERATIONS): its file plus every fragment it reaches."""
    if operation not in OPERATIONS:
        raise KeyError(operation)
    definitions = parse(_read(FRAGMENTS_FILE)).definitions
    fragments = {d.name.value: d for d in definitions if isinstance(d, FragmentDefinitionNode)}
    text = _read(f"{operation}.graphql")
    needed: set[str] = set()
    pending = _spreads(parse(text))
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending |= _spreads(fragments[name])
    return text + "".join("\n" + print_ast(fragments[name]) + "\n" for name in sorted(needed))
