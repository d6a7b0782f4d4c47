"""aqless.sync: the blocking client, from plain threads, across a fork and at exit."""

from __future__ import annotations

import asyncio
import datetime
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from zoneinfo import ZoneInfo

import pytest
import redis

import aqless
import aqless.sync
from tests.support.clients import START, ManualClock, in_a_forked_child, put_from_threads

pytest_plugins = ["tests.support.client_fixtures"]


@pytest.fixture
def sync_client(server_url: str) -> Iterator[aqless.sync.Client]:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    with aqless.sync.Client(server_url) as client:
        yield client


@pytest.fixture
def timed_sync_client(server_url: str, clock: ManualClock) -> Iterator[aqless.sync.Client]:
    """A sync client on a flushed server whose `now` is `clock`."""
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    with aqless.sync.Client(server_url, clock=clock) as client:
        yield client


def named_connections(server_url: str, name: str) -> int:
    with redis.Redis.from_url(server_url, decode_responses=True) as connection:
        return sum(1 for entry in connection.client_list() if entry["name"] == name)


def aqless_sync_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "aqless-sync")


def test_the_producer_verbs_return_plain_values_and_sync_jobs(
    sync_client: aqless.sync.Client,
) -> None:
    emails = sync_client.queues["emails"]
    jid = emails.put("app.Welcome", {"user": 42}, tags=["new"], priority=5)
    later = emails.put("app.Welcome", {"user": 43}, delay=60)
    jids = emails.put_many([aqless.PutRequest("app.Bulk", {"n": n}) for n in range(3)])
    assert len(jids) == 3
    assert emails.length() == 5
    counts = emails.counts()
    assert (counts.waiting, counts.scheduled) == (4, 1)
    assert [queue.name for queue in sync_client.queues.counts()] == ["emails"]
    assert sync_client.queues.names() == ["emails"]
    assert emails.jobs("scheduled") == [later]
    assert emails.jobs("waiting", count=1) == [jid]  # every state is listed
    assert emails.jobs("failed") == []
    (first,) = emails.peek()
    assert isinstance(first, aqless.sync.SyncJob)
    assert first.jid == jid
    job = sync_client.jobs.get(jid)
    assert isinstance(job, aqless.sync.SyncJob)
    assert (job.data, job.tags, job.priority, job.state) == ({"user": 42}, ("new",), 5, "waiting")
    assert job.tag("vip") == ("new", "vip")
    assert sync_client.jobs.tagged("vip").jids == (jid,)
    job.set_priority(1)
    assert job.priority == 1
    assert job.refresh().priority == 1
    job.cancel()
    assert sync_client.jobs.get(jid) is None
    assert [j.jid for j in sync_client.jobs.get_many([later, jid])] == [later]
    sync_client.jobs.cancel(*jids)
    assert emails.length() == 1
    assert emails.stats().failed == 0
    assert sync_client.jobs.failure_groups() == {}
    assert sync_client.workers.counts() == []
    assert sync_client.call(lambda client: client.config.get("heartbeat")) == "60"


def test_twenty_threads_put_over_one_connection(server_url: str) -> None:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    name = f"sync-{uuid.uuid4().hex[:8]}"
    with aqless.sync.Client(server_url, client_name=name) as client:
        queue = client.queues["bulk"]
        jids = put_from_threads(queue, 20, 10)
        assert len(set(jids)) == 200
        assert queue.length() == 200
        assert {job.jid for job in client.jobs.get_many(jids)} == set(jids)
        # every thread's calls went over the client's one script connection
        assert named_connections(server_url, name) == 1
    assert named_connections(server_url, name) == 0


def test_wait_for_a_job_a_worker_completes_in_another_thread(
    sync_client: aqless.sync.Client, server_url: str
) -> None:
    handlers = aqless.Handlers()

    @handlers.register("app.Double")
    async def double(job: aqless.Job) -> None:
        await job.log("doubled", result=job.data["n"] * 2)

    jid = sync_client.queues["math"].put("app.Double", {"n": 21})

    async def work() -> None:
        async with aqless.Client(server_url) as client:
            await aqless.Worker(client, ["math"], handlers=handlers, burst=True).run()

    worker = threading.Thread(target=asyncio.run, args=(work(),))
    worker.start()
    try:
        assert sync_client.wait(jid, timeout=10) == aqless.JobState.COMPLETE
    finally:
        worker.join()
    job = sync_client.jobs.get(jid)
    assert isinstance(job, aqless.sync.SyncJob)
    assert job.state == "complete"
    assert job.history[-1].what == "done"
    assert job.wait(timeout=1) == aqless.JobState.COMPLETE


def test_errors_are_aqless_own(sync_client: aqless.sync.Client) -> None:
    queue = sync_client.queues["q"]
    first = queue.put("app.A")
    queue.put("app.B", depends=[first])
    job = sync_client.jobs.get(first)
    assert isinstance(job, aqless.sync.SyncJob)
    with pytest.raises(aqless.ScriptError):
        job.cancel()  # another job depends on it
    with pytest.raises(TimeoutError):
        sync_client.wait(first, timeout=0.1)
    with pytest.raises(aqless.InvalidArgumentError):
        sync_client.queues[""]
    with pytest.raises(aqless.PayloadError):
        queue.put("app.A", {"not json": object()})
    with pytest.raises(aqless.ConfigurationError):
        aqless.sync.Client("redis://localhost", port=1)  # checked before anything connects
    nowhere = aqless.sync.Client("redis://127.0.0.1:1")
    with nowhere, pytest.raises(aqless.ConnectionLostError):
        nowhere.queues["q"].length()
    counts = queue.counts()  # what raised changed nothing
    assert (counts.waiting, counts.depends) == (1, 1)


def test_close_stops_the_thread_and_refuses_calls(server_url: str) -> None:
    before = aqless_sync_threads()
    client = aqless.sync.Client(server_url)
    assert aqless_sync_threads() == before + 1
    client.queues["q"].length()
    client.close()
    client.close()  # idempotent
    assert aqless_sync_threads() == before
    with pytest.raises(aqless.ConfigurationError):
        client.queues["q"].length()


def test_usable_from_inside_a_running_event_loop(sync_client: aqless.sync.Client) -> None:
    async def view() -> str:  # e.g. an async Django view calling sync code
        return sync_client.queues["q"].put("app.A")

    jid = asyncio.run(view())
    assert sync_client.queues["q"].length() == 1
    assert sync_client.jobs.get(jid) is not None


def test_a_forked_child_starts_its_own_loop_and_connection(
    sync_client: aqless.sync.Client, server_url: str
) -> None:
    parent_jid = sync_client.queues["q"].put("app.Parent")  # the parent's loop is running

    def child() -> str:  # its first call starts a loop and connections of its own
        jid = sync_client.queues["q"].put("app.Child", {"pid": os.getpid()})
        sync_client.close()
        return jid

    pid, child_jid = in_a_forked_child(child)
    job = sync_client.jobs.get(child_jid)
    assert isinstance(job, aqless.sync.SyncJob)
    assert job.data == {"pid": pid}
    # the child's close left the parent's loop and connections alone
    assert sync_client.queues["q"].length() == 2
    assert sync_client.jobs.get(parent_jid) is not None


def test_an_open_client_is_closed_at_exit_without_hanging(server_url: str) -> None:
    script = (
        "import aqless.sync\n"
        f"client = aqless.sync.Client({server_url!r})\n"
        "print(client.queues['q'].put('app.A'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    with redis.Redis.from_url(server_url, decode_responses=True) as connection:
        assert connection.hget(f"ql:j:{result.stdout.strip()}", "klass") == "app.A"


def test_progress_is_read_back(sync_client: aqless.sync.Client, server_url: str) -> None:
    jid = sync_client.queues["images"].put("app.Resize", {})

    async def report() -> None:
        async with aqless.Client(server_url) as client:
            job = await client.queues["images"].pop()
            assert job is not None
            await job.progress(0.25, "a quarter")

    asyncio.run(report())
    reports = sync_client.jobs.progress(jid, "missing")
    assert list(reports) == [jid]
    assert (reports[jid].fraction, reports[jid].message) == (0.25, "a quarter")


def test_a_blocking_job_checkpoints_and_its_next_attempt_resumes(
    sync_client: aqless.sync.Client,
) -> None:
    queue = sync_client.queues["imports"]
    jid = queue.put("app.Import", {})
    first = queue.pop()
    assert first is not None
    assert first.checkpoint({"offset": 3000}) > 0
    assert first.checkpointed == {"offset": 3000}
    assert sync_client.jobs.checkpoints(jid, "missing") == {jid: {"offset": 3000}}
    first.hand_back("deploy")
    second = queue.pop()
    assert second is not None
    assert (second.attempt, second.checkpointed) == (2, {"offset": 3000})


def test_put_at_a_time_schedules_the_job_for_it(
    timed_sync_client: aqless.sync.Client, clock: ManualClock
) -> None:
    queue = timed_sync_client.queues["q"]
    at = datetime.datetime.fromtimestamp(START + 60, datetime.UTC)
    jid = queue.put("app.Job", at=at)
    by_result = queue.put_result("app.Job", at=START + 90).jid
    assert queue.jobs("scheduled") == [jid, by_result]
    clock.advance(59)
    assert queue.jobs("scheduled") == [jid, by_result]
    assert queue.counts().waiting == 0
    clock.advance(1)
    assert queue.peek()[0].jid == jid  # the scheduled job became due
    assert queue.jobs("scheduled") == [by_result]
    with pytest.raises(aqless.ConfigurationError, match="not both"):
        queue.put("app.Job", delay=1, at=at)
    with pytest.raises(aqless.ConfigurationError, match="naive"):
        queue.put("app.Job", at=at.replace(tzinfo=None))


def test_recur_by_name_twice_updates_one_template(timed_sync_client: aqless.sync.Client) -> None:
    queue = timed_sync_client.queues["q"]
    queue.recur("app.Report", {"v": 1}, name="report", cron="0 9 * * *")
    assert queue.recur("app.Report", {"v": 2}, name="report", cron="0 10 * * *") == "report"
    assert queue.jobs("recurring") == ["report"]
    job = timed_sync_client.jobs.get("report")
    assert isinstance(job, aqless.sync.SyncRecurringJob)
    assert (job.data, job.cron) == ({"v": 2}, "0 10 * * *")
    assert {moment.hour for moment in job.next_runs(3)} == {10}


def test_recur_on_a_cron_schedule_and_read_its_next_runs(
    timed_sync_client: aqless.sync.Client, clock: ManualClock
) -> None:
    paris = "Europe/Paris"
    clock.now = datetime.datetime(2026, 6, 1, 8, 1, tzinfo=ZoneInfo(paris)).timestamp()
    rjid = timed_sync_client.queues["q"].recur("app.Report", cron="*/30 * * * *", tz=paris)
    job = timed_sync_client.jobs.get(rjid)
    assert isinstance(job, aqless.sync.SyncRecurringJob)
    assert (job.cron, job.tz, job.klass_name) == ("*/30 * * * *", paris, "app.Report")
    assert repr(job) == f"<SyncRecurringJob {rjid} app.Report on '*/30 * * * *' {paris}>"
    runs = [moment.strftime("%H:%M%z") for moment in job.next_runs(3)]
    assert runs == ["08:30+0200", "09:00+0200", "09:30+0200"]
    every = timed_sync_client.queues["q"].recur("app.Tick", interval=10)
    ticking = timed_sync_client.jobs.get(every)
    assert isinstance(ticking, aqless.sync.SyncRecurringJob)
    assert (ticking.cron, ticking.interval) == (None, 10)
    ticking.update(interval=20, priority=3, data={"n": 1})
    assert (ticking.interval, ticking.priority, ticking.data) == (20, 3, {"n": 1})
    assert ticking.tag("hourly", "ops") == ("hourly", "ops")
    assert ticking.untag("ops") == ("hourly",)
    again = timed_sync_client.jobs.get(every)
    assert isinstance(again, aqless.sync.SyncRecurringJob)
    assert (again.interval, again.priority, again.tags) == (20, 3, ("hourly",))
    with pytest.raises(aqless.ConfigurationError):
        job.update(interval=5)  # a cron job has no interval


def test_put_with_rate_limits_and_put_many_with_dedup(
    sync_client: aqless.sync.Client, server_url: str
) -> None:
    queue = sync_client.queues["api"]
    sync_client.call(lambda client: client.rate_limits["partner"].set(1, per=60))
    limited = queue.put("app.Call", rate_limits=["partner"])
    results = queue.put_many_results(
        [
            aqless.PutRequest("app.Index", {"q": "a"}, dedup="index:a"),
            aqless.PutRequest("app.Index", {"q": "a"}, dedup="index:a"),
            aqless.PutRequest("app.Call", rate_limits=["partner"]),
        ]
    )
    first, again, called = results
    assert (first.deduplicated, again.deduplicated, called.deduplicated) == (False, True, False)
    assert again.jid == first.jid
    assert queue.put_many([aqless.PutRequest("app.Index", dedup="index:a")]) == [first.jid]
    with redis.Redis.from_url(server_url, decode_responses=True) as connection:
        for jid in (limited, called.jid):
            assert connection.hget(f"ql:j:{jid}", "rate_limits") == '["partner"]'
    popped = sync_client.call(lambda client: client.queues["api"].pop_many(5))
    # one start a minute: the second limited job waits
    assert sorted(job.jid for job in popped) == sorted([limited, first.jid])
    assert queue.jobs("scheduled") == [called.jid]


def test_rate_limits_are_set_read_and_lifted(sync_client: aqless.sync.Client) -> None:
    assert sync_client.rate_limits.all() == []
    sync_client.rate_limits["partner"].set(5, per=2)
    sync_client.call(lambda client: client.queues["api"].set_rate_limit(3, per=1))
    partner = sync_client.rate_limits["partner"].get()
    assert (partner.id, partner.limit, partner.period, partner.used) == ("partner", 5, 2, 0)
    own = sync_client.queues["api"].rate_limit
    assert own.id == "ql:q:api"
    assert (own.get().limit, own.get().period) == (3, 1)
    assert sorted(info.id for info in sync_client.rate_limits.all()) == ["partner", "ql:q:api"]
    assert not own.get().smooth
    sync_client.queues["api"].set_rate_limit(3, per=1, smooth=True)
    sync_client.rate_limits["partner"].set(5, per=2, smooth=True)
    assert own.get().smooth
    assert sync_client.rate_limits["partner"].get().smooth
    with pytest.raises(aqless.InvalidArgumentError):
        sync_client.rate_limits["partner"].set(0)
    own.delete()
    assert [info.id for info in sync_client.rate_limits.all()] == ["partner"]
    with pytest.raises(aqless.InvalidArgumentError):
        sync_client.rate_limits[""]


def test_a_blocking_queue_pops_pauses_and_forgets_as_the_async_one(
    sync_client: aqless.sync.Client,
) -> None:
    queue = sync_client.queues["work"]
    jids = [queue.put("app.Work", {"n": n}) for n in range(3)]
    first = queue.pop()
    assert isinstance(first, aqless.sync.SyncJob)
    assert (first.jid, first.state) == (jids[0], "running")
    rest = queue.pop_many(5)
    assert [job.jid for job in rest] == jids[1:]
    rest[0].fail("boom", "it broke")
    assert queue.unfail("boom") == 1
    assert queue.length() == 3  # two running, one waiting again
    queue.pause()
    assert queue.counts().paused
    assert queue.pop() is None
    queue.unpause()
    assert queue.pop() is not None
    queue.set_heartbeat(5)
    assert queue.heartbeat() == 5
    queue.set_heartbeat(None)
    assert queue.heartbeat() == 60
    for job in [first, rest[1]]:
        job.complete()
    assert "work" in sync_client.queues.names()
    idle = sync_client.queues["idle"]
    sync_client.jobs.cancel(idle.put("app.Idle"))
    idle.forget()
    assert "idle" not in sync_client.queues.names()


def test_a_blocking_client_follows_events_until_told_to_stop(
    sync_client: aqless.sync.Client,
) -> None:
    queue = sync_client.queues["heard"]
    with sync_client.events("log") as events:
        jid = queue.put("app.Heard")
        job = queue.pop()
        assert job is not None
        job.complete()
        heard = [(event.kind, event.jid) for event in (events.next(timeout=10) for _ in range(2))]
        assert heard == [("put", jid), ("completed", jid)]
        with pytest.raises(TimeoutError):
            events.next(timeout=0.2)
    with pytest.raises(RuntimeError):
        events.next()  # unsubscribed on leaving


def test_a_blocking_client_reads_tags_patterns_and_workers(
    sync_client: aqless.sync.Client,
) -> None:
    queue = sync_client.queues["tagged"]
    queue.put("app.T", tags=["blue", "red"])
    queue.put("app.T", tags=["blue"])
    assert sync_client.tags.top() == ["blue"]  # as qless: only tags shared by two jobs or more
    sync_client.queue_patterns.set_identifiers({"mail": ["emails", "bounces"]})
    assert sync_client.queue_patterns.identifiers()["mail"] == ["emails", "bounces"]
    job = queue.pop()
    assert job is not None
    assert sync_client.worker_name in [worker.name for worker in sync_client.workers.counts()]
    assert job.jid in sync_client.workers.jobs(sync_client.worker_name).jobs
    # a client that popped publishes no record: a worker holding a job, known to qless only
    seen = sync_client.workers.seen()
    assert [(worker.counts.name, worker.info) for worker in seen.workers] == [
        (sync_client.worker_name, None)
    ]
    assert sync_client.workers.records() == {}


def test_scaling_signals_block_and_return_the_record(sync_client: aqless.sync.Client) -> None:
    queue = sync_client.queues["scaled"]
    queue.put("app.Job", {})
    first = queue.scaling(2.0)
    assert isinstance(first, aqless.QueueScaling)
    assert (first.queue, first.waiting, first.slots) == ("scaled", 1, 1)
    (every,) = sync_client.queues.scaling(2.0, previous=[first])
    assert every.window < 3600  # since `first`


def test_a_blocking_client_puts_a_flow_and_reads_it(sync_client: aqless.sync.Client) -> None:
    from aqless.flows import FlowNode

    children = [FlowNode("app.Leaf", {"i": i}, queue="q", name=f"c{i}") for i in range(2)]
    flow = sync_client.flows.put(FlowNode("app.Sum", queue="q"), children)
    chain = sync_client.flows.chain([FlowNode("app.Step", queue="q") for _ in range(2)])
    tree = sync_client.flows.tree(flow.root)
    assert tree is not None
    assert [child.name for child in tree.children] == ["c0", "c1"]
    assert len(chain.jids) == 2
    parent = sync_client.jobs.get(flow.root)
    assert isinstance(parent, aqless.sync.SyncJob)
    results = parent.children_results()
    assert [child.state for child in results] == ["waiting", "waiting"]


def test_a_blocking_client_removes_a_flow_as_the_async_one(
    sync_client: aqless.sync.Client,
) -> None:
    from aqless.flows import FlowNode

    flow = sync_client.flows.put(
        FlowNode("app.Sum", queue="q", group="vip"), [FlowNode("app.Leaf", queue="q")]
    )
    popped = sync_client.queues["q"].pop()
    assert popped is not None
    with pytest.raises(aqless.FlowRunningError):
        sync_client.jobs.cancel(flow.root)
    popped.complete()
    assert sync_client.jobs.cancel(flow.root) == list(flow.jids)
    assert [sync_client.jobs.get(jid) for jid in flow.jids] == [None, None]


def test_groups_from_sync_code(sync_client: aqless.sync.Client) -> None:
    queue = sync_client.queues["q"]
    queue.put_many([aqless.PutRequest("app.Job", {"g": "big"}, group="big")] * 5)
    queue.put("app.Job", {"g": "small"}, group="small")
    queue.set_group_weight("big", 2)
    queue.set_group_concurrency("small", 1)
    popped = queue.pop_many(3)
    assert sorted(job.data["g"] for job in popped) == ["big", "big", "small"]
    groups = {group.name: group for group in queue.groups()}
    assert (groups["big"].waiting, groups["big"].weight) == (3, 2.0)
    assert (groups["small"].running, groups["small"].concurrency) == (1, 1)
    with pytest.raises(aqless.InvalidArgumentError):
        queue.set_group_weight("big", 0)


def test_a_groups_rate_limit_from_sync_code(sync_client: aqless.sync.Client) -> None:
    queue = sync_client.queues["q"]
    queue.set_group_rate_limit("paced", 2, per=60)
    queue.put_many([aqless.PutRequest("app.Job", {"g": "paced"}, group="paced")] * 4)
    queue.put_many([aqless.PutRequest("app.Job", {"g": "free"}, group="free")] * 4)
    popped = queue.pop_many(8)
    assert sorted(job.data["g"] for job in popped) == ["free"] * 4 + ["paced"] * 2
    (paced,) = [group for group in queue.groups() if group.name == "paced"]
    assert (paced.waiting, paced.rate_limit, paced.rate_period, paced.rate_used) == (2, 2, 60, 2)
    with pytest.raises(aqless.InvalidValueError, match="limit must be a whole number from 1"):
        queue.set_group_rate_limit("paced", 0)
    queue.set_group_rate_limit("paced", None)
    assert len(queue.pop_many(8)) == 2
