"""The word channels of a knowledge index: `lexical`, `title` (BM25 over FTS5 unicode61 terms) and `trigram`.

`trigram` matches a query word as a substring of the indexed terms, through an FTS5 `trigram` table over the
index's vocabulary (knowledge/postings.py): any three consecutive characters are a token, so `serializ` finds
`serialization`, and a part of a text in a script written without spaces (CJK) — which unicode61 holds as one
token per unbroken run — matches too. A trigram can only match three or more characters, so shorter query words
take no part in this channel, and neither do English function words (as substrings they are everywhere).

No FTS syntax in a query ever means anything: every word becomes a quoted FTS5 string. The channels are computed
in memory from the build's postings (knowledge/postings.py); a query word FTS5 would split into several tokens
(`snake_case`) is a phrase, which only FTS5 itself can match, so such a query is ranked by FTS5's own SQL.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from typing import Final

from knowledge.postings import Postings, bm25_ranked

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
_TOKENIZER_SQL: Final = (
    "CREATE VIRTUAL TABLE words USING fts5(word, tokenize = 'unicode61 remove_diacritics 2');"
    "CREATE VIRTUAL TABLE temp.word_terms USING fts5vocab(main, words, 'instance');"
)
_local = threading.local()


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


def trigram_parts(query: str) -> list[str]:
    """What the trigram channel looks for: each word of three or more characters that is not a TRIGRAM_STOPWORDS
    entry, diacritics removed as the index removed them; a CJK run longer than CJK_PHRASE_CHARS as its
    three-character windows (an unsegmented phrase rarely occurs verbatim)."""
    terms: list[str] = []
    for word in _TOKEN.findall(query):
        if len(word) < TRIGRAM or word.lower() in TRIGRAM_STOPWORDS:
            continue
        if len(word) > CJK_PHRASE_CHARS and any(_is_cjk(c) for c in word):
            terms.extend(word[i : i + TRIGRAM] for i in range(len(word) - TRIGRAM + 1))
        else:
            terms.append(_without_diacritics(word))
    return list(dict.fromkeys(terms))


def _without_diacritics(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _terms_of(words: list[str]) -> list[list[str]]:
    """Each word as FTS5's unicode61 tokenizer (the index's) splits and folds it, asked of FTS5 itself."""
    connection: sqlite3.Connection | None = getattr(_local, "tokenizer", None)
    if connection is None:
        connection = sqlite3.connect(":memory:")
        connection.executescript(_TOKENIZER_SQL)
        _local.tokenizer = connection
    connection.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)", enumerate(words, start=1))
    terms: list[list[str]] = [[] for _ in words]
    for doc, term in connection.execute("SELECT doc, term FROM temp.word_terms ORDER BY doc, offset"):
        terms[doc - 1].append(term)
    connection.execute("DELETE FROM words")
    return terms


def word_channels(
    index: sqlite3.Connection, postings: Postings, query: str, depth: int, offered: tuple[str, ...]
) -> dict[str, list[str]]:
    """Each offered word channel's item ids, best first, at most `depth` each; a channel the query gives nothing
    to search for (no word, no word of three characters) is an empty list."""
    words = list(dict.fromkeys(_TOKEN.findall(query)))
    channels: dict[str, list[str]] = {}
    if words and ("lexical" in offered or "title" in offered):
        terms = _terms_of(words)
        if all(len(t) == 1 for t in terms):
            phrases = [[postings.terms[t[0]]] if t[0] in postings.terms else [] for t in terms]
            channels["lexical"] = bm25_ranked(postings, phrases, TITLE_WEIGHT, 1.0, depth)
            channels["title"] = bm25_ranked(postings, phrases, 1.0, 0.0, depth)
        else:
            channels |= sql_word_channels(index, query, depth)
    else:
        channels |= {"lexical": [], "title": []}
    if "trigram" in offered:
        parts = [_containing(index, part) for part in trigram_parts(query)]
        channels["trigram"] = bm25_ranked(postings, parts, TITLE_WEIGHT, 1.0, depth) if parts else []
    return {name: ids for name, ids in channels.items() if name in offered}


def _containing(index: sqlite3.Connection, part: str) -> list[int]:
    """The numbers of every indexed term that holds `part` as a substring."""
    return [
        row[0] - 1 for row in index.execute("SELECT rowid FROM vocab_tri WHERE vocab_tri MATCH ?", (_quoted(part),))
    ]


def sql_word_channels(index: sqlite3.Connection, query: str, depth: int) -> dict[str, list[str]]:
    """`lexical` and `title` ranked by FTS5's own SQL: the reference the in-memory channels rank alike with."""
    expression = match_expression(query)
    if expression is None:
        return {"lexical": [], "title": []}
    lexical = index.execute(
        "SELECT item_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs, 0, 0, ?, 1.0), rowid LIMIT ?",
        (expression, TITLE_WEIGHT, depth),
    )
    title = index.execute(
        "SELECT item_id FROM docs WHERE docs MATCH ? ORDER BY bm25(docs), rowid LIMIT ?",
        (f"title : ({expression})", depth),
    )
    return {"lexical": [r[0] for r in lexical], "title": [r[0] for r in title]}
