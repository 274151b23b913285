"""Schemas as `tools/list` serves them: every `type` array spelled as `anyOf` branches of one `type` each.

`"type": ["string", "null"]` is exact JSON Schema, and the published schemas under `schemas/mcp/` keep it. Some
clients read a tool's schema as if `type` were one string: Cursor checks each argument against it before the call
leaves the client and refuses every value of a `type` array (a required nullable argument makes the tool
uncallable), Codex keeps only the array's first type, and a single-`type` dialect (the OpenAPI subset of Gemini's
function declarations) cannot hold the array at all. `anyOf: [{"type": "string"}, {"type": "null"}]` accepts and
refuses exactly what the array does, since a `type` array is by definition the union of its members, and those
clients read it (docs/clients.md, "Tool schemas"). Every other keyword stays where it was: `maxLength` beside the
branches still applies to strings only, as it did beside the array. Validation keeps using the published schemas
(serve.validation); a property test proves the served copies accept and refuse the same instances.
"""

from __future__ import annotations

from typing import Any

from serve.flat_schema import SCHEMA_MAPS, VALUE_KEYWORDS


def split_type_unions(schema: Any) -> Any:
    """A copy of `schema` with each `type` array (at any depth) rewritten as `anyOf` single-type branches."""
    if isinstance(schema, list):
        return [split_type_unions(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node = {keyword: _split_keyword(keyword, value) for keyword, value in schema.items()}
    kinds = node.get("type")
    if isinstance(kinds, list):
        del node["type"]
        if len(kinds) == 1:
            node["type"] = kinds[0]
        else:
            branches = [{"type": kind} for kind in kinds]
            if "anyOf" in node:  # keep the node's own anyOf: both must hold, as they did before
                node["allOf"] = [*node.get("allOf", []), {"anyOf": branches}]
            else:
                node["anyOf"] = branches
    return node


def _split_keyword(keyword: str, value: Any) -> Any:
    if keyword in VALUE_KEYWORDS:
        return value  # data, not a schema: an enum value that is an object with a `type` list stays as it is
    if keyword in SCHEMA_MAPS and isinstance(value, dict):
        return {name: split_type_unions(sub) for name, sub in value.items()}
    return split_type_unions(value)
