"""Theurian: code-review history turned into knowledge agents can search and use safely.

This package is the kernel every stage shares (errors, containment, the installation's own files, the project
registry) and the CLI that composes the stages.
"""

PROTOCOL_VERSION = "theurian/v1"


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed package's metadata when first asked for: importing this package
    imports nothing, so the console script's first import is over before a Ctrl-C could interrupt it
    (`theurian.cli.entry`)."""
    if name != "__version__":
        raise AttributeError(f"module 'theurian' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("theurian")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0.0.0+unknown"
