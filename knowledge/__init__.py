"""The canonical knowledge store: migrations, items and revisions, the retrieval index, proposals."""

from typing import Final

# The canonical state database's schema version; published by knowledge.status and system.capabilities.
CANONICAL_SCHEMA_VERSION: Final = 1
