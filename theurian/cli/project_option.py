"""How every command that acts on one project finds it: `--project PATH`, else the nearest folder holding
`.theurian/` from the current directory upward (as git finds its repository)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian.errors import ProjectError
from theurian.project import THEURIAN_DIR

ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", help="The project folder; default: nearest folder with .theurian/ upward."),
]


def project_root(option: Path | None) -> Path:
    """The project a command acts on.

    Raises:
        ProjectError: no `.theurian/` at --project, or none from the current directory upward.
    """
    if option is not None:
        root = option.resolve()
        if not (root / THEURIAN_DIR).is_dir():
            raise ProjectError(f"{root} holds no {THEURIAN_DIR}/ (run `theurian init` there)")
        return root
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / THEURIAN_DIR).is_dir():
            return candidate
    raise ProjectError(f"no {THEURIAN_DIR}/ in {here} or above: run `theurian init` or pass --project PATH")
