"""SEC-10: the repositories a project may ingest, kept in `.theurian/config.toml` as `[review] allowlist`.

The file is hand-editable: `allow`/`disallow` rewrite only the `allowlist = [...]` value inside `[review]`,
keep every other byte (comments, other keys), and read the result back (`parse_config`) before replacing it.
Each holds an exclusive lock on the `.theurian` folder from its read to its replace, so two at once both land:
without it, a `disallow` racing an `allow` could report the repository removed while the other's rewrite put it
back.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Final

from evidence.content_policy import config_text, parse_config
from evidence.records import REPOSITORY_PATTERN, fold_repository
from ingest.errors import NotAllowlistedError
from theurian import tomlwrite
from theurian.containment import resolve_inside
from theurian.durable import write_text_durably
from theurian.errors import AlreadyInPlaceError, ConfigError, UsageError
from theurian.folder_lock import folder_held
from theurian.project import CONFIG_FILE, THEURIAN_DIR
from theurian.text import quoted

REPOSITORY_RULE: Final = (
    "OWNER/NAME with an owner of 1-39 ASCII letters, digits and '-' (not first) and a name of 1-100 ASCII "
    "letters, digits, '.', '_' and '-' (not '.' or '..'), nothing around them"
)


def is_repository(text: str) -> bool:
    """True when `text` is a well-formed OWNER/NAME by GitHub's ASCII rules."""
    return REPOSITORY_PATTERN.fullmatch(text) is not None


def parse_repository(text: str) -> str:
    """Return `text` if it is a well-formed OWNER/NAME.

    Raises:
        UsageError: it is not.
    """
    if not is_repository(text):
        raise UsageError(f"{text[:120]!r} is not a repository name of the form OWNER/NAME")
    return text


def without_clone_suffix(repository: str) -> str | None:
    """`repository` less a trailing `.git` (any case) when that leaves a well-formed OWNER/NAME, else None.

    GitHub names no repository with the suffix a clone URL carries (it answers nothing for `Acme/Widgets.git`), so
    an entry spelled so would fail every ingest; REPOSITORY_PATTERN admits it, as it is GitHub's character rule.
    """
    if repository[-4:].lower() != ".git" or not is_repository(repository[:-4]):
        return None
    return repository[:-4]


def _config_path(project_root: Path) -> Path:
    return resolve_inside(project_root, CONFIG_FILE)


def _parse(text: str) -> list[str]:
    review = parse_config(text).get("review", {})
    value = review.get("allowlist", [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{CONFIG_FILE}: [review] allowlist must be a list of \"owner/name\" strings")
    return value


def read_allowlist(project_root: Path) -> list[str]:
    """The allowlist as written (spelling kept). A missing file or key is an empty allowlist.

    Every entry is checked, hand-edited ones included, before anything uses the list (so before any request).

    Raises:
        ConfigError: the file is not TOML, the value is not a list of strings, or an entry is not a valid
            OWNER/NAME (the one-line message names the entry's index and the rule).
    """
    path = _config_path(project_root)
    if not path.exists():
        return []
    entries = _parse(config_text(path))
    for index, entry in enumerate(entries):
        if not is_repository(entry):
            raise ConfigError(
                f"{CONFIG_FILE}: [review] allowlist entry {index} ({quoted(entry, 120)}) is not a repository name: "
                f"expected {REPOSITORY_RULE}; edit it by hand"
            )
    return entries


def find(allowlist: list[str], repository: str) -> str | None:
    """The allowlist entry matching `repository` case-insensitively, ASCII letters only (as GitHub matches
    its ASCII names), or None."""
    folded = fold_repository(repository)
    return next((entry for entry in allowlist if fold_repository(entry) == folded), None)


def require_allowed(allowlist: list[str], repositories: list[str]) -> list[str]:
    """Return `repositories` if every one is allowlisted; otherwise refuse them all before any request.

    Raises:
        NotAllowlistedError: the first repository not on the allowlist.
    """
    for repository in repositories:
        if find(allowlist, repository) is None:
            raise NotAllowlistedError(
                f"{repository} is not on this project's review allowlist; "
                f"add it with `theurian review allow {repository}`",
                repository=repository,
            )
    return repositories


def unique(repositories: list[str]) -> list[str]:
    """`repositories` with case variants (ASCII) of an earlier one dropped: each repository once, in the spelling
    it first appears in, in order."""
    seen: set[str] = set()
    kept = []
    for repository in repositories:
        if (folded := fold_repository(repository)) not in seen:
            seen.add(folded)
            kept.append(repository)
    return kept


def allow(project_root: Path, repository: str) -> None:
    """Add `repository` to the allowlist.

    Raises:
        UsageError: it ends in `.git`, which names a clone, never a repository: refused, not stripped, so what is
            stored is what the operator typed.
        AlreadyInPlaceError: it is already there (in any spelling).
    """
    if (bare := without_clone_suffix(repository)) is not None:
        raise UsageError(
            f"{repository} ends in .git, the suffix of a clone URL: GitHub names that repository {bare} and answers "
            f"nothing for {repository}, so nothing was stored; run `theurian review allow {bare}`"
        )
    with _config_lock(project_root):
        entries = read_allowlist(project_root)
        if (existing := find(entries, repository)) is not None:
            raise AlreadyInPlaceError(f"{existing} is already on the review allowlist")
        _write(project_root, [*entries, repository])


def disallow(project_root: Path, repository: str) -> None:
    """Remove `repository` (any spelling) from the allowlist. Its evidence already on disk is kept.

    Raises:
        AlreadyInPlaceError: it is not on the allowlist.
    """
    with _config_lock(project_root):
        entries = read_allowlist(project_root)
        if find(entries, repository) is None:
            raise AlreadyInPlaceError(f"{repository} is not on the review allowlist")
        _write(project_root, [e for e in entries if fold_repository(e) != fold_repository(repository)])


def _config_lock(project_root: Path) -> AbstractContextManager[None]:
    """The `.theurian` folder's lock: the config file itself is replaced by each write (`theurian.folder_lock`)."""
    return folder_held(resolve_inside(project_root, THEURIAN_DIR))


def _write(project_root: Path, entries: list[str]) -> None:
    path = _config_path(project_root)
    text = config_text(path) if path.exists() else ""
    updated = _replace_allowlist(text, "allowlist = " + tomlwrite.string_list(entries))
    try:
        rewritten = _parse(updated)
    except ConfigError:
        rewritten = None  # the file itself is valid (it was just read): this rewrite is what failed
    if rewritten != entries:
        raise ConfigError(
            f"{CONFIG_FILE} spells the allowlist in a way this command does not rewrite (say, a dotted "
            "`review.allowlist` key outside a [review] table), so it was left unchanged; edit the list by hand, "
            "or write it as `allowlist = [...]` under `[review]`"
        )
    write_text_durably(path, updated)


def _replace_allowlist(text: str, assignment: str) -> str:
    header = re.search(r"(?m)^[ \t]*\[review\][ \t]*(#.*)?$", text)
    if header is None:
        separator = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{separator}[review]\n{assignment}\n"
    next_table = re.search(r"(?m)^[ \t]*\[", text[header.end():])
    section_end = header.end() + next_table.start() if next_table else len(text)
    # The key as TOML lets it be spelled inside its table: bare, or quoted either way.
    key = re.compile(r"""(?m)^[ \t]*(?:allowlist|"allowlist"|'allowlist')[ \t]*=[ \t]*""")
    found = key.search(text, header.end(), section_end)
    if found is None:
        return f"{text[:header.end()]}\n{assignment}{text[header.end():]}"
    end = _value_end(text, found.end())
    return f"{text[:found.start()]}{assignment}{text[end:]}"


def _value_end(text: str, start: int) -> int:
    """Index just past the TOML array starting at `start`, skipping strings and comments."""
    if text[start:start + 1] != "[":
        raise ConfigError(f"{CONFIG_FILE}: [review] allowlist must be an array; edit it by hand")
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char in "\"'":
            closing = text.find(char, index + 1)
            while char == '"' and closing > 0 and text[closing - 1] == "\\":
                closing = text.find(char, closing + 1)
            if closing < 0:
                break
            index = closing
        elif char == "#":
            newline = text.find("\n", index)
            index = len(text) - 1 if newline < 0 else newline
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    raise ConfigError(f"{CONFIG_FILE}: [review] allowlist is not a closed array; edit it by hand")
