from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from ingest import allowlist
from ingest.errors import NotAllowlistedError
from theurian.errors import AlreadyInPlaceError, ConfigError, UsageError
from theurian.folder_lock import folder_held
from theurian.project import init_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    init_project(tmp_path)
    return tmp_path


def config(project: Path) -> str:
    return (project / ".theurian" / "config.toml").read_text(encoding="utf-8")


def test_allow_then_disallow_round_trips_through_tomllib(project: Path) -> None:
    allowlist.allow(project, "Acme/Widgets")
    allowlist.allow(project, "octo/hello.world")
    assert tomllib.loads(config(project))["review"]["allowlist"] == ["Acme/Widgets", "octo/hello.world"]
    allowlist.disallow(project, "ACME/widgets")
    assert allowlist.read_allowlist(project) == ["octo/hello.world"]


def test_allowing_a_name_already_there_in_another_case_is_already_in_place(project: Path) -> None:
    allowlist.allow(project, "Acme/Widgets")
    with pytest.raises(AlreadyInPlaceError):
        allowlist.allow(project, "acme/widgets")
    with pytest.raises(AlreadyInPlaceError):
        allowlist.disallow(project, "acme/other")


def test_hand_edits_comments_and_other_keys_survive_an_allow(project: Path) -> None:
    path = project / ".theurian" / "config.toml"
    path.write_text(
        '# mine\n[review]\nsecrets = "warn"  # keep\n# why these\nallowlist = [\n  "a/b", # first ]\n'
        "  'c/d',\n]\nredact_participants = true\n\nacknowledged_secrets = ['0123456789abcdef']\n",
        encoding="utf-8",
    )
    allowlist.allow(project, "e/f")
    text = config(project)
    document = tomllib.loads(text)
    assert document["review"]["allowlist"] == ["a/b", "c/d", "e/f"]
    assert document["review"]["secrets"] == "warn" and document["review"]["redact_participants"] is True
    assert document["review"]["acknowledged_secrets"] == ["0123456789abcdef"]
    assert "# mine" in text and "# why these" in text and '# keep' in text


def test_a_config_with_crlf_line_endings_is_rewritten_as_a_text_editor_would_have_it(project: Path) -> None:
    """A hand edit on Windows leaves CRLF: allow and disallow must still find the `[review]` table (reading the
    raw bytes once made them append a second one and refuse the result)."""
    path = project / ".theurian/config.toml"
    path.write_bytes(b'# mine\r\n[review]\r\nallowlist = ["Acme/Widgets",]\r\n')
    allowlist.allow(project, "foo/bar")
    assert allowlist.read_allowlist(project) == ["Acme/Widgets", "foo/bar"]
    allowlist.disallow(project, "Acme/Widgets")
    assert allowlist.read_allowlist(project) == ["foo/bar"]
    assert path.read_text(encoding="utf-8").startswith("# mine\n[review]\n")


def test_a_config_without_a_review_table_gets_one(project: Path) -> None:
    (project / ".theurian" / "config.toml").write_text('# mine\n', encoding="utf-8")
    allowlist.allow(project, "a/b")
    assert tomllib.loads(config(project)) == {"review": {"allowlist": ["a/b"]}}
    assert config(project).startswith("# mine\n")


def test_allow_refuses_a_config_with_an_unknown_table_and_leaves_it_unchanged(project: Path) -> None:
    path = project / ".theurian" / "config.toml"
    path.write_text('[other]\nk = 1\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown table \[other\]; the tables are: \[review\]"):
        allowlist.allow(project, "a/b")
    assert path.read_text(encoding="utf-8") == '[other]\nk = 1\n'



def test_a_non_list_allowlist_is_a_config_error(project: Path) -> None:
    (project / ".theurian" / "config.toml").write_text('[review]\nallowlist = "a/b"\n', encoding="utf-8")
    with pytest.raises(ConfigError):
        allowlist.read_allowlist(project)


@pytest.mark.parametrize("bad", ["acme", "acme/", "/x", "a/b/c", "a b/c", "-a/b", "a/..", "a/b?x", "ä/b"])
def test_a_malformed_repository_name_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        allowlist.parse_repository(bad)


def test_matching_is_case_insensitive_and_one_stranger_refuses_the_whole_request() -> None:
    assert allowlist.require_allowed(["Acme/Widgets"], ["acme/WIDGETS"]) == ["acme/WIDGETS"]
    with pytest.raises(NotAllowlistedError) as caught:
        allowlist.require_allowed(["Acme/Widgets"], ["acme/widgets", "acme/widgets2"])
    assert caught.value.repository == "acme/widgets2"


def write_allowlist(project: Path, *entries: str) -> None:
    items = ", ".join('"' + e.encode("ascii", "backslashreplace").decode() + '"' for e in entries)
    (project / ".theurian" / "config.toml").write_text(f"[review]\nallowlist = [{items}]\n", encoding="utf-8")


def test_matching_folds_ascii_only_so_a_kelvin_sign_matches_no_k() -> None:
    # U+212A KELVIN SIGN casefolds to 'k'; GitHub's names are ASCII and its matching folds ASCII only.
    with pytest.raises(NotAllowlistedError):
        allowlist.require_allowed(["acme/\u212aitten"], ["acme/kitten"])
    assert allowlist.find(["acme/\u212aitten"], "acme/kitten") is None
    assert allowlist.find(["ACME/Kitten"], "acme/kITTEN") == "ACME/Kitten"


@pytest.mark.parametrize(("index", "entries"), [
    (0, ["acme/\u212aitten"]),
    (0, [" acme/widgets "]),
    (1, ["a/b", "Acme/Widgets/extra"]),
    (2, ["a/b", "c/d", "Acme/W\u0456dgets"]),
    (0, ["acme/.."]),
    (0, [""]),
])
def test_a_hand_edited_entry_that_is_not_owner_name_is_refused_naming_its_index_and_the_rule(
        project: Path, index: int, entries: list[str]) -> None:
    write_allowlist(project, *entries)
    with pytest.raises(ConfigError) as caught:
        allowlist.read_allowlist(project)
    message = caught.value.message
    assert "\n" not in message
    assert f"entry {index}" in message and "ASCII" in message and "OWNER/NAME" in message


def test_valid_hand_edited_entries_are_read_as_written(project: Path) -> None:
    write_allowlist(project, "Acme/Widgets", "octo-cat/hello.world_2")
    assert allowlist.read_allowlist(project) == ["Acme/Widgets", "octo-cat/hello.world_2"]


def test_a_non_ascii_name_on_the_command_line_is_a_usage_error() -> None:
    for bad in ("acme/\u212aitten", "Acme/W\u0456dgets", "acme/widgets\n"):
        with pytest.raises(UsageError):
            allowlist.parse_repository(bad)


def test_case_variant_duplicates_are_ingested_once_in_the_first_spelling() -> None:
    assert allowlist.unique(["Acme/Widgets", "acme/widgets", "octo/x", "ACME/WIDGETS", "Octo/X"]) == [
        "Acme/Widgets", "octo/x"]


def test_an_allow_or_disallow_holds_the_theurian_folder_from_its_read_to_its_write(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unlocked, a disallow racing an allow could report a repository removed while the other's rewrite put it
    back. Between this disallow's read and its write, no other writer can take the lock."""
    allowlist.allow(project, "Acme/Secretish")
    real_read = allowlist.read_allowlist
    probes: list[str] = []

    def read_then_probe(project_root: Path) -> list[str]:
        entries = real_read(project_root)
        try:
            with folder_held(project / ".theurian", wait=False):
                probes.append("free")
        except BlockingIOError:
            probes.append("held")
        return entries

    monkeypatch.setattr(allowlist, "read_allowlist", read_then_probe)
    allowlist.disallow(project, "Acme/Secretish")
    monkeypatch.undo()
    assert probes == ["held"]
    with folder_held(project / ".theurian", wait=False):  # and released after
        assert allowlist.read_allowlist(project) == []


@pytest.mark.parametrize("spelling", ['"allowlist"', "'allowlist'"])
def test_a_quoted_allowlist_key_written_by_hand_is_rewritten_in_place(project: Path, spelling: str) -> None:
    path = project / ".theurian" / "config.toml"
    path.write_text(f"[review]\n{spelling} = [\"Acme/Widgets\"]  # by hand\n", encoding="utf-8")
    allowlist.allow(project, "Beta/Gadgets")
    assert allowlist.read_allowlist(project) == ["Acme/Widgets", "Beta/Gadgets"]
    assert config(project).count("allowlist") == 1


def test_a_spelling_the_rewrite_cannot_edit_is_left_unchanged_with_how_to_edit_it(project: Path) -> None:
    """A dotted key outside [review] is valid TOML: the refusal used to call the file "not valid TOML"."""
    path = project / ".theurian" / "config.toml"
    path.write_text('review.allowlist = ["Acme/Widgets"]\n', encoding="utf-8")
    before = path.read_bytes()
    assert allowlist.read_allowlist(project) == ["Acme/Widgets"]
    with pytest.raises(ConfigError, match="does not rewrite .* left unchanged; edit the list by hand") as raised:
        allowlist.allow(project, "Beta/Gadgets")
    assert "not valid TOML" not in raised.value.message and path.read_bytes() == before


@pytest.mark.parametrize("typed, bare", [("Acme/Widgets.git", "Acme/Widgets"), ("acme/w.GIT", "acme/w")])
def test_a_name_ending_in_dot_git_is_refused_by_allow_naming_the_repository(project: Path, typed: str,
                                                                             bare: str) -> None:
    with pytest.raises(UsageError) as caught:
        allowlist.allow(project, typed)
    assert f"run `theurian review allow {bare}`" in caught.value.message
    assert allowlist.read_allowlist(project) == []


@pytest.mark.parametrize("name", ["Acme/Widgets.github", "Acme/.git", "Acme/git"])
def test_a_name_that_only_resembles_a_clone_suffix_is_allowed(project: Path, name: str) -> None:
    allowlist.allow(project, name)
    assert allowlist.read_allowlist(project) == [name]
