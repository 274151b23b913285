"""The daemon's input path for tools/call: the one place a call's arguments are checked, and what it hands on.

The check runs as server middleware (`InputTier`), the only tier that sees the request before the SDK's own
parameter validation (which would answer a non-object `arguments` with a JSON-RPC error rather than our refusal).
It asks `InputValidator.admit` once and passes the verdict down the SDK's chain inside the request context itself
(`CheckedCall`), so the tools/call handler reads it from its own argument: nothing is parked on the side, and
nothing downstream checks or converts the arguments again. A refused call still travels the SDK's result path, so
each protocol era gets its own envelope, with the arguments withheld from everything below this tier.

    InputTier (middleware) --admit--> Admitted(arguments) | Refused(message)
        --CheckedCall(verdict, record)--> SDK params check --> on_call_tool
            Refused  -> the refusal result
            Admitted -> Dispatcher.call(tool, arguments, record) -> answer() on a worker thread
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping
from typing import Any, Final

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

from serve.dispatch import CallRecord, ThreadLimits
from serve.refusal import describe_value
from serve.tooling import Tool
from serve.validation import InputValidator, Refused, Verdict, checks_at_once
from theurian.text import one_line

logger = logging.getLogger("theurian.serve")

_MAX_TOOL_NAME_SHOWN: Final = 100
# Input checks running at once; more wait for one of these threads, never for the event loop.
VALIDATION_THREADS: Final = 4


@dataclasses.dataclass(kw_only=True)
class CheckedCall(ServerRequestContext[Any, Any]):
    """A tools/call's request context once the input tier has checked it: its verdict, and the record its log
    line is written from."""

    verdict: Verdict
    record: CallRecord


class InputTier:
    """The middleware that checks every tools/call against the tool the caller named on this route (`by_name`:
    wire name -> tool) and logs one line per call once it is answered."""

    def __init__(self, validator: InputValidator, by_name: Mapping[str, Tool]) -> None:
        self._validator = validator
        self._by_name = by_name
        self._threads = ThreadLimits(VALIDATION_THREADS)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not isinstance(ctx.params, dict):
            return await call_next(ctx)
        name = ctx.params.get("name")
        tool = self._by_name.get(name) if isinstance(name, str) else None
        record = CallRecord(tool=tool.name if tool is not None else "(unknown)")
        started = time.perf_counter()
        try:
            verdict = await self._verdict(name, ctx.params.get("arguments", {}))
            params = ctx.params
            if isinstance(verdict, Refused):
                record.outcome = "invalid"
                params = {**ctx.params, "name": str(name), "arguments": {}}
            return await call_next(_checked(ctx, params, verdict, record))
        finally:
            elapsed_ms = (time.perf_counter() - started) * 1000
            # A registered id is whatever the registry holds, a hand-edited newline included: one line per call.
            logger.info("call tool=%s project=%s outcome=%s ms=%.1f", record.tool, one_line(record.project),
                        record.outcome, elapsed_ms)

    async def _verdict(self, name: Any, arguments: Any) -> Verdict:
        # A small check runs at once; a large (if bounded) one goes off the event loop, on threads of its own, so
        # it holds neither /health nor any other caller, nor the tools' threads.
        if checks_at_once(arguments):
            return self._admit(name, arguments)
        return await anyio.to_thread.run_sync(lambda: self._admit(name, arguments),
                                              limiter=self._threads.of("validation"))

    def _admit(self, name: Any, arguments: Any) -> Verdict:
        if not isinstance(name, str) or name not in self._by_name:
            shown = ("that name" if not isinstance(name, str)
                     else describe_value(name, _MAX_TOOL_NAME_SHOWN, described_as="named by a value"))
            return Refused(f"No tool {shown} is served by this daemon; tools/list names the callable tools.")
        tool = self._by_name[name]
        return self._validator.admit(tool.name, tool.input_schema, {} if arguments is None else arguments,
                                     shown_as=name)


def _checked(ctx: ServerRequestContext[Any, Any], params: Mapping[str, Any], verdict: Verdict,
             record: CallRecord) -> CheckedCall:
    fields = {field.name: getattr(ctx, field.name) for field in dataclasses.fields(ctx) if field.name != "params"}
    return CheckedCall(**fields, params=params, verdict=verdict, record=record)
