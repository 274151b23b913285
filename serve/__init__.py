"""The MCP daemon: Streamable HTTP at /mcp, liveness at /health, schema-validated tool calls.

`serve` reads stores and never builds or writes them; every response is shaped to its published schema.
"""
