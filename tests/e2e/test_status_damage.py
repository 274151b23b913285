"""Lake damage in the status commands: `project status` names each damaged file once, and the exit codes of
`review status`, `project status` and `doctor` over a damaged lake (docs/decisions.md, "Lake damage and the
status commands' exit codes")."""

from __future__ import annotations

import json
from pathlib import Path

from tests.projection.review_records import copy_fixture_lake
from tests.support.installation import Installation


def _damaged_project(installation: Installation, root: Path) -> list[str]:
    """A project over the fixture lake with its first thread record truncated and its run manifest truncated; the
    two files' project-relative paths."""
    installation.new_project_in_process(root)
    copy_fixture_lake(root)
    record = sorted((root / ".theurian/review").glob("sha256-*/review-thread/*.json"))[0]
    manifest = sorted((root / ".theurian/review/runs").iterdir())[0]
    for path in (record, manifest):
        path.write_bytes(path.read_bytes()[:50])
    return sorted(str(path.relative_to(root)) for path in (record, manifest))


def _cure(text: str, path: str) -> str:
    [line] = [line for line in text.splitlines() if line.startswith(f"  damaged: {path}: ")]
    return line.split(" -> ", 1)[1]


def test_project_status_names_each_damaged_lake_file_once(installation: Installation, tmp_path: Path) -> None:
    """The `damaged:` lines named every file, and the lake row below them named the first one again, with its
    cure."""
    damaged = _damaged_project(installation, tmp_path / "p")
    text = installation.cli("project", "status", "p").stdout
    for path in damaged:  # the line naming it (a manifest's `rm` cure names it too, on that line)
        assert [line for line in text.splitlines() if path in line] == [f"  damaged: {path}: unreadable: "
                                                                         f"JSONDecodeError -> {_cure(text, path)}"]
    [lake] = [line for line in text.splitlines() if line.startswith("  evidence lake: ")]
    assert lake.endswith("; 2 damaged file(s), each named above with the command that mends it  [fail]"), lake
    [document] = json.loads(installation.cli("project", "status", "p", "--json").stdout)["summary"]["projects"]
    assert sorted(entry["path"] for entry in document["damagedEntries"]) == damaged
    # --json keeps doctor's row as doctor shows it: the first file and its cure
    doctor = {c["check"]: c for c in json.loads(installation.cli("doctor", "--json").stdout)["summary"]["checks"]}
    assert document["state"]["evidence lake"] == {key: doctor["p: evidence lake"][key]
                                                  for key in ("level", "state", "cure")}


def test_over_a_damaged_lake_the_status_commands_report_and_exit_0_and_doctor_fails(
        installation: Installation, tmp_path: Path) -> None:
    """Decided (docs/decisions.md): `review status` and `project status` are reports, so damage they name is
    data (`damagedEntries`), exit 0 and `ok` true; `doctor` is the check a script gates on, and fails (exit 1)."""
    damaged = _damaged_project(installation, tmp_path / "p")
    for command in (("review", "status", "--project", str(tmp_path / "p")), ("project", "status", "p")):
        text = installation.cli(*command)
        assert (text.returncode, text.stderr) == (0, ""), command
        assert sum(line.lstrip().startswith("damaged: ") for line in text.stdout.splitlines()) == 2, text.stdout
        result = installation.cli(*command, "--json")
        document = json.loads(result.stdout)
        assert (result.returncode, document["ok"]) == (0, True), command
        entries = document["summary"].get("damagedEntries") or document["summary"]["projects"][0]["damagedEntries"]
        assert sorted(entry["path"] for entry in entries) == damaged
    doctor = installation.cli("doctor", "--json")
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["summary"]["checks"]}
    assert doctor.returncode == 1 and checks["p: evidence lake"]["level"] == "fail"
