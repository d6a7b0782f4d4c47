"""Acceptance tests from qless-perl's README (/work/shared/seeds/000_1369c33a3dfc3b9a.txt),
section by section, each promise translated to aqless's async API and checked on a real
server (Valkey 9 and Redis 7).

Perl's blocking calls are awaited coroutines here; ``$client->jobs->item($jid)`` is
``await client.jobs.get(jid)``; job code is registered with ``aqless.Handlers`` instead of
being loaded from the class a payload names.
"""

from __future__ import annotations

import os
import re
import signal
import socket
from typing import Any

import anyio
import httpx
import pytest
import redis.asyncio as aioredis

import aqless
from aqless.web import create_app
from tests.seeds._fixtures_other import (  # noqa: F401
    OTHER_WORKER,
    other_fixture,
    timed_other_fixture,
)
from tests.support.clients import START, ManualClock, get_job, get_recurring, pop_one
from tests.support.worker import (
    Recorder,
    collecting,
    history_of,
    make_worker,
    one,
    running,
    until,
    until_state,
)
from tests.support.worker_processes import (
    WORKER,
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    spawn_fixture,  # noqa: F401
)
from tests.web.conftest import csrf_token

pytest_plugins = ["tests.support.client_fixtures"]
pytestmark = pytest.mark.timeout(60)

DAY = 86400


# -- Philosophy and Nomenclature ---------------------------------------------------------------


async def test_a_queue_holds_scheduled_waiting_and_running_jobs_at_once(
    client: aqless.Client,
) -> None:
    """A queue can contain several jobs that are scheduled to be run at a certain time,
    several jobs that are waiting to run, and jobs that are currently running."""
    testing = client.queues["testing"]
    later = await testing.put("MyJobClass", {}, delay=600)
    first = await testing.put("MyJobClass", {})
    second = await testing.put("MyJobClass", {})
    running_job = await pop_one(testing)
    counts = await testing.counts()
    assert (counts.scheduled, counts.waiting, counts.running) == (1, 1, 1)
    assert await testing.jobs("scheduled") == [later]
    assert await testing.jobs("running") == [running_job.jid]
    (waiting,) = await testing.peek(10)
    assert {running_job.jid, waiting.jid} == {first, second}


async def test_a_worker_is_identified_uniquely_by_host_and_process(
    client: aqless.Client,
) -> None:
    """A worker is a process on a host, identified uniquely, that asks for jobs."""
    assert client.worker_name == f"{socket.gethostname()}-{os.getpid()}"
    await client.queues["testing"].put("MyJobClass", {})
    job = await pop_one(client.queues["testing"])
    assert job.worker_name == client.worker_name
    (worker,) = await client.workers.counts()
    assert (worker.name, worker.jobs) == (client.worker_name, 1)


async def test_a_completed_job_can_be_put_into_another_queue(client: aqless.Client) -> None:
    """When it's completed, it can be put into another queue."""
    jid = await client.queues["first"].put("MyJobClass", {})
    job = await pop_one(client.queues["first"])
    assert await job.complete("second") == aqless.JobState.WAITING
    moved = await get_job(client, jid)
    assert (moved.queue_name, moved.state) == ("second", "waiting")
    assert await client.queues["first"].length() == 0


async def test_a_job_is_in_the_queue_it_was_last_put_in_only(client: aqless.Client) -> None:
    """Jobs can only be in one queue at a time. That queue is whatever queue they were last
    put in."""
    jid = await client.queues["a"].put("MyJobClass", {})
    await client.queues["b"].put("MyJobClass", {}, jid=jid)
    assert await client.queues["a"].length() == 0
    assert await client.queues["b"].length() == 1
    assert (await get_job(client, jid)).queue_name == "b"


async def test_the_old_workers_complete_of_a_moved_job_is_refused(client: aqless.Client) -> None:
    """If a worker is working on a job, and you move it, the worker's request to complete the
    job will be ignored. (aqless: the complete raises LockLostError and changes nothing.)"""
    jid = await client.queues["testing"].put("MyJobClass", {})
    job = await pop_one(client.queues["testing"])
    await (await get_job(client, jid)).move("elsewhere")
    with pytest.raises(aqless.LockLostError):
        await job.complete()
    moved = await get_job(client, jid)
    assert (moved.queue_name, moved.state) == ("elsewhere", "waiting")


async def test_a_worker_stops_the_code_of_a_job_moved_away_and_sends_nothing(
    client: aqless.Client, other: aqless.Client
) -> None:
    """... the worker's request to complete the job will be ignored. (aqless's worker cancels
    the code of a job another client moved away at once, and completes nothing.)"""
    started = anyio.Event()
    cancelled = anyio.Event()

    async def long_job(job: aqless.Job) -> None:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    jid = await client.queues["testing"].put("MyJobClass", {})
    async with running(make_worker(client, ["testing"], one(long_job, "MyJobClass"))):
        with anyio.fail_after(5):
            await started.wait()
        await (await get_job(other, jid)).move("elsewhere")
        with anyio.fail_after(5):
            await cancelled.wait()
    moved = await get_job(client, jid)
    assert (moved.queue_name, moved.state) == ("elsewhere", "waiting")
    assert "done" not in history_of(moved)


async def test_a_cancelled_job_disappears(client: aqless.Client) -> None:
    """A job can be canceled, which means it disappears into the ether."""
    jid = await client.queues["testing"].put("MyJobClass", {}, tags=["gone"])
    await (await get_job(client, jid)).cancel()
    assert await client.jobs.get(jid) is None
    assert await client.queues["testing"].length() == 0
    assert (await client.jobs.tagged("gone")).jids == ()


async def test_a_job_whose_worker_stops_heartbeating_is_given_to_another(
    timed_client: aqless.Client, timed_other: aqless.Client, clock: ManualClock
) -> None:
    """A job can be dropped, which is when a worker fails to heartbeat or complete the job in
    a timely fashion."""
    jid = await timed_client.queues["testing"].put("MyJobClass", {})
    dropped = await pop_one(timed_client.queues["testing"])
    clock.advance(61)  # past the 60 s lock
    taken = await pop_one(timed_other.queues["testing"])
    assert (taken.jid, taken.worker_name) == (jid, OTHER_WORKER)
    assert "timed-out" in history_of(await get_job(timed_client, jid))
    with pytest.raises(aqless.LockLostError):
        await dropped.complete()


async def test_a_failed_job_waits_in_its_failure_group(client: aqless.Client) -> None:
    """A job can be failed, which is when a host recognizes some systematically problematic
    state about the job."""
    jid = await client.queues["testing"].put("MyJobClass", {})
    job = await pop_one(client.queues["testing"])
    await job.fail("testing-BadInput", "the input is broken")
    failed = await get_job(client, jid)
    assert failed.state == "failed"
    assert failed.failure is not None
    assert (failed.failure.group, failed.failure.message) == (
        "testing-BadInput",
        "the input is broken",
    )
    assert await client.jobs.failure_groups() == {"testing-BadInput": 1}
    assert (await client.jobs.failed("testing-BadInput")).jids == (jid,)


async def test_a_worker_drops_a_job_with_a_transient_error_for_the_system_to_reclaim(
    client: aqless.Client,
) -> None:
    """A worker should only fail a job if the error is likely not a transient one; otherwise,
    that worker should just drop it and let the system reclaim it. (aqless: the code raises
    aqless.Retry, or calls job.retry().)"""
    attempts: list[int] = []

    async def flaky(job: aqless.Job) -> None:
        attempts.append(job.retries_left)
        if len(attempts) == 1:
            raise aqless.Retry()

    jid = await client.queues["testing"].put("MyJobClass", {})
    async with running(make_worker(client, ["testing"], one(flaky, "MyJobClass"))):
        job = await until_state(client, jid, aqless.JobState.COMPLETE)
    assert attempts == [5, 4]
    assert history_of(job).count("popped") == 2


# -- Features ----------------------------------------------------------------------------------
# 3 (dependencies), 6 (priority), 9 (scheduled work) and 10 (recurring jobs) are tested under
# their own sections below.


async def test_jobs_dont_get_dropped_on_the_floor_when_a_worker_process_dies(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """1. Jobs don't get dropped on the floor -- Sometimes workers drop jobs. Qless
    automatically picks them back up and gives them to another worker."""
    await aq.redis.set("sleep", 30)
    jid = await aq.queues["q"].put("aqjobs.sleeper")
    first = spawn(*WORKER, "q")
    await count_reaches(aq, "started", 1)
    first.send(signal.SIGKILL)
    await first.exited()
    await aq.redis.set("sleep", 0)
    spawn(*WORKER, "q")
    await count_reaches(aq, "done", 1)

    async def complete() -> bool:
        return (await get_job(aq, jid)).state == "complete"

    await eventually(complete, 5, "the job complete")
    job = await get_job(aq, jid)
    assert history_of(job).count("popped") == 2


async def test_tagged_jobs_are_found_quickly_and_tracked_ones_are_listed(
    client: aqless.Client,
) -> None:
    """2. Tagging / Tracking -- Track those jobs to get updates on their progress. Tag jobs
    with meaningful identifiers to find them quickly in the UI."""
    tagged = await client.queues["testing"].put("MyJobClass", {}, tags=["customer-12"])
    await client.queues["testing"].put("MyJobClass", {})
    assert (await client.jobs.tagged("customer-12")).jids == (tagged,)
    await (await get_job(client, tagged)).track()
    tracked, expired = await client.jobs.tracked()
    assert ([job.jid for job in tracked], expired) == ([tagged], [])


async def test_stats_keep_count_mean_deviation_and_histogram_of_wait_and_run_times(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """4. Stats -- qless automatically keeps statistics about how long jobs wait to be
    processed and how long they take to be processed ... the count, mean, standard
    deviation, and a histogram of these times."""
    testing = timed_client.queues["testing"]
    for wait, run in ((2, 10), (4, 20)):
        await testing.put("MyJobClass", {})
        clock.advance(wait)
        job = await pop_one(testing)
        clock.advance(run)
        await job.complete()
    stats = await testing.stats(START)
    assert (stats.wait.count, stats.wait.mean) == (2, 3)
    assert stats.wait.std == pytest.approx(2**0.5)
    assert (stats.run.count, stats.run.mean) == (2, 15)
    assert stats.run.std == pytest.approx(50**0.5)
    assert (stats.wait.histogram[2], stats.wait.histogram[4]) == (1, 1)
    assert (stats.run.histogram[10], stats.run.histogram[20]) == (1, 1)
    assert sum(stats.wait.histogram) == sum(stats.run.histogram) == 2


async def test_completed_job_data_sticks_around_for_the_configured_time(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """5. Job data is stored temporarily -- Job info sticks around for a configurable amount
    of time so you can still look back on a job's history, data, etc."""
    await timed_client.config.set("jobs-history", 3600)
    testing = timed_client.queues["testing"]
    old = await testing.put("MyJobClass", {"look": "back"})
    await (await pop_one(testing)).complete()
    kept = await get_job(timed_client, old)
    assert (kept.state, kept.data, history_of(kept)) == (
        "complete",
        {"look": "back"},
        ["put", "popped", "done"],
    )
    clock.advance(3601)
    await testing.put("MyJobClass", {})
    await (await pop_one(testing)).complete()  # completing a job expires the old ones
    assert await timed_client.jobs.get(old) is None


async def test_jobs_of_the_same_priority_pop_in_insertion_order(client: aqless.Client) -> None:
    """6. Priority -- Jobs with the same priority get popped in the order they were
    inserted; a higher priority means that it gets popped faster."""
    testing = client.queues["testing"]
    jids = [await testing.put("MyJobClass", {"n": n}) for n in range(20)]
    urgent = await testing.put("MyJobClass", {}, priority=1)
    popped = await testing.pop_many(21)
    assert [job.jid for job in popped] == [urgent, *jids]


async def test_jobs_put_in_one_batch_pop_in_insertion_order(client: aqless.Client) -> None:
    """6. Priority -- Jobs with the same priority get popped in the order they were
    inserted."""
    testing = client.queues["testing"]
    jids = await testing.put_many(aqless.PutRequest("MyJobClass", {"n": n}) for n in range(50))
    assert [job.jid for job in await testing.pop_many(50)] == jids


async def test_retries_are_renewed_when_a_job_is_put_into_a_new_queue_or_completed(
    client: aqless.Client,
) -> None:
    """7. Retry logic -- Every job has a number of retries associated with it, which are
    renewed when it is put into a new queue or completed."""
    jid = await client.queues["first"].put("MyJobClass", {}, retries=3)
    await (await pop_one(client.queues["first"])).retry()
    assert (await get_job(client, jid)).retries_left == 2
    await (await pop_one(client.queues["first"])).complete("second")
    assert (await get_job(client, jid)).retries_left == 3  # completed into a new queue
    await (await pop_one(client.queues["second"])).retry()
    assert (await get_job(client, jid)).retries_left == 2
    await (await get_job(client, jid)).move("third")
    assert (await get_job(client, jid)).retries_left == 3  # put into a new queue


async def test_a_job_dropped_repeatedly_is_failed_automatically(
    timed_client: aqless.Client, timed_other: aqless.Client, clock: ManualClock
) -> None:
    """7. If a job is repeatedly dropped, then it is presumed to be problematic, and is
    automatically failed."""
    jid = await timed_client.queues["testing"].put("MyJobClass", {}, retries=2)
    await pop_one(timed_client.queues["testing"])
    for left in (1, 0):
        clock.advance(61)
        await pop_one(timed_other.queues["testing"])
        assert (await get_job(timed_client, jid)).retries_left == left
    clock.advance(61)
    assert await timed_other.queues["testing"].pop() is None
    failed = await get_job(timed_client, jid)
    assert failed.state == "failed"
    assert failed.failure is not None
    assert failed.failure.group == "failed-retries-testing"


async def test_the_web_app_gives_control_over_operational_issues(client: aqless.Client) -> None:
    """8. Web App -- ... a web app that gives you control over certain operational issues.
    (aqless's dashboard: here a failed job is retried from it.)"""
    jid = await client.queues["testing"].put("MyJobClass", {})
    await (await pop_one(client.queues["testing"])).fail("testing-Oops", "oops")
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://ops") as http:
        failed = (await http.get("/api/failed")).json()
        assert "testing-Oops" in str(failed)
        token = csrf_token((await http.get(f"/jobs/{jid}")).text)
        done = await http.post("/actions/job_retry", data={"jid": jid, "csrf": token})
        assert done.status_code == 303
    job = await get_job(client, jid)
    assert (job.state, job.queue_name) == ("waiting", "testing")


async def test_a_delayed_job_cannot_be_popped_before_its_delay_which_defaults_to_0(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """9. Scheduled Work -- Until a job waits for a specified delay (defaults to 0), jobs
    cannot be popped by workers."""
    testing = timed_client.queues["testing"]
    now = await testing.put("MyJobClass", {})
    later = await testing.put("MyJobClass", {}, delay=30)
    assert [job.jid for job in await testing.pop_many(10)] == [now]
    clock.advance(29)
    assert await testing.pop() is None
    clock.advance(1)
    assert (await pop_one(testing)).jid == later


async def test_tracked_jobs_emit_events_as_they_are_put_popped_completed_and_failed(
    client: aqless.Client,
) -> None:
    """11. Notifications -- Tracked jobs emit events on pubsub channels as they get
    completed, failed, put, popped, etc. (NOT IMPLEMENTED in qless-perl; aqless has it.)"""
    testing = client.queues["testing"]
    done = await testing.put("MyJobClass", {})
    broken = await testing.put("MyJobClass", {})
    untracked = await testing.put("MyJobClass", {})
    for jid in (done, broken):
        await (await get_job(client, jid)).track()
    async with collecting(client, "put", "popped", "completed", "failed") as events:
        await testing.put("MyJobClass", {}, jid=done)
        for job in await testing.pop_many(3):
            if job.jid == broken:
                await job.fail("testing-Oops", "oops")
            else:
                await job.complete()
        await until(lambda: len(events) == 5, what="five events")
    seen = {(event.kind, event.jid) for event in events}
    assert seen == {
        ("put", done),
        ("popped", done),
        ("popped", broken),
        ("completed", done),
        ("failed", broken),
    }
    assert untracked not in {event.jid for event in events}


# -- Install -----------------------------------------------------------------------------------
# (CPAN and source installs: nothing of aqless's to test.)

# -- Enqueing Jobs -----------------------------------------------------------------------------


async def test_the_client_accepts_a_redis_connection(server_url: str) -> None:
    """The client accepts a Redis handler as a argument. (aqless: Client(redis=...), a
    redis.asyncio client that decodes responses.)"""
    redis = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        await redis.flushall()
        async with aqless.Client(redis=redis) as client:
            jid = await client.queues["testing"].put("MyJobClass", {"hello": "howdy"})
            assert await redis.hget(f"ql:j:{jid}", "klass") == "MyJobClass"
        raw = aioredis.Redis.from_url(server_url)
        with pytest.raises(aqless.ConfigurationError, match="decode_responses"):
            aqless.Client(redis=raw)
        await raw.aclose()
    finally:
        await redis.aclose()


class MyJobClass:
    """Jobs should be modules that define a process method, which must accept a single job
    argument."""

    seen: list[Any] = []  # noqa: RUF012 -- what the process method saw

    @staticmethod
    async def process(job: aqless.Job) -> None:
        MyJobClass.seen.append(job.data)
        if job.data.get("cancel"):
            await job.cancel()


async def test_a_job_class_with_a_process_method_is_given_each_job(
    client: aqless.Client,
) -> None:
    """Jobs should be modules that define a process method, which must accept a single job
    argument ... $job->data, a means to cancel the job ($job->cancel), and more."""
    MyJobClass.seen = []
    handlers = aqless.Handlers()
    handlers.register(MyJobClass)
    testing = client.queues["testing"]
    kept = await testing.put(MyJobClass, {"hello": "howdy"})
    dropped = await testing.put(MyJobClass, {"cancel": True})
    async with running(make_worker(client, ["testing"], handlers)):
        await until_state(client, kept, aqless.JobState.COMPLETE)

        async def cancelled() -> bool:
            return await client.jobs.get(dropped) is None

        await until(cancelled, what="the job that cancelled itself gone")
    assert MyJobClass.seen == [{"hello": "howdy"}, {"cancel": True}]


async def test_put_returns_a_jid_and_pop_the_job(client: aqless.Client) -> None:
    """Let's add a job, with some data. Returns Job ID ... Now we can ask for a job:
    <Qless::Job 0c53b... (MyJobClass / testing)>"""
    testing = client.queues["testing"]
    jid = await testing.put("MyJobClass", {"hello": "howdy"})
    assert re.fullmatch(r"[0-9a-f]{32}", jid)
    job = await pop_one(testing)
    assert (job.jid, job.klass_name, job.queue_name, job.data) == (
        jid,
        "MyJobClass",
        "testing",
        {"hello": "howdy"},
    )
    assert all(part in repr(job) for part in (jid, "MyJobClass", "testing"))


async def test_job_data_must_be_serializable_to_json(client: aqless.Client) -> None:
    """The job data must be serializable to JSON."""
    with pytest.raises(aqless.PayloadError):
        await client.queues["testing"].put("MyJobClass", {"when": object()})
    assert await client.queues["testing"].length() == 0


async def test_a_job_found_by_its_jid_tells_its_details(client: aqless.Client) -> None:
    """find an existing job by it's jid; query it to find out details about it: klass,
    queue, data, history, dependencies, dependents, priority, tags, original_retries,
    retries_left."""
    testing = client.queues["testing"]
    before = await testing.put("MyJobClass", {})
    jid = await testing.put(
        "MyJobClass", {"hello": "howdy"}, depends=[before], priority=3, tags=["a"], retries=7
    )
    after = await testing.put("MyJobClass", {}, depends=[jid])
    job = await get_job(client, jid)
    assert (job.klass_name, job.queue_name, job.data) == (
        "MyJobClass",
        "testing",
        {"hello": "howdy"},
    )
    assert history_of(job) == ["put"]
    assert (job.dependencies, job.dependents) == ((before,), (after,))
    assert (job.priority, job.tags, job.original_retries, job.retries_left) == (3, ("a",), 7, 7)


async def test_a_job_can_be_moved_cancelled_tagged_and_untagged(client: aqless.Client) -> None:
    """You can also change the job in various ways: move, cancel, tag, untag."""
    jid = await client.queues["testing"].put("MyJobClass", {})
    job = await get_job(client, jid)
    await job.move("some_other_queue")
    assert (await get_job(client, jid)).queue_name == "some_other_queue"
    assert await job.tag("foo") == ("foo",)
    assert (await client.jobs.tagged("foo")).jids == (jid,)
    assert await job.untag("foo") == ()
    assert (await client.jobs.tagged("foo")).jids == ()
    await job.cancel()
    assert await client.jobs.get(jid) is None


# -- Running a Worker --------------------------------------------------------------------------
# (An empty section in this copy; the worker runs MyJobClass.process above.)

# -- Job Dependencies --------------------------------------------------------------------------


async def test_the_turkey_waits_until_the_stuffing_is_made(client: aqless.Client) -> None:
    """You can't make the turkey until the stuffing is made ... When the stuffing job
    completes, the turkey job is unlocked and free to be processed."""
    cook = client.queues["cook"]
    stuffing = await cook.put("MakeStuffing", {"lots": "of butter"})
    turkey = await cook.put("MakeTurkey", {"with": "stuffing"}, depends=[stuffing])
    assert (await get_job(client, turkey)).state == "depends"
    (made,) = await cook.pop_many(10)
    assert made.jid == stuffing
    await made.complete()
    unlocked = await get_job(client, turkey)
    assert (unlocked.state, unlocked.dependencies) == ("waiting", ())
    assert (await pop_one(cook)).jid == turkey


# -- Priority ----------------------------------------------------------------------------------


async def test_a_job_put_with_a_higher_priority_pops_sooner(client: aqless.Client) -> None:
    """Some jobs need to get popped sooner than others ... priority => 10."""
    testing = client.queues["testing"]
    await testing.put("MyJobClass", {"foo": "bar"})
    urgent = await testing.put("MyJobClass", {"foo": "bar"}, priority=10)
    assert (await pop_one(testing)).jid == urgent


async def test_a_waiting_jobs_priority_can_be_raised(client: aqless.Client) -> None:
    """What happens when you want to adjust a job's priority while it's still waiting in a
    queue? ... Now this will get popped before any job of lower priority."""
    testing = client.queues["testing"]
    await testing.put("MyJobClass", {}, priority=5)
    jid = await testing.put("MyJobClass", {})
    await (await get_job(client, jid)).set_priority(10)
    assert (await pop_one(testing)).jid == jid


# -- Scheduled Jobs ----------------------------------------------------------------------------


async def test_a_job_delayed_ten_minutes_runs_no_sooner(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Run at least 10 minutes from now: delay => 600. This doesn't guarantee that job will be
    run exactly at 10 minutes."""
    testing = timed_client.queues["testing"]
    jid = await testing.put("MyJobClass", {"foo": "bar"}, delay=600)
    assert (await get_job(timed_client, jid)).state == "scheduled"
    clock.advance(599)
    assert await testing.pop() is None
    clock.advance(61)
    assert (await pop_one(testing)).jid == jid


async def test_a_delayed_job_with_a_high_priority_goes_before_lesser_ones_once_due(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """You can accomplish this by changing the job's priority so that once 10 minutes has
    elapsed, it's put before lesser-priority jobs: delay => 600, priority => 100."""
    testing = timed_client.queues["testing"]
    jid = await testing.put("MyJobClass", {"foo": "bar"}, delay=600, priority=100)
    waiting = {await testing.put("MyJobClass", {}) for _ in range(3)}
    clock.advance(600)
    first, *others = await testing.pop_many(4)
    assert (first.jid, {job.jid for job in others}) == (jid, waiting)


# -- Recurring Jobs ----------------------------------------------------------------------------


async def test_a_recurring_job_is_found_by_its_id_and_its_interval_changed(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Run every hour ... You can even access them in much the same way as you would normal
    jobs ... Changing the interval at which it runs after the fact is trivial."""
    testing = timed_client.queues["testing"]
    rjid = await testing.recur("MyJobClass", {"widget": "warble"}, 3600)
    assert re.fullmatch(r"[0-9a-f]{32}", rjid)
    recurring = await get_recurring(timed_client, rjid)
    assert (recurring.klass_name, recurring.data, recurring.interval) == (
        "MyJobClass",
        {"widget": "warble"},
        3600,
    )
    assert [job.spawned_from_jid for job in await testing.pop_many(10)] == [rjid]
    await recurring.update(interval=7200)  # I think I only need it to run once every two hours
    assert (await get_recurring(timed_client, rjid)).interval == 7200
    clock.advance(3600)
    assert await testing.pop() is None
    clock.advance(3600)
    assert len(await testing.pop_many(10)) == 1


async def test_a_recurring_jobs_offset_delays_its_first_job(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """If you want it to run every hour on the hour, but it's 2:37 right now, you can specify
    an offset which is how long it should wait before popping the first job."""
    testing = timed_client.queues["testing"]
    await testing.recur("MyJobClass", {"howdy": "hello"}, 3600, offset=23 * 60)
    clock.advance(23 * 60 - 1)
    assert await testing.pop() is None
    clock.advance(1)
    assert len(await testing.pop_many(10)) == 1


async def test_a_recurring_jobs_priority_retries_and_tags_go_to_the_jobs_it_spawns(
    timed_client: aqless.Client,
) -> None:
    """Recurring jobs also have priority, a configurable number of retries, and tags. These
    settings don't apply to the recurring jobs, but rather the jobs that they create."""
    testing = timed_client.queues["testing"]
    await testing.recur("MyJobClass", {}, 60, priority=7, retries=2, tags=["nightly"])
    job = await pop_one(testing)
    assert (job.priority, job.original_retries, job.tags) == (7, 2, ("nightly",))


async def test_every_interval_that_passed_before_a_pop_spawns_a_job(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Recur every minute ... Wait 5 minutes ... $queue->pop(10) => 5 jobs got popped."""
    testing = timed_client.queues["testing"]
    await testing.recur("MyJobClass", {"lots": "of jobs"}, 60, offset=60)
    clock.advance(5 * 60)
    assert len(await testing.pop_many(10)) == 5


# -- Configuration Options ---------------------------------------------------------------------


async def test_job_history_defaults_to_30_days_and_50k_jobs_and_can_be_set(
    client: aqless.Client,
) -> None:
    """Job data is expired after it has been completed for jobs-history seconds, but is
    limited to the last jobs-history-count completed jobs. These default to 50k jobs, and 30
    days ... To only keep the last 500 jobs for up to 7 days: ..."""
    # qless-core's (and reqless-core's) default is 7 days, not the 30 the README says
    assert float(await client.config.get("jobs-history") or 0) == 7 * DAY
    assert float(await client.config.get("jobs-history-count") or 0) == 50_000
    await client.config.set("jobs-history", 7 * DAY)
    await client.config.set("jobs-history-count", 500)
    assert float(await client.config.get("jobs-history") or 0) == 7 * DAY
    assert float(await client.config.get("jobs-history-count") or 0) == 500


async def test_only_the_last_jobs_history_count_completed_jobs_are_kept(
    client: aqless.Client,
) -> None:
    """... but is limited to the last jobs-history-count completed jobs."""
    await client.config.set("jobs-history-count", 2)
    testing = client.queues["testing"]
    jids = [await testing.put("MyJobClass", {"n": n}) for n in range(3)]
    for _ in jids:
        await (await pop_one(testing)).complete()
    assert [await client.jobs.get(jid) is not None for jid in jids] == [False, True, True]


# -- Tagging / Tracking ------------------------------------------------------------------------


async def test_a_job_is_flagged_as_important_from_code(client: aqless.Client) -> None:
    """In qless, 'tracking' means flagging a job as important ... You can flag a job from the
    web interface, or the corresponding code."""
    jid = await client.queues["testing"].put("MyJobClass", {})
    job = await get_job(client, jid)
    assert await job.track() is True
    assert (await get_job(client, jid)).tracked
    assert await job.untrack() is True
    assert not (await get_job(client, jid)).tracked


async def test_tags_are_searchable_and_added_or_removed_at_will(client: aqless.Client) -> None:
    """Jobs can be tagged with strings which are indexed for quick searches ... You can add
    or remove tags at will, too."""
    testing = client.queues["testing"]
    jid = await testing.put("GnomesJob", {"tags": "aplenty"}, tags=["12345", "foo", "bar"])
    assert (await client.jobs.tagged("foo")).jids == (jid,)
    job = await get_job(client, jid)
    await job.tag("howdy", "hello")
    assert await job.untag("foo", "bar") == ("12345", "howdy", "hello")
    assert (await client.jobs.tagged("foo")).jids == ()
    assert (await client.jobs.tagged("hello")).jids == (jid,)


# -- Retries (a section without a heading in this copy) ----------------------------------------


async def test_stalled_jobs_are_retried_five_times_unless_told_otherwise(
    client: aqless.Client,
) -> None:
    """qless will automatically requeue jobs that do get 'stalled' up to the provided number
    of retries (default is 5) ... retries => 10."""
    testing = client.queues["testing"]
    default = await get_job(client, await testing.put("GnomesJob", {}))
    heist = await get_job(client, await testing.put("GnomesJob", {}, retries=10))
    assert (default.original_retries, default.retries_left) == (5, 5)
    assert (heist.original_retries, heist.retries_left) == (10, 10)


# -- Popping (a section without a heading in this copy) ----------------------------------------


async def test_a_client_pops_one_job_or_many(client: aqless.Client) -> None:
    """A client pops one or more jobs from a queue: Get a single job; Get 20 jobs."""
    testing = client.queues["testing"]
    await testing.put_many(aqless.PutRequest("MyJobClass", {}) for _ in range(25))
    assert isinstance(await testing.pop(), aqless.Job)
    assert len(await testing.pop_many(20)) == 20
    assert len(await testing.pop_many(20)) == 4


# -- Heartbeating (a section without a heading in this copy) -----------------------------------


async def test_a_job_tells_when_its_lock_expires_and_how_long_is_left(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """You can get the absolute time until it expires, or how long you have left."""
    await timed_client.queues["testing"].put("MyJobClass", {})
    job = await pop_one(timed_client.queues["testing"])
    assert job.expires_at == START + 60
    clock.advance(20)
    assert job.ttl == 40


async def test_a_heartbeat_keeps_the_job_and_complete_ends_or_advances_it(
    timed_client: aqless.Client, timed_other: aqless.Client, clock: ManualClock
) -> None:
    """If your lease on the job will expire before you have a chance to complete it, then you
    should heartbeat it ... I call stay-offsies! I'm done! I'm done with this step, but need
    to go into another queue."""
    testing = timed_client.queues["testing"]
    jids = {await testing.put("MyJobClass", {}) for _ in range(2)}
    job = await pop_one(testing)
    (second,) = jids - {job.jid}
    clock.advance(50)
    assert await job.heartbeat() == START + 50 + 60
    clock.advance(50)  # past the first lock, within the renewed one
    assert (await pop_one(timed_other.queues["testing"])).jid == second
    assert await job.complete() == aqless.JobState.COMPLETE
    assert (await get_job(timed_client, job.jid)).state == "complete"
    other = await get_job(timed_other, second)
    assert await other.complete("anotherQueue") == aqless.JobState.WAITING
    assert (await get_job(timed_client, second)).queue_name == "anotherQueue"


# -- Stats (a section without a heading in this copy) ------------------------------------------


async def test_a_queues_stats_are_todays_unless_a_day_is_given(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Stats are aggregated by day ... By default, you just get the stats for today ...
    {'run' => {'mean' => ...}, 'wait' => {'mean' => ...}}"""
    testing = timed_client.queues["testing"]
    await testing.put("MyJobClass", {})
    clock.advance(3)
    job = await pop_one(testing)
    clock.advance(5)
    await job.complete()
    today = await testing.stats()
    assert (today.wait.mean, today.run.mean) == (3, 5)
    assert (await testing.stats(START - DAY)).wait.count == 0
    clock.advance(DAY)
    assert (await testing.stats()).wait.count == 0  # a new day


# -- Time (a section without a heading in this copy) -------------------------------------------


async def test_the_client_sends_its_own_time_with_each_request(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """The clients actually send the current time when making most requests."""
    clock.now = START + 12_345
    jid = await timed_client.queues["testing"].put("MyJobClass", {})
    job = await pop_one(timed_client.queues["testing"])
    assert job.expires_at == START + 12_345 + 60
    assert [entry.when for entry in (await get_job(timed_client, jid)).history] == [
        START + 12_345,
        START + 12_345,
    ]


# -- Ensuring Job Uniqueness -------------------------------------------------------------------


async def test_a_jid_given_by_the_client_keeps_the_job_unique(client: aqless.Client) -> None:
    """Qless will generate a UUID for each enqueued job or you can specify one manually ...
    it'll guaranteed that Qless won't have multiple jobs with the same class and data."""
    testing = client.queues["testing"]
    data = {"hello": "howdy"}
    jid = f"MyJobClass-{sorted(data.items())}"
    assert await testing.put("MyJobClass", data, jid="my-job-jid") == "my-job-jid"
    assert await testing.put("MyJobClass", data, jid=jid) == jid
    assert await testing.put("MyJobClass", data, jid=jid) == jid
    assert await testing.length() == 2
    assert (await get_job(client, "my-job-jid")).data == data


# -- Setting Default Job Options ---------------------------------------------------------------
# (A heading only in this copy.)


class Invoice:
    @staticmethod
    def default_job_options(data: dict[str, Any]) -> dict[str, Any]:
        return {"priority": 5, "tags": ["billing"], "retries": 2}


async def test_a_job_class_sets_default_job_options(client: aqless.Client) -> None:
    """Setting Default Job Options (aqless: a class's default_job_options(data), which the
    put's own options override)."""
    testing = client.queues["testing"]
    defaulted = await get_job(client, await testing.put(Invoice, {}))
    assert (defaulted.priority, defaulted.tags, defaulted.original_retries) == (5, ("billing",), 2)
    given = await get_job(client, await testing.put(Invoice, {}, priority=1))
    assert (given.priority, given.tags) == (1, ("billing",))


# -- Testing Jobs ------------------------------------------------------------------------------
# (A heading only in this copy.)


async def test_job_code_is_unit_tested_on_a_job_built_without_a_server() -> None:
    """Testing Jobs (aqless: Job.build makes a real Job without a server)."""
    recorder = Recorder()
    job = aqless.Job.build("MyJobClass", {"hello": "howdy"}, queue="testing")
    await recorder(job)
    assert (recorder.jids, recorder.queues, job.data) == (["jid"], ["testing"], {"hello": "howdy"})
    with pytest.raises(aqless.ConfigurationError):
        await job.complete()
