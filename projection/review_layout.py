"""The review store's layout: its tables and columns, the text channels, the kind, schema and evidence versions
it is stamped with, and what the stamp's row digest covers — what the builder writes and every reader expects, in
one place (`projection.review_store` says where the store lives and how a reader opens and trusts it).
"""

from __future__ import annotations

from typing import Final

from evidence.records import FORMAT_VERSION
from theurian.stamp import stamp_table_sql
from theurian.text import ASCII_LOWER, ASCII_UPPER

# 3: no stored `folded`, bodies zstd; 4: each record file's content hash; 5: embedding vectors and their model,
# and the word-pair index; 6: recurring concerns (`concerns`, `concern_members`: projection.review_concerns);
# 7: the concern clustering's input digest and its clusters (`concern_input`, `concern_clusters`), which the next
# build reuses when that input is unchanged, and the facts the concern stage read (`concern_facts`;
# projection.concern_reuse)
REVIEW_SCHEMA_VERSION: Final = 7
EVIDENCE_FORMAT_VERSION: Final = FORMAT_VERSION
# The kind its build stamp names (`theurian.stamp`): a stamp of another store kind is refused.
STORE_KIND: Final = "review"

CHANNEL_TITLE: Final = "title"
CHANNEL_BODY: Final = "body"
CHANNEL_REVIEW_BODY: Final = "review-body"
CHANNEL_COMMENT: Final = "comment"
CHANNELS: Final = (CHANNEL_TITLE, CHANNEL_BODY, CHANNEL_REVIEW_BODY, CHANNEL_COMMENT)

# `ordinal` is each record's place in the total order (repository, pull request, kind, record path), computed
# at build so that no key of the served order is computed from a query. `lead_position` names the first text
# channel holding any text: the excerpt when no `q` chose one. `content_sha256` is `sha256:<hex>` of the record
# file's bytes as the build read them: a later reader of that file can tell it is still the file the store was
# built from (`knowledge.stored_thread`). `word_blocks` is the candidate index `q` narrows with: for each block
# of BLOCK_RECORDS consecutive ordinals, every distinct whitespace-separated word of its folded texts,
# NUL-joined (docs/review-search.md, "The word-block index"); `word_pairs` narrows further, by the pairs of
# adjacent words of each block (`projection.review_pairs`). `vectors` holds one embedding per record
# `review.findSimilar` serves (`review_rows.embedding_text`), base64 of little-endian float16, and
# `embedding_model` the one identity of the model that made them (`theurian.embedding`; docs/review-similar.md).
# `concerns` holds one row per recurring concern and `concern_members` its members' ordinals
# (`projection.review_concerns`; docs/review-concerns.md). `concern_input` is one row, the digest of everything the
# clustering read (the units' stored vectors in order, its threshold, its code), and `concern_clusters` every
# cluster it formed, as units' positions in that order; `concern_facts` the `RecordFacts` of every record the
# concern stage asked about (members and their pull requests), by content hash (`projection.concern_reuse`).
SCHEMA: Final = """
CREATE TABLE records (
    ordinal BIGINT NOT NULL,
    record_path VARCHAR NOT NULL,
    record_key VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    repository VARCHAR NOT NULL,
    pull_request BIGINT NOT NULL,
    thread_state VARCHAR,
    file_path VARCHAR,
    source_uri VARCHAR NOT NULL,
    author_id VARCHAR,
    author_login VARCHAR,
    last_seen_run_id VARCHAR,
    last_seen_at VARCHAR,
    lead_position INTEGER,
    content_sha256 VARCHAR NOT NULL
);
CREATE TABLE texts (
    ordinal BIGINT NOT NULL,
    position INTEGER NOT NULL,
    channel VARCHAR NOT NULL,
    body VARCHAR USING COMPRESSION zstd NOT NULL
);
CREATE TABLE word_blocks (
    block BIGINT NOT NULL,
    words VARCHAR NOT NULL
);
CREATE TABLE vectors (
    ordinal BIGINT NOT NULL,
    vector VARCHAR NOT NULL
);
CREATE TABLE embedding_model (
    name VARCHAR NOT NULL,
    dimension INTEGER NOT NULL,
    weights_sha256 VARCHAR NOT NULL
);
CREATE TABLE word_pairs (
    block BIGINT NOT NULL,
    pairs VARCHAR NOT NULL
);
CREATE TABLE concerns (
    concern_id VARCHAR NOT NULL,
    anchor_ordinal BIGINT NOT NULL,
    representative_ordinal BIGINT NOT NULL,
    representative_position INTEGER NOT NULL,
    members INTEGER NOT NULL,
    pull_requests INTEGER NOT NULL,
    reviewers INTEGER NOT NULL,
    repositories INTEGER NOT NULL,
    first_seen VARCHAR,
    last_seen VARCHAR,
    resolved INTEGER NOT NULL,
    gate_passing INTEGER NOT NULL
);
CREATE TABLE concern_members (
    concern_id VARCHAR NOT NULL,
    ordinal BIGINT NOT NULL
);
CREATE TABLE concern_input (
    input_digest VARCHAR NOT NULL,
    units BIGINT NOT NULL
);
CREATE TABLE concern_clusters (
    cluster BIGINT NOT NULL,
    unit BIGINT NOT NULL
);
CREATE TABLE concern_facts (
    content_sha256 VARCHAR NOT NULL,
    created_at VARCHAR,
    merged BOOLEAN,
    ci_state VARCHAR
);
""" + stamp_table_sql("duckdb") + ";\n"
RECORD_COLUMNS: Final = (
    "ordinal", "record_path", "record_key", "kind", "provider", "repository", "pull_request",
    "thread_state", "file_path", "source_uri", "author_id", "author_login", "last_seen_run_id",
    "last_seen_at", "lead_position", "content_sha256",
)
TEXT_COLUMNS: Final = ("ordinal", "position", "channel", "body")
# The 26 ASCII letters folded, nothing else (`theurian.text.ascii_fold`, exactly): what `q` is matched against, computed
# from the body as a query reads it rather than stored beside it (docs/review-search.md, "Loading"). `lower`
# is that when the text is ASCII (as many bytes as characters) and much faster than `translate`, which maps
# those 26 letters and no other.
FOLD_SQL: Final = (
    "CASE WHEN strlen(body) = length(body) THEN lower(body) "
    f"ELSE translate(body, '{ASCII_UPPER}', '{ASCII_LOWER}') END"
)
BLOCK_COLUMNS: Final = ("block", "words")
VECTOR_COLUMNS: Final = ("ordinal", "vector")
MODEL_COLUMNS: Final = ("name", "dimension", "weights_sha256")
PAIR_COLUMNS: Final = ("block", "pairs")
CONCERN_COLUMNS: Final = (
    "concern_id", "anchor_ordinal", "representative_ordinal", "representative_position", "members",
    "pull_requests", "reviewers", "repositories", "first_seen", "last_seen", "resolved", "gate_passing",
)
CONCERN_MEMBER_COLUMNS: Final = ("concern_id", "ordinal")
CONCERN_INPUT_COLUMNS: Final = ("input_digest", "units")
CONCERN_CLUSTER_COLUMNS: Final = ("cluster", "unit")
CONCERN_FACT_COLUMNS: Final = ("content_sha256", "created_at", "merged", "ci_state")
BLOCK_RECORDS: Final = 64
# What the stamp's row digest covers, and in which order (`projection.review_digest`).
DIGEST_TABLES: Final = (
    ("records", RECORD_COLUMNS, "ordinal"),
    ("texts", TEXT_COLUMNS, "ordinal, position"),
    ("word_blocks", BLOCK_COLUMNS, "block"),
    ("vectors", VECTOR_COLUMNS, "ordinal"),
    ("embedding_model", MODEL_COLUMNS, "name"),
    ("word_pairs", PAIR_COLUMNS, "block"),
    ("concerns", CONCERN_COLUMNS, "concern_id"),
    ("concern_members", CONCERN_MEMBER_COLUMNS, "concern_id, ordinal"),
    ("concern_input", CONCERN_INPUT_COLUMNS, "input_digest"),
    ("concern_clusters", CONCERN_CLUSTER_COLUMNS, "cluster, unit"),
    ("concern_facts", CONCERN_FACT_COLUMNS, "content_sha256"),
)
