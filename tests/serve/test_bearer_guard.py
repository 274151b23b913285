"""Which paths the bearer guard covers: /mcp and everything under /mcp/, nothing else."""

import pytest

from serve.bearer_guard import guarded


@pytest.mark.parametrize("path", ["/mcp", "/mcp/", "/mcp/compat", "/mcp/compat/x", "/mcp//"])
def test_mcp_and_every_path_under_it_are_guarded(path: str) -> None:
    assert guarded(path)


@pytest.mark.parametrize("path", ["/health", "/", "/mcpx", "/mcp-compat", "/MCP", "/x/mcp", ""])
def test_paths_outside_mcp_are_not(path: str) -> None:
    assert not guarded(path)
