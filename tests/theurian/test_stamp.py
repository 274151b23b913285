import dataclasses
import sqlite3

import duckdb
import pytest

import knowledge.state as knowledge_state
import projection.findings_store as findings_store
import projection.review_layout as review_layout
from theurian.stamp import (
    INSERT_STAMP_SQL,
    STAMP_COLUMNS,
    STAMP_TABLE,
    RowDigest,
    StampFields,
    check_stamp_rows,
    compute_stamp,
    new_build_id,
    select_stamp_sql,
    stamp_row,
    stamp_table_sql,
    verify_stamp,
)

SECRET = b"k" * 32


def _fields(**changes: object) -> StampFields:
    digest = RowDigest()
    digest.update(("a", 1, None))
    base = StampFields("findings", 1, 1, "build-1", 1, digest.hexdigest())
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_stamp_verifies_under_the_secret_that_made_it() -> None:
    fields = _fields()
    assert verify_stamp(fields, compute_stamp(fields, SECRET), SECRET)


def test_a_stamp_made_under_another_secret_does_not_verify() -> None:
    fields = _fields()
    assert not verify_stamp(fields, compute_stamp(fields, b"x" * 32), SECRET)


@pytest.mark.parametrize(
    "change",
    [{"store": "review"}, {"schema_version": 2}, {"format_version": 2}, {"build_id": "build-2"},
     {"row_count": 2}, {"row_digest": "0" * 64}],
)
def test_changing_any_stamped_field_breaks_the_stamp(change: dict[str, object]) -> None:
    stamp = compute_stamp(_fields(), SECRET)
    assert not verify_stamp(_fields(**change), stamp, SECRET)


def _digest(*rows: tuple[object, ...]) -> str:
    digest = RowDigest()
    for row in rows:
        digest.update(row)  # type: ignore[arg-type]
    return digest.hexdigest()


def test_row_digests_tell_apart_values_that_concatenate_or_print_alike() -> None:
    digests = {
        _digest(("ab", "c")), _digest(("a", "bc")), _digest(("1",)), _digest((1,)), _digest((None,)),
        _digest(("",)), _digest(("a",), ("b",)), _digest(("a", "b")),
    }
    assert len(digests) == 8


def test_row_digests_depend_on_row_order() -> None:
    assert _digest(("a",), ("b",)) != _digest(("b",), ("a",))


def test_a_value_that_is_no_column_type_is_refused() -> None:
    with pytest.raises(TypeError):
        RowDigest().update((True,))
    with pytest.raises(TypeError):
        RowDigest().update((1.5,))  # type: ignore[arg-type]


def test_every_build_gets_its_own_id() -> None:
    assert new_build_id() != new_build_id()


def test_bytes_digest_apart_from_the_text_and_the_number_they_spell() -> None:
    assert len({_digest((b"1",)), _digest(("1",)), _digest((1,)), _digest((b"",)), _digest((None,))}) == 5


def test_the_stamp_insert_has_one_placeholder_per_stamp_column() -> None:
    placeholders = INSERT_STAMP_SQL.split("VALUES", 1)[1]
    assert placeholders.count("?") == len(STAMP_COLUMNS.split(", ")) == len(stamp_row(_fields(), SECRET))


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_the_stamp_table_each_dialect_declares_takes_the_insert_and_reads_back_through_check_stamp_rows(
        dialect: str) -> None:
    fields = _fields()
    connection = sqlite3.connect(":memory:") if dialect == "sqlite" else duckdb.connect(":memory:")
    connection.execute(stamp_table_sql(dialect))
    connection.execute(INSERT_STAMP_SQL, stamp_row(fields, SECRET))
    rows = connection.execute(select_stamp_sql()).fetchall()
    assert check_stamp_rows(rows, SECRET, store="findings", schema_version=1, format_version=1,
                            format_name="trailer format") == (fields, compute_stamp(fields, SECRET))


def test_every_store_declares_its_stamp_table_through_the_one_owner() -> None:
    assert stamp_table_sql("sqlite", per_line=4, closing=")") in knowledge_state.SCHEMA
    assert stamp_table_sql("sqlite") in findings_store.SCHEMA
    assert stamp_table_sql("duckdb") in review_layout.SCHEMA
    assert [s.count(f"CREATE TABLE {STAMP_TABLE} ") for s in
            (knowledge_state.SCHEMA, findings_store.SCHEMA, review_layout.SCHEMA)] == [1, 1, 1]


def test_a_stamp_table_in_a_dialect_no_store_uses_is_refused() -> None:
    with pytest.raises(ValueError, match="postgres"):
        stamp_table_sql("postgres")
