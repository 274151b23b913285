"""The `theurian` command line: one typer app, one module per command group."""
