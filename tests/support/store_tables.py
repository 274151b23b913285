"""Every stamped table of a project's review store, read back for comparing two builds of the same lake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from projection.review_layout import DIGEST_TABLES
from projection.review_store import store_path


def stamped_tables(root: Path) -> dict[str, Any]:
    """Every digested table's rows in stamped order, and the stamp's row count and digest (not its build id)."""
    with duckdb.connect(":memory:") as connection:
        connection.execute(f"ATTACH '{store_path(root)}' AS s (READ_ONLY)")
        found: dict[str, Any] = {name: connection.execute(
            f"SELECT {', '.join(columns)} FROM s.{name} ORDER BY {order}").fetchall()
            for name, columns, order in DIGEST_TABLES}
        found["stamp"] = connection.execute("SELECT row_count, row_digest FROM s.build_stamp").fetchall()
    return found
