"""What a workflow costs the server: a step stored is one round trip (its result goes with a
heartbeat), a step replayed none, a sleep or a wait one."""

from __future__ import annotations

import pytest

from aqless import WorkflowContext
from aqless._worker.workflow import Parked
from tests.support.clients import Counted, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


async def test_a_step_costs_one_round_trip_and_a_replayed_one_none(counted: Counted) -> None:
    client, trips = counted.client, counted.round_trips
    await client.queues["q"].put("wf.Any", {})
    job = await pop_one(client.queues["q"])
    ctx = WorkflowContext(job)
    before = trips.count
    assert await ctx.step("a", lambda: 1) == 1
    assert trips.count - before == 1
    replay = WorkflowContext(job)  # a later run of the same record
    before = trips.count
    assert await replay.step("a", lambda: 2) == 1
    assert trips.count == before
    before = trips.count
    with pytest.raises(Parked):
        await replay.wait_for("go")
    assert trips.count - before == 1
