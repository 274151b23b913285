"""The filter checks the review tools share (review.search, review.findSimilar, review.findings), run by each tool
after the input schema has checked the types.

A value outside a bound or a vocabulary is refused naming the bound, never clamped and never treated as "no
filter". A string inside the tool's bound may be quoted back (a typo is what the refusal exists to show); past it,
only its length is given. How a tool words its refusals is its `FilterRules`, built once from the tool's own bound
constants: each bound is given as its number, never as the constant's name (a caller reads the refusal, not our
source). review.search and review.findSimilar never render a caller's number (so no refusal can fail while
rendering one); review.findings quotes a number a caller could plausibly have meant and describes any other by its
digit count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from serve.errors import ToolRefusal
from serve.refusal import describe_value, nul_refusal
from serve.validation import TOOLS_ANSWERING_SURROGATES
from theurian.text import is_utf8

MAX_PULL_REQUEST: Final = 9223372036854775807  # the widest value a signed 64-bit column holds
MAX_PULL_REQUEST_DIGITS: Final = len(str(MAX_PULL_REQUEST))
_USE_ONE_OF_THOSE: Final = ". Use one of those exactly, or omit the filter."


@dataclass(frozen=True)
class FilterRules:
    """One review tool's filter checks and their wording.

    `max_chars` bounds every string filter; `nul_reason` is what follows "contains a NUL (U+0000)" in the tool's
    words; `renders_numbers` says whether a refusal of `limit` or `pullRequest` shows the number sent (described by
    `describe_number`) or only the range.
    """

    tool: str
    max_chars: int
    default_limit: int
    max_limit: int
    nul_reason: str
    renders_numbers: bool

    def text(self, key: str, value: str) -> None:
        """Refuse a string filter past `max_chars`, holding a NUL, or (for a tool that answers them itself rather
        than the input tier, `TOOLS_ANSWERING_SURROGATES`) holding a lone surrogate."""
        if len(value) > self.max_chars:
            raise ToolRefusal(
                f"{self.tool}: `{key}` is bounded at {self.max_chars} characters; "
                f"{describe_value(value, self.max_chars)} was sent. Shorten it or omit the filter."
            )
        if "\x00" in value:
            raise ToolRefusal(nul_refusal(self.tool, key, self.nul_reason))
        if self.tool in TOOLS_ANSWERING_SURROGATES and not is_utf8(value):
            raise ToolRefusal(
                f"{self.tool}: `{key}` contains a lone surrogate (U+D800-U+DFFF), which UTF-8 cannot encode "
                "and no stored value holds; send well-formed text."
            )

    def texts(self, values: dict[str, str | None]) -> None:
        """`text` on each given (non-None) filter, in order."""
        for key, value in values.items():
            if value is not None:
                self.text(key, value)

    def in_vocabulary(self, key: str, value: str | None, vocabulary: Sequence[str], *,
                      advice: str = _USE_ONE_OF_THOSE) -> str | None:
        """`value` when it is None or one of `vocabulary`; refused otherwise, the vocabulary named and `advice`
        (what follows the list) after it."""
        if value is None or value in vocabulary:
            return value
        raise ToolRefusal(
            f"{self.tool}: `{key}` {describe_value(value, self.max_chars)} is not one of "
            f"{', '.join(vocabulary)}{advice}"
        )

    def limit(self, limit: int | None) -> int:
        """The page size: `default_limit` when none is sent, `limit` when it is within 1..`max_limit`."""
        if limit is None:
            return self.default_limit
        if 1 <= limit <= self.max_limit:
            return limit
        bound = self.max_limit
        if self.renders_numbers:
            raise ToolRefusal(
                f"{self.tool}: `limit` must be between 1 and {bound} (default {self.default_limit}); "
                f"{describe_number(limit)} was sent. Nothing was clamped."
            )
        raise ToolRefusal(
            f"{self.tool}: `limit` must be between 1 and {bound}; the default is {self.default_limit}. Nothing was "
            "clamped; send a limit in that range."
        )

    def pull_request(self, number: int | None) -> None:
        """Refuse a pull-request number outside 1..MAX_PULL_REQUEST."""
        if number is None or 1 <= number <= MAX_PULL_REQUEST:
            return
        head = (f"{self.tool}: `pullRequest` must be between 1 and {MAX_PULL_REQUEST}, the range its signed "
                "64-bit column can hold")
        if self.renders_numbers:
            raise ToolRefusal(f"{head}; {describe_number(number)} was sent.")
        raise ToolRefusal(f"{head}. Send a pull-request number in that range, or omit the filter.")


def describe_number(number: int) -> str:
    """Quote a number a caller could plausibly have meant; one with more digits than any storable pullRequest
    is described by its digit count and never reflected."""
    magnitude = abs(number)
    if magnitude < 10**MAX_PULL_REQUEST_DIGITS:
        return str(number)
    try:
        digits = str(len(str(magnitude)))
    except ValueError:  # past the interpreter's int-to-str limit: still not echoed
        digits = "thousands of"
    return f"a number of {digits} digits"
