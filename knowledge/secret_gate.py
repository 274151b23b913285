"""Secrets refused where knowledge enters: `propose accept`, `index build`, and the write-intent tools' drafts.

Knowledge is served to every agent of the project, so a body holding a credential is refused, never redacted:
its author must take the secret out. The refusal names the file, the line and the secret's type and
fingerprint — never the value. A fingerprint the operator lists in `[review] acknowledged_secrets` (a known false
positive) passes; the scan itself is never switched off here, whatever `[review] secrets` says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Final

from evidence.content_policy import SALT_FILE, lake_salt, read_policy
from knowledge.errors import SECRET_REFUSAL_CODE, SecretInTextError
from theurian.errors import TheurianError
from theurian.project import CONFIG_FILE
from theurian.secret_scan import fingerprint, line_of, scan_text

# How a secret leaves the text refused, unless the caller says otherwise (a proposal cannot be edited).
TAKE_IT_OUT: Final = "Take the secret out"


def refuse_secrets(project_root: Path, texts: Iterable[tuple[str, str]], *, nothing_done: str,
                   make_salt: bool = True, take_it_out: str = TAKE_IT_OUT) -> None:
    """Raise SecretInTextError naming the first secret any `(file name, text)` holds, unless acknowledged.

    `nothing_done` ends the message: what the refused command did not do ("nothing was moved"). With
    `make_salt=False` (the daemon's drafts, which write nothing outside their proposal) a project without a salt
    yet is refused all the same, without a fingerprint.

    Raises:
        SecretInTextError: a secret was found.
        ConfigError: the project's `[review]` policy cannot be read.
        SaltRefusedError: `make_salt`, a secret was found, and the salt is lost or not the lake's
            (`evidence.content_policy.lake_salt`).
    """
    policy = read_policy(project_root, make_salt=False)
    keyed = not make_salt  # a caller that writes nothing shows what the salt there gives, unchecked
    for name, text in texts:
        for hit in scan_text(text):
            if not keyed:  # at the first hit: a scan finding nothing writes nothing and reads no manifest
                # Made if missing; refused if a lost salt keyed the lake or the acknowledgements, or if the one
                # there is not the lake's: a fingerprint shown now is one an operator writes into the config.
                policy, keyed = replace(policy, salt=lake_salt(project_root)), True
            print_ = fingerprint(policy.salt, hit.value) if policy.salt else None
            if print_ in policy.acknowledged:
                continue
            line = line_of(text, hit.start)
            cure = (f"add \"{print_}\" to [review] acknowledged_secrets in {CONFIG_FILE}" if print_ else
                    f"make the project's {SALT_FILE}, which keys fingerprints (`theurian review scan` makes it; "
                    "it also applies the [review] policy to any record already in the lake), and draft again to "
                    "learn the fingerprint to acknowledge")
            shown = f"{hit.kind}, fingerprint {print_}" if print_ else hit.kind
            raise SecretInTextError(
                f"{SECRET_REFUSAL_CODE}: {name} line {line} holds a secret ({shown}); {nothing_done}. "
                f"{take_it_out} (and revoke it: it was written down), or, if it is not one, {cure}.",
                details={"file": name, "line": line, "type": hit.kind, "fingerprint": print_},
            )


def holds_refused_secret(project_root: Path, texts: Iterable[str]) -> bool:
    """Whether any of `texts` holds a secret `refuse_secrets` would refuse: what a reader of the state withholds
    rather than serve (a state built before the gate, or under an acknowledgement since withdrawn).

    The project's policy is read only when a text holds a secret; a policy that cannot be read (or a project with
    no salt, so no fingerprint can be acknowledged) withholds. Never writes anything.
    """
    hits = [hit for text in texts for hit in scan_text(text)]
    if not hits:
        return False
    try:
        policy = read_policy(project_root, make_salt=False)
    except TheurianError:
        return True
    if not policy.salt:
        return True
    return any(fingerprint(policy.salt, hit.value) not in policy.acknowledged for hit in hits)
