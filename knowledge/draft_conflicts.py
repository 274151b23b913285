"""Operations of one migration that conflict among themselves, found from the operations alone.

`migrate apply` replays a migration's operations in order, and some pairs can never both apply, whatever state
they meet: a thing added twice (the second finds it there: "alias dup is already taken") or removed twice (the
second finds it gone), with nothing in between undoing the first. A draft holding such a pair is refused when it
is drafted rather than when it is accepted. No state is read, so the refusal says nothing about which items,
aliases or relations exist (a draft never does, SEC-13): it names the caller's own two operations.

Only what replay refuses is refused: a later deprecateItem, changeOwner or supersedeSpecification of one thing
replays (the later wins), so it is drafted (docs/decisions.md, "misc (session 17)").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from theurian.text import quoted

_ADD: Final = "add"
_REMOVE: Final = "remove"


Thing = tuple[tuple[str, ...], str]  # what replay keys it by, and how a refusal names it


def _alias(op: Mapping[str, Any]) -> Thing:
    return ("alias", op["alias"]), f"alias {quoted(op['alias'])}"


def _relation(op: Mapping[str, Any]) -> Thing:
    triple = (op["sourceItemId"], op["relationType"], op["targetItemId"])
    return ("relation", *triple), "relation " + " ".join(quoted(part) for part in triple)


def _specification(op: Mapping[str, Any]) -> Thing:
    return ("specification", op["specId"]), f"specification {quoted(op['specId'])}"


def _evidence(op: Mapping[str, Any]) -> Thing:
    uri = op["anchor"]["sourceUri"] if op["op"] == "addEvidence" else op["sourceUri"]
    return ("evidence", op["itemId"], uri), f"item {quoted(op['itemId'])}'s evidence from {quoted(uri)}"


# Each kind that adds or removes one keyed thing: whether it adds or removes, its verb, and the thing. No
# removeSpecification exists, so a specification id registered twice always conflicts.
_KEYED: Final[dict[str, tuple[str, str, Callable[[Mapping[str, Any]], Thing]]]] = {
    "addAlias": (_ADD, "adds", _alias),
    "removeAlias": (_REMOVE, "removes", _alias),
    "addRelation": (_ADD, "adds", _relation),
    "removeRelation": (_REMOVE, "removes", _relation),
    "registerSpecification": (_ADD, "registers", _specification),
    "addEvidence": (_ADD, "adds", _evidence),
    "removeEvidence": (_REMOVE, "removes", _evidence),
}


def first_conflict(operations: Sequence[Mapping[str, Any]]) -> str | None:
    """How the first operation that conflicts with an earlier one of `operations` is refused, or None.

    The operations must already be valid against the migration schema (every key field a string).
    """
    last: dict[tuple[str, ...], tuple[str, int, str]] = {}  # thing -> (add or remove, operation index, verb)
    for index, operation in enumerate(operations):
        keyed = _KEYED.get(operation["op"])
        if keyed is None:
            continue
        change, verb, thing = keyed
        key, named = thing(operation)
        before = last.get(key)
        if before is not None and before[0] == change:
            found = "already there" if change == _ADD else "gone"
            return (f"operation {index} {verb} {named}, which operation {before[1]} already {before[2]}: the two "
                    f"can never both apply (the second would find it {found}), so accepting the draft would be "
                    "refused. Drop one of them.")
        last[key] = (change, index, verb)
    return None
