import asyncio

import pytest

from serve.dispatch import Dispatcher
from serve.errors import ToolRefusal
from serve.gate import ADMISSION_WAIT_SECONDS, MAX_CONCURRENT_SEARCHES, AdmissionGate
from serve.tooling import ServeSettings, Tool
from serve.tools import registered_tools

REFUSAL = "TEST_CAPACITY_REFUSAL"


def test_the_contract_constants_are_four_permits_and_one_second() -> None:
    assert (MAX_CONCURRENT_SEARCHES, ADMISSION_WAIT_SECONDS) == (4, 1.0)
    gate = AdmissionGate(REFUSAL)
    assert (gate.permits, gate.wait_seconds) == (4, 1.0)


async def _hold(gate: AdmissionGate, entered: asyncio.Event, release: asyncio.Event, counter: list[int]) -> None:
    async with gate.admit():
        counter.append(1)
        if len(counter) == gate.permits:
            entered.set()
        await release.wait()


def test_a_caller_past_the_permits_is_refused_with_the_constant_after_the_wait() -> None:
    async def scenario() -> None:
        gate = AdmissionGate(REFUSAL, wait_seconds=0.05)
        entered, release, counter = asyncio.Event(), asyncio.Event(), []
        holders = [asyncio.create_task(_hold(gate, entered, release, counter)) for _ in range(gate.permits)]
        await asyncio.wait_for(entered.wait(), timeout=5)
        with pytest.raises(ToolRefusal) as refused:
            async with gate.admit():
                pytest.fail("admitted past the permits")
        assert refused.value.message == REFUSAL
        release.set()
        await asyncio.gather(*holders)
        async with gate.admit():  # every permit came back
            pass

    asyncio.run(scenario())


def test_a_waiter_is_admitted_when_a_permit_frees_within_the_wait() -> None:
    async def scenario() -> None:
        gate = AdmissionGate(REFUSAL, permits=1, wait_seconds=5)
        holding, release = asyncio.Event(), asyncio.Event()

        async def holder() -> None:
            async with gate.admit():
                holding.set()
                await release.wait()

        task = asyncio.create_task(holder())
        await holding.wait()
        waiter = asyncio.create_task(_admitted(gate))
        await asyncio.sleep(0)  # let the waiter queue on the semaphore
        release.set()
        assert await asyncio.wait_for(waiter, timeout=5) is True
        await task

    asyncio.run(scenario())


async def _admitted(gate: AdmissionGate) -> bool:
    async with gate.admit():
        return True


GATED = [tool for tool in registered_tools() if tool.gate_refusal]


def test_the_searching_tools_are_gated() -> None:
    assert {"knowledge.search", "review.search", "review.findings"} <= {tool.name for tool in GATED}


@pytest.mark.parametrize("tool", GATED, ids=lambda tool: tool.name)
def test_each_gated_tool_has_its_own_gate_of_4_permits_a_1_second_wait_and_its_own_refusal(tool: Tool) -> None:
    dispatcher = Dispatcher(registered_tools(), ServeSettings("internal"))
    gate = dispatcher.gates[tool.name]
    assert gate is not None and gate.refusal == tool.gate_refusal
    assert (gate.permits, gate.wait_seconds) == (MAX_CONCURRENT_SEARCHES, ADMISSION_WAIT_SECONDS) == (4, 1.0)
    others = [g for name, g in dispatcher.gates.items() if name != tool.name and g is not None]
    assert all(g is not gate and g.refusal != gate.refusal for g in others)
