"""`jobs.outcomes` (popafter.lua): the outcomes a worker holds, and its next pop, in one call.

The guard is differential, as for `queue.popAfter`: the same workload is run once as one call
per outcome followed by the pop's, and once as one `jobs.outcomes` carrying them all, on a
fresh database each time; the replies, every key (type, content, expiry: job states, history,
the daily statistics folded per queue) and every publication must be the same.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from redis.exceptions import ResponseError

from aqless._connection.pop_after import KEPT_COMPLETES, PopAfter
from aqless._connection.protocol import error_for
from aqless.scripts.loader import Argument, Call
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import refused, rpop, rput, snapshot

Outcome = tuple[str, float, tuple[Argument, ...]]

# jobs a1..a6 in "queue" and b1, b2 in "other", all popped by "w" (attempt 1 each)
JOBS = {"queue": ("a1", "a2", "a3", "a4", "a5", "a6"), "other": ("b1", "b2")}


def complete(jid: str, queue: str, now: float, *options: Argument) -> Outcome:
    return ("job.complete", now, (jid, "w", queue, '{"n": 1}', *options, "attempt", "1"))


# a worker's outcomes: completes (one to a next queue, one kept data), a fail, a retry, a
# retry with none left, in two queues, each with its own now (spread over two minutes)
MIXED: list[Outcome] = [
    complete("a1", "queue", 100.25),
    ("job.completeAndRequeue", 101.5, ("a2", "w", "queue", "{}", "later")),
    ("job.fail", 102.75, ("a3", "w", "group", "message", '{"x": 2}', "1")),
    ("job.retry", 119.0, ("a4", "queue", "w", 0, "group", "message", "1")),
    ("job.retry", 120.5, ("a5", "queue", "w", 0, "", "", "1")),
    complete("b1", "other", 121.0, "keep_data", "1"),
    complete("a6", "queue", 125.0),
    complete("b2", "other", 86_405.5),  # the next day: its own statistics and hour
]


async def workload(lua: Lua) -> None:
    """The jobs put at different times (their waits differ), a5 with no retry left, "c"
    waiting behind them to be popped, a1 tracked, a6 with a dependent."""
    when = 1.0
    for queue, jids in JOBS.items():
        for jid in jids:
            retries = 0 if jid == "a5" else 3
            await rput(lua, when, jid, "retries", retries, queue=queue)
            when += 3.5
    await rput(lua, 41, "d", "depends", '["a6"]')
    await lua("job.track", 42, "a1")
    for at, queue in ((50, "queue"), (60, "other")):
        assert sorted(await rpop(lua, at, 10, queue=queue, worker="w")) == list(JOBS[queue])
    await rput(lua, 70, "c")


async def one_by_one(lua: Lua, outcomes: list[Outcome], pop: bool) -> list[Any]:
    replies: list[Any] = []
    for command, now, args in outcomes:
        try:
            replies.append(("ok", await lua(command, now, *args)))
        except ResponseError as error:
            replies.append(("refused", str(error)))
    if pop:
        replies.append(await lua("rateLimit.pop", 200, "queue", "w", 2))
    return replies


def framed(outcomes: list[Outcome]) -> list[Argument]:
    args: list[Argument] = []
    for command, now, outcome_args in outcomes:
        args += [command, repr(now), len(outcome_args), *outcome_args]
    return args


async def in_one_call(lua: Lua, outcomes: list[Outcome], pop: bool) -> list[Any]:
    head: tuple[Argument, ...] = ("queue", "w", 2) if pop else ("", "", "")
    return parted(await lua("jobs.outcomes", 200, *head, *framed(outcomes)), pop)


def parted(reply: Any, pop: bool) -> list[Any]:
    """A `jobs.outcomes` reply as `one_by_one`'s: (status, reply) per outcome, then the pop's."""
    pop_status, popped, *parts = reply
    assert pop_status == ("ok" if pop else "")
    replies: list[Any] = [(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
    return [*replies, popped] if pop else replies


async def as_the_worker_joins(lua: Lua, outcomes: list[Outcome], pop: bool) -> list[Any]:
    """The outcomes in one call framed as aqless's worker frames them (PopAfter: runs of
    plain completes as `job.complete*`)."""
    calls: list[Call] = [(command, (repr(now), *args)) for command, now, args in outcomes]
    joined = PopAfter().join_many(calls, ("rateLimit.pop", (200, "queue", "w", 2)) if pop else None)
    assert joined is not None
    assert joined[0] == "jobs.outcomes"
    now, *args = joined[1]
    assert KEPT_COMPLETES in args
    return parted(await lua("jobs.outcomes", float(now), *args), pop)


async def recorded(
    lua: Lua, outcomes: list[Outcome], run: Any, pop: bool, more: Any = None
) -> tuple[Any, ...]:
    await lua.redis.flushall()
    await workload(lua)
    if more is not None:
        await more(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        await lua.redis.config_resetstat()
        replies = await run(lua, outcomes, pop)
        ran = await lua.redis.info("commandstats")
    return replies, await snapshot(lua), captured.messages, ran


def calls(ran: dict[str, Any], command: str) -> int:
    return int(ran.get(f"cmdstat_{command}", {}).get("calls", 0))


async def compared(
    lua: Lua, outcomes: list[Outcome], *, pop: bool, more: Any = None, joins: Any = in_one_call
) -> tuple[Any, Any]:
    """The outcomes run one call each, then in one call: the replies, every key and every
    publication the same (each run's commands counted: INFO commandstats); `more`: what the
    workload needs besides; `joins`: how the one call is made."""
    apart = await recorded(lua, outcomes, one_by_one, pop, more)
    joined = await recorded(lua, outcomes, joins, pop, more)
    same_replies(joined[0], apart[0])
    assert joined[1] == apart[1]
    assert joined[2] == apart[2]
    return joined, apart


def same_replies(joined: list[Any], apart: list[Any]) -> None:
    assert len(joined) == len(apart)
    for one, other in zip(joined, apart, strict=True):
        if isinstance(one, tuple) and one[0] == "refused":
            assert other[0] == "refused"
            assert one[1].split(": ", 1)[1] in other[1]  # as the server decorates a call's
        else:
            assert one == other


@pytest.mark.parametrize("pop", [True, False], ids=["with a pop", "without"])
async def test_many_outcomes_in_one_call_leave_what_one_call_each_leaves(
    lua: Lua, pop: bool
) -> None:
    joined, apart = await compared(lua, MIXED, pop=pop)
    keys = joined[1]
    # the comparison covers what it should: run statistics of two queues, failures
    # counted, history appended, a publication for the tracked job
    assert json.loads(await lua("job.get", 300, "a1"))["history"][-1]["what"] == "done"
    assert any(key.startswith("ql:s:run:") and key.endswith(":other") for key in keys)
    run = next(v for k, (_, v, _) in keys.items() if k.startswith("ql:s:run:") and "queue" in k)
    assert run["total"] == "3"  # a1, a2 (moved to its next queue, its run counted) and a6
    assert any(key.startswith("ql:aqless:tp:") for key in keys)
    assert joined[2]
    # and fewer commands: the statistics' reads and writes once per queue and day (run:
    # "queue", "other" twice), the throughput ticks once per minute, the ZREMs once per set
    apart_ran, joined_ran = apart[3], joined[3]
    assert calls(joined_ran, "hmget") == calls(apart_ran, "hmget") - 5 + 3
    assert calls(joined_ran, "zrem") < calls(apart_ran, "zrem")
    assert calls(joined_ran, "hincrby") < calls(apart_ran, "hincrby")


# a job named twice in one call (completed, then put again by a requeue), and a complete
# whose next queue is its own queue: the removals left to the flush must not undo the adds
AGAIN: list[Outcome] = [
    complete("a1", "queue", 100.25),
    ("job.requeue", 100.5, ("w", "queue", "a1", "klass", "{}", 0)),
    ("job.completeAndRequeue", 101.0, ("a2", "w", "queue", "{}", "queue")),
    complete("a3", "queue", 101.5),
    ("job.retry", 102.0, ("a4", "queue", "w", 0, "", "", "1")),
    complete("a4", "queue", 102.5),  # refused: a4 is waiting again
]


async def test_a_job_named_again_or_sent_back_to_its_queue_ends_as_one_by_one(
    lua: Lua,
) -> None:
    joined, _ = await compared(lua, AGAIN, pop=True)
    states = {jid: joined[1][f"ql:j:{jid}"][1]["state"] for jid in ("a1", "a2", "a3", "a4")}
    # a1, a2 and a4 put back in the work set (the call's pop took a1 again), a3 done
    assert states == {"a1": "running", "a2": "waiting", "a3": "complete", "a4": "waiting"}
    assert {"a2", "a4"} <= {jid for jid, _ in joined[1]["ql:q:queue-work"][1]}
    assert joined[0][-2][0] == "refused"


async def full_queue_throttle(lua: Lua) -> None:
    """Queue "tq" runs one job at a time (its queue throttle's maximum 1): t1 holds it."""
    await lua("throttle.set", 75, "ql:q:tq", 1)
    await rput(lua, 76, "t1", queue="tq")
    assert await rpop(lua, 77, 5, queue="tq", worker="w") == ["t1"]


# t1's completion frees its queue throttle's slot, which the call leaves for its flush; the
# put of c into tq (a requeue) counts that throttle's locks: the freed slot counts as free
FREED: list[Outcome] = [
    complete("t1", "tq", 100.0),
    ("job.requeue", 100.5, ("w", "tq", "c", "klass", "{}", 0)),
    complete("a1", "queue", 101.0),
]


async def test_a_throttle_slot_freed_in_the_call_is_free_for_the_outcomes_after(
    lua: Lua,
) -> None:
    joined, apart = await compared(lua, FREED, pop=True, more=full_queue_throttle)
    keys = joined[1]
    assert keys["ql:j:c"][1]["state"] == "waiting"  # not parked behind t1's slot
    assert [jid for jid, _ in keys["ql:q:tq-work"][1]] == ["c"]
    assert "ql:th:ql:q:tq-locks" not in keys
    assert "ql:th:ql:q:tq-pending" not in keys
    # the released slots of a1 and t1 (each job holds its queue's): ZREMs at the flush
    assert calls(joined[3], "zrem") < calls(apart[3], "zrem")


@pytest.mark.parametrize(
    ("bad", "text", "error"),
    [
        (
            ("job.complete", 102.0, ("a3", "thief", "queue", "{}")),
            "Job has been handed out to another worker: w",
            "LockLostError",
        ),
        (
            ("job.fail", 102.0, ("a3", "w", "group", "message", "", "0")),
            "Job a3 attempt 0 is stale: the job is on attempt 1",
            "StaleAttemptError",
        ),
        (
            ("job.retry", 102.0, ("a3", "queue", "w", 0, "", "", "7")),
            "Job a3 attempt 7 is stale: the job is on attempt 1",
            "StaleAttemptError",
        ),
    ],
    ids=["lost lock", "stale fail", "stale retry"],
)
async def test_a_refused_outcome_in_the_middle_errors_only_itself(
    lua: Lua, bad: Outcome, text: str, error: str
) -> None:
    outcomes = [*MIXED[:2], bad, *MIXED[3:]]
    joined, _ = await compared(lua, outcomes, pop=True)
    assert joined[0][2][0] == "refused"
    assert text in joined[0][2][1]
    assert [status for status, _ in joined[0][:-1]].count("refused") == 1
    assert await lua.redis.hget("ql:j:a3", "state") == "running"
    assert await lua.redis.hget("ql:j:a6", "state") == "complete"
    assert type(error_for(bad[0], joined[0][2][1])).__name__ == error


def kept(jid: str, queue: str, now: float, attempt: Argument = "1") -> Outcome:
    """aqless's worker's complete of a job whose data its code left as it was."""
    return ("job.complete", now, (jid, "w", queue, "", "keep_data", "1", "attempt", attempt))


@pytest.mark.parametrize("pop", [True, False], ids=["with a pop", "without"])
async def test_runs_of_plain_completes_leave_what_one_call_each_leaves(lua: Lua, pop: bool) -> None:
    """The worker's completes of jobs whose data was left as it was go in runs (worker and
    queue once, then each one's now, jid and attempt: popafter.lua's `job.complete*`), each
    run as its own call: broken by another outcome, another queue, a stale attempt refused
    in the middle of one, a job named twice (its second complete refused), a tracked job."""
    outcomes: list[Outcome] = [
        kept("a1", "queue", 100.25),
        kept("a2", "queue", 100.5),
        kept("a3", "queue", 101.0, attempt="2"),  # stale: refused, the run goes on
        kept("b1", "other", 101.5),
        ("job.fail", 102.75, ("a4", "w", "group", "message", '{"x": 2}', "1")),
        kept("a5", "queue", 103.0),
        kept("a5", "queue", 103.5),  # named again: not running any more
        complete("a6", "queue", 104.0),
        kept("b2", "other", 86_405.5),
    ]
    joined, _ = await compared(lua, outcomes, pop=pop, joins=as_the_worker_joins)
    replies = joined[0]
    assert [reply[0] for reply in replies[: len(outcomes)]] == [
        "ok",
        "ok",
        "refused",
        "ok",
        "ok",
        "ok",
        "refused",
        "ok",
        "ok",
    ]
    assert json.loads(await lua("job.get", 300, "a1"))["history"][-1]["what"] == "done"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("queue", "w", 1, "queue.put", 9, 0), 'Outcomes(): Arg "command" not an outcome'),
        (("queue", "w", 1, "job.fail", "x", 0), 'Outcomes(): Arg "now" not a number: x'),
        (("queue", "w", 1, "job.fail", 9, 5, "a1"), 'Arg "count" not a count of the'),
        (("queue", "w", 1, "job.fail", 9, -1), 'Arg "count" not a count of the'),
        (("queue", "w", 1, "job.complete*", "w", "queue", 2, 9, "a2", 1), 'Arg "count" not a'),
        (("queue", "w", 1, "job.complete*", "w", "queue", -1), 'Arg "count" not a count'),
        (("queue", "w", 1, "job.complete*", "w", "queue", "x"), 'Arg "count" not a count'),
        (("queue", "w", 1, "job.complete*", "w", "queue", 1, "x", "a2", 1), '"now" not a number'),
        (("queue", "w", "x"), 'Arg "limit" missing or not a number: x'),
    ],
)
async def test_bad_framing_is_refused_before_any_outcome_runs(
    lua: Lua, args: tuple[Argument, ...], text: str
) -> None:
    await workload(lua)
    ok = framed([complete("a1", "queue", 100)])
    await refused(lua, text, "jobs.outcomes", 200, *args[:3], *ok, *args[3:])


RETAINED = 200  # jobs-history-count: a slack of 2 jobs (CORE.md 5.7)


async def test_completions_in_one_call_count_the_retention_once_within_its_bound(
    lua: Lua,
) -> None:
    """The retention marker counts a call's completions in one second with one HINCRBY,
    and the call purges once if one of them would have purged: the completed jobs kept
    after each call pass jobs-history-count by at most its slack (1%), as one by one."""
    await lua("config.set", 0, "jobs-history-count", RETAINED)
    jids = [f"r{k}" for k in range(RETAINED + 12)]
    for k, jid in enumerate(jids):
        await rput(lua, 1 + k / 1000, jid)
    assert len(await rpop(lua, 2, len(jids), worker="w")) == len(jids)
    kept, expected, count = [], [], 0
    for first in range(0, len(jids), 2):  # two completions a call, all in second 500
        pair = [complete(jid, "queue", 500 + first / 1000) for jid in jids[first : first + 2]]
        await lua.redis.config_resetstat()
        await lua("jobs.outcomes", 500.5, "", "", "", *framed(pair))
        ran = await lua.redis.info("commandstats")
        # one for the minute's tick, one for the class's run-time bucket, one for the marker
        assert calls(ran, "hincrby") == 3
        kept.append(int(await lua.redis.zcard("ql:completed")))
        count += 2
        # the completions since the second began: first + 1 and first + 2; 1, 4, 7... purge
        if first % 3 == 0 or (first + 1) % 3 == 0:
            count = min(count, RETAINED)
        expected.append(count)
    assert kept == expected
    assert max(kept) == RETAINED + 2  # the bound is reached, never passed
    assert await lua.redis.hgetall("ql:aqless:retention") == {"500": str(len(jids))}


# completes only, all in second 100, of jobs none of which has dependents (a1 is tracked)
COMPLETES: list[Outcome] = [
    complete(jid, queue, 100 + k / 10)
    for k, (queue, jid) in enumerate(
        (queue, jid) for queue, jids in JOBS.items() for jid in jids if jid != "a6"
    )
]


async def test_a_call_of_completes_asks_after_their_relations_once_and_adds_them_once(
    lua: Lua,
) -> None:
    """The completes of one call: one EXISTS of all their dependents and pending sets (and
    one for the tracking set) instead of one each, and their entries in ql:completed with one
    ZADD for their second (CORE.md 5.7, 6.38); every key as one call each leaves."""
    joined, apart = await compared(lua, COMPLETES, pop=False)
    assert calls(apart[3], "exists") >= len(COMPLETES)  # (one call each: at least one)
    assert calls(joined[3], "exists") == 2
    assert calls(apart[3], "zadd") == len(COMPLETES)
    assert calls(joined[3], "zadd") == 1
    assert len(joined[1]["ql:completed"][1]) == len(COMPLETES)


async def test_a_dependency_registered_in_the_call_is_released_by_a_later_complete(
    lua: Lua,
) -> None:
    """A complete to a next queue that waits on a3 makes a3's dependents set within the
    call: the answer asked before the outcomes ran is forgotten, and a3's complete releases
    a2 as one call each does."""
    outcomes: list[Outcome] = [
        complete("a1", "queue", 100.0),
        ("job.completeAndRequeue", 100.5, ("a2", "w", "queue", "{}", "next", "depends", '["a3"]')),
        complete("a3", "queue", 101.0),
        complete("b1", "other", 101.5),
    ]
    await compared(lua, outcomes, pop=False)
    assert json.loads(await lua("job.get", 300, "a2"))["state"] == "waiting"


async def test_a_job_parked_in_the_call_is_released_by_a_later_complete(lua: Lua) -> None:
    """A requeue (a put) that parks its job behind the queue's full throttle makes the
    throttle's pending set within the call: the answer asked before the outcomes ran is
    forgotten, and the next complete moves the parked job back to its queue's work set, as
    one call each does."""

    async def full(lua: Lua) -> None:  # the six jobs of "queue" hold all its slots
        await lua("throttle.set", 45, "ql:q:queue", 6)

    outcomes: list[Outcome] = [
        complete("b1", "other", 100.0),
        ("job.requeue", 100.5, ("w", "queue", "c", "klass", "{}", 0)),
        complete("a1", "queue", 101.0),
        complete("b2", "other", 101.5),
    ]
    await compared(lua, outcomes, pop=False, more=full)
    assert await lua.redis.zscore("ql:q:queue-work", "c") is not None  # out of the line
