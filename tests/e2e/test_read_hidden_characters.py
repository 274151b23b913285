"""A hidden character in served text is visible to an operator reading a CLI table: `theurian findings list` shows
each zero-width, tag or other format character escaped where it stands and names the classes under the table, the
classes the same review.findings row is labelled with when an agent asks through the SDK client; `--json` and
`--csv` keep the text exactly as stored, as the tool serves it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.projection.git_fixture import T0, Planned, message, trailer, write_history
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import call_tools
from theurian.cli.read_commands import UNTRUSTED_NOTE

HIDDEN = "ship\u200bit\U000e0069\U000e0067\U000e006e\u00adnow"  # zero-width, tag characters, a soft hyphen
SHOWN = "ship\\u200bit\\U000e0069\\U000e0067\\U000e006e\\xadnow"
HISTORY = (Planned(T0, message("hide", [trailer("security", "HIGH", HIDDEN), trailer("code", "LOW", "plain")])),)


def test_a_table_shows_hidden_characters_escaped_and_names_their_classes_as_the_agent_s_row_does(
        module_installation: Installation, module_daemon: RunningDaemon, tmp_path: Path) -> None:
    root = tmp_path / "hidden"
    write_history(root, HISTORY)
    module_installation.new_project_in_process(root, "hidden")
    module_installation.cli_in_process("findings", "build", "--project", str(root))
    [answer] = call_tools(module_daemon.mcp_url, [("review.findings", {"projectId": "hidden"})])
    rows = answer.valid("review-findings-response.schema.json")["findings"]
    labels = {row["findingText"]: row["hiddenCharacters"] for row in rows}
    assert labels == {HIDDEN: ["zero-width", "tag-character", "other-format"], "plain": []}
    table = module_installation.cli("findings", "list", "--project", str(root), check=True).stdout
    *lines, footer = table.splitlines()
    assert any(line.endswith(SHOWN) for line in lines) and HIDDEN not in table
    assert footer == ("2 findings; 1 row holds hidden characters (zero-width, tag-character, other-format), shown "
                      f"escaped; --json and --csv keep them as stored; {UNTRUSTED_NOTE}")
    printed = module_installation.cli("findings", "list", "--project", str(root), "--json", check=True).stdout
    assert json.loads(printed)["summary"] == answer.structured
    as_csv = module_installation.cli("findings", "list", "--project", str(root), "--csv", check=True).stdout
    texts = [row["findingText"] for row in csv.DictReader(io.StringIO(as_csv))]
    assert sorted(texts) == sorted([HIDDEN, "plain"])


def test_a_table_without_hidden_characters_says_nothing_of_them(
        module_installation: Installation, tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_history(root, (Planned(T0, message("plain", [trailer("code", "LOW", "rename it, 漢字 and é")])),))
    module_installation.new_project_in_process(root, "plain")
    module_installation.cli_in_process("findings", "build", "--project", str(root))
    *lines, footer = module_installation.cli("findings", "list", "--project", str(root), check=True).stdout.splitlines()
    assert lines[-1].endswith("rename it, 漢字 and é")
    assert footer == f"1 finding; {UNTRUSTED_NOTE}"
