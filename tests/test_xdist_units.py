"""The work units `make test` hands pytest-xdist's workers (`--dist loadfile`): a module each, except the modules
that read one session-wide build, which share a unit so that no worker sits waiting on the other's build."""

from __future__ import annotations

from pathlib import Path

from tests.support.xdist_units import work_unit

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def test_every_module_reading_the_shared_demo_is_in_one_work_unit() -> None:
    readers = sorted(str(path.relative_to(REPO)) for path in TESTS.rglob("test_*.py")
                     if path != Path(__file__).resolve() and "shared_demo(" in path.read_text(encoding="utf-8"))
    assert len(readers) >= 2, readers  # test_demo.py and test_doctor.py at least
    assert len({work_unit(f"{module}::test_x") for module in readers}) == 1, readers


def test_any_other_module_is_a_unit_of_its_own() -> None:
    assert work_unit("tests/e2e/test_sync.py::test_a[1]") == "tests/e2e/test_sync.py"
    assert work_unit("tests/e2e/test_sync.py::Grouped::test_b") == work_unit("tests/e2e/test_sync.py::test_c")
    assert work_unit("tests/e2e/test_sync.py::test_a") != work_unit("tests/e2e/test_cli_json.py::test_a")
