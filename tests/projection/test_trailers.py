from hypothesis import given
from hypothesis import strategies as st

from projection.trailers import REVIEWERS, SEVERITIES, Finding, parse_line, parse_message

EM = "\u2014"


def test_a_well_formed_line_yields_reviewer_severity_and_text() -> None:
    line = f"Review-Finding: security HIGH {EM} token in logs"
    assert parse_line(line) == ("security", "HIGH", "token in logs")


def test_the_code_alias_is_stored_as_code_review() -> None:
    assert parse_line(f"Review-Finding: code LOW {EM} x") == ("code-review", "LOW", "x")


def test_the_text_splits_on_the_first_separator_and_keeps_the_rest_byte_for_byte() -> None:
    text = f"a {EM} b  trailing\t "
    assert parse_line(f"Review-Finding: adversarial MEDIUM {EM} {text}") == ("adversarial", "MEDIUM", text)


def test_malformed_lines_are_refused_by_the_grammar() -> None:
    malformed = [
        "Review-Finding: security HIGH - hyphen, not an em dash",
        f"Review-Finding: security high {EM} lower-case severity",
        f"Review-Finding: perf HIGH {EM} unknown reviewer",
        f"Review-Finding: security HIGH {EM} ",
        f"Review-Finding: security HIGH extra {EM} three tokens",
        f"Review-Finding: security  HIGH {EM} two spaces make an empty token",
        f"Review-Finding:security HIGH {EM} no space after the key",
        f"Review-Finding: security HIGH{EM}no spaces around the dash",
        f"Review-Finding: Security HIGH {EM} reviewer is case-sensitive",
    ]
    for line in malformed:
        assert parse_line(line) is None, line


def test_positions_count_every_finding_line_and_malformed_ones_are_counted_not_kept() -> None:
    message = "\n".join([
        "subject",
        "",
        f"Review-Finding: security HIGH {EM} first",
        "Review-Finding: broken",
        f"  Review-Finding: security LOW {EM} indented: not a finding line",
        f"Review-Finding: code LOW {EM} third",
    ])
    parsed = parse_message(message)
    assert parsed.findings == (
        Finding(0, "security", "HIGH", "first"),
        Finding(2, "code-review", "LOW", "third"),
    )
    assert parsed.malformed == 1


def test_a_finding_line_that_is_not_utf_8_is_counted_as_malformed() -> None:
    message = f"s\n\nReview-Finding: security HIGH {EM} caf\udce9"  # surrogateescape of byte 0xE9
    parsed = parse_message(message)
    assert parsed.findings == () and parsed.malformed == 1


@given(
    reviewer=st.sampled_from(REVIEWERS),
    severity=st.sampled_from(SEVERITIES),
    text=st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\n"), min_size=1),
)
def test_any_single_line_text_round_trips_unchanged(reviewer: str, severity: str, text: str) -> None:
    assert parse_line(f"Review-Finding: {reviewer} {severity} {EM} {text}") == (reviewer, severity, text)
