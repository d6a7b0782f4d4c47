"""Acceptance tests of the qless Ruby README (seeds/003): every example, option, signal and
stated behaviour, translated to aqless's async API and run against a real server, section by
section in the document's order. Each test's docstring quotes the promise it checks."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import signal
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

import aqless
from aqless import Job, JobState
from aqless.events import TRACKED_CHANNELS
from aqless.web import create_app
from tests.support.blackhole_proxy import BlackholeProxy
from tests.support.clients import ManualClock, get_job, get_recurring, pop_one
from tests.support.worker import (
    Recorder,
    collecting,
    make_worker,
    one,
    process,
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
    listed,
    pids_and_names,
    put,
    running_sleepers,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)
from tests.web.conftest import csrf_token

pytest_plugins = ["tests.support.client_fixtures"]
pytestmark = pytest.mark.timeout(60)

#: the real processes' tests: signals behave alike on both servers, and each costs seconds
processes = pytest.mark.usefixtures("valkey_only")


class MyJobClass:
    """The README's job class; aqless calls ``process`` where Ruby calls ``perform``."""

    seen: list[Any] = []  # noqa: RUF012

    @staticmethod
    async def process(job: Job) -> None:
        MyJobClass.seen.append(job.data)


# == Philosophy and Nomenclature ==========================================================


async def test_a_completed_job_can_be_put_into_another_queue(client: aqless.Client) -> None:
    """Seed: "When it's completed, it can be put into another queue." """
    jid = await client.queues["first"].put(MyJobClass, {})
    await (await pop_one(client.queues["first"])).complete("second")
    moved = await get_job(client, jid)
    assert (moved.state, moved.queue_name) == (JobState.WAITING, "second")
    assert (await pop_one(client.queues["second"])).jid == jid


async def test_a_job_is_in_the_queue_it_was_last_put_in(client: aqless.Client) -> None:
    """Seed: "Jobs can only be in one queue at a time. That queue is whatever queue they were last
    put in." """
    jid = await client.queues["a"].put(MyJobClass, {})
    await client.queues["b"].put(MyJobClass, {}, jid=jid)
    assert (await client.queues["a"].length(), await client.queues["b"].length()) == (0, 1)
    assert (await get_job(client, jid)).queue_name == "b"


async def test_a_moved_jobs_complete_from_its_old_worker_is_refused(
    client: aqless.Client,
) -> None:
    """Seed: "If a worker is working on a job, and you move it, the worker's request to complete
    the job will be ignored." aqless refuses it with LockLostError."""
    jid = await client.queues["a"].put(MyJobClass, {})
    working = await pop_one(client.queues["a"])
    await (await get_job(client, jid)).move("b")
    with pytest.raises(aqless.LockLostError):
        await working.complete()
    job = await get_job(client, jid)
    assert (job.state, job.queue_name) == (JobState.WAITING, "b")


async def test_a_worker_whose_job_is_moved_stops_its_code_and_reports_nothing(
    client: aqless.Client, server_url: str
) -> None:
    """The same promise with a worker: the moved job's code is cancelled, nothing is sent."""
    started, cancelled = anyio.Event(), anyio.Event()

    async def long_job(job: Job) -> None:
        started.set()
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise

    jid = await client.queues["a"].put("app.job", {})
    async with running(make_worker(client, ["a"], one(long_job))):
        with anyio.fail_after(5):
            await started.wait()
        async with aqless.Client(server_url, worker_name="admin") as admin:
            await (await get_job(admin, jid)).move("b")
        with anyio.fail_after(5):
            await cancelled.wait()
    job = await get_job(client, jid)
    assert (job.state, job.queue_name) == (JobState.WAITING, "b")


async def test_a_canceled_job_disappears(client: aqless.Client) -> None:
    """Seed: "A job can be canceled, which means it disappears into the ether." """
    jid = await client.queues["q"].put(MyJobClass, {}, tags=["t"])
    await (await get_job(client, jid)).cancel()
    assert await client.jobs.get(jid) is None
    assert await client.queues["q"].length() == 0
    assert (await client.jobs.tagged("t")).jids == ()


async def test_a_dropped_job_is_reclaimed_for_another_worker(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "A job can be dropped, which is when a worker fails to heartbeat or complete the job
    in a timely fashion." """
    await timed_client.config.set("grace-period", 0)
    queue = timed_client.queues["q"]
    jid = await queue.put(MyJobClass, {})
    await pop_one(queue, worker="dropper")
    assert await queue.pop(worker="other") is None  # locked while it is dropper's
    clock.advance(61)
    taken = await pop_one(queue, worker="other")
    assert (taken.jid, taken.worker_name) == (jid, "other")


async def test_a_failed_job_is_kept_in_its_failure_group(client: aqless.Client) -> None:
    """Seed: "A job can be failed, which is when a host recognizes some systematically problematic
    state about the job." """
    jid = await client.queues["q"].put(MyJobClass, {})
    await (await pop_one(client.queues["q"])).fail("bad-input", "no such user")
    job = await get_job(client, jid)
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert (job.failure.group, job.failure.message) == ("bad-input", "no such user")
    assert await client.jobs.failure_groups() == {"bad-input": 1}


async def test_a_worker_fails_a_job_on_an_error_and_drops_it_on_a_retry(
    client: aqless.Client,
) -> None:
    """Seed: "A worker should only fail a job if the error is likely not a transient one;
    otherwise, that worker should just drop it and let the system reclaim it." In aqless job
    code raises to fail, or raises ``aqless.Retry`` to give the job back."""

    async def broken(job: Job) -> None:
        raise ValueError("systematically problematic")

    async def transient(job: Job) -> None:
        raise aqless.Retry(delay=0)

    failed = await process(client, one(broken), "app.job")
    assert failed.state == JobState.FAILED
    assert failed.failure is not None
    assert failed.failure.group == "q-ValueError"
    jid = await client.queues["q"].put("app.job", {})
    worker = make_worker(client, ["q"], one(transient), max_jobs=1)
    assert (await worker.run()).retried == 1
    dropped = await get_job(client, jid)
    assert (dropped.state, dropped.retries_left) == (JobState.WAITING, 4)


# == Features ===============================================================================


@processes
async def test_jobs_dont_get_dropped_on_the_floor(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "Sometimes workers drop jobs. Qless automatically picks them back up and gives them to
    another worker." A killed aqless-run's job is run by the next worker."""
    dropper, (jid,) = await running_sleepers(aq, spawn, 1, sleep=30)
    dropper.send(signal.SIGKILL)
    await dropper.exited()
    await aq.redis.set("sleep", 0)
    spawn(*WORKER, "q")
    await count_reaches(aq, "done", 1)
    await until_state(aq, jid, JobState.COMPLETE)
    (first, _), (second, _) = await pids_and_names(aq)
    assert first == dropper.pid != second


async def test_jobs_with_the_same_priority_pop_in_insertion_order(
    client: aqless.Client,
) -> None:
    """Seed: "Jobs with the same priority get popped in the order they were inserted." """
    queue = client.queues["q"]
    jids = [await queue.put(MyJobClass, {"n": n}) for n in range(20)]
    assert [job.jid for job in await queue.pop_many(20)] == jids


async def test_jobs_put_in_one_batch_pop_in_insertion_order(client: aqless.Client) -> None:
    """Seed: "Jobs with the same priority get popped in the order they were inserted." (put_many)"""
    queue = client.queues["q"]
    jids = await queue.put_many(aqless.PutRequest(MyJobClass, {"n": n}) for n in range(50))
    assert [job.jid for job in await queue.pop_many(50)] == jids


async def test_a_higher_priority_gets_popped_faster(client: aqless.Client) -> None:
    """Seed: "A higher priority means that it gets popped faster." """
    queue = client.queues["q"]
    low = await queue.put(MyJobClass, {}, priority=1)
    high = await queue.put(MyJobClass, {}, priority=5)
    default = await queue.put(MyJobClass, {})
    assert [job.jid for job in await queue.pop_many(3)] == [high, low, default]


async def test_retries_are_renewed_when_the_job_is_put_into_a_new_queue(
    client: aqless.Client,
) -> None:
    """Seed: "Every job has a number of retries associated with it, which are renewed when it is
    put into a new queue." """
    jid = await client.queues["a"].put(MyJobClass, {}, retries=3)
    await (await pop_one(client.queues["a"])).retry()
    assert (await get_job(client, jid)).retries_left == 2
    await (await get_job(client, jid)).move("b")
    job = await get_job(client, jid)
    assert (job.original_retries, job.retries_left) == (3, 3)


async def test_retries_are_renewed_when_the_job_is_completed(client: aqless.Client) -> None:
    """Seed: "...renewed when it is put into a new queue or completed." """
    jid = await client.queues["a"].put(MyJobClass, {}, retries=3)
    await (await pop_one(client.queues["a"])).retry()
    await (await pop_one(client.queues["a"])).complete("b")
    assert (await get_job(client, jid)).retries_left == 3


async def test_a_repeatedly_dropped_job_is_automatically_failed(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "If a job is repeatedly dropped, then it is presumed to be problematic, and is
    automatically failed." """
    await timed_client.config.set("grace-period", 0)
    queue = timed_client.queues["q"]
    jid = await queue.put(MyJobClass, {}, retries=2)
    await pop_one(queue, worker="w0")
    for dropper in ("w1", "w2"):  # each pop reclaims the last dropper's expired lock
        clock.advance(61)
        await pop_one(queue, worker=dropper)
    clock.advance(61)
    assert await queue.pop(worker="w3") is None
    job = await get_job(timed_client, jid)
    assert job.state == JobState.FAILED
    assert job.failure is not None
    assert job.failure.group == "failed-retries-q"


async def test_waiting_sees_a_job_failed_by_its_last_retry(client: aqless.Client) -> None:
    """A job out of retries is failed, and whoever waits for it learns so."""
    jid = await client.queues["q"].put(MyJobClass, {}, retries=0)
    job = await pop_one(client.queues["q"])
    outcome: list[JobState | None] = []

    async def wait() -> None:
        outcome.append(await client.wait(jid, timeout=1))

    async def listening() -> bool:
        ((_, subscribers),) = await client.redis.pubsub_numsub("ql:log")
        return int(subscribers) > 0

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(wait)
        await until(listening, what="wait() subscribed")
        assert await job.retry() == -1
    assert outcome == [JobState.FAILED]


async def test_scheduled_work_cannot_be_popped_before_its_delay(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "Until a job waits for a specified delay (defaults to 0), jobs cannot be popped by
    workers." """
    queue = timed_client.queues["q"]
    now = await queue.put(MyJobClass, {})
    later = await queue.put(MyJobClass, {}, delay=30)
    assert [job.jid for job in await queue.pop_many(5)] == [now]
    clock.advance(29)
    assert await queue.pop() is None
    clock.advance(1)
    assert (await pop_one(queue)).jid == later


# == Enqueing Jobs ==========================================================================


async def test_a_client_without_arguments_uses_redis_url(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seed: "# Connect to localhost / client = Qless::Client.new": aqless's default server is
    ``AQLESS_URL`` or ``REDIS_URL`` (else an embedded Valkey)."""
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", server_url)
    async with aqless.Client() as client:
        await client.redis.flushall()
        jid = await client.queues["testing"].put(MyJobClass, {})
        assert client.url == server_url
        assert await client.redis.exists(f"ql:j:{jid}") == 1


async def test_a_client_connects_to_a_host_and_port(server_url: str) -> None:
    """Seed: "client = Qless::Client.new(:host => 'foo.bar.com', :port => 1234)" """
    async with BlackholeProxy(server_url) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        async with aqless.Client(host="127.0.0.1", port=port) as client:
            await client.redis.flushall()
            jid = await client.queues["testing"].put(MyJobClass, {})
            assert (await pop_one(client.queues["testing"])).jid == jid


async def test_the_client_accepts_the_redis_clients_arguments(server_url: str) -> None:
    """Seed: "The client accepts all the same arguments that you'd use when constructing a redis
    client." """
    async with aqless.Client(server_url, socket_timeout=7, client_name="seeds") as client:
        await client.queues["testing"].length()
        assert client.redis.get_connection_kwargs()["socket_timeout"] == 7
        assert await client.redis.client_getname() == "seeds"


async def test_a_job_class_gets_the_job_and_its_data(client: aqless.Client) -> None:
    """Seed: "Jobs should be classes or modules that define a perform method, which must accept a
    single job argument." aqless calls ``process(job)`` (or a method named after the queue)
    of a registered class."""
    MyJobClass.seen.clear()
    handlers = aqless.Handlers()
    handlers.register(MyJobClass)
    job = await process(client, handlers, f"{__name__}.MyJobClass", {"hello": "howdy"})
    assert job.state == JobState.COMPLETE
    assert MyJobClass.seen == [{"hello": "howdy"}]


async def test_a_job_can_cancel_itself(client: aqless.Client) -> None:
    """Seed: "job is an instance of Qless::Job and provides access to job.data, a means to cancel
    the job (job.cancel), and more." """

    async def cancelling(job: Job) -> None:
        assert job.data == {"hello": "howdy"}
        await job.cancel()

    jid = await client.queues["q"].put("app.job", {"hello": "howdy"})
    counters = await make_worker(client, ["q"], one(cancelling), burst=True).run()
    assert counters.completed == 0
    assert await client.jobs.get(jid) is None


async def test_put_returns_a_jid_and_pop_the_job(client: aqless.Client) -> None:
    """Seed: "queue.put(MyJobClass, :hello => 'howdy') # => "0c53b0404c56012f69fa482a1427ab7d"";
    "job = queue.pop # => <Qless::Job 0c53... (MyJobClass / testing)>" """
    queue = client.queues["testing"]
    jid = await queue.put(MyJobClass, {"hello": "howdy"})
    assert re.fullmatch(r"[0-9a-f]{32}", jid)
    job = await pop_one(queue)
    klass = f"{__name__}.MyJobClass"
    assert (job.jid, job.klass_name, job.queue_name) == (jid, klass, "testing")
    assert job.data == {"hello": "howdy"}
    assert all(part in repr(job) for part in (jid, klass, "testing"))


async def test_job_data_must_be_serializable_to_json(client: aqless.Client) -> None:
    """Seed: "The job data must be serializable to JSON." Anything else is refused, nothing put."""
    with pytest.raises(aqless.PayloadError):
        await client.queues["q"].put(MyJobClass, {"when": object()})
    assert await client.queues["q"].length() == 0


async def test_a_job_found_by_its_jid_tells_its_details(client: aqless.Client) -> None:
    """Seed: "job = client.jobs[jid]": klass, queue, data, history, dependencies, dependents,
    priority, tags, original_retries, retries_left."""
    queue = client.queues["testing"]
    first = await queue.put(MyJobClass, {})
    jid = await queue.put(
        MyJobClass, {"a": 1}, priority=3, tags=["x", "y"], retries=4, depends=[first]
    )
    job = await get_job(client, jid)
    assert job.klass_name == f"{__name__}.MyJobClass"
    assert (job.queue_name, job.data, job.priority, job.tags) == (
        "testing",
        {"a": 1},
        3,
        ("x", "y"),
    )
    assert [entry.what for entry in job.history] == ["put"]
    assert (job.dependencies, (await get_job(client, first)).dependents) == ((first,), (jid,))
    assert (job.original_retries, job.retries_left) == (4, 4)


async def test_a_job_can_be_moved_cancelled_tagged_and_untagged(client: aqless.Client) -> None:
    """Seed: "job.move("some_other_queue") / job.cancel / job.tag("foo") / job.untag("foo")" """
    jid = await client.queues["testing"].put(MyJobClass, {})
    job = await get_job(client, jid)
    await job.move("some_other_queue")
    assert (await get_job(client, jid)).queue_name == "some_other_queue"
    assert await job.tag("foo") == ("foo",)
    assert (await client.jobs.tagged("foo")).jids == (jid,)
    assert await job.untag("foo") == ()
    assert (await get_job(client, jid)).tags == ()
    await job.cancel()
    assert await client.jobs.get(jid) is None


# == Running A Worker =======================================================================


async def test_you_can_write_your_own_worker_from_pop_and_complete(
    client: aqless.Client,
) -> None:
    """Seed: "You are welcome to write your own": the verbs are all a worker needs."""
    queue = client.queues["q"]
    jids = [await queue.put(MyJobClass, {"n": n}) for n in range(3)]
    while (job := await queue.pop()) is not None:
        await job.heartbeat()
        await job.complete()
    assert {job.state for job in await client.jobs.get_many(jids)} == {JobState.COMPLETE}


@processes
async def test_worker_processes_are_replaced_to_contain_memory_leaks(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """Seed: "The worker forks a child process for each job in order to provide resilience against
    memory leaks." aqless-run runs jobs in its process and replaces it after --max-jobs jobs
    (or above --max-memory)."""
    await put(aq, "aqjobs.sleeper", 2)
    spawn(*WORKER, "--max-jobs", "1", "q")
    await count_reaches(aq, "done", 2)
    (first, _), (second, _) = await pids_and_names(aq)
    assert first != second


@processes
async def test_the_worker_shows_its_status_in_its_process_title(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """Seed: "The worker updates its procline with its status so you can see what workers are doing
    using ps." """
    worker, _ = await running_sleepers(aq, spawn, 1, "--name", "titled", sleep=30)

    def title() -> str:
        return Path(f"/proc/{worker.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()

    await eventually(lambda: "1/10 running" in title(), 5, "the title shows the running job")
    assert title().startswith("aqless-run titled: running")


async def test_the_worker_pops_only_the_queues_it_is_given(client: aqless.Client) -> None:
    """Seed: "The worker is given a list of queues to pop jobs off of." """
    recorder = Recorder()
    for name in ("fizz", "buzz", "other"):
        await client.queues[name].put("app.job", {})
    worker = make_worker(client, ["fizz", "buzz"], one(recorder), burst=True)
    assert (await worker.run()).completed == 2
    assert sorted(recorder.queues) == ["buzz", "fizz"]
    assert await client.queues["other"].length() == 1


@processes
async def test_verbose_logs_what_the_worker_does(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "The worker logs output based on VERBOSE or VVERBOSE (very verbose) environment
    variables": aqless-run -v (or -vv) logs what it serves and what it did when it stops."""
    worker, _ = await running_sleepers(aq, spawn, 1, "--name", "verbose", sleep=0)
    await count_reaches(aq, "done", 1)
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0
    assert "worker verbose serving q with 10 slots (ordered reserver)" in worker.log()
    assert "worker verbose stopped: WorkerCounters(started=1, completed=1" in worker.log()


@processes
async def test_the_worker_is_configured_by_environment_variables(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    """Seed: "ENV['REDIS_URL'] ||= ...; ENV['QUEUES'] ||= 'fizz,buzz'; ENV['JOB_RESERVER'] ||=
    'Ordered'; ENV['INTERVAL'] ||= '10'": aqless-run reads REDIS_URL (or AQLESS_URL),
    AQLESS_QUEUES, AQLESS_RESERVER and AQLESS_INTERVAL; and where the rake task "runs
    qless:setup before starting the main work loop so that users can load their
    environment", -i imports the application's module before the first pop."""
    assert isinstance(aq.url, str)
    (tmp_path / "envjobs.py").write_text(
        "async def noop(job):\n    await job.client.redis.rpush('done', job.jid)\n"
    )
    environment = {
        "REDIS_URL": aq.url,
        "AQLESS_QUEUES": "fizz,buzz",
        "AQLESS_RESERVER": "ordered",
        "AQLESS_INTERVAL": "10",
    }
    worker = spawn("-i", "envjobs", env=environment, url=False)
    await worker.logged("serving fizz, buzz with 10 slots (ordered reserver)")
    jid = await aq.queues["buzz"].put("envjobs.noop")
    await count_reaches(aq, "done", 1, timeout=5)  # picked up at once, not after 10 s
    assert await listed(aq, "done") == [jid]


async def test_the_interval_is_how_often_an_idle_worker_looks_for_due_jobs(
    client: aqless.Client,
) -> None:
    """Seed: "The sleep interval (for when there is no jobs available) can be configured with the
    INTERVAL environment variable." A job becoming due publishes nothing: the worker finds it
    at its next look, `interval` seconds apart."""
    recorder = Recorder()
    worker = make_worker(client, ["q"], one(recorder), interval=0.2)
    async with running(worker):
        jid = await client.queues["q"].put("app.job", {}, delay=0.3)
        await until_state(client, jid, JobState.COMPLETE, timeout=2)
    assert recorder.jids == [jid]


async def order_of_pops(client: aqless.Client, reserver: str) -> list[str]:
    recorder = Recorder()
    for name in ("first", "second"):
        for _ in range(2):
            await client.queues[name].put("app.job", {})
    worker = make_worker(
        client, ["first", "second"], one(recorder), concurrency=1, burst=True, reserver=reserver
    )
    await worker.run()
    return recorder.queues


async def test_the_ordered_reserver_drains_the_first_queue_first(client: aqless.Client) -> None:
    """Seed: "The ordered reserver will keep popping jobs off the first queue until it is empty,
    before trying to pop job off the second queue." """
    assert await order_of_pops(client, "ordered") == ["first", "first", "second", "second"]


async def test_the_round_robin_reserver_alternates(client: aqless.Client) -> None:
    """Seed: "The round-robin reserver will pop a job off the first queue, then the second queue,
    and so on." """
    assert await order_of_pops(client, "round-robin") == ["first", "second", "first", "second"]


class Reversed(aqless.Reserver):
    """A reserver of one's own: the queues in reverse order."""

    def order(self, queues: Sequence[str]) -> list[str]:
        return list(reversed(queues))


async def test_you_can_implement_your_own_reserver(client: aqless.Client) -> None:
    """Seed: "You could also easily implement your own." """
    recorder = Recorder()
    for name in ("first", "second"):
        await client.queues[name].put("app.job", {})
    worker = make_worker(
        client, ["first", "second"], one(recorder), concurrency=1, burst=True, reserver=Reversed()
    )
    await worker.run()
    assert recorder.queues == ["second", "first"]


# -- the signals ("The following signals are supported in the parent process")


@processes
@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
async def test_term_and_int_shut_down_and_stop_processing_jobs(
    aq: aqless.Client, spawn: Spawner, number: signal.Signals
) -> None:
    """Seed: "TERM: Shutdown immediately, stop processing jobs. INT: (the same)" With --grace 0
    the running job is cut off at once and handed back to its queue, not failed."""
    worker, (jid,) = await running_sleepers(aq, spawn, 1, "--grace", "0", sleep=30)
    worker.send(number)
    assert await worker.exited(timeout=5) == 0
    assert [entry.split()[0] for entry in await listed(aq, "cancelled")] == [jid]
    assert (await get_job(aq, jid)).state == JobState.WAITING


@processes
async def test_quit_shuts_down_after_the_current_job(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "QUIT: Shutdown after the current job has finished processing." """
    worker, (jid,) = await running_sleepers(aq, spawn, 1, sleep=0.5)
    worker.send(signal.SIGQUIT)
    assert await worker.exited(timeout=5) == 0
    assert await listed(aq, "done") == [jid]
    assert (await get_job(aq, jid)).state == JobState.COMPLETE


@processes
async def test_usr1_kills_the_running_job_and_continues(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "USR1: Kill the forked child immediately, continue processing jobs." The job's code is
    cancelled, the job handed back, and the worker runs it again."""
    worker, (jid,) = await running_sleepers(aq, spawn, 1, sleep=30)
    await aq.redis.set("sleep", 0)
    worker.send(signal.SIGUSR1)
    await count_reaches(aq, "done", 1, timeout=5)
    assert [entry.split()[0] for entry in await listed(aq, "cancelled")] == [jid]
    await until_state(aq, jid, JobState.COMPLETE)
    assert worker.running()


@processes
async def test_usr1_stops_sync_job_code_too(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "USR1: Kill the forked child immediately": a plain (sync) function's run stops
    too when the worker runs it in a child process (--isolate, qless's fork per job)."""
    jid = await aq.queues["q"].put("aqjobs.sync_sleeper", {"sleep": 1.5})
    worker = spawn(*WORKER, "--grace", "0", "--isolate", "q")
    await count_reaches(aq, "sync-started", 1)
    await aq.queues["q"].pause()  # the job handed back stays waiting
    worker.send(signal.SIGUSR1)
    await until_state(aq, jid, JobState.WAITING)
    await anyio.sleep(2.0)  # the code, had it gone on, would have ended by now
    assert await listed(aq, "sync-done") == []
    assert worker.running()


@processes
async def test_usr2_stops_new_jobs_and_dumps_the_backtrace_until_cont(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """Seed: "USR2: Don't process any new jobs, and dump the current backtrace. CONT: Start
    processing jobs again after a USR2" """
    worker = spawn(*WORKER, "q")
    await worker.logged("serving q")
    worker.send(signal.SIGUSR2)
    await worker.logged('File "')  # where each task waits
    (jid,) = await put(aq, "aqjobs.noop", 1)
    await anyio.sleep(1.2)  # a put event and a poll would have woken it
    assert (await get_job(aq, jid)).state == JobState.WAITING
    worker.send(signal.SIGCONT)
    await count_reaches(aq, "done", 1, timeout=3)


@processes
async def test_signals_go_to_the_parent_which_passes_them_on(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """Seed: "You should send these to the master process, not the child." Under a supervisor
    (-p), QUIT to the parent lets every child finish its job and exit."""
    await aq.redis.set("sleep", 0.5)
    supervisor = spawn(*WORKER, "-p", "2", "-c", "1", "q")
    await eventually(lambda: len(supervisor.children()) == 2, 10, "two workers")
    jids = await put(aq, "aqjobs.sleeper", 2)
    await count_reaches(aq, "started", 2)
    supervisor.send(signal.SIGQUIT)
    assert await supervisor.exited(timeout=10) == 0
    assert sorted(await listed(aq, "done")) == sorted(jids)


@processes
async def test_a_child_dumps_its_backtrace_on_usr2(aq: aqless.Client, spawn: Spawner) -> None:
    """Seed: "The child process supports the USR2 signal, which causes it to dump its current
    backtrace." """
    supervisor = spawn(*WORKER, "-p", "2", "q")
    await eventually(lambda: len(supervisor.children()) == 2, 10, "two workers")
    child = supervisor.children()[0]
    await supervisor.logged(f"[{child}] aqless.worker")  # it has started
    supervisor.send_to(child, signal.SIGUSR2)
    await supervisor.logged('File "')


# -- worker middleware


def recording(log: list[str], name: str) -> aqless._worker.middleware.Wrapper:
    """An around_perform hook that calls `perform` ("super") between two log entries."""

    async def around_perform(job: Job, perform: aqless._worker.middleware.Perform) -> Any:
        log.append(f"{name} before")
        result = await perform()
        log.append(f"{name} after")
        return result

    return around_perform


async def test_worker_middleware_runs_around_each_job(client: aqless.Client) -> None:
    """Seed: "Workers also support middleware modules that can be used to inject logic before,
    after or around the processing of a single job... You can mix-in as many middleware
    modules as you like." """
    log: list[str] = []

    async def job_code(job: Job) -> None:
        log.append("job")

    hooks = [recording(log, "ReEstablishDBConnection"), recording(log, "SomeOtherAwesome")]
    job = await process(client, one(job_code), "app.job", middleware=hooks)
    assert job.state == JobState.COMPLETE
    assert log == [
        "ReEstablishDBConnection before",
        "SomeOtherAwesome before",
        "job",
        "SomeOtherAwesome after",
        "ReEstablishDBConnection after",
    ]


@processes
async def test_aqless_run_takes_middleware_by_name(
    aq: aqless.Client, spawn: Spawner, tmp_path: Path
) -> None:
    """Seed: "Then, mix-it into the worker class": aqless-run --middleware module:attribute."""
    (tmp_path / "hooks.py").write_text(
        "async def reestablish(job, perform):\n"
        "    await job.client.redis.rpush('hooked', job.jid)\n"
        "    return await perform()\n"
    )
    (jid,) = await put(aq, "aqjobs.noop", 1)
    spawn(*WORKER, "--middleware", "hooks:reestablish", "q")
    await count_reaches(aq, "done", 1)
    assert await listed(aq, "hooked") == [jid]


# == Per-Job Middlewares ====================================================================


async def test_per_job_middleware_runs_for_that_job_class_only(client: aqless.Client) -> None:
    """Seed: "Qless also supports middleware on a per-job basis, when you have some orthogonal
    logic to run in the context of some (but not all) jobs." """
    log: list[str] = []

    async def job_code(job: Job) -> None:
        log.append(f"job {job.klass_name}")

    handlers = aqless.Handlers()
    handlers.register("app.Wrapped", middleware=[recording(log, "per-job")])(job_code)
    handlers.register("app.Plain")(job_code)
    await client.queues["q"].put("app.Wrapped", {})
    await client.queues["q"].put("app.Plain", {})
    worker = make_worker(
        client, ["q"], handlers, concurrency=1, burst=True, middleware=[recording(log, "worker")]
    )
    assert (await worker.run()).completed == 2
    assert log == [
        "worker before",
        "per-job before",
        "job app.Wrapped",
        "per-job after",
        "worker after",
        "worker before",
        "job app.Plain",
        "worker after",
    ]


class MiddlewareJob:
    """Middleware declared on the job class itself (Ruby: ``extend ReEstablishDBConnection``)."""

    log: list[str] = []  # noqa: RUF012
    middleware = (recording(log, "ReEstablishDBConnection"), recording(log, "MyOtherAwesome"))

    @staticmethod
    async def process(job: Job) -> None:
        MiddlewareJob.log.append("perform")


async def test_a_job_class_declares_its_middlewares_in_order(client: aqless.Client) -> None:
    """Seed: "class MyJobClass; extend Qless::Job::SupportsMiddleware; extend
    ReEstablishDBConnection; extend MyOtherAwesomeMiddleware" — in aqless a class's
    ``middleware`` attribute, outermost first."""
    MiddlewareJob.log.clear()
    handlers = aqless.Handlers()
    handlers.register(MiddlewareJob)
    job = await process(client, handlers, f"{__name__}.MiddlewareJob")
    assert job.state == JobState.COMPLETE
    assert MiddlewareJob.log == [
        "ReEstablishDBConnection before",
        "MyOtherAwesome before",
        "perform",
        "MyOtherAwesome after",
        "ReEstablishDBConnection after",
    ]


# == Web Interface ==========================================================================


@contextlib.asynccontextmanager
async def host_app(client: aqless.Client) -> AsyncIterator[httpx.AsyncClient]:
    """The README's Rack::Builder: another app at /some-other-app, the dashboard at /qless."""

    async def something(request: object) -> PlainTextResponse:
        return PlainTextResponse("something")

    app = Starlette(
        routes=[
            Mount("/some-other-app", routes=[Route("/", something)]),
            Mount("/qless", app=create_app(client)),
        ]
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://host") as http:
        yield http


async def test_the_web_app_mounts_inside_your_app(client: aqless.Client) -> None:
    """Seed: "If you're project has a rack-based ruby web app, we recommend you mount Qless's web
    app in it." """
    await client.queues["testing"].put(MyJobClass, {})
    async with host_app(client) as http:
        assert (await http.get("/some-other-app/")).text == "something"
        page = await http.get("/qless/")
        assert page.status_code == 200
        assert 'href="/qless/queues/testing"' in page.text
        overview = (await http.get("/qless/api/overview")).json()
        assert [queue["name"] for queue in overview["queues"]] == ["testing"]


async def test_the_web_app_retries_a_failure_group(
    client: aqless.Client, dashboard: httpx.AsyncClient
) -> None:
    """Seed: "A resque-inspired web app that lets you easily deal with failures." """
    jid = await client.queues["testing"].put(MyJobClass, {})
    await (await pop_one(client.queues["testing"])).fail("boom", "it broke")
    failed = (await dashboard.get("/api/failed")).json()
    assert [(group["group"], group["count"]) for group in failed["groups"]] == [("boom", 1)]
    token = csrf_token((await dashboard.get("/failed/boom")).text)
    form = {"group": "boom", "action": "retry", "csrf": token}
    assert (await dashboard.post("/actions/failed_group", data=form)).status_code == 303
    job = await get_job(client, jid)
    assert (job.state, job.queue_name) == (JobState.WAITING, "testing")


async def test_the_web_app_shows_what_is_processing(
    client: aqless.Client, dashboard: httpx.AsyncClient
) -> None:
    """Seed: "...and see what it is processing." """
    jid = await client.queues["testing"].put(MyJobClass, {})
    await pop_one(client.queues["testing"], worker="busy-worker")
    workers = (await dashboard.get("/api/workers")).json()["workers"]
    assert [(worker["name"], worker["jobs"]) for worker in workers] == [("busy-worker", 1)]
    held = (await dashboard.get("/api/workers/busy-worker")).json()
    assert [job["jid"] for job in held["jobs"]] == [jid]


# == Job Dependencies =======================================================================


async def test_a_job_waits_for_the_job_it_depends_on(client: aqless.Client) -> None:
    """Seed: "You can't make the turkey until the stuffing is made... When the stuffing job
    completes, the turkey job is unlocked and free to be processed." """
    queue = client.queues["cook"]
    stuffing = await queue.put("MakeStuffing", {"lots": "of butter"})
    turkey = await queue.put("MakeTurkey", {"with": "stuffing"}, depends=[stuffing])
    assert (await get_job(client, turkey)).state == JobState.DEPENDS
    popped = await queue.pop_many(5)
    assert [job.jid for job in popped] == [stuffing]
    await popped[0].complete()
    assert (await get_job(client, turkey)).state == JobState.WAITING
    assert (await pop_one(queue)).jid == turkey


async def test_a_worker_runs_dependent_jobs_in_order(client: aqless.Client) -> None:
    """The same promise through a worker: the turkey runs after the stuffing."""
    order: list[str] = []
    handlers = aqless.Handlers()

    async def cook(job: Job) -> None:
        order.append(job.klass_name)

    handlers.register("MakeStuffing")(cook)
    handlers.register("MakeTurkey")(cook)
    queue = client.queues["cook"]
    stuffing = await queue.put("MakeStuffing", {})
    await queue.put("MakeTurkey", {}, depends=[stuffing])
    await make_worker(client, ["cook"], handlers, burst=True).run()
    assert order == ["MakeStuffing", "MakeTurkey"]


# == Priority ===============================================================================


async def test_a_job_put_with_a_priority_is_popped_sooner(client: aqless.Client) -> None:
    """Seed: "queue.put(MyJobClass, {:foo => 'bar'}, :priority => 10)" """
    queue = client.queues["q"]
    ordinary = await queue.put(MyJobClass, {"foo": "bar"})
    urgent = await queue.put(MyJobClass, {"foo": "bar"}, priority=10)
    assert [job.jid for job in await queue.pop_many(2)] == [urgent, ordinary]


async def test_a_waiting_jobs_priority_can_be_changed(client: aqless.Client) -> None:
    """Seed: "job.priority = 10 # Now this will get popped before any job of lower priority" """
    queue = client.queues["q"]
    ahead = await queue.put(MyJobClass, {}, priority=5)
    jid = await queue.put(MyJobClass, {})
    await (await get_job(client, jid)).set_priority(10)
    assert (await get_job(client, jid)).priority == 10
    assert [job.jid for job in await queue.pop_many(2)] == [jid, ahead]


# == Scheduled Jobs =========================================================================


async def test_a_delayed_job_runs_at_least_that_long_from_now(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "# Run at least 10 minutes from now: queue.put(MyJobClass, {...}, :delay => 600)" """
    queue = timed_client.queues["q"]
    jid = await queue.put(MyJobClass, {"foo": "bar"}, delay=600)
    assert (await get_job(timed_client, jid)).state == JobState.SCHEDULED
    clock.advance(599)
    assert await queue.pop() is None
    clock.advance(1)
    assert (await pop_one(queue)).jid == jid


async def test_a_delayed_job_with_a_priority_goes_before_lesser_ones_once_due(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "Changing the job's priority so that once 10 minutes has elapsed, it's put before
    lesser-priority jobs: :delay => 600, :priority => 100" """
    queue = timed_client.queues["q"]
    waiting = [await queue.put(MyJobClass, {}) for _ in range(3)]
    scheduled = await queue.put(MyJobClass, {}, delay=600, priority=100)
    clock.advance(600)
    popped = [job.jid for job in await queue.pop_many(4)]
    assert popped[0] == scheduled
    assert sorted(popped[1:]) == sorted(waiting)


# == Recurring Jobs =========================================================================


async def test_a_recurring_job_is_found_like_other_jobs(client: aqless.Client) -> None:
    """Seed: "queue.recur(MyJobClass, {:widget => 'warble'}, 3600) # => 22ac...";
    "job = client.jobs['22ac...'] # => < Qless::RecurringJob 22ac... >" """
    rjid = await client.queues["q"].recur(MyJobClass, {"widget": "warble"}, 3600)
    assert re.fullmatch(r"[0-9a-f]{32}", rjid)
    recurring = await get_recurring(client, rjid)
    assert (recurring.klass_name, recurring.data) == (
        f"{__name__}.MyJobClass",
        {"widget": "warble"},
    )
    assert recurring.interval == 3600


async def test_a_recurring_jobs_interval_can_be_changed(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "job.interval = 7200 # I think I only need it to run once every two hours" """
    queue = timed_client.queues["q"]
    rjid = await queue.recur(MyJobClass, {}, 3600)
    assert len(await queue.pop_many(10)) == 1  # the first, at once
    recurring = await get_recurring(timed_client, rjid)
    await recurring.update(interval=7200)
    assert recurring.interval == 7200
    clock.advance(3600)
    assert await queue.pop_many(10) == []
    clock.advance(3600)
    assert len(await queue.pop_many(10)) == 1


async def test_a_recurring_jobs_offset_delays_its_first_run(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "# 23 minutes of waiting until it should go: queue.recur(MyJobClass,
    {:howdy => 'hello'}, 3600, :offset => 23 * 60)" """
    queue = timed_client.queues["q"]
    await queue.recur(MyJobClass, {"howdy": "hello"}, 3600, offset=23 * 60)
    clock.advance(23 * 60 - 1)
    assert await queue.pop_many(10) == []
    clock.advance(1)
    (job,) = await queue.pop_many(10)
    assert job.data == {"howdy": "hello"}


async def test_the_jobs_a_recurring_job_creates_get_its_priority_retries_and_tags(
    client: aqless.Client,
) -> None:
    """Seed: "Recurring jobs also have priority, a configurable number of retries, and tags. These
    settings don't apply to the recurring jobs, but rather the jobs that they create." """
    rjid = await client.queues["q"].recur(MyJobClass, {}, 60, priority=7, retries=2, tags=["t"])
    job = await pop_one(client.queues["q"])
    assert (job.priority, job.original_retries, job.tags) == (7, 2, ("t",))
    assert job.spawned_from_jid == rjid
    assert (await client.jobs.tagged("t")).jids == (job.jid,)


async def test_more_than_one_job_is_created_when_intervals_pass_unpopped(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "# Recur every minute; Wait 5 minutes; queue.pop(10).length # => 5 jobs got popped" """
    queue = timed_client.queues["q"]
    await queue.recur(MyJobClass, {"lots": "of jobs"}, 60, offset=60)
    clock.advance(5 * 60)
    assert len(await queue.pop_many(10)) == 5


# == Configuration Options ==================================================================


async def test_job_history_settings_default_to_7_days_and_50k_jobs(client: aqless.Client) -> None:
    """Seed: "These default to 50k jobs, and 30 days." qless-core's own default, which aqless keeps,
    is 7 days (604800 s): the README is wrong there."""
    assert int(await client.config.get("jobs-history") or 0) == 7 * 86400
    assert int(await client.config.get("jobs-history-count") or 0) == 50_000


async def test_job_history_settings_can_be_set(client: aqless.Client) -> None:
    """Seed: "client.config['jobs-history'] = 7 * 86400;
    client.config['jobs-history-count'] = 500" """
    await client.config.set("jobs-history", 7 * 86400)
    await client.config.set("jobs-history-count", 500)
    assert await client.config.get("jobs-history") == str(7 * 86400)
    assert await client.config.get("jobs-history-count") == "500"


async def test_completed_jobs_are_limited_to_the_last_jobs_history_count(
    client: aqless.Client,
) -> None:
    """Seed: "Job data... is limited to the last jobs-history-count completed jobs." """
    await client.config.set("jobs-history-count", 2)
    queue = client.queues["q"]
    jids = [await queue.put(MyJobClass, {}) for _ in range(3)]
    for _ in jids:
        await (await pop_one(queue)).complete()
    assert await client.jobs.get(jids[0]) is None
    assert [(await get_job(client, jid)).state for jid in jids[1:]] == [JobState.COMPLETE] * 2


async def test_completed_jobs_expire_after_jobs_history_seconds(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "Job data is expired after it has been completed for jobs-history seconds." """
    await timed_client.config.set("jobs-history", 7 * 86400)
    queue = timed_client.queues["q"]
    old = await queue.put(MyJobClass, {})
    await (await pop_one(queue)).complete()
    clock.advance(7 * 86400 + 1)
    recent = await queue.put(MyJobClass, {})
    await (await pop_one(queue)).complete()  # completing is when old ones are cleared
    assert await timed_client.jobs.get(old) is None
    assert (await get_job(timed_client, recent)).state == JobState.COMPLETE


# == Tagging / Tracking =====================================================================


async def test_a_tracked_job_is_flagged_and_listed(client: aqless.Client) -> None:
    """Seed: "client.jobs['b1882e...'].track" """
    jid = await client.queues["q"].put(MyJobClass, {})
    assert await (await get_job(client, jid)).track() is True
    assert (await get_job(client, jid)).tracked
    tracked, _ = await client.jobs.tracked()
    assert [job.jid for job in tracked] == [jid]


async def test_tracked_jobs_have_a_tab_in_the_web_interface_which_can_flag_them(
    client: aqless.Client, dashboard: httpx.AsyncClient
) -> None:
    """Seed: "Tracked jobs have a tab reserved for them in the web interface... You can flag a job
    from the web interface." """
    jid = await client.queues["q"].put(MyJobClass, {})
    token = csrf_token((await dashboard.get(f"/jobs/{jid}")).text)
    done = await dashboard.post("/actions/job_track", data={"jid": jid, "csrf": token})
    assert done.status_code == 303
    tracked = (await dashboard.get("/api/tracked")).json()
    assert [job["jid"] for job in tracked["jobs"]] == [jid]


async def test_tagged_jobs_are_found_from_code_and_the_web_interface(
    client: aqless.Client, dashboard: httpx.AsyncClient
) -> None:
    """Seed: "queue.put(MyJobClass, {:tags => 'aplenty'}, :tags => ['12345', 'foo', 'bar'])";
    "This makes them searchable in the web interface, or from code: client.jobs.tagged('foo')" """
    jid = await client.queues["q"].put(
        MyJobClass, {"tags": "aplenty"}, tags=["12345", "foo", "bar"]
    )
    assert (await client.jobs.tagged("foo")).jids == (jid,)
    found = (await dashboard.get("/api/tags", params={"tag": "foo"})).json()
    assert [job["jid"] for job in found["jobs"]] == [jid]


async def test_tags_can_be_added_and_removed_at_will(client: aqless.Client) -> None:
    """Seed: "job.tag('howdy', 'hello'); job.untag('foo', 'bar')" """
    jid = await client.queues["q"].put(MyJobClass, {}, tags=["12345", "foo", "bar"])
    job = await get_job(client, jid)
    await job.tag("howdy", "hello")
    await job.untag("foo", "bar")
    assert (await get_job(client, jid)).tags == ("12345", "howdy", "hello")
    assert (await client.jobs.tagged("foo")).jids == ()
    assert (await client.jobs.tagged("howdy")).jids == (jid,)


# == Notifications ==========================================================================


async def test_tracked_jobs_emit_an_event_for_each_step(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "client.events do |on| on.canceled / stalled / track / untrack / completed / failed /
    popped / put" — each for a tracked job."""
    await timed_client.config.set("grace-period", 0)
    queue = timed_client.queues["q"]
    first = await queue.put(MyJobClass, {})
    second = await queue.put(MyJobClass, {})
    async with collecting(timed_client, *TRACKED_CHANNELS) as events:
        for jid in (first, second):
            await (await get_job(timed_client, jid)).track()
        await queue.put(MyJobClass, {}, jid=first)  # put again
        assert len(await queue.pop_many(2, worker="dropper")) == 2
        clock.advance(61)
        done, broken = await queue.pop_many(2, worker="w")  # reclaimed: stalled
        await done.complete()
        await broken.fail("group", "message")
        await broken.cancel()  # a complete job cannot be canceled: the failed one
        await done.untrack()
        await until(lambda: ("untrack", done.jid) in {(e.kind, e.jid) for e in events})
    seen = {(event.kind, event.jid) for event in events}
    for jid in (first, second):
        kinds = {"track", "popped", "stalled"} | {"completed" if jid == done.jid else "failed"}
        assert kinds <= {kind for kind, of in seen if of == jid}
    assert ("put", first) in seen
    assert ("canceled", broken.jid) in seen


async def test_events_come_on_a_second_connection_so_the_client_stays_usable(
    client: aqless.Client,
) -> None:
    """Seed: "invoking client.events actually creates a second connection so that client can still
    be used as it normally would be: puts "#{jid} failed in #{client.jobs[jid].queue_name}"" """
    jid = await client.queues["testing"].put(MyJobClass, {})
    await (await get_job(client, jid)).track()
    job = await pop_one(client.queues["testing"])
    async with client.events("failed") as events:
        await job.fail("group", "message")
        async for event in events:
            found = await get_job(client, str(event.jid))  # the client, while listening
            assert (event.jid, found.queue_name) == (jid, "testing")
            break


# == Heartbeating ===========================================================================


async def test_a_popped_job_must_check_in_within_60_seconds_by_default(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "job = queue.pop; job.ttl # => 59; job.heartbeat # => 1331326141.0; job.complete" """
    queue = timed_client.queues["testing"]
    jid = await queue.put(MyJobClass, {})
    job = await pop_one(queue)
    assert job.ttl == 60
    clock.advance(30)
    assert job.ttl == 30
    assert await job.heartbeat() == clock.now + 60
    assert job.ttl == 60
    await job.complete()
    assert (await get_job(timed_client, jid)).state == JobState.COMPLETE


async def test_the_heartbeat_is_configured_globally_and_per_queue(client: aqless.Client) -> None:
    """Seed: "client.config['heartbeat'] = 600; client.queues['testing'].heartbeat = 300" """
    await client.config.set("heartbeat", 600)
    await client.queues["testing"].set_heartbeat(300)
    for name in ("testing", "other"):
        await client.queues[name].put(MyJobClass, {})
    assert 299 < (await pop_one(client.queues["testing"])).ttl <= 300
    assert 599 < (await pop_one(client.queues["other"])).ttl <= 600
    assert await client.queues["testing"].heartbeat() == 300


async def test_a_job_is_presumed_dropped_once_its_heartbeat_interval_passes(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "This is the amount of time that can pass before qless realizes if a job has been
    dropped." """
    await timed_client.config.set("grace-period", 0)
    await timed_client.queues["q"].set_heartbeat(10)
    queue = timed_client.queues["q"]
    jid = await queue.put(MyJobClass, {})
    await pop_one(queue, worker="dropper")
    clock.advance(9)
    assert await queue.pop(worker="other") is None
    clock.advance(1)
    assert (await pop_one(queue, worker="other")).jid == jid


async def test_a_heartbeat_on_a_lost_lock_tells_the_job_to_give_up(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "if (job.ttl < 300) && !job.heartbeat ... then honorable fall on our sword": aqless's
    heartbeat raises LockLostError instead of returning false."""
    await timed_client.config.set("grace-period", 0)
    queue = timed_client.queues["q"]
    await queue.put(MyJobClass, {})
    job = await pop_one(queue, worker="slow")
    clock.advance(61)
    assert job.ttl < 300
    await pop_one(queue, worker="other")
    with pytest.raises(aqless.LockLostError):
        await job.heartbeat()


async def test_the_worker_heartbeats_long_jobs_for_them(quick: aqless.Client) -> None:
    """Seed: "For longer jobs, this may not make sense": aqless's worker renews every running job's
    lock, so a job longer than its heartbeat keeps it."""

    async def long_job(job: Job) -> None:
        await anyio.sleep(2.5)  # 2.5 locks of 1 s

    jid = await quick.queues["q"].put("app.job", {})
    counters = await make_worker(quick, ["q"], one(long_job), burst=True).run()
    assert counters.completed == 1
    job = await get_job(quick, jid)
    assert [entry.what for entry in job.history] == ["put", "popped", "done"]


# == Stats ==================================================================================


async def test_stats_give_todays_wait_and_run_times(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "stats = client.stats.get('testing') # => { 'run' => {'mean' => ..., }, 'wait' =>
    {'mean' => ..., }}": count, mean, standard deviation and histogram, for today."""
    queue = timed_client.queues["testing"]
    for waited, ran in ((10, 20), (30, 40)):
        await queue.put(MyJobClass, {})
        clock.advance(waited)
        job = await pop_one(queue)
        clock.advance(ran)
        await job.complete()
    stats = await queue.stats()
    assert (stats.wait.count, stats.wait.mean) == (2, 20)
    assert stats.wait.std == pytest.approx(14.142, 1e-3)
    assert (stats.run.count, stats.run.mean) == (2, 30)
    assert (stats.wait.histogram[10], stats.wait.histogram[30]) == (1, 1)
    assert (stats.run.histogram[20], stats.run.histogram[40]) == (1, 1)


async def test_stats_are_aggregated_by_day(timed_client: aqless.Client, clock: ManualClock) -> None:
    """Seed: "Stats are aggregated by day, so when you want stats about a queue, you need to say
    what queue and what day you're talking about." """
    queue = timed_client.queues["testing"]
    await queue.put(MyJobClass, {})
    await pop_one(queue)
    today = clock.now
    clock.advance(86400)
    assert (await queue.stats()).wait.count == 0
    assert (await queue.stats(today)).wait.count == 1


# == Time ===================================================================================


async def test_clients_send_their_own_time(timed_client: aqless.Client, clock: ManualClock) -> None:
    """Seed: "The clients actually send the current time when making most requests." What a job
    records is the caller's clock, not the server's."""
    clock.advance(-10 * 86400)  # far from the server's clock
    jid = await timed_client.queues["q"].put(MyJobClass, {})
    (put_entry,) = (await get_job(timed_client, jid)).history
    assert put_entry.when == clock.now


# == Ensuring Job Uniqueness ================================================================


async def test_a_job_gets_a_generated_uuid_or_the_jid_given(client: aqless.Client) -> None:
    """Seed: "Qless will generate a UUID for each enqueued job or you can specify one manually:
    :jid => 'my-job-jid'" """
    queue = client.queues["q"]
    generated = await queue.put(MyJobClass, {"hello": "howdy"})
    assert uuid.UUID(hex=generated).hex == generated
    assert await queue.put(MyJobClass, {"hello": "howdy"}, jid="my-job-jid") == "my-job-jid"
    assert (await get_job(client, "my-job-jid")).data == {"hello": "howdy"}


async def test_a_jid_made_from_class_and_data_keeps_jobs_unique(client: aqless.Client) -> None:
    """Seed: "Create a jid that is a function of the Job's class and data, it'll guaranteed that
    Qless won't have multiple jobs with the same class and data." """
    queue = client.queues["q"]

    def unique_jid(data: dict[str, str]) -> str:
        text = f"MyJobClass {json.dumps(data, sort_keys=True)}"
        return hashlib.sha256(text.encode()).hexdigest()

    for data in ({"hello": "howdy"}, {"hello": "howdy"}, {"hello": "hi"}):
        await queue.put(MyJobClass, data, jid=unique_jid(data))
    assert await queue.length() == 2


# == Setting Default Job Options ============================================================


class Defaulted:
    @staticmethod
    def default_job_options(data: Any) -> dict[str, Any]:
        return {"priority": 10, "delay": 100}


async def test_put_accepts_every_job_option(client: aqless.Client) -> None:
    """Seed: "Qless::Queue#put accepts a number of job options: jid, delay, priority, tags, retries,
    depends" """
    queue = client.queues["q"]
    first = await queue.put(MyJobClass, {})
    jid = await queue.put(
        MyJobClass, {}, jid="j", delay=5, priority=2, tags=["t"], retries=1, depends=[first]
    )
    job = await get_job(client, jid)
    assert (job.jid, job.priority, job.tags, job.original_retries) == ("j", 2, ("t",), 1)
    assert (job.state, job.dependencies) == (JobState.DEPENDS, (first,))


async def test_default_job_options_apply_unless_the_put_gives_its_own(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Seed: "def self.default_job_options(data) { :priority => 10, :delay => 100 }";
    "queue.put(MyJobClass, { :some => "data" }, :delay => 10)... the job would be enqueued
    with a priority of 10 and a delay of 10." """
    queue = timed_client.queues["q"]
    jid = await queue.put(Defaulted, {"some": "data"}, delay=10)
    assert (await get_job(timed_client, jid)).priority == 10
    clock.advance(9)
    assert await queue.pop() is None
    clock.advance(1)
    assert (await pop_one(queue)).jid == jid


# == Testing Jobs ===========================================================================


def test_job_build_makes_a_job_for_unit_tests_without_a_server() -> None:
    """Seed: "Qless::Job.build(client, MyJobClass, :data => { "some" => "data" })";
    "MyJobClass.perform(job)" — then assert what happened."""
    MyJobClass.seen.clear()
    job = Job.build(f"{__name__}.MyJobClass", {"some": "data"})
    anyio.run(MyJobClass.process, job)
    assert MyJobClass.seen == [{"some": "data"}]


def test_job_build_supports_a_normal_jobs_options() -> None:
    """Seed: "The options hash passed to Qless::Job.build supports all the same options a normal job
    supports." """
    job = Job.build(
        "MyJobClass", {}, jid="j", queue="testing", priority=3, tags=["t"], retries=2, worker="w"
    )
    assert (job.jid, job.queue_name, job.priority, job.tags) == ("j", "testing", 3, ("t",))
    assert (job.original_retries, job.retries_left, job.worker_name) == (2, 2, "w")


def test_job_build_takes_the_job_class_itself() -> None:
    """Seed: "Qless::Job.build(client, MyJobClass, ...)" — the class, as put takes it."""
    job = Job.build(MyJobClass, {"some": "data"})
    assert job.klass_name == f"{__name__}.MyJobClass"
