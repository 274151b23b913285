"""How a route names the tools: the contract's dotted names on /mcp, underscore names on /mcp/compat.

Claude Desktop and claude.ai check every tool name against `^[a-zA-Z0-9_-]{1,64}$` and withhold a server's whole
toolset when one name has a dot (VS Code warns on the same pattern). The dotted names are the wire contract and
stay the default; /mcp/compat serves the very same tools, schemas and refusals with each dot an underscore
(`review.search` is `review_search`), and every text the daemon writes itself names the tools as that route does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from serve.errors import ToolNameError

STRICT_TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# Its `tools` list names what is callable, so on a route it names the tools as that route does.
_CAPABILITIES_TOOL: Final = "system.capabilities"
# The schema keywords whose string is prose: a property that is itself named `title` has a schema, not a string.
_PROSE_KEYS: Final = frozenset({"title", "description"})


@dataclass(frozen=True)
class Naming:
    """One route's names for the registered tools (canonical name -> wire name, and back)."""

    wire_of: Mapping[str, str]

    @property
    def renames(self) -> bool:
        return any(wire != name for name, wire in self.wire_of.items())

    def wire(self, name: str) -> str:
        return self.wire_of[name]

    def canonical(self, wire: str) -> str | None:
        """The registered tool a caller named on this route, or None."""
        for name, named in self.wire_of.items():
            if named == wire:
                return name
        return None

    def in_text(self, text: str) -> str:
        """`text` (Theurian's own words) with every tool it names named as this route names it.

        A name right after a quote or a backtick is left alone: that is a value or a key a caller sent, quoted
        back (a caller who sends `review.search` to the compat route is told that name is not served).
        """
        if not self.renames:
            return text
        return _mentions(tuple(self.wire_of)).sub(lambda match: self.wire_of[match.group(0)], text)

    def in_schema(self, schema: Any) -> Any:
        """A copy of `schema` with every `title` and `description` (its own words, at any depth) renamed as
        `in_text` does; every other string (a `const`, an `enum` value, a pattern) is left as it is."""
        if not self.renames:
            return schema
        if isinstance(schema, list):
            return [self.in_schema(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        return {key: self.in_text(value) if key in _PROSE_KEYS and isinstance(value, str) else self.in_schema(value)
                for key, value in schema.items()}

    def result(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        """A tools/call result of tool `name`, its own words renamed for this route."""
        if not self.renames:
            return result
        if result.get("isError"):
            content = [{**block, "text": self.in_text(block["text"])} if block.get("type") == "text" else block
                       for block in result.get("content", [])]
            return {**result, "content": content}
        structured = result.get("structuredContent")
        if name != _CAPABILITIES_TOOL or not isinstance(structured, dict):
            return result
        renamed = {**structured, "tools": sorted(self.wire_of.get(t, t) for t in structured.get("tools", [])),
                   "note": self.in_text(str(structured.get("note", "")))}
        text = orjson.dumps(renamed).decode("utf-8")
        return {**result, "structuredContent": renamed, "content": [{"type": "text", "text": text}]}


def canonical_naming(names: Iterable[str]) -> Naming:
    """The contract's names, as registered."""
    return Naming({name: name for name in names})


def compat_naming(names: Iterable[str]) -> Naming:
    """Each name with its dots as underscores.

    Raises:
        ToolNameError: a name that even so fails `STRICT_TOOL_NAME`, or two names that become one.
    """
    wire_of = {name: name.replace(".", "_") for name in names}
    for name, wire in wire_of.items():
        if not STRICT_TOOL_NAME.fullmatch(wire):
            raise ToolNameError(f"tool {name!r} has no name a strict client accepts ({wire!r})")
    if len(set(wire_of.values())) != len(wire_of):
        raise ToolNameError("two tools share one underscore name; rename one")
    return Naming(wire_of)


@functools.cache
def _mentions(names: tuple[str, ...]) -> re.Pattern[str]:
    longest_first = sorted(names, key=len, reverse=True)
    alternatives = "|".join(re.escape(name) for name in longest_first)
    return re.compile(rf"(?<![\w.'\"`])(?:{alternatives})(?![\w])")
