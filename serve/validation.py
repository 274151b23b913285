"""SEC-12: every tools/call is checked against its tool's published input schema before the tool runs.

`InputValidator.admit` is the check: one call answers either `Admitted` (the arguments a handler may be given,
each integral float under an integer-typed key already an int) or `Refused` (the refusal text). The daemon's input
tier (`serve.input_path`) and the CLI's in-process path (`serve.local_call`) call it once per call and hand on
what it returned; nothing downstream checks or converts arguments again. A refusal names the offending key path
and the constraint that rejected it and never reproduces the value; it is the same `content` + `isError` shape a
tool's own refusal has. A tool with no published schema is never served.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import jsonschema
from referencing import Registry, Resource

import schemas
from serve.tooling import CONTEXT_KEYS
from theurian.schema_faults import describe, json_kind, key_text, keys_named
from theurian.text import is_utf8

MCP_FAMILY = "mcp"
# What a refusal calls the checked value itself (`theurian.schema_faults.place`).
WHOLE: Final = "the arguments"
# Far past what any valid call holds (the largest, a migration draft of 200 operations, holds a few thousand), and
# walked in milliseconds.
MAX_ARGUMENT_VALUES: Final = 50_000
# What a typical call holds, many times over; past either the check runs on threads of its own.
INLINE_CHECK_VALUES: Final = 64
INLINE_CHECK_CHARS: Final = 4096
# Tools the contract gives their own answer to a lone surrogate: review.search and review.findings refuse it in
# their words, naming the filter; knowledge.search folds it to U+FFFD (deliberately, mcp-tools-contract.md). Every
# other tool would fail on one (SQLite, orjson and files take UTF-8 only), so this tier refuses it. Their answer
# covers their own filters only: the shared context (`projectId`, which a registry refusal would echo) is checked
# here for every tool.
TOOLS_ANSWERING_SURROGATES: Final = frozenset({"review.search", "review.findings", "knowledge.search"})


@dataclass(frozen=True)
class Admitted:
    """Arguments that passed their tool's input schema, as the handler is to see them: `20.0` under an
    integer-typed key is `20` here. The shared context keys (`projectId` among them) are still included."""

    arguments: dict[str, Any]


@dataclass(frozen=True)
class Refused:
    """Arguments the input schema refuses; `message` is the whole refusal text (it never holds a value sent)."""

    message: str


Verdict: TypeAlias = Admitted | Refused


class InputValidator:
    """Compiled validators for every published input schema, built once per daemon."""

    def __init__(self) -> None:
        documents = [schemas.load(MCP_FAMILY, name) for name in schemas.names(MCP_FAMILY)]
        self._registry: Registry[Any] = Registry().with_resources(
            (doc["$id"], Resource.from_contents(doc)) for doc in documents
        )
        self._validators = {
            name: jsonschema.Draft202012Validator(schemas.load(MCP_FAMILY, name), registry=self._registry)
            for name in schemas.names(MCP_FAMILY)
            if name.endswith("-input.schema.json")
        }
        self._integer_keys_of = {name: _integer_keys(name) for name in self._validators}

    def has_schema(self, schema_name: str) -> bool:
        return schema_name in self._validators

    def validator(self, schema_name: str) -> jsonschema.Draft202012Validator:
        return self._validators[schema_name]

    def admit(self, tool_name: str, schema_name: str, arguments: Any, *, shown_as: str | None = None) -> Verdict:
        """`arguments` checked against `schema_name`: `Admitted` with the converted arguments, or `Refused` with a
        message naming the tool `shown_as` (the name the caller used on its route; `tool_name` by default)."""
        problem = self._problem(tool_name, schema_name, arguments, shown_as=shown_as)
        if problem is not None:
            return Refused(problem)
        return Admitted(_integral_floats_as_ints(arguments, self._integer_keys_of[schema_name]))

    def problem(self, tool_name: str, schema_name: str, arguments: Any, *, shown_as: str | None = None) -> str | None:
        """`admit`'s refusal text, or None when it admits `arguments`."""
        verdict = self.admit(tool_name, schema_name, arguments, shown_as=shown_as)
        return verdict.message if isinstance(verdict, Refused) else None

    def _problem(self, tool_name: str, schema_name: str, arguments: Any, *, shown_as: str | None) -> str | None:
        validator = self.validator(schema_name)
        surrogates = tool_name not in TOOLS_ANSWERING_SURROGATES
        tool_name = shown_as or tool_name
        if not isinstance(arguments, Mapping):
            return f"Invalid arguments for {tool_name}: the arguments must be a JSON object."
        unknown = sorted(set(arguments) - _known_keys(validator.schema, self._registry))
        if unknown:
            shown = f"key {keys_named(unknown)} is" if len(unknown) == 1 else f"keys {keys_named(unknown)} are"
            return f"Invalid arguments for {tool_name}: unknown {shown} not accepted by this tool."
        # Before the full check, which walks every value: a body of a few MiB can hold a million of them, and
        # jsonschema then takes seconds to say what the first look below says at once.
        context = {key: value for key, value in arguments.items() if key in CONTEXT_KEYS}
        cheap = (_over_max_items(validator.schema, arguments) or _walk_problem(context, surrogates=True)
                 or _walk_problem(arguments, surrogates=surrogates))
        if cheap is not None:
            return f"Invalid arguments for {tool_name}: {cheap}"
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
        if error is None:
            return None
        return f"Invalid arguments for {tool_name}: {describe(error, WHOLE, sent=True)}."


def checks_at_once(arguments: Any) -> bool:
    """Whether `arguments` are small enough to check on the event loop (at most INLINE_CHECK_VALUES values and
    INLINE_CHECK_CHARS characters of strings and keys, found without walking past either bound): the check then
    takes well under a millisecond, less than the thread hop that would carry it off the loop."""
    stack, values, chars = [arguments], 0, 0
    while stack:
        value = stack.pop()
        values += 1
        if isinstance(value, str):
            chars += len(value)
        elif isinstance(value, Mapping):
            chars += sum(len(str(key)) for key in value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        if values + len(stack) > INLINE_CHECK_VALUES or chars > INLINE_CHECK_CHARS:
            return False
    return True


def _over_max_items(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """A top-level array past its schema's maxItems, named as the full check names it."""
    for key, prop in schema.get("properties", {}).items():
        value, bound = arguments.get(key), prop.get("maxItems")
        if isinstance(value, list) and isinstance(bound, int) and len(value) > bound:
            return f"`{key}` violates maxItems {bound}; {json_kind(value)} was sent."
    return None


def _walk_problem(arguments: Mapping[str, Any], *, surrogates: bool) -> str | None:
    """What no valid call holds, found in one pass over the values: more than MAX_ARGUMENT_VALUES of them, or (when
    `surrogates`) a string or key holding a lone surrogate — not Unicode text, which no tool can store or send on,
    and which the 2026 protocol era's JSON parser lets through (the 2025 era's refuses it before any of our code
    runs)."""
    stack: list[tuple[str, Any]] = [("", arguments)]
    seen = 0
    while stack:
        path, value = stack.pop()
        seen += 1
        if surrogates and isinstance(value, str) and not is_utf8(value):
            return f"{_shown_path(path)} is not Unicode text (it holds a lone surrogate)."
        if isinstance(value, (Mapping, list)) and seen + len(stack) + len(value) > MAX_ARGUMENT_VALUES:
            return f"the arguments hold more than {MAX_ARGUMENT_VALUES} values; no call to this tool needs that many."
        if isinstance(value, Mapping):
            for key, item in value.items():
                if surrogates and not is_utf8(str(key)):
                    return f"a key under {_shown_path(path)} is not Unicode text (it holds a lone surrogate)."
                name = key_text(str(key))
                stack.append((f"{path}.{name}" if path else name, item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
    return None


def _shown_path(path: str) -> str:
    return f"`{path}`" if path else WHOLE


def _integer_keys(schema_name: str) -> frozenset[str]:
    """Top-level properties the schema types as integer (JSON Schema admits 20.0 there, Python slicing does not)."""
    properties = schemas.load(MCP_FAMILY, schema_name).get("properties", {})
    return frozenset(key for key, prop in properties.items() if _types(prop) == {"integer"})


def _integral_floats_as_ints(arguments: Mapping[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    """`20.0` and `1e3` are integers to JSON Schema; hand tools a Python int so bounds, slicing and the
    digit-count descriptions see the number the caller meant."""
    return {
        key: int(value) if key in keys and isinstance(value, float) and value.is_integer() else value
        for key, value in arguments.items()
    }


def _types(prop: Mapping[str, Any]) -> set[str]:
    declared = prop.get("type")
    return set(declared) if isinstance(declared, list) else {declared} if isinstance(declared, str) else set()


def bundled_input_schema(schema_name: str) -> dict[str, Any]:
    """The input schema as published in tools/list: the shared context inlined under `$defs`.

    Clients cannot resolve our relative `$ref`, so the published copy points inside itself.
    """
    schema = copy.deepcopy(schemas.load(MCP_FAMILY, schema_name))
    if schema.get("$ref") == "tool-context.schema.json":
        context = copy.deepcopy(schemas.load(MCP_FAMILY, "tool-context.schema.json"))
        for keyword in ("$schema", "$id"):
            context.pop(keyword, None)
        schema["$ref"] = "#/$defs/toolContext"
        schema["$defs"] = {"toolContext": context}
    return schema


def _known_keys(schema: Mapping[str, Any], registry: Registry[Any]) -> set[str]:
    keys = set(schema.get("properties", {}))
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = registry.resolver(base_uri=schema.get("$id", "")).lookup(ref).contents
        keys |= set(target.get("properties", {}))
    return keys
