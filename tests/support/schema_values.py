"""The smallest arguments a tool's published input schema accepts: each required key with a plain valid value."""

from __future__ import annotations

from typing import Any

import schemas


def minimal_arguments(schema_name: str, project_id: str) -> dict[str, Any]:
    schema = schemas.load("mcp", schema_name)
    arguments: dict[str, Any] = {"projectId": project_id} if "$ref" in schema else {}
    for key in schema.get("required", []):
        if key != "projectId":
            arguments[key] = _value(schema["properties"][key])
    return arguments


def _value(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    kind = prop.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "integer":
        return 1
    if kind == "array":
        return [{"op": "addAlias"}] if prop.get("items", {}).get("type") == "object" else ["x"]
    if kind == "null":
        return None
    return "a" * max(1, int(prop.get("minLength", 1)))


def schema_bound(schema_name: str, key: str, bound: str) -> int:
    """The bound (`maxLength`, `maxItems`, `maximum`…) a tool's published input schema sets on `key`: the schema
    owns it, so a test at the bound reads it here instead of repeating the number."""
    value = schemas.load("mcp", schema_name)["properties"][key][bound]
    assert isinstance(value, int)
    return value
