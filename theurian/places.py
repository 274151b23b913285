"""The places under a project's `.theurian/`: which is source, which is derived, and the cure for each when a
path Theurian derives for it escapes the project (SEC-7). The kernel owns the table, so the CLI and the daemon
name the same cure in the same words and neither borrows it from the other.

    place                       kind      cure when it escapes the project
    .theurian                   —         THEURIAN_DIR_ESCAPE_CURE: replace the link with a real folder
    .theurian/review/           source    REVIEW_SOURCE_ESCAPE_CURE: replace the link with the lake itself, or
                                          remove it and ingest again; never deleted as if derived
    .theurian/migrations/       source    source_escape_cure: replace the link with the folder itself
    .theurian/knowledge/        source    source_escape_cure
    .theurian/proposals/        source    source_escape_cure
    .theurian/config.toml       source    source_escape_cure (a file)
    .theurian/state/            derived   STATE_ESCAPE_CURE: remove it (nothing authored is lost), rebuild
    a file Theurian derives     derived   derived_file_escape_cure: remove that file (with its family: the
      in .theurian/state/                 knowledge state's pointer and databases, the index's), then the one
                                          command that rebuilds it; every other derived file is kept
    a link inside a source      source    linked_inside_source_cure: replace that link with what it stands for
    any other path              —         UNPLACED_ESCAPE_CURE

`escape_cure` chooses the row from the project-relative place a `PathEscapeError` names; `path_escape_refusal`
is the contract's PATH_ESCAPE_REFUSAL with that cure. Only Theurian's own fixed words are shown, never a path a
file named. Each store under `.theurian/state/` has its own escape refusal beside its errors (for example
`projection.review_store.REVIEW_STORE_ESCAPE_REFUSAL`).
"""

from __future__ import annotations

from typing import Final

from theurian.project import (
    CONFIG_FILE,
    FINDINGS_STORE_NAME,
    INDEX_FILE_PREFIX,
    INDEX_POINTER_NAME,
    KNOWLEDGE_DIR,
    KNOWLEDGE_POINTER_NAME,
    KNOWLEDGE_STATE_PREFIX,
    MIGRATIONS_DIR,
    PROPOSALS_DIR,
    REVIEW_DIR,
    REVIEW_STORE_NAME,
    STATE_DIR,
    THEURIAN_DIR,
)

# Interpolates nothing: it must not say which path escaped (the cure, beside it, names the derived folder).
PATH_ESCAPE_REFUSAL: Final = (
    "PATH_ESCAPE_REFUSAL: a path Theurian derives for this project resolves outside the project root, "
    "so nothing was read through it."
)
STATE_ESCAPE_CURE: Final = (
    "Cure: remove .theurian/state (it is derived, so nothing authored is lost), run `theurian migrate apply`, "
    "and rebuild the derived artifacts."
)
# `.theurian/review` is source: removing derived state cannot mend a lake that escapes, and it must never be
# deleted as if it were derived.
REVIEW_SOURCE_ESCAPE_CURE: Final = (
    "Cure: .theurian/review is source; replace the link with the evidence folder itself (or remove it and ingest "
    "again), then run `theurian review build`."
)
# `.theurian` itself linked out of the project: everything under it escapes, and neither cure above mends the link.
THEURIAN_DIR_ESCAPE_CURE: Final = (
    "Cure: .theurian itself is a link out of the project; replace the link with a real .theurian folder (move what "
    "it points at into the project), then run the command again."
)
# The other places under `.theurian` a person authors (or accepts into): source, so the derived-state cure would
# delete nothing that mends them. Each is named by Theurian's own fixed words, never by what a file named.
_SOURCE_PLACES: Final = {
    MIGRATIONS_DIR: "folder",
    KNOWLEDGE_DIR: "folder",
    PROPOSALS_DIR: "folder",
    CONFIG_FILE: "file",
}


# A file Theurian derives under `.theurian/state/`, linked out: removing the whole folder would cost every other
# derived file its rebuild (the review store's takes minutes over a large lake) and is not one pasteable step. Each
# cure removes what escaped — with the files it is rebuilt with, so the rebuild starts clean — and names the one
# command that rebuilds them, in Theurian's own words: a ULID-named file is named by its family's glob, never by
# the name a pointer held. `rm` removes a link, never what it points at; `-f` keeps an unmatched glob quiet.
FINDINGS_STORE_ESCAPE_CURE: Final = (
    f"Cure: remove it (`rm {STATE_DIR}/{FINDINGS_STORE_NAME}`; it is derived, so only the findings store is lost), "
    "then run `theurian findings build`."
)
REVIEW_STORE_ESCAPE_CURE: Final = (
    f"Cure: remove it (`rm {STATE_DIR}/{REVIEW_STORE_NAME}`; it is derived, so only the projection is lost), then "
    "run `theurian review build`."
)
KNOWLEDGE_STATE_ESCAPE_CURE: Final = (
    f"Cure: remove it with the knowledge state it belongs to (`rm -f {STATE_DIR}/{KNOWLEDGE_POINTER_NAME} "
    f"{STATE_DIR}/{KNOWLEDGE_STATE_PREFIX}*.sqlite`; it is derived from the migrations, so nothing authored is "
    "lost), then run `theurian migrate apply`."
)
INDEX_ESCAPE_CURE: Final = (
    f"Cure: remove it with the retrieval index it belongs to (`rm -f {STATE_DIR}/{INDEX_POINTER_NAME} "
    f"{STATE_DIR}/{INDEX_FILE_PREFIX}*.sqlite`; it is derived, so nothing authored is lost), then run "
    "`theurian index build`."
)
_DERIVED_FILE_CURES: Final = {
    FINDINGS_STORE_NAME: FINDINGS_STORE_ESCAPE_CURE,
    REVIEW_STORE_NAME: REVIEW_STORE_ESCAPE_CURE,
    KNOWLEDGE_POINTER_NAME: KNOWLEDGE_STATE_ESCAPE_CURE,
    INDEX_POINTER_NAME: INDEX_ESCAPE_CURE,
}
# A ULID-named database belongs to the family its pointer heads.
_DERIVED_FAMILIES: Final = {KNOWLEDGE_STATE_PREFIX: KNOWLEDGE_STATE_ESCAPE_CURE, INDEX_FILE_PREFIX: INDEX_ESCAPE_CURE}


def derived_file_escape_cure(name: str) -> str | None:
    """The cure for the derived file `name` (an entry of `.theurian/state/`) linked out of the project; None for a
    name that is no file Theurian derives there."""
    for prefix, cure in _DERIVED_FAMILIES.items():
        if name.startswith(prefix) and name.endswith(".sqlite"):
            return cure
    return _DERIVED_FILE_CURES.get(name)


# A path Theurian knows no fixed place for (one relative to a folder other than the project's root).
UNPLACED_ESCAPE_CURE: Final = (
    "Cure: replace the symbolic link on that path with the file or folder it stands for, inside the project, then "
    "run the command again."
)


def source_escape_cure(place: str) -> str:
    """The cure for one of `_SOURCE_PLACES` linked out of the project."""
    return (
        f"Cure: {place} is source, not derived; replace the link with the {_SOURCE_PLACES[place]} itself (move what "
        "it points at into the project), then run the command again."
    )


def linked_inside_source_cure(place: str) -> str:
    """The cure for a link inside one of `_SOURCE_PLACES` (the place itself a real folder) that points out."""
    return (
        f"Cure: {place} is source, not derived, and a symbolic link inside it points out of the project; replace "
        f"that link with the file or folder it stands for (moved into {place}), then run the command again."
    )


def escape_cure(relative: str) -> str:
    """The cure for a path that escapes, chosen by the project-relative place it names (the shortest escaping part
    of it, `theurian.containment.first_failing_part`)."""
    if relative == THEURIAN_DIR:
        return THEURIAN_DIR_ESCAPE_CURE
    if _under(relative, REVIEW_DIR):
        return REVIEW_SOURCE_ESCAPE_CURE
    if relative.startswith(f"{STATE_DIR}/") and "/" not in relative.removeprefix(f"{STATE_DIR}/"):
        cure = derived_file_escape_cure(relative.removeprefix(f"{STATE_DIR}/"))
        if cure is not None:
            return cure
    if _under(relative, STATE_DIR):
        return STATE_ESCAPE_CURE
    for place in _SOURCE_PLACES:
        if relative == place:
            return source_escape_cure(place)
        if _under(relative, place):  # `relative` is the shortest part that escapes: the place itself does not
            return linked_inside_source_cure(place)
    return UNPLACED_ESCAPE_CURE


def _under(relative: str, place: str) -> bool:
    return relative == place or relative.startswith(f"{place}/")


def path_escape_refusal(relative: str) -> str:
    """PATH_ESCAPE_REFUSAL with the cure for what escaped, chosen from the escaping path's project-relative place.

    Only Theurian's own fixed words are shown: never `relative` itself, which may hold a record path a file named.
    """
    return f"{PATH_ESCAPE_REFUSAL} {escape_cure(relative)}"
