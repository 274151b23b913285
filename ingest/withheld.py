"""Pull requests withheld by `[review] secrets = "block"`: the list every run carries until each is stored.

A blocked record is never written, and an incremental run's window starts after the run that blocked it, so
nothing would ask GitHub for it again. Each run manifest therefore carries `withheld`: the pull requests (by
number, with the types and fingerprints that blocked them — never a value) some record of which the policy kept
out. A run starts from the list of the newest manifest of its repository that has one (a killed or failed run's
included: it is rewritten after every page), asks GitHub for each listed pull request its window did not read
(`Fetcher.pull_requests_by_number`), and writes the list anew: one stored whole is dropped, one still blocked
stays, with what blocked it now. A change is taken into the list only once its page is durable (`commit`): a
page that fails before then leaves the list as it was, so the manifest never drops a pull request its lake
does not hold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from evidence.content_policy import SECRETS_BLOCK

MANIFEST_FIELD: Final = "withheld"
# How many numbers a status or summary line names; the manifest and `--json` name every one.
NUMBERS_SHOWN: Final = 20

Entry = dict[str, Any]


def carried(runs: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """The withheld list the next run starts from: that of the newest of `runs` (one repository's manifests,
    oldest first) that carries one; none when no run does (a lake from before the list)."""
    for manifest in reversed(runs):
        if MANIFEST_FIELD in manifest:
            return [dict(entry) for entry in manifest[MANIFEST_FIELD]]
    return []


class WithheldList:
    """One run's list: what it started from, and the changes of pages made durable since."""

    def __init__(self, start: Iterable[Mapping[str, Any]], run_id: str) -> None:
        self._entries: dict[int, Entry] = {int(e["number"]): dict(e) for e in start}
        self._pending: dict[int, Entry | None] = {}
        self._run_id = run_id

    def numbers(self) -> list[int]:
        """The listed numbers, ascending."""
        return sorted(self._entries)

    def stored(self, number: int, blocked: Sequence[Mapping[str, Any]]) -> None:
        """Note, for the page in flight, what the gate did with pull request `number`'s records: `blocked` are the
        gate's entries (docs/secrets.md, the manifest's `secrets.records`) for those it kept out; none means every
        record of it is staged."""
        if not blocked:
            self._pending[number] = None
            return
        findings = sorted({(f["type"], f["fingerprint"]) for record in blocked for f in record["fields"]})
        earlier = self._entries.get(number)
        self._pending[number] = {
            "number": number, "firstRun": earlier["firstRun"] if earlier else self._run_id,
            "records": len(blocked), "findings": [{"type": t, "fingerprint": f} for t, f in findings],
        }

    def gone(self, number: int) -> None:
        """GitHub has no pull request `number` in the repository now: nothing is left to fetch."""
        self._pending[number] = None

    def commit(self) -> None:
        """The page in flight is durable: take its changes into the list."""
        for number, entry in self._pending.items():
            if entry is None:
                self._entries.pop(number, None)
            else:
                self._entries[number] = entry
        self._pending.clear()

    def entries(self) -> list[Entry]:
        """The manifest's `withheld` value, by number."""
        return [self._entries[number] for number in self.numbers()]


def withheld_words(entries: Sequence[Mapping[str, Any]]) -> str:
    """What a status or summary line says of a withheld list (empty for none): how many, which, and why."""
    if not entries:
        return ""
    shown = ", ".join(f"#{e['number']}" for e in entries[:NUMBERS_SHOWN])
    more = f" and {len(entries) - NUMBERS_SHOWN} more" if len(entries) > NUMBERS_SHOWN else ""
    types = Counter(f["type"] for e in entries for f in e["findings"])
    why = ", ".join(f"{kind} {count}" for kind, count in sorted(types.items()))
    records = sum(int(e["records"]) for e in entries)
    return (f"{len(entries)} pull requests withheld by secrets = \"{SECRETS_BLOCK}\" ({shown}{more}; "
            f"{records} records kept out; secrets by type: {why}); the next ingest fetches them again")
