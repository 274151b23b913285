"""`python -m theurian`: the console script, for a process that has the interpreter but not the script's path
(`theurian daemon start` launches the background daemon this way)."""

from theurian.cli.entry import run

run()
