"""What an agent reads in a refusal, through a real MCP client against a real daemon: no value the caller sent
(knowledge.generateMigrationDraft's migration-schema refusals name the value's JSON type or length) and no
filesystem path of the installation (a damaged registry), each refusal one phrase, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools
from tests.support.sample_project import built_sample_project
from theurian.installation import registry_path

ITEM = "testing.flaky-retries"


def _draft(alias: Any) -> tuple[str, dict[str, Any]]:
    return ("knowledge.generateMigrationDraft", {"projectId": "sample", "author": "a", "description": "d",
                                                 "operations": [{"op": "addAlias", "itemId": ITEM, "alias": alias}]})


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_migration_draft_refusal_names_the_values_type_and_length_never_the_value(
        installation: Installation, daemon: RunningDaemon, tmp_path: Path, mode: Mode) -> None:
    built_sample_project(installation, tmp_path / "sample")
    nested, huge = call_tools(daemon.mcp_url, [_draft({"a": [[[1]]]}), _draft("z" * 1_000_000)], mode)
    assert nested.is_error and huge.is_error
    assert "invalid at operation 0: `alias` must be of type string; an object of 1 key was sent" in nested.text
    assert "[[" not in nested.text and "'a'" not in nested.text
    assert "a string of 1000000 characters was sent" in huge.text and "zz" not in huge.text and len(huge.text) < 400


def test_a_damaged_registry_is_refused_to_agents_without_the_installations_path(
        installation: Installation, daemon: RunningDaemon, tmp_path: Path) -> None:
    built_sample_project(installation, tmp_path / "sample")
    path = registry_path()
    path.write_bytes(b'[projects."a"\nroot = "/x"\n')
    listed, searched, capabilities = call_tools(daemon.mcp_url, [
        ("project.list", {}), ("review.search", {"projectId": "sample"}), ("system.capabilities", {})])
    for refused in (listed, searched):
        assert refused.is_error is True
        assert str(installation.home) not in refused.text and "projects.toml" not in refused.text
        assert refused.text.count("project registry") == 1
        assert refused.text.startswith("the project registry is not valid TOML (")
        assert refused.text.endswith("the operator must fix it by hand (`theurian doctor` names the file)")
    assert capabilities.is_error is False
    operator = installation.cli("project", "list")
    assert operator.returncode == 1 and str(path) in operator.stderr  # the operator's CLI still names the file
