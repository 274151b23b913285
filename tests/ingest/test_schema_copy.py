"""The bundled GitHub schema is the recorded one, and the shared copy's twin wherever that sits beside the checkout."""

import hashlib

from tests.ingest.conftest import SCHEMA_PATH, SHARED_SCHEMA_PATH

RECORDED_SHA256 = "1d7518d4d830547a2791625adae98c5b8484c74d99e272f7cbc09ec5f4997155"


def test_the_bundled_schema_is_the_recorded_copy_and_the_shared_one_where_it_is_beside_us() -> None:
    bundled = SCHEMA_PATH.read_bytes()
    assert hashlib.sha256(bundled).hexdigest() == RECORDED_SHA256
    if SHARED_SCHEMA_PATH.exists():  # a clone on its own has no shared copy: the hash above is then the whole check
        assert SHARED_SCHEMA_PATH.read_bytes() == bundled
