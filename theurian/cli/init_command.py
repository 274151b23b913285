"""`theurian init`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from theurian.project import init_project


def init(
    path: Annotated[Path, typer.Argument(help="The project folder (usually a git repository).")] = Path("."),
) -> None:
    """Create .theurian/ in PATH: config.toml with an empty review allowlist, and a .gitignore for state/."""
    created = init_project(path.resolve())
    typer.echo(f"created {created}")
    typer.echo(f"next: theurian project register {path}")
