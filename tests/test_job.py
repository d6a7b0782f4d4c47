"""Job and RecurringJob: their attributes against what the server holds, and every verb,
with its error cases, against real servers."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

import aqless
from aqless import (
    ConfigurationError,
    Failure,
    HistoryEntry,
    InvalidArgumentError,
    InvalidValueError,
    Job,
    JobDependedOnError,
    JobNotFoundError,
    JobState,
    LockLostError,
    PayloadError,
    RecurringJob,
    ScriptError,
    StaleAttemptError,
)
from tests.support.clients import START, WORKER, ManualClock, get_job, get_recurring, pop_one

pytest_plugins = ["tests.support.client_fixtures"]

ATTRIBUTES = (
    "jid",
    "klass_name",
    "queue_name",
    "data",
    "priority",
    "tags",
    "state",
    "worker_name",
    "expires_at",
    "history",
    "dependencies",
    "dependents",
    "original_retries",
    "retries_left",
    "failure",
    "tracked",
    "throttles",
    "spawned_from_jid",
)


async def stored(client: aqless.Client, jid: str) -> dict[str, object]:
    """The job as the server stores it, read with plain Redis commands, by attribute name."""
    redis = client.redis
    raw = await redis.hgetall(f"ql:j:{jid}")
    failure = json.loads(raw.get("failure") or "{}")
    entries = [json.loads(entry) for entry in await redis.lrange(f"ql:j:{jid}-history", 0, -1)]
    return {
        "jid": raw["jid"],
        "klass_name": raw["klass"],
        "queue_name": raw["queue"],
        "data": json.loads(raw["data"]),
        "priority": float(raw["priority"]),
        "tags": tuple(json.loads(raw["tags"])),
        "state": raw["state"],
        "worker_name": raw["worker"],
        "expires_at": float(raw["expires"] or 0),
        "history": [(float(e[0]), e[1], e[2] if len(e) > 2 else {}) for e in entries],
        "dependencies": await redis.smembers(f"ql:j:{jid}-dependencies"),
        "dependents": await redis.smembers(f"ql:j:{jid}-dependents"),
        "original_retries": int(raw["retries"]),
        "retries_left": int(raw["remaining"]),
        "failure": Failure(**failure) if failure else None,
        "tracked": await redis.zscore("ql:tracked", jid) is not None,
        "throttles": tuple(json.loads(raw["throttles"])),
        "spawned_from_jid": raw.get("spawned_from_jid"),
    }


def snapshot(job: Job) -> dict[str, object]:
    """A Job's attributes in the shape of `stored` (sets for the unordered ones)."""
    values = {name: getattr(job, name) for name in ATTRIBUTES}
    values["history"] = [(entry.when, entry.what, dict(entry.details)) for entry in job.history]
    values["dependencies"] = set(job.dependencies)
    values["dependents"] = set(job.dependents)
    return values


async def assert_current(client: aqless.Client, job: Job, *names: str) -> None:
    """The snapshot agrees with the server on `names` (every attribute by default)."""
    server = await stored(client, job.jid)
    mine = snapshot(job)
    for name in names or ATTRIBUTES:
        assert mine[name] == server[name], name


# -- attributes --------------------------------------------------------------------------------


async def test_attributes_are_typed_and_equal_to_what_the_server_holds(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Parent", jid="parent")
    await queue.put(
        "app.Child",
        {"n": [1, 2]},
        jid="child",
        priority=2.5,
        tags=["a", "b"],
        retries=3,
        depends=["parent"],
        throttles=["api"],
    )
    job = await get_job(client, "child")
    await job.track()
    job = await job.refresh()
    assert job.jid == "child"
    assert job.klass_name == "app.Child"
    assert job.queue_name == "q"
    assert job.data == {"n": [1, 2]}
    assert type(job.priority) is float
    assert job.priority == 2.5
    assert job.tags == ("a", "b")
    assert job.state is JobState.DEPENDS
    assert job.worker_name == ""
    assert type(job.expires_at) is float
    assert job.expires_at == 0.0
    assert job.history == (HistoryEntry(when=START, what="put", details={"queue": "q"}),)
    assert job.dependencies == ("parent",)
    assert job.dependents == ()
    assert (job.original_retries, job.retries_left) == (3, 3)
    assert job.failure is None
    assert job.tracked is True
    assert job.throttles == ("api", "ql:q:q")
    assert job.spawned_from_jid is None
    assert repr(job) == "<Job child app.Child depends in 'q'>"
    await assert_current(client, job)

    parent = await get_job(client, "parent")
    assert parent.dependents == ("child",)
    await assert_current(client, parent)


async def test_attributes_in_every_state_match_the_server(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", {"v": 1}, jid="waiting", priority=-1)
    await queue.put("app.Job", jid="scheduled", delay=60)
    await queue.put("app.Job", jid="done", priority=3)
    await queue.put("app.Job", jid="failed", priority=2)
    await queue.put("app.Job", jid="running", priority=1)
    await queue.recur("app.Tick", {"t": 1}, 3600, jid="tick")
    clock.advance(2)
    await (await pop_one(queue)).complete()
    await (await pop_one(queue)).fail("boom", "it broke")
    await pop_one(queue)
    spawned = await pop_one(queue)
    assert (spawned.jid, spawned.spawned_from_jid) == ("tick-1", "tick")

    for jid in ("waiting", "scheduled", "done", "failed", "running", "tick-1"):
        await assert_current(client, await get_job(client, jid))
    running = await get_job(client, "running")
    assert (running.state, running.worker_name, running.expires_at) == (
        JobState.RUNNING,
        WORKER,
        START + 2 + 60,
    )
    failed = await get_job(client, "failed")
    assert failed.failure == Failure("boom", "it broke", when=START + 2, worker=WORKER)
    assert failed.history[-1] == HistoryEntry(
        START + 2, "failed", {"worker": WORKER, "group": "boom"}
    )
    done = await get_job(client, "done")
    assert (done.state, done.queue_name, done.history[-1].what) == (JobState.COMPLETE, "", "done")


async def test_ttl(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job")
    job = await pop_one(queue)
    assert job.ttl == 60.0
    clock.advance(10)
    assert job.ttl == 50.0
    clock.advance(60)
    assert job.ttl == -10.0  # expired


# -- complete ----------------------------------------------------------------------------------


async def test_complete(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", {"v": 1}, jid="j")
    job = await pop_one(queue)
    job.data = {"v": 2, "result": "ok"}  # the data is saved with the completion
    clock.advance(3)
    assert await job.complete() is JobState.COMPLETE
    assert (job.state, job.queue_name, job.worker_name, job.expires_at) == (
        JobState.COMPLETE,
        "",
        "",
        0.0,
    )
    await assert_current(client, job, "state", "queue_name", "worker_name", "expires_at", "data")
    assert await client.jobs.completed() == ["j"]
    assert (await job.refresh()).history[-1] == HistoryEntry(START + 3, "done", {})
    assert await queue.length() == 0


async def test_complete_into_a_next_queue(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j")
    job = await pop_one(client.queues["q"])
    assert await job.complete("next") is JobState.WAITING
    assert (job.state, job.queue_name, job.worker_name) == (JobState.WAITING, "next", "")
    await assert_current(client, job, "state", "queue_name", "worker_name", "expires_at")
    assert await client.queues["q"].length() == 0
    assert (await pop_one(client.queues["next"])).jid == "j"


async def test_complete_into_a_next_queue_after_a_delay(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j")
    job = await pop_one(client.queues["q"])
    assert await job.complete("next", delay=30) is JobState.SCHEDULED
    assert job.queue_name == "next"
    following = client.queues["next"]
    assert await following.jobs(JobState.SCHEDULED) == ["j"]
    # the job's state is the one complete reported (qless-core stores `waiting` here)
    assert await state_of(client, "j") is JobState.SCHEDULED
    clock.advance(29)
    assert await following.pop() is None
    assert await state_of(client, "j") is JobState.SCHEDULED
    clock.advance(1)
    # due: a peek promotes it and its state, as for a job put with a delay
    assert [job.jid for job in await following.peek(1)] == ["j"]
    assert await state_of(client, "j") is JobState.WAITING
    assert (await pop_one(following)).jid == "j"


async def state_of(client: aqless.Client, jid: str) -> JobState | str:
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    return job.state


async def test_complete_into_a_next_queue_depending_on_other_jobs(
    timed_client: aqless.Client,
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", priority=1)
    await queue.put("app.Job", jid="other")
    job = await pop_one(queue)
    assert await job.complete("next", depends=["other", "no-such-job"]) is JobState.DEPENDS
    fresh = await job.refresh()
    assert (fresh.state, fresh.queue_name, fresh.dependencies) == (
        JobState.DEPENDS,
        "next",
        ("other",),
    )
    await (await pop_one(queue)).complete()  # `other`
    assert (await job.refresh()).state == JobState.WAITING
    # nothing left to wait for: waiting at once
    await queue.put("app.Job", jid="k")
    assert await (await pop_one(queue)).complete("next", depends=["other"]) is JobState.WAITING


async def test_complete_refusals(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j")
    waiting = await get_job(client, "j")
    with pytest.raises(LockLostError, match="not currently running: waiting"):
        await waiting.complete()
    job = await pop_one(queue)
    with pytest.raises(ValueError, match="need a next_queue"):
        await job.complete(delay=10)
    with pytest.raises(ValueError, match="need a next_queue"):
        await job.complete(depends=["x"])
    with pytest.raises(InvalidArgumentError) as raised:
        await job.complete("next", delay=math.nan)
    assert raised.value.command == "job.completeAndRequeue"
    job.data = {"not json": {1, 2}}
    with pytest.raises(PayloadError):
        await job.complete()
    assert (await job.refresh()).state == JobState.RUNNING  # nothing happened
    job.data = {}
    await (await job.refresh()).timeout()  # taken away: the complete is refused
    with pytest.raises(LockLostError):
        await job.complete()
    assert job.worker_name == WORKER  # never hidden, and the job is still thought ours
    assert not job.released
    job = await pop_one(queue)
    job.data = {}
    assert await job.complete() is JobState.COMPLETE
    with pytest.raises(LockLostError, match="not currently running: complete"):
        await job.complete()


# -- fail --------------------------------------------------------------------------------------


async def test_fail(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    clock.advance(2)
    await job.fail("boom", "Traceback: ...")
    assert (job.state, job.worker_name, job.expires_at) == (JobState.FAILED, "", 0.0)
    await assert_current(client, job, "state", "worker_name", "expires_at")
    fresh = await job.refresh()
    assert fresh.failure == Failure("boom", "Traceback: ...", when=START + 2, worker=WORKER)
    assert (await client.jobs.failed("boom")).jids == ("j",)
    assert await queue.length() == 0
    with pytest.raises(LockLostError, match="not currently running: failed"):
        await job.fail("boom", "again")


# -- heartbeat ---------------------------------------------------------------------------------


async def test_heartbeat_returns_a_later_expiry(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    first = job.expires_at
    assert first == START + 60
    clock.advance(10)
    expires = await job.heartbeat()
    assert expires == START + 70 > first
    assert job.expires_at == expires
    await assert_current(client, job, "expires_at", "state", "worker_name")
    await queue.set_heartbeat(30)
    assert await job.heartbeat() == START + 40


async def test_heartbeat_of_a_cancelled_job(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    await (await get_job(timed_client, "j")).cancel()
    with pytest.raises(JobNotFoundError, match="Heartbeat\\(\\): Job does not exist") as raised:
        await job.heartbeat()
    assert raised.value.command == "job.heartbeat"
    with pytest.raises(JobNotFoundError):
        await job.complete()
    with pytest.raises(JobNotFoundError):
        await job.fail("boom", "gone")
    with pytest.raises(JobNotFoundError):
        await job.retry()


async def test_heartbeat_of_a_job_not_running(timed_client: aqless.Client) -> None:
    await timed_client.queues["q"].put("app.Job", jid="j")
    job = await get_job(timed_client, "j")
    with pytest.raises(LockLostError, match="not currently running: waiting"):
        await job.heartbeat()


# -- losing the lock ---------------------------------------------------------------------------


async def test_a_lock_given_to_another_worker_is_lost(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    await client.config.set("grace-period", 0)
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j")
    mine = await pop_one(queue)
    clock.advance(61)  # past the lock's expiry, and the grace period is 0
    theirs = await pop_one(queue, worker="worker-2")
    assert theirs.jid == "j"
    assert theirs.retries_left == 4  # the lapse spent a retry
    # aqless's Job sends its attempt: each verb of the first is stale (a LockLostError)
    with pytest.raises(StaleAttemptError, match="attempt 1 is stale") as stale:
        await mine.complete()
    assert stale.value.command == "job.complete"
    with pytest.raises(StaleAttemptError, match="attempt 1 is stale"):
        await mine.heartbeat()
    # without an attempt (other clients), the worker name refuses them
    mine.attempt = None
    with pytest.raises(LockLostError, match="handed out to another worker: worker-2") as raised:
        await mine.complete()
    assert raised.value.command == "job.complete"
    with pytest.raises(LockLostError, match="given out to another worker: worker-2"):
        await mine.heartbeat()
    with pytest.raises(LockLostError, match="running with another worker: worker-2"):
        await mine.fail("boom", "late")
    with pytest.raises(LockLostError, match="given to another worker: worker-2"):
        await mine.retry()
    # the new holder is unaffected
    assert await theirs.heartbeat() == START + 61 + 60
    assert await theirs.complete() is JobState.COMPLETE


async def test_a_lapsed_lock_is_ours_during_the_grace_period(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await client.config.get("grace-period") == "10"
    # within the grace period, the job is still ours
    await queue.put("app.Job", jid="j")
    mine = await pop_one(queue)
    clock.advance(61)
    assert await queue.pop(worker="worker-2") is None  # a warning, not a reclaim
    fresh = await mine.refresh()
    assert (fresh.state, fresh.worker_name) == (JobState.RUNNING, WORKER)
    assert await mine.complete() is JobState.COMPLETE
    # after it, the job goes to whoever pops next
    await queue.put("app.Job", jid="k")
    mine = await pop_one(queue)
    clock.advance(61)
    assert await queue.pop(worker="worker-2") is None
    clock.advance(10)
    assert (await pop_one(queue, worker="worker-2")).jid == "k"
    with pytest.raises(StaleAttemptError, match="attempt 1 is stale"):  # a LockLostError
        await mine.complete()


# -- retry -------------------------------------------------------------------------------------


async def test_retry(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", retries=2)
    job = await pop_one(queue)
    assert await job.retry() == 1
    assert (job.state, job.retries_left) == (JobState.WAITING, 1)
    await assert_current(client, job, "state", "retries_left")

    job = await pop_one(queue)
    assert await job.retry(30) == 0
    assert (job.state, job.retries_left) == (JobState.SCHEDULED, 0)
    await assert_current(client, job, "state", "retries_left")
    assert await queue.jobs(JobState.SCHEDULED) == ["j"]
    clock.advance(29)
    assert await queue.pop() is None
    clock.advance(1)
    job = await pop_one(queue)

    assert await job.retry() == -1  # none left: failed
    assert job.state == JobState.FAILED
    await assert_current(client, job, "state")
    fresh = await job.refresh()
    assert fresh.failure == Failure(
        "failed-retries-q", 'Job exhausted retries in queue "q"', when=START + 30, worker=""
    )
    assert (await client.jobs.failed("failed-retries-q")).jids == ("j",)


async def test_a_handle_agrees_with_the_server_on_what_its_verbs_change(
    timed_client: aqless.Client,
) -> None:
    """A verb changes the attributes the server changed, as the server holds them: a
    retried job keeps its worker's name and expiry there, so the handle does too."""
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", retries=2)
    job = await pop_one(queue)
    await job.retry()
    await assert_current(client, job, "state", "retries_left", "worker_name", "expires_at")
    assert job.worker_name == WORKER
    job = await pop_one(queue)
    await job.fail("boom", "said so")
    await assert_current(client, job, "state", "worker_name")
    await queue.put("app.Job", jid="j", retries=2)
    job = await pop_one(queue)
    await job.retry()
    job = await pop_one(queue)
    await job.complete()
    await assert_current(
        client, job, "state", "queue_name", "worker_name", "expires_at", "failure", "retries_left"
    )
    await queue.put("app.Job", jid="k")
    job = await pop_one(queue)
    await job.hand_back("stopping")
    await assert_current(client, job, "state", "worker_name", "expires_at")


async def test_retry_with_a_group_and_message(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", retries=1)
    job = await pop_one(queue)
    assert await job.retry(0, "flaky", "timed out") == 0
    fresh = await job.refresh()
    assert (fresh.state, fresh.failure) == (
        JobState.WAITING,
        Failure("flaky", "timed out", when=START, worker=WORKER),
    )
    job = await pop_one(queue)
    assert await job.retry(0, "flaky", "timed out again") == -1
    fresh = await job.refresh()
    assert fresh.state == JobState.FAILED
    assert fresh.failure == Failure("flaky", "timed out again", when=START, worker=WORKER)
    assert await client.jobs.failure_groups() == {"flaky": 1}


async def test_retry_refusals(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job", jid="j")
    waiting = await get_job(timed_client, "j")
    with pytest.raises(LockLostError, match="not currently running: waiting"):
        await waiting.retry()
    job = await pop_one(queue)
    with pytest.raises(InvalidArgumentError, match="delay must be a number of seconds"):
        await job.retry(math.nan)
    assert (await job.refresh()).retries_left == 5


# -- cancel ------------------------------------------------------------------------------------


async def test_cancel(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j", tags=["t"])
    job = await get_job(client, "j")
    await job.cancel()
    assert await client.jobs.get("j") is None
    assert await queue.length() == 0
    assert (await client.jobs.tagged("t")).total == 0
    await job.cancel()  # already gone: nothing to do


async def test_cancel_refuses_a_job_others_depend_on(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="first")
    await queue.put("app.Job", jid="second", depends=["first"])
    first = await get_job(client, "first")
    with pytest.raises(JobDependedOnError, match="first is a dependency of second"):
        await first.cancel()
    assert await client.jobs.get("first") is not None
    await (await get_job(client, "second")).cancel()
    await first.cancel()  # nobody depends on it now
    assert await client.jobs.get("first") is None


# -- move / requeue ----------------------------------------------------------------------------


async def test_move(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j", priority=2, tags=["t"])
    job = await get_job(client, "j")
    await job.move("other")
    assert job.queue_name == "other"
    await assert_current(client, job, "queue_name", "data", "priority", "tags", "klass_name")
    assert (await client.queues["q"].length(), await client.queues["other"].length()) == (0, 1)
    assert Job.requeue is Job.move
    await job.requeue("q")
    assert (await job.refresh()).queue_name == "q"


async def test_move_with_options(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="before")
    await client.queues["q"].put("app.Job", jid="j")
    job = await get_job(client, "j")
    await job.move(
        "other",
        delay=0,
        priority=7,
        tags=["moved"],
        retries=1,
        depends=["before"],
        throttles=["api"],
    )
    fresh = await job.refresh()
    assert (fresh.queue_name, fresh.priority, fresh.tags, fresh.original_retries) == (
        "other",
        7.0,
        ("moved",),
        1,
    )
    assert (fresh.state, fresh.dependencies, fresh.throttles) == (
        JobState.DEPENDS,
        ("before",),
        ("api", "ql:q:other"),
    )
    await job.undepend(all=True)
    await job.move("other", delay=30)
    assert (await job.refresh()).state == JobState.SCHEDULED


async def test_move_reads_where_the_put_left_the_job(timed_client: aqless.Client) -> None:
    """The put decides where a moved job goes (a full throttle parks it, dependencies done
    already leave it waiting); the handle shows what the server holds, not a guess."""
    client = timed_client
    await client.throttles["api"].set(1)
    await client.queues["q"].put("app.Job", jid="holder", throttles=["api"])
    await pop_one(client.queues["q"])  # holds the throttle's one place
    await client.queues["q"].put("app.Job", jid="j")
    job = await pop_one(client.queues["q"])
    await job.move("other", throttles=["api"])
    assert job.state == JobState.THROTTLED
    assert job.released
    await assert_current(client, job)
    await client.queues["q"].put("app.Job", jid="done")
    await (await pop_one(client.queues["q"])).complete()
    await job.move("other", depends=["done"])
    assert job.state == JobState.WAITING
    await assert_current(client, job)


async def test_moving_a_running_job_takes_it_from_its_worker(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j")
    job = await pop_one(client.queues["q"])
    await (await get_job(client, "j")).move("other")
    with pytest.raises(LockLostError):
        await job.complete()
    with pytest.raises(LockLostError):
        await job.heartbeat()
    assert (await pop_one(client.queues["other"])).jid == "j"


async def test_move_of_a_cancelled_job(timed_client: aqless.Client) -> None:
    await timed_client.queues["q"].put("app.Job", jid="j")
    job = await get_job(timed_client, "j")
    await job.cancel()
    with pytest.raises(JobNotFoundError, match="Requeue\\(\\): Job j does not exist"):
        await job.move("other")
    assert await timed_client.jobs.get("j") is None


# -- tags, tracking, priority ------------------------------------------------------------------


async def test_tag_and_untag(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j", tags=["a"])
    job = await get_job(client, "j")
    assert await job.tag("b", "c") == ("a", "b", "c")
    assert await job.tag("c", "d") == ("a", "b", "c", "d")
    assert snapshot(job)["tags"] == ("a", "b", "c", "d")
    await assert_current(client, job, "tags")
    assert (await client.jobs.tagged("d")).jids == ("j",)
    assert await job.untag("a", "c", "never-there") == ("b", "d")
    assert job.tags == ("b", "d")
    await assert_current(client, job, "tags")
    assert (await client.jobs.tagged("a")).total == 0
    assert await job.untag("b", "d") == ()
    await job.cancel()
    with pytest.raises(JobNotFoundError, match="Tag\\(\\): Job j does not exist"):
        await job.tag("x")
    with pytest.raises(JobNotFoundError):
        await job.untag("x")


async def test_track_and_untrack(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j")
    job = await get_job(client, "j")
    assert snapshot(job)["tracked"] is False
    assert await job.track() is True
    assert await job.track() is False  # already tracked
    assert job.tracked is True
    await assert_current(client, job, "tracked")
    assert [tracked.jid for tracked in (await client.jobs.tracked())[0]] == ["j"]
    assert await job.untrack() is True
    assert await job.untrack() is False
    await assert_current(client, job, "tracked")  # False, as on the server
    await job.cancel()
    with pytest.raises(JobNotFoundError, match="Track\\(\\): Job does not exist"):
        await job.track()
    assert snapshot(job)["tracked"] is False  # unchanged by the refusal
    with pytest.raises(JobNotFoundError):
        await job.untrack()


async def test_set_priority(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="older")
    clock.advance(1)
    await queue.put("app.Job", jid="newer")
    job = await get_job(client, "newer")
    await job.set_priority(10)
    assert job.priority == 10.0
    await assert_current(client, job, "priority")
    assert [popped.jid for popped in await queue.pop_many(2)] == ["newer", "older"]
    with pytest.raises(InvalidArgumentError, match="priority must be a number"):
        await job.set_priority(math.nan)
    assert (await job.refresh()).priority == 10.0


# -- dependencies ------------------------------------------------------------------------------


async def test_depend_and_undepend(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    for jid in ("a", "b", "c"):
        await queue.put("app.Job", jid=jid)
    await queue.put("app.Job", jid="j", depends=["a"])
    job = await get_job(client, "j")
    await job.depend("b", "c", "no-such-job")
    assert set((await job.refresh()).dependencies) == {"a", "b", "c"}
    assert (await get_job(client, "b")).dependents == ("j",)
    await job.undepend("a")
    fresh = await job.refresh()
    assert (fresh.state, set(fresh.dependencies)) == (JobState.DEPENDS, {"b", "c"})
    assert (await get_job(client, "a")).dependents == ()
    await job.undepend("b", "c")  # the last ones: waiting now
    fresh = await job.refresh()
    assert (fresh.state, fresh.dependencies) == (JobState.WAITING, ())


async def test_undepend_all(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="a")
    await queue.put("app.Job", jid="b")
    await queue.put("app.Job", jid="j", depends=["a", "b"])
    job = await get_job(client, "j")
    await job.undepend(all=True)
    fresh = await job.refresh()
    assert (fresh.state, fresh.dependencies) == (JobState.WAITING, ())
    assert (await get_job(client, "a")).dependents == ()
    assert (await get_job(client, "b")).dependents == ()


async def test_depend_needs_the_depends_state(timed_client: aqless.Client) -> None:
    await timed_client.queues["q"].put("app.Job", jid="a")
    await timed_client.queues["q"].put("app.Job", jid="j")
    job = await get_job(timed_client, "j")
    with pytest.raises(ScriptError, match="Job j not in the depends state: waiting") as raised:
        await job.depend("a")
    assert type(raised.value) is ScriptError
    with pytest.raises(ScriptError, match="not in the depends state"):
        await job.undepend(all=True)
    assert (await job.refresh()).dependencies == ()


# -- log, timeout, refresh ---------------------------------------------------------------------


async def test_log_appears_in_the_history(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", jid="j")
    job = await get_job(client, "j")
    clock.advance(1)
    await job.log("charged", amount=12.5, currency="EUR", lines=[1, 2])
    await job.log("looked at")
    history = (await job.refresh()).history
    assert history[-2:] == (
        HistoryEntry(START + 1, "charged", {"amount": 12.5, "currency": "EUR", "lines": [1, 2]}),
        HistoryEntry(START + 1, "looked at", {}),
    )


async def test_log_refusals(timed_client: aqless.Client) -> None:
    await timed_client.queues["q"].put("app.Job", jid="j")
    job = await get_job(timed_client, "j")
    with pytest.raises(PayloadError, match="log data is not JSON-serializable"):
        await job.log("bad", when=object())
    assert len((await job.refresh()).history) == 1
    await job.cancel()
    with pytest.raises(JobNotFoundError, match="Log\\(\\): Job j does not exist"):
        await job.log("too late")


async def test_timeout(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.put("app.Job", jid="j")
    job = await pop_one(queue)
    await queue.put("app.Job", jid="urgent", priority=100)
    await job.timeout()
    assert (job.state, job.worker_name, job.expires_at) == (JobState.STALLED, "", 0.0)
    await assert_current(client, job, "state", "worker_name", "expires_at")
    assert (await job.refresh()).history[-1].what == "timed-out"
    with pytest.raises(LockLostError):
        await job.complete()
    # a timed-out job is handed out before any other
    assert (await pop_one(queue, worker="worker-2")).jid == "j"


async def test_timeout_of_a_job_not_running(timed_client: aqless.Client) -> None:
    await timed_client.queues["q"].put("app.Job", jid="j")
    job = await get_job(timed_client, "j")
    with pytest.raises(LockLostError, match="Timeout\\(\\): Job j not running"):
        await job.timeout()
    assert (await job.refresh()).state == JobState.WAITING


async def test_refresh(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].put("app.Job", {"v": 1}, jid="j")
    job = await get_job(client, "j")
    other = await get_job(client, "j")
    await other.tag("elsewhere")
    await other.set_priority(3)
    assert (job.tags, job.priority) == ((), 0.0)  # a snapshot does no I/O
    fresh = await job.refresh()
    assert fresh is not job
    assert (fresh.tags, fresh.priority) == (("elsewhere",), 3.0)
    await assert_current(client, fresh)
    await job.cancel()
    with pytest.raises(JobNotFoundError, match="Job j does not exist"):
        await job.refresh()


# -- Job.build: no server ----------------------------------------------------------------------


def test_build_makes_a_job_without_a_server() -> None:
    job = Job.build("app.jobs.Welcome", {"user": 42})
    assert (job.jid, job.klass_name, job.queue_name, job.data) == (
        "jid",
        "app.jobs.Welcome",
        "queue",
        {"user": 42},
    )
    assert (job.state, job.worker_name, job.priority, job.tags) == (
        JobState.RUNNING,
        "worker",
        0.0,
        (),
    )
    assert (job.original_retries, job.retries_left, job.failure, job.tracked) == (5, 5, None, False)
    assert (job.history, job.dependencies, job.dependents, job.expires_at) == ((), (), (), 0.0)
    assert job.spawned_from_jid is None
    assert Job.build("app.Job").data == {}


def test_build_takes_any_field() -> None:
    expires = time.time() + 30
    job = Job.build(
        "app.Job",
        [1, 2],
        jid="j1",
        queue="emails",
        state=JobState.WAITING,
        worker="w",
        priority=3,
        tags=["a"],
        retries=2,
        remaining=1,
        expires=expires,
        failure={"group": "boom", "message": "m", "when": 1, "worker": "w"},
        spawned_from_jid="tick",
    )
    assert (job.jid, job.queue_name, job.state, job.worker_name) == (
        "j1",
        "emails",
        JobState.WAITING,
        "w",
    )
    assert (job.priority, job.tags, job.original_retries, job.retries_left) == (3.0, ("a",), 2, 1)
    assert job.failure == Failure("boom", "m", 1.0, "w")
    assert job.spawned_from_jid == "tick"
    assert 0 < job.ttl <= 30  # by this machine's clock


def test_history_is_decoded_when_first_read() -> None:
    entries = [{"what": "put", "when": 1, "queue": "q"}, "junk", {"what": "popped", "when": 2}]
    job = Job.build("app.Job", history=entries)
    assert job.history == (
        HistoryEntry(when=1.0, what="put", details={"queue": "q"}),
        HistoryEntry(when=2.0, what="popped", details={}),
    )
    assert job.history is job.history
    job.history = ()
    assert job.history == ()
    assert Job.build("app.Job").history == ()
    assert Job.build("app.Job", history={}).history == ()  # cjson's empty list


class MyJobClass:
    @staticmethod
    def process(job: Job) -> None:
        pass


def my_job_function(job: Job) -> None:
    pass


@pytest.mark.parametrize("klass", [MyJobClass, my_job_function])
async def test_build_names_a_class_or_function_as_put_does(
    client: aqless.Client, klass: type | Callable[[Job], None]
) -> None:
    jid = await client.queues["q"].put(klass, {})
    stored = await client.jobs.get(jid)
    assert stored is not None
    built = Job.build(klass)
    assert built.klass_name == stored.klass_name == f"tests.test_job.{klass.__qualname__}"


def test_build_refuses_data_that_is_not_json() -> None:
    with pytest.raises(PayloadError):
        Job.build("app.Job", {"x": object()})


VERBS: dict[str, Callable[[Job], Awaitable[object]]] = {
    "complete": lambda job: job.complete(),
    "fail": lambda job: job.fail("group", "message"),
    "heartbeat": lambda job: job.heartbeat(),
    "retry": lambda job: job.retry(),
    "cancel": lambda job: job.cancel(),
    "move": lambda job: job.move("other"),
    "requeue": lambda job: job.requeue("other"),
    "tag": lambda job: job.tag("t"),
    "untag": lambda job: job.untag("t"),
    "track": lambda job: job.track(),
    "untrack": lambda job: job.untrack(),
    "set_priority": lambda job: job.set_priority(1),
    "depend": lambda job: job.depend("other"),
    "undepend": lambda job: job.undepend(all=True),
    "log": lambda job: job.log("message", detail=1),
    "timeout": lambda job: job.timeout(),
    "refresh": lambda job: job.refresh(),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
async def test_a_built_job_has_no_client_for_its_verbs(verb: str) -> None:
    job = Job.build("app.Job", {"v": 1})
    with pytest.raises(ConfigurationError, match="built without a client"):
        await VERBS[verb](job)
    assert job.state == JobState.RUNNING  # untouched


# -- RecurringJob ------------------------------------------------------------------------------


async def test_recurring_job_attributes(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].recur(
        "app.Tick",
        {"t": 1},
        90,
        jid="tick",
        priority=2,
        tags=["cron"],
        retries=3,
        backlog=4,
        throttles=["api"],
    )
    template = await client.jobs.get("tick")
    assert isinstance(template, RecurringJob)
    assert (template.jid, template.klass_name, template.queue_name, template.data) == (
        "tick",
        "app.Tick",
        "q",
        {"t": 1},
    )
    assert type(template.interval) is float
    assert type(template.priority) is float
    assert (template.interval, template.priority, template.retries, template.backlog) == (
        90.0,
        2.0,
        3,
        4,
    )
    assert (template.count, template.tags, template.throttles) == (0, ("cron",), ("api", "ql:q:q"))
    assert repr(template) == "<RecurringJob tick app.Tick every 90.0s>"
    raw = await client.redis.hgetall("ql:r:tick")
    assert (raw["klass"], raw["queue"], json.loads(raw["data"])) == ("app.Tick", "q", {"t": 1})
    assert (float(raw["interval"]), float(raw["priority"]), int(raw["retries"])) == (90, 2, 3)


UPDATES: list[tuple[dict[str, Any], str, object]] = [
    ({"interval": 30}, "interval", 30.0),
    ({"priority": 5}, "priority", 5.0),
    ({"retries": 2}, "retries", 2),
    ({"data": {"v": 2}}, "data", {"v": 2}),
    ({"klass": "app.Other"}, "klass_name", "app.Other"),
    ({"queue": "other"}, "queue_name", "other"),
    ({"backlog": 3}, "backlog", 3),
    ({"throttles": ["api"]}, "throttles", ("api",)),
]


@pytest.mark.parametrize(("options", "attribute", "value"), UPDATES)
async def test_recurring_job_update(
    timed_client: aqless.Client, options: dict[str, Any], attribute: str, value: object
) -> None:
    client = timed_client
    await client.queues["q"].recur("app.Tick", {"t": 1}, 60, jid="tick")
    template = await get_recurring(client, "tick")
    before = {name: getattr(template, name) for name in RecurringJob.__slots__[1:]}
    await template.update(**options)
    assert getattr(template, attribute) == value
    after = {name: getattr(template, name) for name in RecurringJob.__slots__[1:]}
    changed = {name for name in after if after[name] != before[name]}
    if attribute == "queue_name":  # its own queue's throttle follows the template
        assert changed == {"queue_name", "throttles"}
    else:
        assert changed == {attribute}
    fresh = await get_recurring(client, "tick")
    assert getattr(fresh, attribute) == value


async def test_recurring_job_updates_shape_the_next_spawns(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    await client.queues["q"].recur("app.Tick", {"t": 1}, 60, jid="tick", offset=60)
    template = await get_recurring(client, "tick")
    await template.update(
        interval=30, priority=5, retries=2, data={"t": 2}, klass="app.Tock", queue="other"
    )
    clock.advance(30)  # the first spawn moved 30 s earlier with the interval
    assert await client.queues["q"].pop() is None
    job = await pop_one(client.queues["other"])
    assert (job.jid, job.klass_name, job.data, job.priority, job.original_retries) == (
        "tick-1",
        "app.Tock",
        {"t": 2},
        5.0,
        2,
    )
    await template.update()  # nothing to change
    assert (await get_recurring(client, "tick")).klass_name == "app.Tock"


async def test_recurring_job_update_refusals(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].recur("app.Tick", {"t": 1}, 60, jid="tick")
    template = await get_recurring(client, "tick")
    bad: list[dict[str, Any]] = [
        {"interval": math.nan},
        {"interval": 0},
        {"interval": -10},
        {"backlog": -1},
        {"retries": -1},
        {"retries": 1.5},
        {"priority": math.inf},
        {"throttles": "abc"},
    ]
    for changes in bad:
        ((name, value),) = changes.items()
        with pytest.raises(InvalidValueError, match=f"{name} must be") as refused:
            await template.update(**changes)
        assert (refused.value.option, refused.value.value) == (name, value)
    stored = await client.redis.hgetall("ql:r:tick")
    assert (stored["interval"], stored["backlog"], stored["retries"]) == ("60", "0", "0")
    with pytest.raises(PayloadError):
        await template.update(data={"x": object()})
    assert (await get_recurring(client, "tick")).interval == 60.0
    await template.cancel()
    with pytest.raises(JobNotFoundError, match="No recurring job tick"):
        await template.update(priority=1)


async def test_recurring_job_tag_and_untag(timed_client: aqless.Client) -> None:
    client = timed_client
    await client.queues["q"].recur("app.Tick", {}, 60, jid="tick", tags=["cron"])
    template = await get_recurring(client, "tick")
    assert await template.tag("a", "b") == ("cron", "a", "b")
    assert await template.tag("a") == ("cron", "a", "b")
    assert template.tags == ("cron", "a", "b")
    assert (await get_recurring(client, "tick")).tags == ("cron", "a", "b")
    assert await template.untag("cron", "b") == ("a",)
    assert await template.untag("a") == ()
    assert (await get_recurring(client, "tick")).tags == ()
    await template.cancel()
    with pytest.raises(JobNotFoundError, match="Tag\\(\\): Job tick does not exist"):
        await template.tag("x")
    with pytest.raises(JobNotFoundError, match="Untag\\(\\): Job tick does not exist"):
        await template.untag("x")


async def test_recurring_job_cancel(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    await queue.recur("app.Tick", {}, 60, jid="tick")
    spawned = await pop_one(queue)
    template = await get_recurring(client, "tick")
    await template.cancel()
    assert await client.jobs.get("tick") is None
    assert await queue.jobs("recurring") == []
    clock.advance(600)
    assert await queue.pop() is None  # no more spawns
    assert (await spawned.refresh()).state == JobState.RUNNING  # spawned jobs stay
    await template.cancel()  # already gone: nothing to do
