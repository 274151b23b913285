"""docs/code-map.md matches the code: each package's exception tree is the one its `errors.py` draws, that drawing
names exactly the classes `errors.py` defines, and no stage defines a public exception anywhere else."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("theurian", "ingest", "evidence", "projection", "knowledge", "serve")
CODE_MAP = REPO / "docs" / "code-map.md"


def _drawn_tree(package: str) -> str:
    doc = ast.get_docstring(ast.parse((REPO / package / "errors.py").read_text(encoding="utf-8")), clean=False)
    assert doc is not None
    lines = doc.splitlines()
    drawn = [index for index, line in enumerate(lines) if line.startswith("    ")]
    return "\n".join(line[4:] for line in lines[drawn[0]:drawn[-1] + 1])


@pytest.mark.parametrize("package", PACKAGES)
def test_the_code_map_shows_each_package_s_exception_tree_as_its_errors_module_draws_it(package: str) -> None:
    assert f"```\n{_drawn_tree(package)}\n```" in CODE_MAP.read_text(encoding="utf-8")


@pytest.mark.parametrize("package", PACKAGES)
def test_each_errors_module_draws_exactly_the_exceptions_it_defines(package: str) -> None:
    module = importlib.import_module(f"{package}.errors")
    defined = {name for name, value in vars(module).items()
               if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__}
    drawn = set(re.findall(r"(?:──|^)\s*([A-Z]\w+)", _drawn_tree(package), flags=re.MULTILINE))
    foreign = {"Exception"} | ({"TheurianError", "PathEscapeError"} if package != "theurian" else set())
    assert defined == drawn - foreign


def test_no_stage_defines_a_public_exception_outside_its_errors_module() -> None:
    elsewhere = []
    for package in PACKAGES:
        for info in pkgutil.walk_packages([str(REPO / package)], prefix=f"{package}."):
            if info.name.endswith(".errors") or info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            elsewhere += [f"{info.name}.{name}" for name, value in vars(module).items()
                          if inspect.isclass(value) and issubclass(value, BaseException)
                          and value.__module__ == info.name and not name.startswith("_")]
    assert elsewhere == []
