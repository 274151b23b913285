"""`theurian review status` names every repository folder the lake holds, says which are no longer allowlisted,
and never prints a repository name it read from a file unless it is an OWNER/NAME whose folder that is."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import orjson

from evidence.content_policy import MAX_CONFIG_FILE_BYTES
from evidence.records import record_file_name, repository_folder
from tests.projection.review_records import FIXTURE_REPOSITORY, copy_fixture_lake, pull_request
from tests.support.installation import Installation


def _status(installation: Installation, project: Path) -> tuple[str, list[dict[str, object]]]:
    text = installation.cli("review", "status", "--project", str(project), check=True).stdout
    rows = json.loads(installation.cli("review", "status", "--json", "--project", str(project),
                                       check=True).stdout)["summary"]
    return text, rows["repositories"]


def test_a_repository_no_longer_allowlisted_is_listed_as_such(installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)  # with the run manifest that ingested it
    installation.cli_in_process("review", "allow", FIXTURE_REPOSITORY, "--project", str(project))
    text, rows = _status(installation, project)
    assert "not allowlisted" not in text and rows[0]["allowlisted"] is True
    installation.cli_in_process("review", "disallow", FIXTURE_REPOSITORY, "--project", str(project))
    text, rows = _status(installation, project)
    [line] = text.strip().splitlines()
    assert line.startswith(f"{FIXTURE_REPOSITORY}: 1 pull-request, 3 review-submission, 2 review-thread; last run ")
    assert line.endswith("; not allowlisted: kept in the lake (and the store built from it)")
    assert (rows[0]["repository"], rows[0]["allowlisted"]) == (FIXTURE_REPOSITORY, False)


def test_records_no_manifest_and_no_allowlist_entry_name_are_listed_by_the_repository_they_hold(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    shutil.rmtree(project / ".theurian/review/runs")
    text, rows = _status(installation, project)
    assert text.strip() == (f"{FIXTURE_REPOSITORY}: 1 pull-request, 3 review-submission, 2 review-thread; "
                            "never ingested; records with hidden characters: bidi-control in 1; not allowlisted: "
                            "kept in the lake (and the store built from it)")
    hidden = {"bidi-control": 1, "zero-width": 0, "tag-character": 0, "other-format": 0}
    assert rows == [{"repository": FIXTURE_REPOSITORY, "repositoryFolder": repository_folder(FIXTURE_REPOSITORY),
                     "allowlisted": False, "records": {"pull-request": 1, "review-submission": 3,
                                                       "review-thread": 2}, "lastRun": None,
                     "content": {"redactions": 0, "recordsWithRedactions": 0, "hiddenCharacters": hidden},
                     "withheld": []}]


def test_a_name_that_is_not_an_owner_name_is_never_printed(installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    planted = "\x1b[31mEvil\x1b[0m/Repo"  # a terminal escape, in a folder named for it
    folder = project / ".theurian/review" / repository_folder(planted) / "pull-request"
    folder.mkdir(parents=True)
    record = {**pull_request("Acme/Alpha", 1, "PR_x"), "repository": planted}
    (folder / record_file_name("PR_x")).write_bytes(orjson.dumps(record))
    text, rows = _status(installation, project)
    assert "\x1b" not in text
    unknown = f".theurian/review/{repository_folder(planted)} (repository unknown)"
    assert text.strip().startswith(f"{unknown}: 1 pull-request")
    assert rows[0]["repository"] is None


def test_a_repository_folder_that_is_a_link_is_not_listed_but_named_unreadable_and_breaks_nothing(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = f".theurian/review/{repository_folder('Acme/Linked')}"
    (project / linked).symlink_to(elsewhere)
    text, rows = _status(installation, project)
    assert [row["repository"] for row in rows] == [FIXTURE_REPOSITORY]
    assert text.startswith(f"{FIXTURE_REPOSITORY}: ")
    assert f"unreadable entry skipped: {linked} " in text  # `review build` refuses this lake: status says why
    as_json = json.loads(installation.cli("review", "status", "--json", "--project", str(project),
                                          check=True).stdout)["summary"]
    assert as_json["unreadableEntries"] == [linked]


def test_a_kind_folder_that_cannot_be_listed_is_named_unreadable_and_the_rest_is_shown(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    stray = project / ".theurian/review" / repository_folder("Acme/Stray")
    stray.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (stray / "pull-request").symlink_to(elsewhere)  # linked out of the lake
    (stray / "review-thread").write_bytes(b"a file where a folder should be")
    text, rows = _status(installation, project)
    assert [row["repository"] for row in rows] == [FIXTURE_REPOSITORY, None]
    assert rows[1]["records"] == {"pull-request": 0, "review-submission": 0, "review-thread": 0}
    as_json = json.loads(installation.cli("review", "status", "--json", "--project", str(project),
                                          check=True).stdout)["summary"]
    assert as_json["unreadableEntries"] == [f".theurian/review/{stray.name}/pull-request"]
    assert f"unreadable entry skipped: .theurian/review/{stray.name}/pull-request" in text


def test_a_config_that_is_a_fifo_or_not_utf8_is_refused_in_one_line_not_waited_on(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    config = project / ".theurian/config.toml"
    config.unlink()
    os.mkfifo(config)  # nobody ever writes to it: reading it would wait forever
    result = installation.cli("review", "status", "--project", str(project), timeout=60)
    assert result.returncode == 1
    assert result.stderr == "theurian: .theurian/config.toml cannot be read: not a regular file\n"
    config.unlink()
    config.write_bytes(b'[review]\nallowlist = ["\xff"]\n')
    for command in (("review", "status"), ("review", "allow", "Acme/Widgets")):
        result = installation.cli(*command, "--project", str(project), timeout=60)
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert result.stderr == "theurian: .theurian/config.toml is not UTF-8 text (byte 23); edit it by hand\n"


def test_a_config_past_its_bound_is_refused_unread(installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    config = project / ".theurian/config.toml"
    with open(config, "r+b") as grown:
        grown.truncate(MAX_CONFIG_FILE_BYTES + 1)
    result = installation.cli("review", "status", "--project", str(project))
    assert result.returncode == 1
    assert result.stderr == (f"theurian: .theurian/config.toml cannot be read: larger than {MAX_CONFIG_FILE_BYTES} "
                             "bytes, not read\n")
    with open(config, "r+b") as shrunk:
        shrunk.truncate(MAX_CONFIG_FILE_BYTES)  # at the bound: read (and refused for what it holds, not its size)
    result = installation.cli("review", "status", "--project", str(project))
    assert "larger than" not in result.stderr


def test_an_allowlisted_repository_whose_folder_is_linked_out_is_named_once_and_one_linked_inside_is_counted(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    installation.cli_in_process("review", "allow", FIXTURE_REPOSITORY, "--project", str(project))
    folder = project / ".theurian/review" / repository_folder(FIXTURE_REPOSITORY)
    inside = project / ".theurian/review/.kept-here"
    shutil.move(folder, inside)
    folder.symlink_to(inside, target_is_directory=True)  # inside the lake: the build reads it, so status counts it
    text, rows = _status(installation, project)
    assert rows[0]["records"] == {"pull-request": 1, "review-submission": 3, "review-thread": 2}
    assert "unreadable" not in text
    folder.unlink()
    shutil.move(inside, tmp_path / "outside")
    folder.symlink_to(tmp_path / "outside", target_is_directory=True)  # out of the lake: the build refuses it
    text, rows = _status(installation, project)
    assert rows[0]["records"] == {"pull-request": 0, "review-submission": 0, "review-thread": 0}
    as_json = json.loads(installation.cli("review", "status", "--json", "--project", str(project),
                                          check=True).stdout)["summary"]
    assert as_json["unreadableEntries"] == [f".theurian/review/{folder.name}"]  # the link to mend, once


def test_a_lake_entry_named_with_terminal_escapes_is_shown_escaped_on_one_line_by_build_and_never_raw_by_status(
        installation: Installation, tmp_path: Path) -> None:
    project = installation.new_project_in_process(tmp_path / "p")
    copy_fixture_lake(project)
    hostile = "x\x1b[2J\x1b]0;pwned\x07\rALL CLEAN\u202e.json"
    kind_folder = project / ".theurian/review" / repository_folder(FIXTURE_REPOSITORY) / "review-thread"
    (kind_folder / hostile).write_bytes(b"{}")
    (project / ".theurian/review" / hostile).mkdir()  # not a repository folder
    escaped = "x\\x1b[2J\\x1b]0;pwned\\x07\\rALL CLEAN\\u202e.json"
    build = installation.cli("review", "build", "--project", str(project), check=True).stdout
    status, _ = _status(installation, project)
    for text in (build, status):
        assert not any(c in text for c in "\x1b\x07\r\u202e"), text
    assert f"skipped .theurian/review/{repository_folder(FIXTURE_REPOSITORY)}/review-thread/{escaped}: " in build
    assert f"skipped .theurian/review/{escaped}: not a repository folder" in build
