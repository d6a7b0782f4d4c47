"""A workflow's race (``ctx.first``) on the real servers: the first child to end wins, the
losers run on (a later gather reads them) or are cancelled (``cancel=True``); a replay picks
the same winner, from the record or, when the run that decided it stored nothing, from the
server. Gathered and raced results keep the step results' size rule. A child's jid on a
plain deployment is one hash."""

from __future__ import annotations

import hashlib
from typing import Any

import anyio
import pytest

import aqless
from aqless import ChildFailedError, JobState, WorkflowContext
from aqless.errors import InvalidValueError, WorkflowError
from aqless.rules import STEP_RESULT_MAX
from aqless.sharding.map import bucket
from aqless.sharding.members import is_shard
from aqless.workflows.children import child_jid
from aqless.workflows.record import KEY, parked
from tests.support.worker import make_worker, running, until
from tests.workflows.test_workflows import client, job_of

__all__ = ["client"]  # the fixture, shared with test_workflows

pytestmark = pytest.mark.timeout(60)


async def parked_first(client: aqless.Client, jid: str) -> bool:
    job = await job_of(client, jid)
    marker = parked(job.state, job.data)
    return marker is not None and marker.first


async def test_the_first_child_to_end_wins_and_a_loser_runs_on(client: aqless.Client) -> None:
    handlers = aqless.Handlers()
    go_fast, go_slow = anyio.Event(), anyio.Event()
    seen: list[str] = []  # the winner each run of the workflow saw

    @handlers.workflow("wf.Race")
    async def race(ctx: WorkflowContext) -> list[Any]:
        slow = await ctx.child("wf.Slow", {}, queue="kids", name="slow")
        fast = await ctx.child("wf.Fast", {}, queue="kids", name="fast")
        winner, result = await ctx.first(slow, fast)  # slow is first in the order given
        seen.append(winner.name)
        [late] = await ctx.gather(slow)  # the loser ran on
        return [winner.name, result, late]

    @handlers.register("wf.Fast")
    async def fast(job: aqless.Job) -> str:
        await go_fast.wait()
        return "quick"

    @handlers.register("wf.Slow")
    async def slow(job: aqless.Job) -> str:
        await go_slow.wait()
        return "late"

    jid = await client.queues["wf"].put("wf.Race", {})
    worker = make_worker(client, ["wf", "kids"], handlers=handlers, concurrency=3, interval=0.1)
    async with running(worker):
        await until(lambda: parked_first(client, jid), what="parked in the race")
        job = await job_of(client, jid)
        marker = parked(job.state, job.data)
        assert marker is not None
        assert (job.state, marker.describe()) == (
            JobState.DEPENDS,
            "waiting for the first of its children",
        )
        go_fast.set()

        async def decided() -> bool:
            job = await job_of(client, jid)
            return "1" in job.data[KEY].get("firsts", {}) and job.state == JobState.DEPENDS

        await until(decided, what="the race decided, the workflow in its gather")
        record = (await job_of(client, jid)).data[KEY]
        assert record["firsts"]["1"] == {
            "jids": [child_jid(jid, "slow"), child_jid(jid, "fast")],
            "winner": child_jid(jid, "fast"),
            "result": "quick",
        }
        assert (await job_of(client, child_jid(jid, "slow"))).state == JobState.RUNNING
        go_slow.set()
        assert await client.result(jid, timeout=10) == ["fast", "quick", "late"]
    assert seen == ["fast", "fast"]  # the gather's run replayed the race from the record


async def test_a_race_with_cancel_cancels_its_losers_running_or_waiting(
    client: aqless.Client,
) -> None:
    handlers = aqless.Handlers()
    stuck_started = anyio.Event()
    stopped: list[str] = []

    @handlers.workflow("wf.Hedge")
    async def hedge(ctx: WorkflowContext) -> list[Any]:
        stuck = await ctx.child("wf.Stuck", {}, queue="kids", name="stuck")
        quick = await ctx.child("wf.Quick", {}, queue="kids", name="quick")
        idle = await ctx.child("wf.Quick", {}, queue="nobody", name="idle")  # never popped
        winner, result = await ctx.first(stuck, quick, idle, cancel=True)
        return [winner.name, result]

    @handlers.register("wf.Stuck")
    async def stuck(job: aqless.Job) -> None:
        stuck_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(job.jid)

    @handlers.register("wf.Quick")
    async def quick(job: aqless.Job) -> str:
        await stuck_started.wait()  # the loser runs when the race is decided
        return "first"

    jid = await client.queues["wf"].put("wf.Hedge", {})
    worker = make_worker(client, ["wf", "kids"], handlers=handlers, concurrency=3, interval=0.1)
    async with running(worker):
        assert await client.result(jid, timeout=10) == ["quick", "first"]
        await until(lambda: stopped == [child_jid(jid, "stuck")], what="the loser's code stopped")
    for loser in ("stuck", "idle"):  # both cancelled: the running one and the waiting one
        assert await client.jobs.get(child_jid(jid, loser)) is None
    tree = await client.flows.tree(jid)
    assert tree is not None
    assert [node.jid for node in tree.children] == [child_jid(jid, "quick")]
    assert (await client.queues["nobody"].counts()).waiting == 0


async def test_a_replay_after_the_race_was_decided_keeps_its_winner_from_the_server(
    client: aqless.Client,
) -> None:
    """The run that decided the race raises before storing anything (as a crash would end
    it): the next run asks the server again, after the loser has ended too, and gets the
    same winner, though the loser is first in the order given."""
    handlers = aqless.Handlers()
    go_slow = anyio.Event()
    seen: list[str] = []

    @handlers.workflow("wf.Again", retry=aqless.RetryPolicy(delay=0.1))
    async def again(ctx: WorkflowContext) -> str:
        slow = await ctx.child("wf.Slow2", {}, queue="kids", name="slow")
        fast = await ctx.child("wf.Fast2", {}, queue="kids", name="fast")
        winner, _ = await ctx.first(slow, fast)
        seen.append(winner.name)
        if len(seen) == 1:
            go_slow.set()
            assert await client.result(slow.jid, timeout=5) == "slow"  # it has ended too
            raise RuntimeError("cut short after the race, nothing stored")
        return winner.name

    @handlers.register("wf.Fast2")
    async def fast(job: aqless.Job) -> str:
        return "fast"

    @handlers.register("wf.Slow2")
    async def slow(job: aqless.Job) -> str:
        await go_slow.wait()
        return "slow"

    jid = await client.queues["wf"].put("wf.Again", {}, retries=3)
    worker = make_worker(client, ["wf", "kids"], handlers=handlers, concurrency=3, interval=0.1)
    async with running(worker):
        assert await client.result(jid, timeout=15) == "fast"
    assert seen == ["fast", "fast"]
    assert await client.redis.hget(f"{client.prefix}j:{jid}", "wf-won:1") == child_jid(jid, "fast")


async def test_a_failed_winner_raises_and_bad_races_are_refused(client: aqless.Client) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Lose")
    async def lose(ctx: WorkflowContext) -> list[Any]:
        caught: list[Any] = []  # this run's
        broken = await ctx.child("wf.Broken", {}, queue="kids", name="broken", retries=0)
        try:
            await ctx.first()
        except WorkflowError as error:
            caught.append(type(error).__name__)
        try:
            await ctx.first(broken, broken)
        except WorkflowError as error:
            caught.append(type(error).__name__)
        try:
            await ctx.first(broken)
        except ChildFailedError as error:
            caught.append((error.name, error.group))
        await ctx.step("after", lambda: 1)  # the race's failure is kept with this write
        return caught

    @handlers.register("wf.Broken")
    async def broken(job: aqless.Job) -> None:
        raise ValueError("no")

    jid = await client.queues["wf"].put("wf.Lose", {})
    worker = make_worker(client, ["wf", "kids"], handlers=handlers, interval=0.1)
    async with running(worker):
        assert await client.result(jid, timeout=10) == [
            "WorkflowError",
            "WorkflowError",
            ["broken", "kids-ValueError"],
        ]
    kept = (await job_of(client, jid)).data[KEY]["firsts"]["1"]
    assert kept["winner"] == child_jid(jid, "broken")
    assert kept["failure"]["group"] == "kids-ValueError"


async def test_gathered_and_raced_results_keep_the_step_results_size_rule(
    client: aqless.Client,
) -> None:
    handlers = aqless.Handlers()
    half = "x" * (STEP_RESULT_MAX // 2)  # two of them pass the limit, one does not

    @handlers.workflow("wf.Big")
    async def big(ctx: WorkflowContext) -> list[Any]:
        kids = [await ctx.child("wf.Half", {}, queue="kids", name=f"h{n}") for n in (1, 2)]
        refused = []
        try:
            await ctx.gather(*kids)
        except InvalidValueError as error:
            refused.append((error.command, error.option))
        _, one = await ctx.first(kids[0])  # one half fits
        double = await ctx.child("wf.Double", {}, queue="kids", name="double")
        try:
            await ctx.first(double)
        except InvalidValueError as error:
            refused.append((error.command, error.option))
        return [refused, len(one)]

    @handlers.register("wf.Half")
    async def half_size(job: aqless.Job) -> str:
        return half

    @handlers.register("wf.Double")
    async def double_size(job: aqless.Job) -> str:
        return half * 2

    jid = await client.queues["wf"].put("wf.Big", {})
    worker = make_worker(client, ["wf", "kids"], handlers=handlers, concurrency=2, interval=0.1)
    async with running(worker):
        result = await client.result(jid, timeout=10)
    assert result == [
        [["workflow.gather", "result_bytes"], ["workflow.first", "result_bytes"]],
        len(half),
    ]
    record = (await job_of(client, jid)).data[KEY]
    assert "1" not in record.get("gathers", {})  # nothing kept of the refused gather


def test_a_plain_child_jid_is_one_hash_and_a_sharded_one_lands_in_the_workflow_bucket() -> None:
    workflow = "a0" * 16
    for name in ("1", "p0", "item-42"):
        plain = child_jid(workflow, name)
        expected = hashlib.blake2b(f"{workflow}\x00{name}".encode(), digest_size=16)
        assert plain == expected.hexdigest()
        sharded = child_jid(workflow, name, sharded=True)
        assert bucket(sharded) == bucket(workflow)
        # the first counter that lands there, as every run (and every earlier version) finds
        base = hashlib.blake2b(f"{workflow}\x00{name}".encode(), digest_size=14).hexdigest()
        first = next(
            f"{base}{n:04x}" for n in range(1 << 16) if bucket(f"{base}{n:04x}") == bucket(workflow)
        )
        assert sharded == first


async def test_a_plain_deployment_s_child_has_the_plain_jid(client: aqless.Client) -> None:
    assert not is_shard(client)
    handlers = aqless.Handlers()

    @handlers.workflow("wf.One")
    async def one(ctx: WorkflowContext) -> str:
        kid = await ctx.child("wf.Kid", {}, queue="kids", name="kid")
        await ctx.gather(kid)
        return kid.jid

    @handlers.register("wf.Kid")
    async def kid(job: aqless.Job) -> int:
        return 1

    jid = await client.queues["wf"].put("wf.One", {})
    async with running(make_worker(client, ["wf", "kids"], handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == child_jid(jid, "kid")
    assert child_jid(jid, "kid") != child_jid(jid, "kid", sharded=True)
