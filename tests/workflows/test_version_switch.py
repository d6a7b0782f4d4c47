"""`ctx.version` across a real code change: a workflow started by an ``aqless-run``
process running the old code parks; the process stops, the module is replaced by the new
code, and a new process finishes it. The old workflow takes the old side of a change made
before the point it had reached and the new side of one after; a workflow started under the
new code takes the new side of both."""

from __future__ import annotations

import signal

import pytest

import aqless
from aqless.workflows.record import parked, steps
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    eventually,
    reach_states,
    spawn_fixture,  # noqa: F401
)

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.deployments("valkey9", reason="worker processes: one server kind"),
]

OLD = """
import aqless

handlers = aqless.Handlers()


@handlers.workflow("versioned.order")
async def order(ctx):
    charged = await ctx.step("charge", lambda: "charged")
    await ctx.wait_for("go")
    return [charged, "old"]
"""

NEW = """
import aqless

handlers = aqless.Handlers()


@handlers.workflow("versioned.order")
async def order(ctx):
    fraud = ctx.version("fraud-check")  # added before the charge
    if fraud >= 1:
        await ctx.step("fraud", lambda: "checked")
    charged = await ctx.step("charge", lambda: "charged")
    await ctx.wait_for("go")
    sms = ctx.version("send-sms")  # added after the wait
    if sms >= 1:
        await ctx.step("sms", lambda: "sent")
    return [charged, "new", fraud, sms]
"""

WORKER = ("--handlers", "versioned:handlers", "--interval", "0.2", "q")


async def parked_all(aq: aqless.Client, jids: list[str]) -> bool:
    jobs = await aq.jobs.get_many(jids)
    return all(parked(job.state, job.data) is not None for job in jobs)


async def test_a_workflow_started_under_old_code_finishes_under_new_code(
    aq: aqless.Client, spawn: Spawner
) -> None:
    module = spawn.folder / "versioned.py"
    module.write_text(OLD)
    old = await aq.queues["q"].put("versioned.order", {})
    worker = spawn(*WORKER)
    await eventually(lambda: parked_all(aq, [old]), what="the old workflow parked")
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0

    module.write_text(NEW)  # the deploy: the same klass, new code
    new = await aq.queues["q"].put("versioned.order", {})
    spawn(*WORKER)
    await eventually(lambda: parked_all(aq, [new]), what="the new workflow parked")
    for jid in (old, new):
        assert await aq.signal(jid, "go") == "woken"
    await reach_states(aq, [old, new], {"complete": 2}, timeout=20)

    assert await aq.result(old) == ["charged", "new", 0, 1]
    assert await aq.result(new) == ["charged", "new", 1, 1]
    ran = {}
    for jid in (old, new):
        job = await aq.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        ran[jid] = [step.name for step in steps(job.data)]
    assert ran[old] == ["charge", "sms"]  # no fraud check: it had passed that point
    assert ran[new] == ["fraud", "charge", "sms"]
