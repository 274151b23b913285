"""Theurian: code-review history turned into knowledge agents can search and use safely.

This package is the kernel every stage shares (errors, containment, the installation's own files, the project
registry) and the CLI that composes the stages.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("theurian")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0+unknown"

PROTOCOL_VERSION = "theurian/v1"
