"""A knowledge project built once per module, and calling the real dispatcher in-process."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import jsonschema

import schemas
from knowledge.apply import apply_migrations
from knowledge.index import build_index
from knowledge.index_pointer import load_index_pointer
from serve.dispatch import Dispatcher
from serve.tooling import ServeSettings
from serve.tools import registered_tools
from tests.knowledge.authoring import MigrationWriter, copy_sample
from theurian import registry

WIDGETS = 60  # more matching items than the largest limit


def build_sample(root: Path, *, index: bool = True) -> Path:
    """The sample's two migrations plus a third: a draft with a validity start, and many widget rules."""
    copy_sample(root)
    writer = MigrationWriter(root, created_at="2026-09-01T00:00:00Z")
    writer.item("decision.cache-policy", "Cache JWT verification results for one minute.",
                title="Cache policy", status="draft", sensitivity="public",
                validFrom="2026-09-01T00:00:00+09:00")
    writer.item("incident.old-outage", "Postmortem of the 2020 outage.", title="Old outage", kind="incident",
                sensitivity="public", validFrom="2020-01-01T00:00:00Z", validTo="2021-01-01T00:00:00Z")
    for n in range(WIDGETS):
        writer.item(f"convention.widget-{n:02d}", f"Lint rule {n} about widgets. " + "Padding words. " * 40,
                    title=f"Widget rule {n}", sensitivity="public", kind="convention")
    writer.write("cache-and-widgets")
    apply_migrations(root)
    if index:
        build_index(root, "internal")
    return root


def registered_copy(source: Path, destination: Path, project_id: str = "demo") -> Path:
    """A private copy of a built project, registered in this test's installation, its state applied again here.

    The copied state and index were stamped by the installation the module's fixture ran under, so to this
    test's they are stores copied from another installation, which are refused: `migrate apply` rebuilds the
    state as this one's, and the index is built again here as the source's was.
    """
    shutil.copytree(source, destination)
    registry.register(destination, project_id)
    apply_migrations(destination)
    copied = load_index_pointer(destination)
    if copied is not None:
        build_index(destination, copied.disclosure_ceiling, raptor=copied.raptor_sha256 is not None)
    return destination


def call(name: str, arguments: dict[str, Any], *, ceiling: str = "internal") -> dict[str, Any]:
    """One tools/call through the daemon's real dispatcher (validation is the middleware's, tested apart)."""
    dispatcher = Dispatcher(registered_tools(), ServeSettings(disclosure_ceiling=ceiling))
    return asyncio.run(dispatcher.call(name, arguments))


def answer(name: str, arguments: dict[str, Any], *, ceiling: str = "internal") -> dict[str, Any]:
    """The structured answer of a call that must succeed, checked against the tool's response schema."""
    result = call(name, arguments, ceiling=ceiling)
    assert not result["isError"], result["content"][0]["text"]
    structured: dict[str, Any] = result["structuredContent"]
    schema_name = name.replace(".", "-") + "-response.schema.json"
    jsonschema.Draft202012Validator(schemas.load("mcp", schema_name)).validate(structured)
    return structured


def refusal(name: str, arguments: dict[str, Any], *, ceiling: str = "internal") -> str:
    result = call(name, arguments, ceiling=ceiling)
    assert result["isError"], result
    text: str = result["content"][0]["text"]
    return text
