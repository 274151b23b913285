import json
import subprocess
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.installation import THEURIAN_BIN, Installation
from theurian import registry, tomlwrite
from theurian.errors import EXIT_FAILED, EXIT_USAGE, ProjectNotRegisteredError, UsageError
from theurian.installation import registry_path
from theurian.project import init_project, resolve_project


def test_a_registered_project_defaults_to_its_folder_name_in_kebab_case(
    installation: Installation, tmp_path: Path
) -> None:
    installation.new_project(tmp_path / "My_Service.v2")
    snapshot = registry.read()
    assert [(r.project_id, r.root) for r in snapshot.registrations] == [
        ("my-service-v2", (tmp_path / "My_Service.v2").resolve())
    ]


def test_an_id_that_is_not_kebab_case_is_a_usage_error(installation: Installation, tmp_path: Path) -> None:
    installation.cli("init", str(tmp_path / "p"), check=False)
    (tmp_path / "p").mkdir(exist_ok=True)
    installation.cli("init", str(tmp_path / "p"))
    result = installation.cli("project", "register", str(tmp_path / "p"), "--id", "Not An Id")
    assert result.returncode == EXIT_USAGE
    assert "kebab-case" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("refused", "suggested"), [
    ("Bad_Id", "bad-id"), ("___", registry.EXAMPLE_PROJECT_ID),
    ("A" * (registry.MAX_PROJECT_ID_CHARS + 1), "a" * registry.MAX_PROJECT_ID_CHARS), ("proj\n", "proj"),
], ids=["folded", "nothing to fold", "one past the bound", "a final newline"])
def test_a_refused_id_names_a_kebab_case_id_to_pass_that_registers(
        installation: Installation, tmp_path: Path, refused: str, suggested: str) -> None:
    installation.cli("init", str(tmp_path), check=True)
    result = installation.cli("project", "register", str(tmp_path), "--id", refused)
    assert result.returncode == EXIT_USAGE
    assert result.stderr.endswith(f"characters); pass one with --id, such as --id {suggested}\n"), result.stderr
    installation.cli("project", "register", str(tmp_path), "--id", suggested, check=True)


@given(st.text())
def test_the_id_a_refusal_suggests_is_always_one_the_registry_takes(refused: str) -> None:
    try:
        registry.validate_project_id(refused)
    except UsageError as exc:
        assert registry.validate_project_id(exc.message.rsplit("--id ", 1)[1])


def test_registering_a_folder_without_theurian_dir_names_the_init_command(
    installation: Installation, tmp_path: Path
) -> None:
    (tmp_path / "bare").mkdir()
    result = installation.cli("project", "register", str(tmp_path / "bare"))
    assert result.returncode == EXIT_FAILED
    assert "theurian init" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_init_command_a_refused_register_names_runs_as_pasted_for_a_folder_with_a_space_and_a_quote(
    installation: Installation, tmp_path: Path
) -> None:
    folder = tmp_path / "it's a folder"
    folder.mkdir()
    refused = installation.cli("project", "register", str(folder))
    command = refused.stderr.split("run `", 1)[1].split("`", 1)[0]
    assert command == f"theurian init '{tmp_path}/it'\"'\"'s a folder'", refused.stderr
    words = subprocess.run(["bash", "-c", f"printf '%s\\n' {command.removeprefix('theurian init ')}"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert words == [str(folder)]  # one word, the folder itself: pasted, `theurian init` gets exactly it


def test_registering_the_same_project_twice_changes_nothing_says_so_and_exits_0(
    installation: Installation, tmp_path: Path
) -> None:
    installation.new_project(tmp_path / "p")
    before = installation.cli("project", "list", "--json", check=True).stdout
    again = installation.cli("project", "register", str(tmp_path / "p"))
    assert again.returncode == 0
    assert again.stdout.splitlines() == [
        f"project 'p' is already registered at {(tmp_path / 'p').resolve()}; nothing changed"]
    assert installation.cli("project", "list", "--json", check=True).stdout == before


def test_unregistering_an_unknown_id_exits_0_saying_nothing_changed(installation: Installation) -> None:
    result = installation.cli("project", "unregister", "nope")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["no project is registered under id 'nope'; nothing changed"]
    as_json = installation.cli("project", "unregister", "nope", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["summary"] == {
        "projectId": "nope", "changed": False, "message": "no project is registered under id 'nope'; nothing changed"}


def test_an_unknown_id_is_refused_in_one_bounded_line_by_every_command_that_names_one(
        installation: Installation) -> None:
    """One owner (`registry.not_registered`): `unregister` cut the id at 80, `project status` said it otherwise at
    64, and resolving a project for a command or an agent did not cut it at all."""
    pasted = "x" * 500
    expected = f"theurian: no project is registered under id {'x' * registry.MAX_PROJECT_ID_CHARS!r}\n"
    status = installation.cli("project", "status", pasted)
    assert (status.returncode, status.stderr) == (EXIT_FAILED, expected)
    # Removing what is not there finds its work done: exit 0, the same bounded words, and that nothing changed.
    unregister = installation.cli("project", "unregister", pasted)
    assert (unregister.returncode, unregister.stderr) == (0, "")
    assert unregister.stdout == f"{expected.removeprefix('theurian: ').removesuffix(chr(10))}; nothing changed\n"
    with installation.in_process(), pytest.raises(ProjectNotRegisteredError) as raised:
        resolve_project(pasted)
    assert f"theurian: {raised.value.message}\n" == expected and raised.value.project_id == pasted


def test_unregister_removes_only_that_registration(installation: Installation, tmp_path: Path) -> None:
    installation.new_project(tmp_path / "a")
    installation.new_project(tmp_path / "b")
    installation.cli("project", "unregister", "a", check=True)
    assert [r.project_id for r in registry.read().registrations] == ["b"]
    assert (tmp_path / "a" / ".theurian").is_dir()


def test_concurrent_registrations_all_land(installation: Installation, tmp_path: Path) -> None:
    roots = []
    for index in range(8):
        root = tmp_path / f"project-{index}"
        root.mkdir()
        init_project(root)  # setup: the eight `project register` processes below are what runs at once
        roots.append(root)
    processes = [
        subprocess.Popen([str(THEURIAN_BIN), "project", "register", str(root)], env=installation.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for root in roots
    ]
    outcomes = [(process.communicate(timeout=120), process.returncode) for process in processes]
    assert [code for _, code in outcomes] == [0] * len(roots), outcomes
    assert sorted(r.project_id for r in registry.read().registrations) == [f"project-{i}" for i in range(8)]


def test_a_malformed_registry_is_reported_and_never_overwritten(installation: Installation, tmp_path: Path) -> None:
    path = registry_path()
    path.parent.mkdir(parents=True)
    broken = b'[projects."a"\nroot = "/x"\n'
    path.write_bytes(broken)
    (tmp_path / "p").mkdir()
    installation.cli("init", str(tmp_path / "p"), check=True)
    for args in (["project", "register", str(tmp_path / "p")], ["project", "unregister", "a"],
                 ["project", "list"]):
        result = installation.cli(*args)
        assert result.returncode == EXIT_FAILED, args
        assert "not valid TOML" in result.stderr and str(path) in result.stderr
        assert "Traceback" not in result.stderr
    assert path.read_bytes() == broken


def test_a_hand_edited_entry_without_a_root_is_unreadable_and_an_odd_key_is_published_verbatim(
    installation: Installation, tmp_path: Path
) -> None:
    path = registry_path()
    path.parent.mkdir(parents=True)
    path.write_text(f'[projects."Not An Id"]\nroot = "{tmp_path}"\n\n[projects.api]\nnote = "no root"\n',
                    encoding="utf-8")
    snapshot = registry.read()
    assert [r.project_id for r in snapshot.registrations] == ["Not An Id"]
    assert snapshot.unreadable == ("api",)


def test_a_rewrite_keeps_hand_added_projects(installation: Installation, tmp_path: Path) -> None:
    path = registry_path()
    path.parent.mkdir(parents=True)
    path.write_text(f'[projects.hand]\nroot = "{tmp_path}"\n', encoding="utf-8")
    installation.new_project(tmp_path / "p")
    assert sorted(tomllib.loads(path.read_text(encoding="utf-8"))["projects"]) == ["hand", "p"]


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_every_string_written_as_toml_reads_back_exactly(value: str) -> None:
    assert tomllib.loads(f"key = {tomlwrite.string(value)}")["key"] == value


@pytest.mark.parametrize("name, expected", [("Demo_Project", "demo-project"), ("--x--", "x"), ("a  b", "a-b")])
def test_default_ids_are_lowercase_kebab_case(name: str, expected: str) -> None:
    assert registry.default_project_id(Path(name)) == expected


def test_a_registration_keeps_hand_added_keys_and_malformed_entries(installation: Installation, tmp_path: Path) -> None:
    path = registry_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        'owner = "ops"\n\n[projects.a]\nroot = "/srv/a"\nweight = 3\ntags = ["x", "y"]\n'
        'since = 2026-01-02T03:04:05Z\n\n[projects.b]\nroot = ["/not/a/string"]\n', encoding="utf-8")
    before = tomllib.loads(path.read_text(encoding="utf-8"))
    installation.new_project(tmp_path / "new")
    after = tomllib.loads(path.read_text(encoding="utf-8"))
    assert after == before | {"projects": before["projects"] | {"new": {"root": str((tmp_path / "new").resolve())}}}
    assert registry.read().unreadable == ("b",)


def test_a_relative_root_is_unreadable_rather_than_resolved_against_some_working_directory(
    installation: Installation,
) -> None:
    registry_path().parent.mkdir(parents=True)
    registry_path().write_text('[projects.rel]\nroot = "projects/rel"\n', encoding="utf-8")
    snapshot = registry.read()
    assert snapshot.registrations == () and snapshot.unreadable == ("rel",)


def test_accented_folder_names_keep_their_base_letters_in_the_default_id() -> None:
    assert registry.default_project_id(Path("Über-Projekt")) == "uber-projekt"


toml_keys = st.text(min_size=1, max_size=8, alphabet=st.characters(exclude_categories=["Cs"]))
toml_scalars = (st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=20) | st.booleans()
                | st.integers(min_value=-(2**63), max_value=2**63 - 1)
                | st.floats(allow_nan=False))
toml_values = st.recursive(toml_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(toml_keys, inner, max_size=3), max_leaves=8)


@given(st.dictionaries(toml_keys, toml_values | st.dictionaries(toml_keys, toml_values, max_size=3), max_size=4))
def test_every_document_tomllib_can_read_is_rendered_back_to_the_same_document(doc: dict) -> None:
    assert tomllib.loads(tomlwrite.document(doc)) == doc
