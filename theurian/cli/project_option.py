"""How every command that acts on one project finds it: `--project PATH`, else the nearest folder holding
`.theurian/` from the current directory upward (as git finds its repository); and how every path argument is
read (`path_value`: an empty one is refused)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

import typer

from theurian.errors import ProjectError
from theurian.project import THEURIAN_DIR

EMPTY_PATH_REFUSAL: Final = "an empty path names no folder or file; pass . for the current folder"


def path_value(value: str | Path) -> Path:
    """A path typed on the command line (a default arrives already a Path). Every Path argument and option is
    parsed by this, because `Path("")` is `Path(".")`: an unset shell variable (`init "$DIR"`) would silently
    name the current folder.

    Raises:
        typer.BadParameter: `value` is the empty string: click's usage refusal, exit 2, before the command runs.
    """
    if isinstance(value, Path):
        return value
    if value == "":
        raise typer.BadParameter(EMPTY_PATH_REFUSAL)
    return Path(value)


ProjectOption = Annotated[
    Path | None,
    typer.Option("--project", help="The project folder; default: nearest folder with .theurian/ upward.",
                 parser=path_value),
]


def project_root(option: Path | None) -> Path:
    """The project a command acts on.

    Raises:
        ProjectError: --project does not exist, is not a folder, is a project's `.theurian` folder (or inside
            one), or holds no `.theurian/`; or no `.theurian/` from the current directory upward. Each names the
            cure that works for it (init refuses the first three).
    """
    if option is not None:
        root = option.resolve()
        if not (root / THEURIAN_DIR).is_dir():
            raise ProjectError(_not_a_project(root))
        return root
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / THEURIAN_DIR).is_dir():
            return candidate
    raise ProjectError(f"no {THEURIAN_DIR}/ in {here} or above: run `theurian init` or pass --project PATH")


def _not_a_project(root: Path) -> str:
    if not root.exists():
        return f"--project {root} does not exist: name a project folder (one holding {THEURIAN_DIR}/)"
    if THEURIAN_DIR in root.parts:
        project = Path(*root.parts[:root.parts.index(THEURIAN_DIR)])
        return (f"--project {root} is a project's {THEURIAN_DIR} folder or inside one: pass --project {project}, "
                "the project folder that holds it")
    if not root.is_dir():
        return f"--project {root} is not a folder: name a project folder (one holding {THEURIAN_DIR}/)"
    return f"{root} holds no {THEURIAN_DIR}/ (run `theurian init` there)"
