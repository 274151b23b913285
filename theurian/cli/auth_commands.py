"""`theurian auth token | rotate`: the local access token every MCP client of this installation presents."""

from __future__ import annotations

import typer

from theurian import access_token
from theurian.cli.json_summary import JsonSummaryOption, echo_summary
from theurian.files import others_may_read

app = typer.Typer(help="The bearer token MCP clients send to this installation's daemon.", no_args_is_help=True)


@app.command("token")
def token() -> None:
    """Print the token (created on first use) for a client's configuration: `Authorization: Bearer <token>`.

    It is printed alone on standard output, so `export THEURIAN_MCP_TOKEN=$(theurian auth token)` works.
    """
    token = access_token.current_token()
    path = access_token.token_path()
    mode = others_may_read(path)
    if mode is not None:  # the token is printed as asked; the operator hears that it is not the secret it should be
        typer.echo(f"theurian: warning: {path} is mode {mode:o}: others can read the token; `chmod 600 {path}`",
                   err=True)
    typer.echo(token)


@app.command("rotate")
def rotate(as_json: JsonSummaryOption = False) -> None:
    """Replace the token. A running daemon takes the new one on its next request; the old one stops working at
    once, so every client must be given the new one (printed alone on standard output)."""
    new = access_token.rotate()
    typer.echo(f"rotated the access token in {access_token.token_path()}; the old one no longer works: give "
               "every client the new one (`theurian setup --client ...` prints its line)", err=True)
    if as_json:  # the token is what a script rotating it needs next: the summary carries it
        echo_summary({"tokenFile": str(access_token.token_path()), "token": new})
        return
    typer.echo(new)
