"""SEC-7 end to end: `.theurian/state` linked outside the project root refuses every project-scoped tool; so does
`.theurian` itself, with the cure for the link that escapes; and every CLI command names what escapes, with its cure."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import schemas
from serve.tools import registered_tools
from tests.projection.review_records import copy_fixture_lake
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tool, call_tools
from tests.support.sample_project import built_sample_project
from tests.support.schema_values import minimal_arguments
from theurian.cli.pasteable import with_project
from theurian.places import (
    FINDINGS_STORE_ESCAPE_CURE,
    INDEX_ESCAPE_CURE,
    KNOWLEDGE_STATE_ESCAPE_CURE,
    PATH_ESCAPE_REFUSAL,
    REVIEW_SOURCE_ESCAPE_CURE,
    STATE_ESCAPE_CURE,
    THEURIAN_DIR_ESCAPE_CURE,
    linked_inside_source_cure,
    source_escape_cure,
)

PROJECT_SCOPED = [t for t in registered_tools() if "$ref" in schemas.load("mcp", t.input_schema)]


def test_this_build_registers_project_scoped_tools() -> None:
    assert PROJECT_SCOPED, "no project-scoped tool is registered, so the escape test below would prove nothing"


def test_a_symlinked_state_dir_refuses_every_project_scoped_tool_with_the_cure(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path
) -> None:
    root = module_installation.new_project_in_process(tmp_path / "escaping")
    outside = tmp_path / "outside-state"
    outside.mkdir()
    (root / ".theurian/state").symlink_to(outside, target_is_directory=True)
    calls = [(tool.name, minimal_arguments(tool.input_schema, "escaping")) for tool in PROJECT_SCOPED]
    answers = call_tools(module_daemon.mcp_url, calls)
    for (name, _), answer in zip(calls, answers, strict=True):
        assert answer.is_error, name
        assert answer.text == f"{PATH_ESCAPE_REFUSAL} {STATE_ESCAPE_CURE}", (name, answer.text)
    assert list(outside.iterdir()) == []  # nothing was created through the link


def test_a_symlinked_review_lake_gets_the_source_cure_not_the_state_cure(
    installation: Installation, tmp_path: Path
) -> None:
    root = installation.new_project_in_process(tmp_path / "lake-escaping")
    outside = tmp_path / "outside-review"
    outside.mkdir()
    lake = root / ".theurian/review"
    if lake.exists():
        lake.rmdir()
    lake.symlink_to(outside, target_is_directory=True)
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode != 0
    assert PATH_ESCAPE_REFUSAL in result.stderr
    assert STATE_ESCAPE_CURE not in result.stderr  # what escaped is the evidence lake, not derived state
    assert ("Cure: .theurian/review is source; replace the link with the evidence folder itself (or remove it "
            f"and ingest again), then run `theurian review build --project {root}`.") in result.stderr
    assert list(outside.iterdir()) == []


def _theurian_linked_out(root: Path, outside: Path) -> None:
    shutil.move(root / ".theurian", outside)
    (root / ".theurian").symlink_to(outside, target_is_directory=True)


def test_a_linked_out_theurian_folder_refuses_every_project_scoped_tool_with_the_cure_for_that_link(
    module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path
) -> None:
    root = module_installation.new_project_in_process(tmp_path / "theurian-escaping")
    _theurian_linked_out(root, tmp_path / "outside-theurian")
    calls = [(tool.name, minimal_arguments(tool.input_schema, "theurian-escaping")) for tool in PROJECT_SCOPED]
    answers = call_tools(module_daemon.mcp_url, calls)
    for (name, _), answer in zip(calls, answers, strict=True):
        assert answer.is_error, name
        assert answer.text == f"{PATH_ESCAPE_REFUSAL} {THEURIAN_DIR_ESCAPE_CURE}", (name, answer.text)


def test_review_build_in_a_project_whose_theurian_folder_is_linked_out_names_that_link(
    installation: Installation, tmp_path: Path
) -> None:
    root = installation.new_project_in_process(tmp_path / "p")
    outside = tmp_path / "outside-theurian"
    _theurian_linked_out(root, outside)
    before = sorted(path.relative_to(outside) for path in outside.rglob("*"))
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == f"theurian: {PATH_ESCAPE_REFUSAL} {THEURIAN_DIR_ESCAPE_CURE}"
    assert STATE_ESCAPE_CURE not in result.stderr and REVIEW_SOURCE_ESCAPE_CURE not in result.stderr
    assert sorted(path.relative_to(outside) for path in outside.rglob("*")) == before  # nothing written through it


@pytest.mark.parametrize("linked", ["repository", "kind"])
def test_a_repository_or_kind_folder_linked_out_of_the_lake_stops_the_build_with_the_source_cure(
    installation: Installation, tmp_path: Path, linked: str
) -> None:
    """Skipping it would publish a store without that repository's records over a good one."""
    root = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(root)
    installation.cli_in_process("review", "build", "--project", str(root))
    store = root / ".theurian/state/review-store.duckdb"
    before = store.read_bytes()
    [folder] = [path for path in (root / ".theurian/review").iterdir() if path.name.startswith("sha256-")]
    moved = folder if linked == "repository" else folder / "review-thread"
    outside = tmp_path / "outside"
    shutil.move(moved, outside)
    moved.symlink_to(outside, target_is_directory=True)
    result = installation.cli("review", "build", "--project", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == f"theurian: {PATH_ESCAPE_REFUSAL} {with_project(REVIEW_SOURCE_ESCAPE_CURE, root)}"
    assert store.read_bytes() == before  # the old store kept


@pytest.mark.parametrize("command, linked, cure", [
    (("migrate", "apply"), ".theurian/state", STATE_ESCAPE_CURE),
    (("migrate", "status"), ".theurian/state", STATE_ESCAPE_CURE),
    (("index", "build"), ".theurian/state", STATE_ESCAPE_CURE),
    (("review", "status"), ".theurian/review", REVIEW_SOURCE_ESCAPE_CURE),
    (("migrate", "apply"), ".theurian/migrations", source_escape_cure(".theurian/migrations")),
    (("review", "status"), ".theurian/config.toml", source_escape_cure(".theurian/config.toml")),
    (("migrate", "apply"), ".theurian", THEURIAN_DIR_ESCAPE_CURE),
    (("migrate", "apply"), ".theurian/migrations/01K1A0000000000000000000M9-linked.yaml",
     linked_inside_source_cure(".theurian/migrations")),
])
def test_every_command_names_what_escapes_with_the_cure_for_that_place(
    installation: Installation, tmp_path: Path, command: tuple[str, ...], linked: str, cure: str
) -> None:
    """Not only the build commands: an escape any command meets says how to mend it, on one line."""
    root = installation.new_project_in_process(tmp_path / "p")
    place = root / linked
    outside = tmp_path / "outside"
    if place.exists():
        shutil.move(place, outside)
    elif place.suffix == ".yaml":  # a migration file linked out of a real migrations folder
        place.parent.mkdir(parents=True, exist_ok=True)
        outside.write_text("id: x\n", encoding="utf-8")
    else:
        outside.mkdir()
    place.symlink_to(outside, target_is_directory=outside.is_dir())
    result = installation.cli(*command, "--project", str(root))
    assert result.returncode == 1
    assert result.stderr.strip() == (f"theurian: {linked} resolves outside the root it must stay under. "
                                     f"{with_project(cure, root)}")


@pytest.fixture(scope="module")
def sample_template(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with every derived file built, by the module installation (so its daemon serves a copy)."""
    return built_sample_project(module_installation, tmp_path_factory.mktemp("template") / "sample", "template")


# Each derived file under `.theurian/state/` linked out, the tool that reads it, and the cure for that file alone.
DERIVED_FILES = {
    "findings-store": ("theurian-findings-local.sqlite", "review.findings", FINDINGS_STORE_ESCAPE_CURE),
    "knowledge-pointer": ("knowledge-active.json", "knowledge.status", KNOWLEDGE_STATE_ESCAPE_CURE),
    "knowledge-state": ("knowledge-state-*.sqlite", "knowledge.status", KNOWLEDGE_STATE_ESCAPE_CURE),
    "index-pointer": ("knowledge-index.json", "knowledge.search", INDEX_ESCAPE_CURE),
    "index-file": ("knowledge-index-*.sqlite", "knowledge.search", INDEX_ESCAPE_CURE),
}


@pytest.mark.parametrize("name", DERIVED_FILES)
def test_a_derived_file_linked_out_is_refused_with_a_pasteable_cure_that_keeps_the_other_derived_files(
    module_installation: Installation, module_daemon: RunningDaemon, sample_template: Path, tmp_path: Path,
    name: str,
) -> None:
    """The cure names that file and the command that rebuilds it, never the whole of `.theurian/state`; pasted
    as written, it mends the tool's answer and leaves every other derived file as it was."""
    pattern, tool, cure = DERIVED_FILES[name]
    root = shutil.copytree(sample_template, tmp_path / name, symlinks=True)
    # Setup, not the subject (project register has its own tests); the cure's rebuild below is a console-script run.
    module_installation.cli_in_process("project", "register", str(root), "--id", name)
    state = root / ".theurian/state"
    [linked] = state.glob(pattern)
    outside = tmp_path / "outside" / linked.name
    outside.parent.mkdir()
    shutil.move(linked, outside)
    linked.symlink_to(outside)
    arguments = {"projectId": name} | ({"query": "JWT"} if tool == "knowledge.search" else {})
    refused = call_tool(module_daemon.mcp_url, tool, arguments)
    assert refused.is_error and refused.text == f"{PATH_ESCAPE_REFUSAL} {cure}"
    # Every derived file outside the escaping one's family (the knowledge state's pointer and databases, the
    # index's) is kept byte for byte.
    kept = {path.name: path.read_bytes() for path in state.iterdir() if _family(path.name) != _family(linked.name)}
    [remove] = re.findall(r"`(rm [^`]+)`", cure)
    [rebuild] = re.findall(r"then run `theurian ([^`]+)`", cure)
    subprocess.run(remove, shell=True, cwd=root, check=True)  # the cure's own words, as pasted (a glob)
    assert not linked.is_symlink() and outside.exists()  # the link went, never what it pointed at
    assert {name: (state / name).read_bytes() for name in kept} == kept
    module_installation.cli(*rebuild.split(), "--project", str(root), check=True)
    served = call_tool(module_daemon.mcp_url, tool, arguments)
    assert not served.is_error, served.text


def _family(entry: str) -> str:
    """The derived family a `.theurian/state/` entry belongs to: the knowledge state, the index, or itself."""
    for family in ("knowledge-state-", "knowledge-index-"):
        if entry.startswith(family):
            return family
    return {"knowledge-active.json": "knowledge-state-", "knowledge-index.json": "knowledge-index-"}.get(entry, entry)
