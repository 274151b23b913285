"""GitHub's documented GraphQL cost rule, computed from a query's syntax tree the way GitHub states it
("Rate limits and query limits for the GraphQL API", docs.github.com):

1. Add up the number of requests needed to fulfill each unique connection in the call, assuming every request
   reaches its `first`/`last` limit: a connection nested under a connection of `first: N` is needed N times per
   instance of its parent.
2. Divide by 100 and round to the nearest whole number; the minimum cost of a call is 1.

The node count (the 500,000 limit) is the same walk summing `first` times the connection's instances. The loopback
fake charges this, independently of the ingest's own estimate, so a test can compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    get_named_type,
    value_from_ast_untyped,
)

Parent = GraphQLObjectType | GraphQLInterfaceType
# Fields of a connection whose children exist once per node of the page (so nested connections multiply).
PER_NODE_FIELDS = frozenset({"nodes", "edges"})


@dataclass
class Cost:
    requests: int = 0  # step 1's sum
    nodes: int = 0

    @property
    def points(self) -> int:
        return max(1, int(self.requests / 100 + 0.5))


def query_cost(schema: GraphQLSchema, document: DocumentNode, variables: dict[str, Any]) -> Cost:
    """The cost of the document's (first) operation under `variables`."""
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
    root = schema.query_type
    assert root is not None
    cost, seen = Cost(), set[tuple[str, ...]]()

    def walk(selections: SelectionSetNode, parent: Parent, multiplier: int, path: tuple[str, ...],
             in_connection: int | None) -> None:
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                field(selection, parent, multiplier, path, in_connection)
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                typed = schema.get_type(condition.name.value) if condition else parent
                walk(selection.selection_set, typed, multiplier, path, in_connection)  # type: ignore[arg-type]
            elif isinstance(selection, FragmentSpreadNode):
                fragment = fragments[selection.name.value]
                typed = schema.get_type(fragment.type_condition.name.value)
                walk(fragment.selection_set, typed, multiplier, path, in_connection)  # type: ignore[arg-type]

    def field(node: FieldNode, parent: Parent, multiplier: int, path: tuple[str, ...],
              in_connection: int | None) -> None:
        name = node.name.value
        if name.startswith("__") or node.selection_set is None:
            return
        key = path + ((node.alias or node.name).value,)
        named = get_named_type(parent.fields[name].type)
        if in_connection is not None and name in PER_NODE_FIELDS:
            multiplier *= in_connection
        args = {a.name.value: value_from_ast_untyped(a.value, variables) for a in node.arguments or ()}
        size = args.get("first") or args.get("last")
        if isinstance(size, int) and named.name.endswith("Connection"):
            if key not in seen:
                seen.add(key)
                cost.requests += multiplier
                cost.nodes += multiplier * size
            walk(node.selection_set, named, multiplier, key, size)  # type: ignore[arg-type]
        else:
            walk(node.selection_set, named, multiplier, key, None)  # type: ignore[arg-type]

    walk(operation.selection_set, root, 1, (), None)
    return cost
