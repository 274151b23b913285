"""Input schemas as `tools/list` serves them: flattened, every accepted key under the top-level `properties`.

The published schemas share the tool context through `$ref` + `unevaluatedProperties: false`, which is exact
JSON Schema 2020-12 but leaves a client (or a model) that reads only `properties` blind to `projectId`, the one
argument every project-scoped call needs. Flattening is derived from the published schema, generically: every
`$ref` and `allOf` is merged into the object that holds it, and `unevaluatedProperties` becomes
`additionalProperties` once nothing else at that level can evaluate a property. A schema this cannot flatten
exactly raises `SchemaFlattenError` when the daemon starts, never serves a looser copy. Validation keeps using the
published schemas (serve.validation); a property test proves the two accept and refuse the same inputs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from referencing import Registry, Resource

import schemas
from serve.errors import SchemaFlattenError

MCP_FAMILY: Final = "mcp"
# Keywords that may evaluate a property at their level: with any of them left, unevaluatedProperties cannot be
# rewritten as additionalProperties without changing what is accepted.
_UNFLATTENABLE: Final = ("anyOf", "oneOf", "if", "then", "else", "dependentSchemas", "not")
# Annotations a merged part may carry without changing what is accepted: the holder's own are kept.
_ANNOTATIONS: Final = frozenset({"$schema", "$id", "$comment", "title", "description", "examples", "default"})
# Keywords of a merged part that constrain keys beyond its own: merging them into the holder would widen their
# reach to the holder's properties.
_KEY_CLOSING: Final = frozenset({"additionalProperties", "unevaluatedProperties", "patternProperties"})
# Keywords holding a mapping of names to schemas, and keywords holding data rather than a schema.
SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})
VALUE_KEYWORDS: Final = frozenset({"enum", "const", "default", "examples", "required", "dependentRequired"})
_MAX_DEPTH: Final = 32  # far past any schema here; a cycle of $refs stops with an error instead of recursing


def flattened_input_schema(schema_name: str) -> dict[str, Any]:
    """The published input schema `schema_name`, flattened for `tools/list`.

    Raises:
        SchemaFlattenError: the schema uses a construct that cannot be flattened without changing what it accepts.
    """
    documents = [schemas.load(MCP_FAMILY, name) for name in schemas.names(MCP_FAMILY)]
    registry: Registry[Any] = Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in documents
    )
    return flatten(schemas.load(MCP_FAMILY, schema_name), registry, where=schema_name)


def flatten(document: Mapping[str, Any], registry: Registry[Any], *, where: str) -> dict[str, Any]:
    """`document` flattened, its `$ref`s resolved through `registry`; `where` names it in an error.

    Raises:
        SchemaFlattenError: as flattened_input_schema.
    """
    resolver = registry.resolver(base_uri=str(document.get("$id", "")))
    flat: dict[str, Any] = _flatten(copy.deepcopy(dict(document)), resolver, where, 0)
    flat.pop("$id", None)
    flat.pop("$defs", None)  # every reference into it has been inlined
    return flat


def _flatten(node: Any, resolver: Any, where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SchemaFlattenError(f"{where}: $ref nesting passes {_MAX_DEPTH} levels (a cycle?)")
    if isinstance(node, list):
        return [_flatten(item, resolver, where, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    parts: list[tuple[Any, Any]] = []
    ref = node.pop("$ref", None)
    if isinstance(ref, str):
        resolved = resolver.lookup(ref)
        parts.append((copy.deepcopy(resolved.contents), resolved.resolver))
    for part in node.pop("allOf", []):
        parts.append((part, resolver))
    flat = {key: _flatten_keyword(key, value, resolver, where, depth) for key, value in node.items()}
    for part, part_resolver in parts:
        _merge(flat, _flatten(part, part_resolver, where, depth + 1), where)
    if "unevaluatedProperties" in flat:
        _close_keys(flat, where)
    return flat


def _flatten_keyword(keyword: str, value: Any, resolver: Any, where: str, depth: int) -> Any:
    if keyword in VALUE_KEYWORDS:
        return value  # data, not schemas: a `$ref` key inside an enum value is just a key
    if keyword in SCHEMA_MAPS and isinstance(value, dict):
        return {name: _flatten(schema, resolver, where, depth + 1) for name, schema in value.items()}
    return _flatten(value, resolver, where, depth + 1)


def _merge(holder: dict[str, Any], part: Mapping[str, Any], where: str) -> None:
    for keyword, value in part.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword in _KEY_CLOSING:
            raise SchemaFlattenError(f"{where}: a merged part sets {keyword}, which would then reach the whole object")
        if keyword == "properties":
            properties = holder.setdefault("properties", {})
            for key, schema in value.items():
                # A key both declare must satisfy both: keep it exact rather than pick one.
                properties[key] = {"allOf": [properties[key], schema]} if key in properties else schema
        elif keyword == "required":
            holder["required"] = list(dict.fromkeys([*value, *holder.get("required", [])]))
        elif keyword == "$defs":
            holder.setdefault("$defs", {}).update(value)
        elif keyword in holder and holder[keyword] != value:
            raise SchemaFlattenError(f"{where}: `{keyword}` differs between the schema and a part it merges")
        else:
            holder[keyword] = value


def _close_keys(flat: dict[str, Any], where: str) -> None:
    left = [keyword for keyword in _UNFLATTENABLE if keyword in flat]
    if left:
        raise SchemaFlattenError(f"{where}: unevaluatedProperties beside {', '.join(left)} cannot be flattened")
    unevaluated = flat.pop("unevaluatedProperties")
    if "additionalProperties" not in flat:
        # With properties and patternProperties the only evaluators left, the two keywords accept the same keys.
        flat["additionalProperties"] = unevaluated
