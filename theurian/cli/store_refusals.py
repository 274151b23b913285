"""The review store's escape refusal as the commands raise it: cured, with the daemon's words.

The build, the export and the read commands all open the review store; when it resolves outside
`.theurian/state/` each says what the daemon says (`REVIEW_STORE_ESCAPE_REFUSAL`: the rebuild cannot cure it,
removing the redirect can), marked cured so `theurian.cli.main` prints it without a second cure line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def review_store_escape_cured() -> Iterator[None]:
    """Re-raise a ReviewStoreEscapeError from the block with the daemon's cured refusal; anything else passes.

    Raises:
        ReviewStoreEscapeError: the store escaped, with REVIEW_STORE_ESCAPE_REFUSAL as its message.
    """
    # Imported when entered: `theurian --version` must not pay for DuckDB, which projection imports.
    from projection.errors import ReviewStoreEscapeError
    from projection.review_store import REVIEW_STORE_ESCAPE_REFUSAL

    try:
        yield
    except ReviewStoreEscapeError as exc:
        raise ReviewStoreEscapeError(REVIEW_STORE_ESCAPE_REFUSAL, relative=exc.relative, cured=True) from exc
