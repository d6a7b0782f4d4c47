"""Fair groups inside a queue: aqless's pops take a queue's groups in turn (by weight, with
per-group concurrency caps), while every job stays an ordinary job of its queue that other
qless clients see and pop by priority."""

from __future__ import annotations

import bisect
import collections
import math
from collections.abc import Sequence
from typing import cast

import anyio
import pytest

import aqless
from aqless import GroupCounts, InvalidArgumentError, InvalidValueError, Job, PutRequest
from tests.support.clients import ManualClock

pytest_plugins = ["tests.support.client_fixtures"]


def group_of(job: Job) -> str:
    """The group a test job was put in (the tests write it into the data)."""
    return str(job.data["group"])


def requests(group: str | None, count: int, **options: object) -> list[PutRequest]:
    data = {"group": group or "-"}
    return [PutRequest("app.Job", data, group=group, **options) for _ in range(count)]  # type: ignore[arg-type]


async def foreign_pop(client: aqless.Client, queue: str, count: int) -> list[str]:
    """What another qless client's pop does with the queue's keys (its own script: the
    reference's steps that matter here): the highest scores of the work set, by priority,
    locked to its worker. It knows nothing of groups."""
    redis = client.redis
    found = cast(list[str | bytes], await redis.zrevrange(f"ql:q:{queue}-work", 0, count - 1))
    jids = [jid.decode() if isinstance(jid, bytes) else jid for jid in found]
    expires = client.clock() + 60
    for jid in jids:
        await redis.zrem(f"ql:q:{queue}-work", jid)
        await redis.zadd(f"ql:q:{queue}-locks", {jid: expires})
        await redis.hset(
            f"ql:j:{jid}", mapping={"state": "running", "worker": "other", "expires": expires}
        )
    return jids


async def drain(queue: aqless.Queue, pops: int, concurrency: int = 10) -> list[Job]:
    """Pop up to `pops` jobs `concurrency` at a time, completing each batch before the
    next: the jobs in the order they started."""
    started: list[Job] = []
    while len(started) < pops:
        batch = await queue.pop_many(min(concurrency, pops - len(started)))
        if not batch:
            break
        started += batch
        async with anyio.create_task_group() as tasks:
            for job in batch:
                tasks.start_soon(job.complete)
    return started


async def test_nine_small_groups_start_within_the_first_200_pops_behind_a_backlog(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    await queue.put_many(requests("big", 10_000))
    small = [f"tenant-{n}" for n in range(9)]
    for group in small:
        await queue.put_many(requests(group, 10))
    started = await drain(queue, 200)
    counts = collections.Counter(group_of(job) for job in started)
    assert all(counts[group] == 10 for group in small)
    assert counts["big"] == 200 - 90


async def test_weights_three_to_one_share_the_starts_three_to_one(client: aqless.Client) -> None:
    queue = client.queues["q"]
    await queue.set_group_weight("heavy", 3)
    await queue.put_many(requests("heavy", 600) + requests("light", 600))
    started = await drain(queue, 400)
    counts = collections.Counter(group_of(job) for job in started)
    assert math.isclose(counts["heavy"] / counts["light"], 3, rel_tol=0.05)
    heavy = next(record for record in await queue.groups() if record.name == "heavy")
    assert heavy.weight == 3


async def test_a_group_keeps_priority_order_within_itself(client: aqless.Client) -> None:
    queue = client.queues["q"]
    for priority in (1, 5, 3):
        await queue.put("app.Job", {"group": "a", "p": priority}, group="a", priority=priority)
    await queue.put_many(requests("b", 3))
    started = await drain(queue, 6)
    assert [job.data["p"] for job in started if group_of(job) == "a"] == [5, 3, 1]
    assert [group_of(job) for job in started[:2]] in (["a", "b"], ["b", "a"])


async def test_ungrouped_jobs_form_their_own_group(client: aqless.Client) -> None:
    queue = client.queues["q"]
    await queue.put_many(requests(None, 20))  # before the queue had any group
    await queue.put_many(requests("a", 20))
    await queue.put_many(requests(None, 5))
    started = await drain(queue, 10)
    counts = collections.Counter(group_of(job) for job in started)
    assert counts == {"-": 5, "a": 5}
    records = {record.name: record for record in await queue.groups()}
    assert (records[None].waiting, records["a"].waiting) == (20, 15)


async def test_a_concurrency_cap_holds_a_group_back_until_its_jobs_end(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    await queue.set_group_concurrency("capped", 2)
    await queue.put_many(requests("capped", 10) + requests("free", 10))
    first = await queue.pop_many(10)
    assert collections.Counter(group_of(job) for job in first) == {"capped": 2, "free": 8}
    second = await queue.pop_many(10)  # the capped group's 8 wait for its 2 to end
    assert collections.Counter(group_of(job) for job in second) == {"free": 2}
    records = {record.name: record for record in await queue.groups()}
    assert (records["capped"].running, records["capped"].concurrency) == (2, 2)
    assert (records["capped"].waiting, records["free"].waiting) == (8, 0)
    for job in first:
        if group_of(job) == "capped":
            await job.complete()
    again = await queue.pop_many(10)
    assert collections.Counter(group_of(job) for job in again) == {"capped": 2}
    await queue.set_group_concurrency("capped", 0)  # lifted
    rest = await queue.pop_many(10)
    assert collections.Counter(group_of(job) for job in rest) == {"capped": 6}


async def test_groups_reads_each_groups_backlog_and_running_jobs(client: aqless.Client) -> None:
    queue = client.queues["q"]
    assert await queue.groups() == []
    await queue.put_many(requests("a", 3) + requests("b", 2) + requests(None, 1))
    await queue.set_group_concurrency("b", 4)
    popped = await queue.pop_many(3)
    assert sorted(group_of(job) for job in popped) == ["-", "a", "b"]
    assert await queue.groups() == [
        GroupCounts(name=None, waiting=0, running=1, weight=1.0, concurrency=0),
        GroupCounts(name="a", waiting=2, running=1, weight=1.0, concurrency=0),
        GroupCounts(name="b", waiting=1, running=1, weight=1.0, concurrency=4),
    ]


async def test_a_cancelled_or_foreign_popped_job_leaves_the_group_counts(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    jids = await queue.put_many(requests("a", 4))
    await client.jobs.cancel(jids[0])
    foreign = await foreign_pop(client, "q", 1)
    assert len(foreign) == 1
    (record,) = await queue.groups()
    assert (record.name, record.waiting, record.running) == ("a", 2, 1)
    taken = await drain(queue, 10)
    assert len(taken) == 2
    assert foreign[0] not in {job.jid for job in taken}


async def test_a_foreign_pop_takes_grouped_jobs_by_priority(client: aqless.Client) -> None:
    queue = client.queues["q"]
    big = await queue.put_many(requests("big", 5, priority=1))
    small = await queue.put("app.Job", {"group": "small"}, group="small", priority=0)
    assert await foreign_pop(client, "q", 6) == [*big, small]
    jobs = await client.jobs.get_many([*big, small])  # valid qless jobs, running
    assert {job.state for job in jobs} == {"running"}
    assert await queue.pop_many(10) == []


async def test_a_job_put_again_keeps_its_group_and_a_new_one_moves_it(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    jid = await queue.put("app.Job", {"group": "a"}, group="a")
    await queue.put("app.Job", {"group": "a"}, jid=jid)
    assert [(r.name, r.waiting) for r in await queue.groups()] == [("a", 1)]
    await queue.put("app.Job", {"group": "b"}, jid=jid, group="b")
    started = await drain(queue, 5)
    assert [job.jid for job in started] == [jid]


async def test_stalled_and_scheduled_jobs_come_back_to_their_group(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", {"group": "a"}, group="a", delay=10)
    jid = await queue.put("app.Job", {"group": "b"}, group="b")
    (job,) = await queue.pop_many(5)
    await job.timeout()  # back to the work set, stalled
    records = {record.name: record.waiting for record in await queue.groups()}
    assert records == {"b": 1}  # its score is +inf in the work set and in its group's
    (again,) = await queue.pop_many(5)
    assert again.jid == jid
    await again.complete()
    clock.advance(11)
    (scheduled,) = await queue.pop_many(5)
    assert group_of(scheduled) == "a"


@pytest.mark.parametrize("group", ["", 42, b"a"])
async def test_a_group_that_is_not_a_non_empty_string_is_refused_before_any_write(
    client: aqless.Client, group: object
) -> None:
    queue = client.queues["q"]
    with pytest.raises(InvalidArgumentError, match="group"):
        await queue.put("app.Job", group=group)  # type: ignore[call-overload]
    with pytest.raises(InvalidArgumentError, match="group"):
        await queue.put_many([PutRequest("app.Job"), PutRequest("app.Job", group=group)])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="group"):
        await queue.set_group_weight(group, 2)  # type: ignore[arg-type]
    assert await queue.length() == 0
    assert await queue.groups() == []


@pytest.mark.parametrize("weight", [0, -1, math.nan, math.inf, True, "2"])
async def test_a_weight_that_is_not_a_positive_number_is_refused(
    client: aqless.Client, weight: object
) -> None:
    with pytest.raises(InvalidArgumentError, match="weight"):
        await client.queues["q"].set_group_weight("a", weight)  # type: ignore[arg-type]
    assert await client.queues["q"].groups() == []


@pytest.mark.parametrize("maximum", [-1, 1.5, True])
async def test_a_concurrency_that_is_not_a_whole_number_from_0_is_refused(
    client: aqless.Client, maximum: object
) -> None:
    with pytest.raises(InvalidArgumentError, match="concurrency"):
        await client.queues["q"].set_group_concurrency("a", maximum)  # type: ignore[arg-type]
    assert await client.queues["q"].groups() == []


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        (["q", "a", "weight", "0"], 'Arg "weight"'),
        (["q", "a", "weight", "x"], 'Arg "weight"'),
        (["q", "a", "concurrency", "-1"], 'Arg "concurrency"'),
        (["q", "a", "concurrency", "1.5"], 'Arg "concurrency"'),
        (["q", "a", "rate", "-1"], 'Arg "rate"'),
        (["q", "a", "rate", "2.5"], 'Arg "rate"'),
        (["q", "a", "rate", "nan"], 'Arg "rate"'),
        (["q", "a", "rate", "5", "per", "0"], 'Arg "per"'),
        (["q", "a", "rate", "5", "per", "inf"], 'Arg "per"'),
        (["q", "a", "per", "1"], 'Arg "per" given without "rate"'),
    ],
)
async def test_the_script_refuses_bad_settings_as_invalid_arguments(
    client: aqless.Client, arguments: Sequence[str], text: str
) -> None:
    with pytest.raises(InvalidArgumentError, match=text):
        await client.protocol.call("group.set", *arguments)
    with pytest.raises(InvalidArgumentError, match='Arg "group" empty'):
        await client.protocol.call("queue.put", "w", "q", "jid", "k", "{}", 0, "group", "")
    assert await client.redis.keys("*group*") == []


async def test_a_groups_named_rate_limit_holds_it_back_and_not_the_others(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await client.rate_limits["tenant-a"].set(2, per=60)
    await queue.put_many(requests("a", 5, rate_limits=["tenant-a"]) + requests("b", 5))
    first = await queue.pop_many(10)
    assert collections.Counter(group_of(job) for job in first) == {"a": 2, "b": 5}
    for job in first:
        await job.complete()
    clock.advance(61)  # the limit has two starts again
    again = await queue.pop_many(10)
    assert collections.Counter(group_of(job) for job in again) == {"a": 2}


async def test_a_deduplicated_put_takes_a_group(client: aqless.Client) -> None:
    queue = client.queues["q"]
    await queue.put_many(requests("big", 20))
    jid = await queue.put("app.Job", {"group": "small"}, group="small", dedup="once")
    again = await queue.put_result("app.Job", {"group": "small"}, group="small", dedup="once")
    assert (again.jid, again.deduplicated) == (jid, True)
    started = await drain(queue, 2)
    assert jid in {job.jid for job in started}


STEP = 0.03  # a worker's pops this far apart: no two starts are a whole second apart


def most_in_a_window(starts: list[float], period: float) -> int:
    """The most starts in any window of `period` seconds."""
    ordered = sorted(starts)
    return max(
        (bisect.bisect_right(ordered, t + period) - i for i, t in enumerate(ordered)), default=0
    )


async def pop_and_complete(
    queue: aqless.Queue, clock: ManualClock, seconds: float
) -> dict[str, list[float]]:
    """Each group's starts (the clock's time) of a worker popping up to 10 jobs every STEP
    for `seconds`, completing them as it goes."""
    starts: dict[str, list[float]] = collections.defaultdict(list)
    end = clock.now + seconds
    while clock.now < end:
        for job in await queue.pop_many(10):
            starts[group_of(job)].append(clock.now)
            await job.complete()
        clock.advance(STEP)
    return starts


async def test_a_group_rate_limit_paces_its_starts_while_the_other_groups_go_on(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.set_group_rate_limit("limited", 5, per=1)
    await queue.put_many(requests("limited", 100) + requests("free", 300))
    starts = await pop_and_complete(queue, clock, 3.9)
    assert most_in_a_window(starts["limited"], 1) == 5
    assert len(starts["limited"]) == 20  # 5 at 0, 1.02, 2.04 and 3.06 s
    assert len(starts["free"]) == 300  # its turns went on: the pops were full until it ran out
    (limited,) = [record for record in await queue.groups() if record.name == "limited"]
    assert (limited.rate_limit, limited.rate_period, limited.rate_used) == (5, 1.0, 5)
    assert limited.waiting == 80  # its jobs wait, neither lost nor failed
    assert await queue.length() == 80
    await queue.set_group_rate_limit("limited", None)  # lifted
    assert len(await queue.pop_many(100)) == 80
    (lifted,) = await queue.groups()
    assert (lifted.name, lifted.rate_limit, lifted.rate_period, lifted.rate_used) == (
        "limited",
        0,
        0.0,
        0,
    )


async def test_a_rate_limited_groups_pop_tells_the_wait_until_its_next_start(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    await queue.set_group_rate_limit("a", 2, per=10)
    await queue.put_many(requests("a", 5))
    first = await timed_client.protocol.json("rateLimit.pop", "q", "w", 5)
    assert (len(first["jobs"]), first["held"], first["wait"]) == (2, True, 10)
    clock.advance(4)
    second = await timed_client.protocol.json("rateLimit.pop", "q", "w", 5)
    assert (second["jobs"], second["held"]) == ([], True)
    assert math.isclose(second["wait"], 6)
    clock.advance(6)
    assert len(await queue.pop_many(5)) == 2


async def test_a_job_a_rate_limited_group_could_not_start_does_not_count(
    timed_client: aqless.Client,
) -> None:
    queue = timed_client.queues["q"]
    await timed_client.throttles["one"].set(1)
    await queue.set_group_rate_limit("a", 3, per=60)
    throttled = requests("a", 2, throttles=["one"], priority=1)  # taken first
    await queue.put_many(throttled + requests("a", 4))
    first = await queue.pop_many(10)  # takes 3: one throttled job waits for the throttle
    assert len(first) == 2
    (record,) = await queue.groups()
    assert record.rate_used == 2  # the job that waits for the throttle did not start
    assert len(await queue.pop_many(10)) == 1
    assert (await queue.groups())[0].rate_used == 3
    assert await queue.pop_many(10) == []


async def test_a_rate_limit_keeps_the_groups_weight_and_cap(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.set_group_weight("a", 2)
    await queue.set_group_concurrency("a", 3)
    await queue.set_group_rate_limit("a", 7, per=0.5)
    await queue.set_group_rate_limit(None, 4)
    records = {record.name: record for record in await queue.groups()}
    assert records["a"] == GroupCounts("a", 0, 0, 2.0, 3, rate_limit=7, rate_period=0.5)
    assert records[None] == GroupCounts(None, 0, 0, 1.0, 0, rate_limit=4, rate_period=1.0)
    await queue.set_group_rate_limit(None, None)
    await queue.set_group_rate_limit("a", None)
    (record,) = await queue.groups()
    assert record == GroupCounts("a", 0, 0, 2.0, 3)


@pytest.mark.parametrize(
    ("limit", "per"),
    [
        *[(0, 1), (-1, 1), (1.5, 1), (True, 1), (math.nan, 1), ("5", 1)],
        *[(5, 0), (5, -1), (5, math.nan), (5, math.inf), (5, "1")],
    ],
)
async def test_a_rate_limit_that_is_not_a_count_per_positive_period_is_refused(
    client: aqless.Client, limit: object, per: object
) -> None:
    name = "per" if limit == 5 else "limit"
    with pytest.raises(InvalidValueError, match=f"{name} must be") as refused:
        await client.queues["q"].set_group_rate_limit("a", limit, per=per)  # type: ignore[arg-type]
    assert refused.value.option == name
    assert await client.queues["q"].groups() == []


async def test_pops_of_one_take_the_turns_a_queue_with_group_settings_takes(
    client: aqless.Client,
) -> None:
    """A pop of one job where no group has settings takes a shorter way than the others:
    the same groups' jobs in the same order, and the same passes left in the ready set, past
    cancelled jobs left in a group's index, emptied groups and a group that joins later."""
    runs: list[list[tuple[str, object]]] = []
    for name in ("short", "general"):
        queue = client.queues[name]
        if name == "general":
            await queue.set_group_weight("unused", 2)  # settings: the pop's general way
        jids = await queue.put_many(requests("a", 6) + requests("b", 2) + requests(None, 3))
        await client.jobs.cancel(jids[0], jids[6])
        run: list[tuple[str, object]] = []
        for turn in range(14):
            if turn == 4:
                await queue.put_many(requests("c", 3))
            job = await queue.pop()
            if job is None:
                break
            ready = await client.redis.zrange(f"ql:q:{name}-groups-ready", 0, -1, withscores=True)
            run.append((group_of(job), ready))
            await job.complete()
        runs.append(run)
    short, general = runs
    assert short == general
    started = sorted(group for group, _ in short)
    assert started == sorted(["a"] * 5 + ["b"] + ["-"] * 3 + ["c"] * 3)


async def test_a_put_into_a_queue_without_groups_stays_ungrouped_whatever_else_exists(
    client: aqless.Client,
) -> None:
    """A put asks one EXISTS whether the job, tracked jobs, idle workers' offers and the
    queue's throttle exist, and whether the queue has groups: with all four there, the put
    of a running job is still the ungrouped put of an existing job."""
    queue = client.queues["q"]
    await queue.set_throttle(5)
    jid = await queue.put("app.Job", {})
    job = await queue.pop()
    assert job is not None
    await job.track()
    offer = f"1 {client.clock() + 60:.3f}"  # another worker's offer to take q's jobs
    await client.redis.hset("ql:offers:q", "idle-worker", offer)
    await queue.put("app.Job", {}, jid=jid)  # put again: the running job waits again
    assert await client.redis.zscore("ql:q:q-locks", jid) is None
    assert await client.redis.keys("ql:q:q-group*") == []
