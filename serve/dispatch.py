"""Dispatching one admitted tools/call: resolve the project, admit through the gate, run the handler off the
event loop, and turn every outcome into a result or a refusal. Domain errors leave the daemon here, translated.

The arguments arrive as the input check admitted them (`serve.validation.Admitted.arguments`): converted and
checked once, upstream. `answer` is the synchronous core (project, handler, translation) that the dispatcher runs
on a worker thread and the CLI's in-process path (`serve.local_call`) runs directly.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.to_thread
import orjson

from serve.errors import ToolRefusal, UnwritableRefusal
from serve.gate import AdmissionGate
from serve.refusal import INTERNAL_FAULT_REFUSAL, coded_refusal_text, refusal_result, unwritable_refusal
from serve.tooling import CONTEXT_KEYS, Call, ServeSettings, Tool, ToolKind
from theurian.disk_faults import project_write_text
from theurian.errors import PathEscapeError, ProjectNotRegisteredError, RegistryError, TheurianError
from theurian.places import path_escape_refusal
from theurian.project import PROPOSALS_DIR, Project, resolve_project

logger = logging.getLogger("theurian.serve")


@dataclass
class CallRecord:
    """Filled in as a call is answered, for its one log line. Holds no argument value."""

    tool: str
    project: str = "-"
    # Until a tier answers it: a call the SDK dropped (a notification), refused itself (a bad envelope) or whose
    # caller went away first is logged as such, never as served.
    outcome: str = "unanswered"


# Worker threads each tool may hold at once. Every tool has its own: callers of one tool stuck on a locked store
# (a SQLite busy wait lasts up to 10 s) then wait on that tool's threads, never on the threads of every tool —
# anyio's shared pool of 40 let one ungated tool's flood stall system.capabilities and hold gated callers past
# their 1 s admission wait.
THREADS_PER_TOOL: Final = 8


class ThreadLimits:
    """One `anyio.CapacityLimiter` of `tokens` per name, made on first use: a limiter needs a running event loop,
    which the daemon only has once it serves."""

    def __init__(self, tokens: int) -> None:
        self._tokens = tokens
        self._limiters: dict[str, anyio.CapacityLimiter] = {}

    def of(self, name: str) -> anyio.CapacityLimiter:
        if name not in self._limiters:
            self._limiters[name] = anyio.CapacityLimiter(self._tokens)
        return self._limiters[name]


class Dispatcher:
    def __init__(self, tools: list[Tool], settings: ServeSettings) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.settings = settings
        self.gates: dict[str, AdmissionGate | None] = {tool.name: tool.make_gate() for tool in tools}
        self._threads = ThreadLimits(THREADS_PER_TOOL)

    async def call(self, name: str, arguments: Mapping[str, Any], record: CallRecord | None = None) -> dict[str, Any]:
        """The wire result of tool `name` on `arguments` (as the input check admitted them), every outcome noted
        on `record` for the call's log line."""
        tool = self.tools[name]

        def run() -> dict[str, Any]:
            # The registry read and path resolution are file I/O, like the handler: one trip off the event loop
            # for both (each trip is a thread wake-up, which a loaded machine makes cost milliseconds).
            return answer(tool, self.settings, arguments, record)

        try:
            gate = self.gates[name]
            if gate is None:
                structured = await self._off_loop(name, run)
            else:
                async with gate.admit():
                    structured = await self._off_loop(name, run)
        except UnwritableRefusal as refusal:  # the operator's to cure: the log names the place they can find
            _mark(record, "refused")
            logger.warning("tool %s wrote nothing: %s", name, refusal.operator_text)
            return refusal_result(refusal.message)
        except ToolRefusal as refusal:
            _mark(record, "refused")
            return refusal_result(refusal.message)
        except Exception:  # the top-level handler: no traceback ever reaches a caller
            _mark(record, "fault")
            logger.exception("tool %s failed", name)
            return refusal_result(INTERNAL_FAULT_REFUSAL)
        text = orjson.dumps(structured).decode("utf-8")
        _mark(record, "ok")
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": False}

    async def _off_loop(self, name: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(work, limiter=self._threads.of(name))


def answer(tool: Tool, settings: ServeSettings, arguments: Mapping[str, Any],
           record: CallRecord | None = None) -> dict[str, Any]:
    """`tool`'s structured result on admitted `arguments`: its project resolved from the registry (for a
    project-scoped tool, named on `record` once it resolved), then its handler run. Blocking file I/O.

    Raises:
        ToolRefusal: the tool refused the call, or a domain error left it; `message` is the refusal text a caller
            reads.
        UnwritableRefusal: a write-intent tool's write met a folder the file system would not let it write.
    """
    project = None
    try:
        project = _project_for(tool, arguments, record)
        handler_args = {key: value for key, value in arguments.items() if key not in CONTEXT_KEYS}
        return dict(tool.handler(Call(settings=settings, project=project), **handler_args))
    except TheurianError as exc:
        raise ToolRefusal(_domain_refusal(exc)) from None
    except OSError as exc:
        refusal = _unwritable(tool, project, exc)
        if refusal is None:
            raise
        raise refusal from None


def _unwritable(tool: Tool, project: Project | None, exc: OSError) -> UnwritableRefusal | None:
    """The refusal of a write-intent tool's write the file system refused for an ordinary reason or a permission
    (`theurian.disk_faults` words it); None for any other error, which stays a fault. Every write-intent tool
    writes only a proposal (its draft facade reaches nothing else), so a write that names no path was one there."""
    if tool.kind is not ToolKind.WRITE_INTENT or project is None:
        return None
    fault = project_write_text(exc, project.root, PROPOSALS_DIR)
    if fault is None:
        return None
    operator = project_write_text(exc, project.root, PROPOSALS_DIR, relative=False) or fault
    return UnwritableRefusal(unwritable_refusal(fault), operator)


def _domain_refusal(exc: TheurianError) -> str:
    """The refusal text a domain error leaves the daemon as."""
    if isinstance(exc, PathEscapeError):  # StateEscapeError included: `relative` names the link that escapes
        return path_escape_refusal(exc.relative)
    if isinstance(exc, ProjectNotRegisteredError):
        return coded_refusal_text("PROJECT_NOT_REGISTERED",
                                  f"{exc.message}; project.list names the registered projects",
                                  {"projectId": exc.project_id})
    if isinstance(exc, RegistryError):  # the operator's text names the installation's files; an agent's does not
        return exc.agent_message
    return exc.message


def _project_for(tool: Tool, arguments: Mapping[str, Any], record: CallRecord | None) -> Project | None:
    if not tool.project_scoped:
        return None
    project = resolve_project(str(arguments["projectId"]))
    if record is not None:
        record.project = project.project_id  # only a registered id is ever logged
    return project


def _mark(record: CallRecord | None, outcome: str) -> None:
    if record is not None:
        record.outcome = outcome
