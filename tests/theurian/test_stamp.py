import dataclasses

import pytest

from theurian.stamp import RowDigest, StampFields, compute_stamp, new_build_id, verify_stamp

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
