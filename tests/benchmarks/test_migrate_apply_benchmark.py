"""`migrate apply` at 10,000 and 30,000 items (one migration file, two operations an item), beside the way the
migration was read before (PyYAML's loader after a pass over its events, then pure-Python jsonschema) on the
same file in the same process. Not a timed test: run with `-m benchmark -s`; the figures go to docs/knowledge.md.
"""

from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path

import jsonschema
import pytest
import yaml

from knowledge.apply import apply_migrations
from knowledge.migration_yaml import _refuse_unsafe_structure, _StrictLoader, read_yaml
from knowledge.migrations import _schema, validate_document
from knowledge.state import Pointer, open_read_only, project_key
from knowledge.state_stamp import check_state
from tests.knowledge.authoring import MigrationWriter
from theurian.installation import build_stamp_secret
from theurian.project import init_project

SIZES = (10_000, 30_000)
TARGET_SECONDS_AT_10000 = 2.0


def _project(root: Path, items: int) -> Path:
    root.mkdir(parents=True)
    init_project(root)
    writer = MigrationWriter(root)
    for n in range(items):
        writer.item(f"architecture.rule-{n}", f"# Rule {n}\n\nWidget {n}: retry with backoff.\n")
    folder = root / ".theurian" / "migrations"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{writer.migration_id}-bench.yaml"
    path.write_text(yaml.dump(writer.document(), Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    return path


def _first_check(root: Path, pointer: Pointer) -> float:
    """Seconds for what a daemon does once per state file before it serves it (`knowledge.state_stamp`)."""
    with closing(open_read_only(root, pointer)) as connection:
        started = time.perf_counter()
        assert check_state(connection, project_key(connection), pointer.migration_count,
                           build_stamp_secret()) is False
        return time.perf_counter() - started


def _read_before(text: str) -> None:
    """The reading and checking `migrate apply` did before: the events pass, PyYAML's loader, jsonschema."""
    _refuse_unsafe_structure("bench.yaml", text)
    document = yaml.load(text, Loader=_StrictLoader)
    jsonschema.Draft202012Validator(_schema("document")).validate(document)
    for operation in document["operations"]:
        jsonschema.Draft202012Validator(_schema(operation["op"])).validate(operation)


@pytest.mark.benchmark
def test_migrate_apply_figures_at_ten_and_thirty_thousand_items(tmp_path: Path) -> None:
    seconds = {}
    print()
    for items in SIZES:
        path = _project(tmp_path / f"p{items}", items)
        started = time.perf_counter()
        outcome = apply_migrations(tmp_path / f"p{items}")
        seconds[items] = time.perf_counter() - started
        assert outcome.pointer.migration_count == 1
        data = path.read_bytes()
        started = time.perf_counter()
        validate_document(path.name, read_yaml(path.name, data))
        read_now = time.perf_counter() - started
        started = time.perf_counter()
        _read_before(data.decode("utf-8"))
        read_before = time.perf_counter() - started
        print(f"migrate apply, {items} items ({len(data) / 1e6:.1f} MB of YAML): {seconds[items]:6.2f} s, "
              f"{seconds[items] / items * 1e6:.0f} us an item"
              + (f" (target <= {TARGET_SECONDS_AT_10000} s)" if items == 10_000 else ""))
        print(f"  read + check the migration: {read_now:6.2f} s now, {read_before:6.2f} s the way it was read "
              f"before ({read_before / read_now:.1f} x)")
        print(f"  a reader's first check of the built state (stamp, catalog, counts, row digest; once per file): "
              f"{_first_check(tmp_path / f'p{items}', outcome.pointer) * 1000:6.0f} ms")
    print(f"30,000 / 10,000 items: {seconds[30_000] / seconds[10_000]:.2f} x the time (3.00 is linear)")
