"""A workflow's children (``ctx.child``, ``ctx.gather``) on the real servers: children are
put once (a replay finds them), the workflow parks in ``depends`` holding no slot until they
are done and then reads their results in order; a failed child raises ChildFailedError,
which a saga compensates; a sealed child's result is read through the codec."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import aqless
from aqless import ChildFailedError, JobState, WorkflowContext
from aqless.codecs import KeyRing, PayloadCodec
from aqless.codecs.envelope import ENVELOPE_PREFIX
from aqless.errors import StepNameTakenError, WorkflowError
from aqless.workflows.children import child_jid
from aqless.workflows.record import KEY, parked
from tests.support.worker import make_worker, running, until
from tests.workflows.test_workflows import client, job_of

__all__ = ["client"]  # the fixture, shared with test_workflows


def fan_out(handlers: aqless.Handlers, runs: Counter[str]) -> None:
    @handlers.workflow("wf.Sum")
    async def total(ctx: WorkflowContext) -> int:
        children = [
            await ctx.child("wf.Square", {"n": n}, queue="kids", name=f"square-{n}")
            for n in ctx.data["numbers"]
        ]
        return sum(await ctx.gather(*children))

    @handlers.register("wf.Square")
    async def square(job: aqless.Job) -> int:
        runs[job.jid] += 1
        return int(job.data["n"]) ** 2


async def test_a_workflow_sums_its_three_children_holding_no_slot(client: aqless.Client) -> None:
    handlers, runs = aqless.Handlers(), Counter[str]()
    fan_out(handlers, runs)
    jid = await client.queues["wf"].put("wf.Sum", {"numbers": [1, 2, 3]})
    # one slot: the parked workflow must leave it to its children
    worker = make_worker(client, ["wf"], handlers=handlers, concurrency=1, interval=0.1)
    async with running(worker):

        async def waits() -> bool:
            return (await job_of(client, jid)).state == JobState.DEPENDS

        await until(waits, what="parked in depends")
        job = await job_of(client, jid)
        marker = parked(job.state, job.data)
        assert marker is not None
        assert marker.describe() == "waiting for children"
        kids = [child_jid(jid, f"square-{n}") for n in (1, 2, 3)]
        assert [(await job_of(client, kid)).state for kid in kids] == ["waiting"] * 3
    kid_worker = make_worker(client, ["wf", "kids"], handlers=handlers, concurrency=1)
    async with running(kid_worker):
        assert await client.result(jid, timeout=10) == 1 + 4 + 9
    assert runs == Counter(dict.fromkeys(kids, 1))
    done = await job_of(client, jid)
    record = done.data[KEY]
    assert record["children"] == {f"square-{n}": {"jid": child_jid(jid, f"square-{n}"),
                                                  "queue": "kids"} for n in (1, 2, 3)}  # fmt: skip
    assert record["gathers"]["1"]["results"] == [1, 4, 9]
    tree = await client.flows.tree(jid)  # the children are the workflow's flow children
    assert tree is not None
    assert [node.jid for node in tree.children] == kids


async def test_a_replay_puts_no_child_again_and_reads_done_ones(client: aqless.Client) -> None:
    handlers, runs = aqless.Handlers(), Counter[str]()
    fan_out(handlers, runs)
    jid = await client.queues["wf"].put("wf.Sum", {"numbers": [4, 5]})
    kids = [child_jid(jid, f"square-{n}") for n in (4, 5)]
    # as if a killed attempt had put the children, one of which already ran, and stored
    # nothing: the replay's puts must leave them as they are
    await client.queues["kids"].put("wf.Square", {"n": 4}, jid=kids[0])
    await client.queues["kids"].put("wf.Square", {"n": 5}, jid=kids[1])
    async with running(make_worker(client, ["kids"], handlers=handlers, interval=0.1)):
        assert await client.result(kids[0], timeout=5) == 16
        assert await client.result(kids[1], timeout=5) == 25
    async with running(make_worker(client, ["wf", "kids"], handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == 41
    assert runs == Counter(dict.fromkeys(kids, 1))  # neither ran again


async def test_a_failed_child_raises_and_the_saga_compensates(client: aqless.Client) -> None:
    handlers = aqless.Handlers()
    undone: list[Any] = []
    caught: list[ChildFailedError] = []

    @handlers.workflow("wf.Book")
    async def book(ctx: WorkflowContext) -> None:
        await ctx.step("reserve", lambda: "seat-7", undo=undone.append)
        good = await ctx.child("wf.Ok", {}, queue="kids", name="ok")
        bad = await ctx.child("wf.Broken", {}, queue="kids", name="pay", retries=0)
        try:
            await ctx.gather(good, bad)
        except ChildFailedError as error:
            caught.append(error)
            raise

    @handlers.register("wf.Ok")
    async def ok(job: aqless.Job) -> str:
        return "ok"

    @handlers.register("wf.Broken")
    async def broken(job: aqless.Job) -> None:
        raise ValueError("card declined")

    jid = await client.queues["wf"].put("wf.Book", {})
    async with running(make_worker(client, ["wf", "kids"], handlers=handlers, interval=0.1)):
        with pytest.raises(aqless.JobFailedError) as failed:
            await client.result(jid, timeout=10)
    assert failed.value.group == "wf-ChildFailedError"
    assert [(error.name, error.jid, error.group) for error in caught] == [
        ("pay", child_jid(jid, "pay"), "kids-ValueError")
    ]
    assert "card declined" in caught[0].message
    assert undone == ["seat-7"]


async def test_bad_children_are_refused_before_anything_is_put(client: aqless.Client) -> None:
    handlers = aqless.Handlers()
    refusals: list[str] = []

    @handlers.workflow("wf.Bad")
    async def bad(ctx: WorkflowContext) -> None:
        for attempt in (
            lambda: ctx.child("wf.X", {}, queue="kids", jid="mine"),
            lambda: ctx.gather(),
        ):
            try:
                await attempt()
            except WorkflowError as error:
                refusals.append(type(error).__name__)
        one = await ctx.child("wf.X", {}, queue="kids", name="a")
        try:
            await ctx.child("wf.X", {}, queue="kids", name="a")
        except StepNameTakenError:
            refusals.append("taken")
        try:
            await ctx.gather(one, one)
        except WorkflowError:
            refusals.append("twice")

    jid = await client.queues["wf"].put("wf.Bad", {})
    async with running(make_worker(client, ["wf"], handlers=handlers, interval=0.1)):
        await client.result(jid, timeout=10)
    assert refusals == ["WorkflowError", "WorkflowError", "taken", "twice"]
    assert (await client.queues["kids"].counts()).waiting == 1  # only "a" was put


async def test_a_sealed_child_s_result_is_read_through_the_codec(server_url: str) -> None:
    codec = PayloadCodec(keys=KeyRing({"k1": KeyRing.new_key()}))
    handlers, runs = aqless.Handlers(), Counter[str]()
    fan_out(handlers, runs)
    async with aqless.Client(server_url, codec=codec) as client:
        jid = await client.queues["wf-sealed"].put("wf.Sum", {"numbers": [6, 7]})
        worker = make_worker(client, ["wf-sealed", "kids"], handlers=handlers, interval=0.1)
        async with running(worker):
            assert await client.result(jid, timeout=10) == 36 + 49
        stored = str(await client.redis.hget(f"ql:j:{child_jid(jid, 'square-6')}", "result"))
        assert stored.startswith(ENVELOPE_PREFIX)  # sealed, and opened to be summed
        await client.jobs.cancel(jid)


async def test_a_second_gather_keeps_the_first_gathers_children_in_the_flow(
    client: aqless.Client,
) -> None:
    """Each gather adds its children to the workflow's flow children: a cancel of the
    workflow reaches every child, and each gather reads its own children's results."""
    handlers, runs = aqless.Handlers(), Counter[str]()
    fan_out(handlers, runs)

    @handlers.workflow("wf.TwoRounds")
    async def rounds(ctx: WorkflowContext) -> list[int]:
        first = [
            await ctx.child("wf.Square", {"n": n}, queue="kids2", name=f"a{n}") for n in (1, 2)
        ]
        second = [await ctx.child("wf.Square", {"n": n}, queue="kids2", name=f"b{n}") for n in (3,)]
        return [sum(await ctx.gather(*first)), sum(await ctx.gather(*second))]

    jid = await client.queues["wf2"].put("wf.TwoRounds", {})
    worker = make_worker(client, ["wf2", "kids2"], handlers=handlers, concurrency=2, interval=0.1)
    async with running(worker):
        assert await client.result(jid, timeout=10) == [1 + 4, 9]
    tree = await client.flows.tree(jid)
    assert tree is not None
    assert [node.jid for node in tree.children] == [
        child_jid(jid, name) for name in ("a1", "a2", "b3")
    ]
