"""`theurian review build` then review.search, through the real CLI and a real MCP client against a real daemon."""

import threading
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

import schemas
from evidence.records import repository_folder
from projection.review_build import build_review_store
from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL, STORE_RELATIVE
from serve.tools.review import REVIEW_SEARCH_UNAVAILABLE_REFUSAL
from tests.projection.review_records import FIXTURE_REPOSITORY, copy_fixture_lake, pull_request, write_lake
from tests.support.daemon import RunningDaemon
from tests.support.installation import Installation
from tests.support.mcp_client import BOTH_ERAS, Mode, call_tools
from theurian import registry
from theurian.cli.pasteable import with_project
from theurian.project import init_project

RESPONSE = jsonschema.Draft202012Validator(schemas.load("mcp", "review-search-response.schema.json"))


@pytest.fixture(scope="module")
def projects(module_installation: Installation, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """demo: the fixture lake plus one corrupt file, built here by the real CLI; foreign: built by another
    installation; unbuilt; escaped: its store links out of .theurian/state/."""
    base = tmp_path_factory.mktemp("review-e2e")
    with module_installation.in_process():
        for name in ("demo", "foreign", "unbuilt", "escaped"):
            (base / name).mkdir()
            init_project(base / name)
            registry.register(base / name, name)
            copy_fixture_lake(base / name)
    with Installation(base / "another").in_process():
        build_review_store(base / "foreign")
    corrupt = base / "demo/.theurian/review" / repository_folder(FIXTURE_REPOSITORY) / "pull-request"
    (corrupt / "PR_torn.0.json").write_bytes(b'{"kind": "pull-request"')
    built = module_installation.cli("review", "build", "--project", str(base / "demo"), check=True)
    (base / "escaped/.theurian/state").mkdir(exist_ok=True)
    (base / "outside").mkdir()
    (base / "escaped" / STORE_RELATIVE).symlink_to(base / "outside/planted.duckdb")
    escaped_build = module_installation.cli("review", "build", "--project", str(base / "escaped"))
    return {"base": base, "built": built, "escaped_build": escaped_build, "corrupt": corrupt}


def test_the_build_reports_the_corrupt_file_by_path_and_how_many_it_skipped(projects: dict[str, Any]) -> None:
    relative = (projects["corrupt"] / "PR_torn.0.json").relative_to(projects["base"] / "demo").as_posix()
    lines = projects["built"].stdout.strip().splitlines()
    assert lines[0].startswith(f"skipped {relative}: ")
    assert lines[-1] == f"built {STORE_RELATIVE}: 6 records (9 texts); 1 invalid files skipped"


def test_the_build_meets_the_store_escape_refusal_before_reading_evidence(projects: dict[str, Any]) -> None:
    escaped = projects["escaped_build"]
    assert escaped.returncode == 1
    # The daemon's words, each command in them carrying the project the build was given (`theurian.cli.pasteable`).
    refusal = with_project(REVIEW_STORE_ESCAPE_REFUSAL, projects["base"] / "escaped")
    assert escaped.stderr.strip() == f"theurian: {refusal}"
    assert list((projects["base"] / "outside").iterdir()) == []


@pytest.mark.parametrize("command", [["review", "search", "lock"], ["review", "similar", "take the locks in order"],
                                     ["review", "concerns"], ["review", "export", "--parquet", "{base}/export"]])
def test_every_command_that_reads_the_store_refuses_an_escaped_one_with_the_daemons_words(
        projects: dict[str, Any], module_installation: Installation, command: list[str]) -> None:
    base = projects["base"]
    done = module_installation.cli(*[word.format(base=base) for word in command], "--project", str(base / "escaped"))
    refusal = with_project(REVIEW_STORE_ESCAPE_REFUSAL, base / "escaped")
    assert (done.returncode, done.stderr.strip()) == (1, f"theurian: {refusal}")
    assert list((base / "outside").iterdir()) == [] and not (base / "export").exists()


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_real_client_searches_the_built_store_and_every_fault_is_refused(
    module_daemon: RunningDaemon, projects: dict[str, Any], mode: Mode
) -> None:
    answers = call_tools(module_daemon.mcp_url, [
        ("review.search", {"projectId": "demo", "q": "LOCK"}),
        ("review.search", {"projectId": "demo", "threadState": "dismissed"}),
        ("review.search", {"projectId": "foreign"}),
        ("review.search", {"projectId": "unbuilt"}),
        ("review.search", {"projectId": "escaped"}),
        ("review.search", {"projectId": "demo", "limit": 51}),
        ("system.capabilities", {}),
    ], mode)
    lock, dismissed, foreign, unbuilt, escaped, over, capabilities = answers
    for answer in (lock, dismissed):
        assert answer.is_error is False and answer.structured is not None
        RESPONSE.validate(answer.structured)
        assert orjson.loads(answer.text) == answer.structured
    assert lock.structured is not None and dismissed.structured is not None
    assert [r["recordKey"] for r in lock.structured["records"]] == [
        "PR_kwDOAcme0042", "PRR_kwDOAcme0001", "PRRT_kwDOAcme0001"]
    assert [r["filePath"] for r in dismissed.structured["records"]] == ["docs/read me.md"]
    assert (foreign.is_error, foreign.text) == (True, REVIEW_SEARCH_UNAVAILABLE_REFUSAL)
    assert (unbuilt.is_error, unbuilt.text) == (True, REVIEW_SEARCH_UNAVAILABLE_REFUSAL)
    assert (escaped.is_error, escaped.text) == (True, REVIEW_STORE_ESCAPE_REFUSAL)
    assert over.is_error is True and "`limit` must be between 1 and 50;" in over.text and "MAX_" not in over.text
    assert capabilities.structured is not None
    flags = capabilities.structured["capabilities"]
    assert (flags["reviewIngestion"], flags["reviewIngestionScope"]) == (True, "public-allowlisted")


def test_a_daemon_keeps_answering_while_review_build_swaps_the_store(
    module_installation: Installation, module_daemon: RunningDaemon, projects: dict[str, Any]
) -> None:
    root: Path = projects["base"] / "demo"
    stop = threading.Event()
    answers: list[Any] = []

    def search() -> None:
        while not stop.is_set():
            answers.extend(call_tools(module_daemon.mcp_url, [("review.search", {"projectId": "demo"})] * 5))

    searcher = threading.Thread(target=search)
    searcher.start()
    try:
        write_lake(root, [pull_request("Acme/Order-Service", 101, "PR_swap101")])
        module_installation.cli("review", "build", "--project", str(root), check=True)
        write_lake(root, [pull_request("Acme/Order-Service", 102, "PR_swap102")])
        with module_installation.in_process():
            build_review_store(root)
    finally:
        stop.set()
        searcher.join(timeout=60)
    assert answers and not [a.text for a in answers if a.is_error]
    [final] = call_tools(module_daemon.mcp_url, [("review.search", {"projectId": "demo", "pullRequest": 102})])
    assert final.structured is not None and final.structured["count"] == 1


SEARCH_STRING_FILTERS = ("repository", "threadState", "author", "filePath", "q")


@pytest.mark.parametrize("mode", BOTH_ERAS)
def test_a_nul_and_strings_at_and_past_the_bound_over_the_real_wire(
    module_daemon: RunningDaemon, projects: dict[str, Any], mode: Mode
) -> None:
    """review.search bounds strings at 400: a 201-character value is an ordinary filter (quoted back when it is
    outside a vocabulary), 401 is refused by its length, and a NUL is refused wherever it is."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for key in SEARCH_STRING_FILTERS:
        calls += [("review.search", {"projectId": "demo", key: "Z" * 401}),
                  ("review.search", {"projectId": "demo", key: "lo\u0000ck"}),
                  ("review.search", {"projectId": "demo", key: "Z" * 201})]
    answers = call_tools(module_daemon.mcp_url, calls, mode)
    for index, key in enumerate(SEARCH_STRING_FILTERS):
        past, nul, inside = answers[3 * index:3 * index + 3]
        assert past.is_error and f"`{key}` is bounded at 400 characters" in past.text
        assert "a value of 401 characters" in past.text and "ZZZZ" not in past.text
        assert nul.is_error and f"`{key}` contains a NUL (U+0000)" in nul.text and "lo\x00ck" not in nul.text
        if key == "threadState":
            assert inside.is_error and repr("Z" * 201) in inside.text
        else:
            assert inside.is_error is False and inside.structured is not None
            RESPONSE.validate(inside.structured)
            assert (inside.structured["count"], inside.structured["records"]) == (0, [])
