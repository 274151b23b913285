"""The word-index channels of a knowledge index: `lexical`, `title` (FTS5 unicode61, BM25) and `trigram`.

`trigram` is a second FTS5 table over the same rows with SQLite's `trigram` tokenizer: any three consecutive
characters are a token, so a query word matches wherever it occurs as a substring (`serializ` finds
`serialization`) and text in scripts written without spaces (CJK) matches by its parts, which unicode61 — one
token per unbroken run — cannot do. A trigram can only match three or more characters, so shorter query words
take no part in this channel.

No FTS syntax in a query ever means anything: every word becomes a quoted FTS5 string, joined by OR.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from typing import Final

TITLE_WEIGHT: Final = 4.0  # a term in the title says more about the item than the same term in the body
TRIGRAM: Final = 3
# A run of CJK longer than this is a phrase, not a word: it is matched by its overlapping three-character windows.
CJK_PHRASE_CHARS: Final = 4
_TOKEN: Final = re.compile(r"\w+", re.UNICODE)
# English function words: as substrings they occur in nearly every text ("the" in "other", "then", "theme"), so in
# the trigram channel they would only add noise. The word channels keep them (BM25's idf already discounts them).
TRIGRAM_STOPWORDS: Final = frozenset(
    "a an the and or but if then else of to in on at by for with from into onto over under is are was were be "
    "been being am it its this that these those i we you he she they my our your their me us them do does did "
    "doing done how what which who whom whose when where why can could should would will shall may might must "
    "not no nor so such too very just than also about again all any both each few more most other some own same "
    "only once here there up down out off above below between through during before after while until because "
    "as per via has have had having get gets got let lets".split()
)
WORD_CHANNELS: Final = ("lexical", "title", "trigram")

TRIGRAM_TABLE_SQL: Final = "CREATE VIRTUAL TABLE tri USING fts5(title, body, content = '', tokenize = 'trigram');"


def _quoted(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def match_expression(query: str) -> str | None:
    """The query's words as quoted FTS5 strings joined by OR: no FTS syntax in a query ever means anything."""
    words = _TOKEN.findall(query)
    if not words:
        return None
    return " OR ".join(_quoted(word) for word in dict.fromkeys(words))


def _is_cjk(character: str) -> bool:
    name = unicodedata.name(character, "")
    return name.startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL"))


def trigram_expression(query: str) -> str | None:
    """The trigram channel's expression: each word of three or more characters that is not a TRIGRAM_STOPWORDS
    entry, as a substring; a CJK run longer than CJK_PHRASE_CHARS as its three-character windows (an unsegmented
    phrase rarely occurs verbatim)."""
    terms: list[str] = []
    for word in _TOKEN.findall(query):
        if len(word) < TRIGRAM or word.lower() in TRIGRAM_STOPWORDS:
            continue
        if len(word) > CJK_PHRASE_CHARS and any(_is_cjk(c) for c in word):
            terms.extend(word[i : i + TRIGRAM] for i in range(len(word) - TRIGRAM + 1))
        else:
            terms.append(word)
    if not terms:
        return None
    return " OR ".join(_quoted(term) for term in dict.fromkeys(terms))


def fill_trigram_table(index: sqlite3.Connection) -> None:
    """Index every row of `docs` in `tri` under the same rowid (contentless: `docs` holds the text once)."""
    index.execute("INSERT INTO tri (rowid, title, body) SELECT rowid, title, body FROM docs")


def word_channels(index: sqlite3.Connection, query: str, depth: int, offered: tuple[str, ...]) -> dict[str, list[str]]:
    """Each offered word channel's item ids, best first, at most `depth` each; a channel the query gives nothing
    to search for (no word, no word of three characters) is an empty list."""
    channels: dict[str, list[str]] = {}
    expression = match_expression(query)
    if "lexical" in offered:
        channels["lexical"] = (
            _ids(
                index,
                "SELECT item_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, ?, 1.0) LIMIT ?",
                (expression, TITLE_WEIGHT, depth),
            )
            if expression
            else []
        )
    if "title" in offered:
        channels["title"] = (
            _ids(
                index,
                "SELECT item_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
                (f"title : ({expression})", depth),
            )
            if expression
            else []
        )
    if "trigram" in offered:
        trigrams = trigram_expression(query)
        channels["trigram"] = (
            _ids(
                index,
                "SELECT d.item_id FROM (SELECT rowid, bm25(tri, ?, 1.0) AS score FROM tri WHERE tri MATCH ? "
                "ORDER BY score LIMIT ?) t JOIN docs d ON d.rowid = t.rowid ORDER BY t.score, d.item_id",
                (TITLE_WEIGHT, trigrams, depth),
            )
            if trigrams
            else []
        )
    return channels


def _ids(index: sqlite3.Connection, sql: str, parameters: tuple[object, ...]) -> list[str]:
    return [row[0] for row in index.execute(sql, parameters)]
