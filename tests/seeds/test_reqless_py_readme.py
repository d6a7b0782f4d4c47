"""Acceptance tests from reqless-py's README (/work/shared/seeds/004_150b9d8cd6c5d407.txt),
section by section, translated to aqless's async API and checked on a real server (Valkey 9
and Redis 7).

The philosophy and the feature list are qless-perl's word for word; test_perl_readme.py
tests them through the client, this module through the worker where that adds something.
reqless-py's job classes imported from payloads are handlers registered with
``aqless.Handlers`` here; its ``reqless-py-worker`` is ``aqless-run``.
"""

from __future__ import annotations

import os
import signal
import sys
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import aqless
from aqless.scripts.loader import Script
from aqless.web import create_app
from tests.seeds._fixtures_other import timed_other_fixture  # noqa: F401
from tests.support.clients import START, ManualClock, get_job, get_recurring, pop_one
from tests.support.worker import (
    Recorder,
    all_complete,
    collecting,
    history_of,
    make_worker,
    one,
    running,
    until,
    until_state,
)
from tests.support.worker_processes import (
    Spawner,
    aq_fixture,  # noqa: F401
    count_reaches,
    eventually,
    listed,
    spawn_fixture,  # noqa: F401
    valkey_only_fixture,  # noqa: F401
)
from tests.web.conftest import csrf_token

pytest_plugins = ["tests.support.client_fixtures"]
pytestmark = pytest.mark.timeout(60)

STAGES = ["underpants", "unknown", "profit"]


# -- (intro) a fork of qless-py with type improvements and throttles ---------------------------


def test_the_package_ships_its_types() -> None:
    """This is a fork of seomoz/qless-py that includes significant type improvements."""
    assert (Path(aqless.__file__).parent / "py.typed").is_file()
    assert typing.get_type_hints(aqless.Queue.put)["return"] is str
    assert typing.get_type_hints(aqless.Queue.pop)["return"] == aqless.Job | None
    assert issubclass(aqless.JobState, str)


# -- Philosophy and features (qless-perl's; here through the worker) ---------------------------


async def test_a_job_whose_worker_vanished_is_given_to_a_live_worker(
    client: aqless.Client,
) -> None:
    """Jobs don't get dropped on the floor -- Sometimes workers drop jobs. reqless
    automatically picks them back up and gives them to another worker."""
    await client.config.set("heartbeat", 1)
    await client.config.set("grace-period", 0)
    jid = await client.queues["q"].put("app.job", {})
    await pop_one(client.queues["q"], worker="vanished-worker")  # and never heard of again
    recorder = Recorder()
    async with running(make_worker(client, ["q"], one(recorder))):
        job = await until_state(client, jid, aqless.JobState.COMPLETE, timeout=10)
    assert recorder.jids == [jid]
    assert history_of(job) == ["put", "popped", "timed-out", "popped", "done"]


async def test_a_worker_runs_the_higher_priority_job_first(client: aqless.Client) -> None:
    """Priority -- a higher priority means that it gets popped faster."""
    low = await client.queues["q"].put("app.job", {})
    high = await client.queues["q"].put("app.job", {}, priority=5)
    recorder = Recorder()
    async with running(make_worker(client, ["q"], one(recorder), concurrency=1)):
        await all_complete(client, [low, high])
    assert recorder.jids == [high, low]


async def test_a_job_retried_past_its_retries_is_failed(client: aqless.Client) -> None:
    """Retry logic -- Every job has a number of retries associated with it ... (default is
    5) ... retries=10. (aqless: the code raises aqless.Retry; the 11th run's retry fails.)"""
    runs: list[int] = []

    async def always_later(job: aqless.Job) -> None:
        runs.append(job.retries_left)
        raise aqless.Retry()

    jid = await client.queues["q"].put("app.job", "{}", retries=10)
    async with running(make_worker(client, ["q"], one(always_later))):
        job = await until_state(client, jid, aqless.JobState.FAILED)
    assert runs == list(range(10, -1, -1))
    assert job.failure is not None
    assert job.failure.group == "failed-retries-q"


# -- Writing jobs: the gnomes' pipeline ----------------------------------------------------------


class GnomesJob:
    """One method per queue: each step completes the job into the next queue."""

    @staticmethod
    async def underpants(job: aqless.Job) -> None:
        job.data["collected"] = 3  # Record how many underpants we collected
        await job.complete("unknown")

    @staticmethod
    async def unknown(job: aqless.Job) -> None:
        job.data["decided"] = job.data["collected"] > 2  # a decision on what was collected
        await job.complete("profit")

    @staticmethod
    async def profit(job: aqless.Job) -> None:
        await job.complete()


class OneMethodGnomesJob:
    """Alternatively, a single method process that knows every stage."""

    @staticmethod
    async def process(job: aqless.Job) -> None:
        # the README's first branch completes into "underpants" again, surely for "unknown"
        following = {"underpants": "unknown", "unknown": "profit"}
        if job.queue_name in following:
            await job.complete(following[job.queue_name])
        elif job.queue_name == "profit":
            await job.complete()
        else:
            await job.fail("unknown-stage", "What what?")


def gnomes_handlers() -> aqless.Handlers:
    handlers = aqless.Handlers()
    handlers.register("gnomes.GnomesJob")(GnomesJob)
    handlers.register("gnomes.OneMethodGnomesJob")(OneMethodGnomesJob)
    return handlers


async def test_a_class_with_a_method_per_queue_moves_a_job_through_the_pipeline(
    client: aqless.Client,
) -> None:
    """This would be invoked when a GnomesJob is popped off the "underpants" queue ...
    first in the "underpants" step, then "unknown", and lastly "profit." ... Jobs have user
    data associated with them that can be modified as it goes through a pipeline."""
    jid = await client.queues["underpants"].put("gnomes.GnomesJob", {})
    async with running(make_worker(client, STAGES, gnomes_handlers())):
        job = await until_state(client, jid, aqless.JobState.COMPLETE)
    assert history_of(job) == ["put", "popped", "done"] * 3
    assert [entry.details["queue"] for entry in job.history if entry.what == "put"] == STAGES
    assert job.data == {"collected": 3, "decided": True}


async def test_a_single_process_method_runs_every_stage_and_fails_an_unknown_one(
    client: aqless.Client,
) -> None:
    """You can define a single method process that knows how to complete the job, no matter
    what queue it was popped from ... else: job.fail("unknown-stage", "What what?")"""
    piped = await client.queues["underpants"].put("gnomes.OneMethodGnomesJob", {})
    lost = await client.queues["elsewhere"].put("gnomes.OneMethodGnomesJob", {})
    async with running(make_worker(client, [*STAGES, "elsewhere"], gnomes_handlers())):
        await until_state(client, piped, aqless.JobState.COMPLETE)
        failed = await until_state(client, lost, aqless.JobState.FAILED)
    assert failed.failure is not None
    assert (failed.failure.group, failed.failure.message) == ("unknown-stage", "What what?")


async def test_job_data_is_a_decoded_json_value_whoever_put_it(
    client: aqless.Client,
) -> None:
    """In general, user data is accessible through job.data. It is generally handled as a
    JSON string ... (aqless: job.data is the decoded JSON value; data put by reqless, which
    sends JSON text, reads as that value; a str given to aqless's put is a JSON string.)"""
    script = Script(client.redis)
    await script(
        "queue.put", START, "reqless-py", "q", "by-reqless", "app.job", '{"key": "value"}', 0
    )
    assert (await get_job(client, "by-reqless")).data == {"key": "value"}
    jid = await client.queues["q"].put("app.job", '{"key": "value"}')
    assert (await get_job(client, jid)).data == '{"key": "value"}'
    assert await client.redis.hget(f"ql:j:{jid}", "data") == '"{\\"key\\": \\"value\\"}"'
    values = {"n": 1, "x": 1.5, "list": [1, "two", None], "nested": {"ok": True}, "text": "é"}
    jid = await client.queues["q"].put("app.job", values)
    assert (await get_job(client, jid)).data == values


# -- Connecting ----------------------------------------------------------------------------------


async def test_a_client_without_a_url_connects_where_the_environment_says(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connecting to localhost on 6379: client = reqless.Client(). (aqless: AQLESS_URL or
    REDIS_URL, else an embedded Valkey.)"""
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", server_url)
    async with aqless.Client(server_url) as direct:
        await direct.redis.flushall()
        async with aqless.Client() as client:
            jid = await client.queues["underpants"].put("gnomes.GnomesJob", {})
        assert (await get_job(direct, jid)).queue_name == "underpants"


async def test_a_client_with_a_url_connects_to_that_server() -> None:
    """Connecting to a remote machine: client = reqless.Client("redis://foo.bar.com:1234")"""
    client = aqless.Client("redis://127.0.0.1:1")  # nothing listens there
    with pytest.raises(aqless.ConnectionLostError, match=r"127\.0\.0\.1:1"):
        await client.queues["underpants"].length()
    await client.close()


async def test_a_client_with_a_host_and_port_connects_to_that_server() -> None:
    """You can specify the host and port you want to use for the reqless server."""
    client = aqless.Client(host="127.0.0.1", port=1)  # nothing listens there
    try:
        with pytest.raises(aqless.ConnectionLostError, match=r"127\.0\.0\.1:1"):
            await client.queues["underpants"].length()
    finally:
        await client.close()


# -- Putting jobs --------------------------------------------------------------------------------


async def test_a_job_class_is_put_by_object_or_by_its_dotted_name(client: aqless.Client) -> None:
    """queue.put(gnomes.GnomesJob, ...) ... if the job class is not importable from where
    you're adding jobs, you can use the full path of the job class as a string."""
    underpants = client.queues["underpants"]
    by_object = await underpants.put(GnomesJob, {})
    by_name = await underpants.put(f"{__name__}.GnomesJob", {})
    jobs = await client.jobs.get_many([by_object, by_name])
    assert {job.klass_name for job in jobs} == {f"{__name__}.GnomesJob"}


async def test_a_job_class_need_not_be_importable_when_it_is_registered(
    client: aqless.Client,
) -> None:
    """It's important that your job class can be imported -- you can't create a job class in
    an interactive prompt. (aqless runs what is registered under the name, importable or not;
    an unregistered name outside the allow list fails and imports nothing.)"""
    registered = await client.queues["q"].put("made.at.the.prompt.Job", {})
    unknown = await client.queues["q"].put("gnomes.NoSuchJob", {})
    recorder = Recorder()
    handlers = one(recorder, "made.at.the.prompt.Job")
    async with running(make_worker(client, ["q"], handlers)):
        await until_state(client, registered, aqless.JobState.COMPLETE)
        failed = await until_state(client, unknown, aqless.JobState.FAILED)
    assert recorder.jids == [registered]
    assert failed.failure is not None
    assert failed.failure.group == "q-UnknownJobClassError"
    assert "gnomes" not in sys.modules


# -- The worker script (reqless-py-worker -> aqless-run) -----------------------------------------

GNOMES = """
import os


class GnomesJob:
    @staticmethod
    async def underpants(job):
        await job.client.redis.rpush("stages", job.queue_name)
        await job.complete("unknown")

    @staticmethod
    async def unknown(job):
        await job.client.redis.rpush("stages", job.queue_name)
        await job.complete("profit")

    @staticmethod
    async def profit(job):
        await job.client.redis.rpush("stages", job.queue_name)
"""

BIG_MODULE = """
import os
import pathlib

with pathlib.Path(__file__).with_name("imported-by").open("a") as pids:
    pids.write(f"{os.getpid()}\\n")
"""


async def test_the_worker_script_serves_every_queue_named_with_q(
    aq: aqless.Client, spawn: Spawner
) -> None:
    """reqless-py-worker -q underpants -q unknown -q profit ... You can specify the host and
    port you want to use for the reqless server as well. (aqless-run -q ... --url URL.)"""
    (spawn.folder / "gnomes.py").write_text(GNOMES)
    jid = await aq.queues["underpants"].put("gnomes.GnomesJob", {})
    queues = [option for stage in STAGES for option in ("-q", stage)]
    worker = spawn("-i", "gnomes", *queues, "--url", spawn.url, url=False)
    await count_reaches(aq, "stages", 3)
    assert await listed(aq, "stages") == STAGES

    async def complete() -> bool:
        return (await get_job(aq, jid)).state == "complete"

    await eventually(complete, 5, "the job complete")
    worker.send(signal.SIGTERM)
    assert await worker.exited() == 0


async def test_the_worker_script_keeps_its_worker_processes_running(
    aq: aqless.Client, spawn: Spawner, valkey_only: None
) -> None:
    """This script actually forks off several subprocesses that perform the work, and the
    original process keeps tabs on them ... --workers 4 --interval 10 ... import large
    modules before subprocesses are forked: --import my.really.bigModule. (aqless-run -p 2
    --interval 10 -i module; an -i module is imported by each worker process.)"""
    (spawn.folder / "big_module.py").write_text(BIG_MODULE)
    supervisor = spawn("-p", "2", "--interval", "10", "-i", "big_module", "-i", "aqjobs", "q")
    await eventually(lambda: len(supervisor.children()) == 2, 15, "two worker processes")
    workers = supervisor.children()
    imported = spawn.folder / "imported-by"
    await eventually(lambda: imported.exists() and len(imported.read_text().split()) >= 2, 15)
    assert set(map(int, imported.read_text().split())) >= set(workers)
    supervisor.send_to(workers[0], signal.SIGKILL)
    await eventually(
        lambda: len(supervisor.children()) == 2 and workers[0] not in supervisor.children(),
        15,
        "the killed worker process replaced",
    )
    jids = [await aq.queues["q"].put("aqjobs.noop") for _ in range(4)]
    await count_reaches(aq, "done", 4)
    assert sorted(await listed(aq, "done")) == sorted(jids)
    supervisor.send(signal.SIGTERM)
    assert await supervisor.exited() == 0


async def test_a_worker_runs_one_process_of_ten_coroutines_unless_told_otherwise(
    client: aqless.Client,
) -> None:
    """In the absence of the --workers argument, reqless-py-worker will spawn as many workers
    as there are cores on the machine. (aqless: one process running 10 jobs at once.)"""
    worker = aqless.Worker(client, ["q"])
    assert worker.concurrency == 10


async def test_an_idle_worker_polls_every_interval_for_jobs_that_became_due(
    client: aqless.Client,
) -> None:
    """The interval specifies how often to poll in seconds for work items. (A scheduled job
    that becomes due publishes nothing: only the poll finds it.)"""
    jid = await client.queues["q"].put("app.job", {}, delay=0.3)
    async with running(make_worker(client, ["q"], one(Recorder()), interval=0.2)):
        await until_state(client, jid, aqless.JobState.COMPLETE, timeout=3)


async def test_each_job_gets_a_clean_sandbox_removed_afterwards(
    client: aqless.Client, tmp_path: Path
) -> None:
    """Each job is given a sandbox attribute which is the name of a directory for the sole
    use of that job. It's guaranteed to be clean by the time the job is performed, and it
    cleaned up afterwards. (aqless: <workdir>/slot-<n>.)"""
    seen: list[tuple[Path, list[str]]] = []

    async def messy(job: aqless.Job) -> None:
        assert job.sandbox is not None
        seen.append((job.sandbox, sorted(os.listdir(job.sandbox))))
        (job.sandbox / "left-over").write_text(job.jid)

    jids = [await client.queues["q"].put("app.job", {}) for _ in range(3)]
    worker = make_worker(client, ["q"], one(messy), workdir=tmp_path, concurrency=1)
    async with running(worker):
        await all_complete(client, jids)
    assert seen == [(tmp_path / "slot-0", [])] * 3
    await until(lambda: not (tmp_path / "slot-0").exists(), what="the sandbox removed")


async def test_one_process_runs_many_jobs_at_once(client: aqless.Client) -> None:
    """Some jobs are I/O-bound, and might want to, say, make use of a greenlet pool ... To
    run 5 processes with 50 greenlets each: --workers 5 --greenlets 50. (aqless: -c 50,
    coroutines; here 5 jobs that each wait for all 5 to have started.)"""
    started = 0
    everyone = anyio.Event()

    async def gathering(job: aqless.Job) -> None:
        nonlocal started
        started += 1
        if started == 5:
            everyone.set()
        with anyio.fail_after(5):
            await everyone.wait()

    jids = [await client.queues["q"].put("app.job", {}) for _ in range(5)]
    async with running(make_worker(client, ["q"], one(gathering), concurrency=5)):
        await all_complete(client, jids)


async def test_usr2_logs_the_stacks_and_usr1_hands_running_jobs_back(
    aq: aqless.Client, spawn: Spawner, valkey_only: None
) -> None:
    """USR1 - Get the current stack trace in that worker; USR2 - Enter a debugger in that
    worker. (aqless: USR2 logs every task's stack and pauses popping, CONT resumes; USR1
    hands the running jobs back and goes on.)"""
    await aq.redis.set("sleep", 30)
    jid = await aq.queues["q"].put("aqjobs.sleeper")
    worker = spawn("-i", "aqjobs", "--interval", "1", "q")
    await count_reaches(aq, "started", 1)
    worker.send(signal.SIGUSR2)
    await worker.logged('File "')
    worker.send(signal.SIGCONT)
    await aq.redis.set("sleep", 0)
    worker.send(signal.SIGUSR1)
    await count_reaches(aq, "done", 1)
    assert await listed(aq, "started") == [jid, jid]
    assert worker.running()


async def test_resume_first_takes_back_the_jobs_the_worker_left_off_with(
    client: aqless.Client, server_url: str
) -> None:
    """You can start workers --resume flag to have the worker begin its processing with the
    jobs it left off with ... (and still has locks for)."""
    jids = [await client.queues["q"].put("app.job", {}) for _ in range(2)]
    await client.queues["q"].pop_many(2, worker="restarted")  # the run before the restart
    recorder = Recorder()
    async with aqless.Client(server_url, worker_name="restarted") as restarted:
        worker = make_worker(restarted, ["q"], one(recorder), resume=True)
        async with running(worker):
            await all_complete(client, jids)
    assert sorted(recorder.jids) == sorted(jids)
    for job in await client.jobs.get_many(jids):
        # taken back with a new attempt (a taken-back entry, not a second pop), never timed out
        assert history_of(job) == ["put", "popped", "taken-back", "done"]


async def test_a_changed_job_module_is_not_reimported(
    client: aqless.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whenever a job is processed, it checks to see if the file in which your job is defined
    has been updated since its last import. If it has, it automatically reimports it.
    (aqless deliberately does not: a worker runs the code it started with.)"""
    module = tmp_path / "seed_reloaded_jobs.py"
    code = "async def run(job):\n    await job.client.redis.rpush('versions', {!r})\n"
    module.write_text(code.format("first"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "seed_reloaded_jobs", raising=False)
    handlers = aqless.Handlers(allow=["seed_reloaded_jobs"])
    queue = client.queues["q"]
    async with running(make_worker(client, ["q"], handlers)):
        await all_complete(client, [await queue.put("seed_reloaded_jobs.run", {})])
        module.write_text(code.format("second"))
        os.utime(module, (START, START + 60))
        await all_complete(client, [await queue.put("seed_reloaded_jobs.run", {})])
    assert await client.redis.lrange("versions", 0, -1) == ["first", "first"]
    sys.modules.pop("seed_reloaded_jobs", None)


# -- Priority ------------------------------------------------------------------------------------


async def test_a_valuable_job_and_a_reprioritised_one_go_first(client: aqless.Client) -> None:
    """queue.put(reqless.gnomes.GnomesJob, ..., priority = 10) ... You can also adjust a
    job's priority while it's waiting: job.priority = 25 (aqless: await job.set_priority(25))"""
    underpants = client.queues["underpants"]
    plain = await underpants.put(GnomesJob, {})
    valuable = await underpants.put(GnomesJob, {"address": "123 Brief St."}, priority=10)
    raised = await underpants.put(GnomesJob, {})
    job = await get_job(client, raised)
    await job.set_priority(25)
    assert job.priority == 25
    assert [job.jid for job in await underpants.peek(3)] == [raised, valuable, plain]


# -- Scheduled jobs ------------------------------------------------------------------------------


async def test_a_delayed_job_is_valid_only_after_its_delay_and_a_priority_puts_it_first(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """queue.put(..., delay=3600) ... this job will only be considered valid after the delay
    has passed ... If you want it to be processed very soon after the delay expires, you
    could also boost its priority: delay=3600, priority=100."""
    underpants = timed_client.queues["underpants"]
    heist = await underpants.put(GnomesJob, {}, delay=3600, priority=100)
    clock.advance(1)
    routine = await underpants.put(GnomesJob, {})
    assert [job.jid for job in await underpants.peek(5)] == [routine]
    clock.advance(3599)
    assert [job.jid for job in await underpants.pop_many(5)] == [heist, routine]


# -- Recurring jobs ------------------------------------------------------------------------------


async def test_a_recurring_job_spawns_now_or_after_its_offset(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """client.queues["maintenance"].recur(myJob, ..., interval=60 * 60 * 24) ... That will
    spawn a job right now ... maybe the first job should wait a little bit: offset=3600."""
    maintenance = timed_client.queues["maintenance"]
    tasks = {"tasks": ["sweep", "mop", "scrub"]}
    now = await maintenance.recur("app.Maintenance", tasks, interval=86400)
    later = await maintenance.recur("app.Maintenance", tasks, interval=86400, offset=3600)
    assert [job.spawned_from_jid for job in await maintenance.pop_many(5)] == [now]
    clock.advance(3600)
    (spawned,) = await maintenance.pop_many(5)
    assert (spawned.spawned_from_jid, spawned.data) == (later, tasks)


async def test_a_recurring_jobs_tags_priority_and_interval_can_be_updated(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """You can always update the tags, priority and even the interval of a recurring job ...
    These attributes ... [are] used as the template for the job that it creates."""
    maintenance = timed_client.queues["maintenance"]
    rjid = await maintenance.recur("app.Maintenance", {}, interval=3600, tags=["hello"])
    await maintenance.pop_many(5)
    recurring = await get_recurring(timed_client, rjid)
    await recurring.update(priority=20, interval=7200)
    await recurring.tag("foo", "bar")
    assert await recurring.untag("hello") == ("foo", "bar")
    clock.advance(3600)
    assert await maintenance.pop() is None
    clock.advance(3600)
    spawned = await pop_one(maintenance)
    assert (spawned.priority, spawned.tags) == (20, ("foo", "bar"))
    assert (recurring.priority, recurring.interval) == (20, 7200)


async def test_five_minutes_of_a_job_recurring_every_minute_are_five_jobs(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    """Recur every minute: queue.recur(..., '{"lots": "of jobs"}', 60); Wait 5 minutes;
    len(queue.pop(10)) => 5 jobs got popped. (The first spawns at once, so 5 minutes less a
    second.)"""
    queue = timed_client.queues["q"]
    await queue.recur("app.job", {"lots": "of jobs"}, 60)
    clock.advance(5 * 60 - 1)
    assert len(await queue.pop_many(10)) == 5


# -- Configuration -------------------------------------------------------------------------------


async def test_the_job_history_options_are_read_and_written(client: aqless.Client) -> None:
    """client.config["jobs-history"] = 7 * 86400; client.config["jobs-history-count"] = 500
    (aqless: await client.config.set(...); get answers strings, as reqless does)."""
    assert await client.config.get("jobs-history-count") == "50000"
    await client.config.set("jobs-history", 7 * 86400)
    await client.config.set("jobs-history-count", 500)
    assert await client.config.get("jobs-history") == "604800"
    assert await client.config.get("jobs-history-count") == "500"
    assert (await client.config.all())["jobs-history-count"] == "500"
    await client.config.unset("jobs-history-count")
    assert await client.config.get("jobs-history-count") == "50000"


# -- Tracking and tagging ------------------------------------------------------------------------


async def test_a_job_is_tracked_from_code_and_from_the_web_interface(
    client: aqless.Client,
) -> None:
    """You can flag a job from the web interface, or the corresponding code:
    client.jobs["b1882e..."].track()"""
    by_code = await client.queues["q"].put(GnomesJob, {})
    by_web = await client.queues["q"].put(GnomesJob, {})
    await (await get_job(client, by_code)).track()
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://ops") as http:
        token = csrf_token((await http.get(f"/jobs/{by_web}")).text)
        done = await http.post("/actions/job_track", data={"jid": by_web, "csrf": token})
        assert done.status_code == 303
    tracked, _ = await client.jobs.tracked()
    assert {job.jid for job in tracked} == {by_code, by_web}


async def test_tagged_jobs_are_found_a_page_at_a_time(client: aqless.Client) -> None:
    """queue.put(..., tags=["12345", "foo", "bar"]) ... jids = client.jobs.tagged("foo")
    ... job.tag("howdy", "hello"); job.untag("foo", "bar")"""
    jids = [
        await client.queues["q"].put(GnomesJob, '{"tags": "aplenty"}', tags=["12345", "foo", "bar"])
        for _ in range(3)
    ]
    first = await client.jobs.tagged("foo", count=2)
    rest = await client.jobs.tagged("foo", offset=2, count=2)
    assert first.total == rest.total == 3
    assert sorted((*first.jids, *rest.jids)) == sorted(jids)
    job = await get_job(client, jids[0])
    await job.tag("howdy", "hello")
    await job.untag("foo", "bar")
    assert (await get_job(client, jids[0])).tags == ("12345", "howdy", "hello")
    assert (await client.jobs.tagged("foo")).total == 2


# -- Dependencies --------------------------------------------------------------------------------


async def test_the_omelet_waits_for_eggs_and_pan_from_other_queues(client: aqless.Client) -> None:
    """eggs_jid = ...["buy_eggs"].put(...); pan_jid = ...["buy_pan"].put(...);
    ...["omelete"].put(..., depends=[eggs_jid, pan_jid]) ... the job to make the omelet can't
    be performed until the pan and eggs purchases have been completed."""
    eggs = await client.queues["buy_eggs"].put("app.Buy", {"count": 12})
    pan = await client.queues["buy_pan"].put("app.Buy", {"coating": "non-stick"})
    omelet = await client.queues["omelete"].put(
        "app.Cook", {"toppings": ["onions", "ham"]}, depends=[eggs, pan]
    )
    await (await pop_one(client.queues["buy_eggs"])).complete()
    assert await client.queues["omelete"].pop() is None
    assert (await get_job(client, omelet)).dependencies == (pan,)
    await (await pop_one(client.queues["buy_pan"])).complete()
    assert (await pop_one(client.queues["omelete"])).jid == omelet


# -- Notifications -------------------------------------------------------------------------------


async def test_tracked_jobs_emit_every_kind_of_event(
    timed_client: aqless.Client, timed_other: aqless.Client, clock: ManualClock
) -> None:
    """for evt in ["canceled", "completed", "failed", "popped", "put", "stalled", "track",
    "untrack"]: client.events.on(evt, ...) (aqless: an async iterator over the channels)."""
    kinds = ["canceled", "completed", "failed", "popped", "put", "stalled", "track", "untrack"]
    queue, other_queue = timed_client.queues["q"], timed_other.queues["q"]
    stalls, fails, cancels = [await queue.put("app.job", {}) for _ in range(3)]
    async with collecting(timed_client, *kinds) as events:
        for jid in (stalls, fails, cancels):
            await (await get_job(timed_client, jid)).track()
        await queue.put("app.job", {}, jid=stalls)
        await pop_one(queue)
        clock.advance(61)
        for job in await other_queue.pop_many(3):
            if job.jid == fails:
                await job.fail("q-Oops", "oops")
            elif job.jid == stalls:
                await job.complete()
        await (await get_job(timed_client, fails)).untrack()
        await (await get_job(timed_client, cancels)).cancel()
        await until(lambda: {event.kind for event in events} == set(kinds), what="every kind")
    assert {event.jid for event in events} == {stalls, fails, cancels}


# -- Heartbeating, retries and popping -----------------------------------------------------------


async def test_the_worker_heartbeats_a_job_that_outlives_its_lock(client: aqless.Client) -> None:
    """If your lease on the job will expire before you have a chance to complete it, then you
    should heartbeat it. (aqless: the worker heartbeats every running job itself.)"""
    await client.queues["q"].set_heartbeat(1)
    await client.config.set("grace-period", 0)
    ttls: list[float] = []

    async def slow(job: aqless.Job) -> None:
        await anyio.sleep(1.6)  # past the 1 s lock
        ttls.append((await job.refresh()).ttl)

    jid = await client.queues["q"].put("app.job", {})
    async with running(make_worker(client, ["q"], one(slow))):
        job = await until_state(client, jid, aqless.JobState.COMPLETE)
    assert history_of(job) == ["put", "popped", "done"]
    assert 0 < ttls[0] <= 1


async def test_a_heartbeat_on_a_lost_lock_raises(client: aqless.Client) -> None:
    """job.heartbeat() ... to make sure that no other worker gets access to it. (aqless: a
    heartbeat on a job no longer the caller's raises LockLostError, not False.)"""
    jid = await client.queues["q"].put("app.job", {})
    job = await pop_one(client.queues["q"])
    assert job.expires_at > 0
    assert job.ttl > 0
    assert await client.queues["q"].pop(worker="thief") is None  # the job is locked
    await (await get_job(client, jid)).timeout()
    with pytest.raises(aqless.LockLostError):
        await job.heartbeat()


async def test_pop_takes_one_job_or_none_and_pop_many_a_list(client: aqless.Client) -> None:
    """job = queue.pop(); jobs = queue.pop(20) (aqless: pop() is a Job or None,
    pop_many(20) always a list)."""
    queue = client.queues["q"]
    assert await queue.pop() is None
    assert await queue.pop_many(20) == []
    await queue.put("app.job", {})
    assert len(await queue.pop_many(20)) == 1


# -- Stats ---------------------------------------------------------------------------------------


async def test_stats_count_failures_and_retries_as_well(
    timed_client: aqless.Client, timed_other: aqless.Client, clock: ManualClock
) -> None:
    """It tracks the average wait time, number of jobs that have waited in a queue,
    failures, retries, and average running time. (As in qless-core, `retries` counts the
    jobs taken back from a worker whose lock expired.)"""
    queue = timed_client.queues["q"]
    for _ in range(3):
        await queue.put("app.job", {})
    broken, _, fine = await queue.pop_many(3)
    await broken.fail("q-Oops", "oops")
    await fine.complete()
    clock.advance(61)
    await pop_one(timed_other.queues["q"])  # the third, dropped
    stats = await queue.stats()
    assert (stats.wait.count, stats.run.count) == (4, 1)  # the dropped job waited twice
    assert (stats.failed, stats.failures, stats.retries) == (1, 1, 1)


# -- Throttles -----------------------------------------------------------------------------------


async def test_a_named_throttle_lets_at_most_its_maximum_run(client: aqless.Client) -> None:
    """This is a fork ... that includes ... support for throttles. (A throttle held by jobs
    of any queue: client.throttles[name].set(n).)"""
    smtp = client.throttles["smtp"]
    await smtp.set(1)
    first = await client.queues["mail"].put("app.Send", {}, throttles=["smtp"])
    second = await client.queues["digest"].put("app.Send", {}, throttles=["smtp"])
    (taken,) = await client.queues["mail"].pop_many(5)
    assert await client.queues["digest"].pop() is None
    assert (await get_job(client, second)).state == "throttled"
    assert (await smtp.locks(), await smtp.pending()) == ([first], [second])
    await taken.complete()
    assert (await pop_one(client.queues["digest"])).jid == second


async def test_a_queues_own_throttle_caps_its_running_jobs(client: aqless.Client) -> None:
    """Throttles: a queue's own maximum of running jobs."""
    queue = client.queues["q"]
    await queue.set_throttle(2)
    for _ in range(3):
        await queue.put("app.job", {})
    assert len(await queue.pop_many(3)) == 2
    assert (await queue.throttle()).maximum == 2


async def test_a_throttle_expires_and_can_be_deleted(client: aqless.Client) -> None:
    """Throttles have a maximum and an expiration."""
    smtp = client.throttles["smtp"]
    await smtp.set(3, expiration=60)
    info = await smtp.get()
    assert info.maximum == 3
    assert 0 < info.ttl <= 60
    await smtp.delete()
    assert (await smtp.get()).maximum == 0


async def test_a_worker_never_runs_more_throttled_jobs_than_the_maximum(
    client: aqless.Client,
) -> None:
    """A throttle applies across the worker's coroutines."""
    await client.throttles["smtp"].set(2)
    running_now: Counter[str] = Counter()
    most = 0

    async def send(job: aqless.Job) -> None:
        nonlocal most
        running_now["smtp"] += 1
        most = max(most, running_now["smtp"])
        await anyio.sleep(0.05)
        running_now["smtp"] -= 1

    requests = (aqless.PutRequest("app.job", {}, throttles=["smtp"]) for _ in range(6))
    jids = await client.queues["q"].put_many(requests)
    async with running(make_worker(client, ["q"], one(send), concurrency=6)):
        await all_complete(client, jids)
    assert most == 2


# -- The Lua scripts, on redis and valkey 7.0+ (the fixtures run every test on both) --------------
# -- The web app: tracking (above) and retrying failed jobs (test_perl_readme.py) ---------------


def test_typed_job_data_is_any_json_value() -> None:
    """(typed job data) A job's data is typed Any: whatever JSON value was put."""
    job = aqless.Job.build("app.job", [1, {"two": 2}])
    assert job.data == [1, {"two": 2}]
    assert typing.get_type_hints(aqless.Queue.put)["data"] is Any
