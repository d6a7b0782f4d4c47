"""Client: connecting, namespaces, closing; and the client-wide views (queues, jobs, config,
workers, throttles, tags), against real servers."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

import aqless
from aqless import (
    ConfigurationError,
    ConnectionLostError,
    InvalidArgumentError,
    InvalidValueError,
    Job,
    JobNotFoundError,
    JobState,
    Page,
    QueueCounts,
    RecurringJob,
    ScriptError,
    ThrottleInfo,
    WorkerCounts,
    WorkerJobs,
)
from aqless.client import connect
from aqless.scripts.options import describe
from tests.support.clients import WORKER, ManualClock, get_job, pop_one

pytest_plugins = ["tests.support.client_fixtures"]


# -- connecting --------------------------------------------------------------------------------


async def test_url_connects(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
        assert client.url == server_url
        assert client.prefix == "ql:"
        jid = await client.queues["q"].put("app.Job", {"n": 1})
        assert (await get_job(client, jid)).data == {"n": 1}
        assert repr(client) == f"<Client {server_url} ql:>"


async def test_connect_is_client_as_a_context_manager(server_url: str) -> None:
    async with connect(server_url, worker_name="w") as client:
        assert isinstance(client, aqless.Client)
        assert client.worker_name == "w"
        assert await client.queues["q"].length() >= 0
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        _ = client.redis


async def test_connection_options_go_to_redis(server_url: str) -> None:
    async with aqless.Client(server_url, socket_timeout=5, client_name="aqless-test") as client:
        assert isinstance(client.redis, aioredis.Redis)
        assert client.redis.connection_pool.connection_kwargs["socket_timeout"] == 5
        await client.queues["q"].length()
        assert (await client.redis.client_info())["name"] == "aqless-test"


@asynccontextmanager
async def as_throwaway_user(
    server_url: str, name: str, **rules: Any
) -> AsyncIterator[aqless.Client]:
    """A client of a new ACL user (password "secret") with `rules`, deleted afterwards."""
    async with aqless.Client(server_url) as admin:
        await admin.redis.flushall()
        await admin.redis.acl_setuser(
            name, enabled=True, passwords=["+secret"], keys=["ql:*"], commands=["+@all"], **rules
        )
        try:
            async with aqless.Client(
                server_url,
                username=name,
                password="secret",  # noqa: S106 -- a throwaway user of a private test server
            ) as client:
                yield client
        finally:
            await admin.redis.acl_deluser(name)


async def test_an_acl_user(server_url: str) -> None:
    async with as_throwaway_user(server_url, "aqless-test-user", channels=["ql:*"]) as client:
        jid = await client.queues["q"].put("app.Job")
        assert (await pop_one(client.queues["q"])).jid == jid
        assert await client.redis.acl_whoami() == "aqless-test-user"


async def test_bad_url_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="bad server URL"):
        aqless.Client("nope://localhost")


async def test_url_and_redis_together_are_refused(server_url: str) -> None:
    redis = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        with pytest.raises(ConfigurationError, match="not both"):
            aqless.Client(server_url, redis=redis)
    finally:
        await redis.aclose()


async def test_a_given_redis_client_is_used_and_left_open(server_url: str) -> None:
    redis = aioredis.Redis.from_url(server_url, decode_responses=True)
    try:
        async with aqless.Client(redis=redis) as client:
            await client.redis.flushall()
            assert client.redis is redis
            jid = await client.queues["q"].put("app.Job")
            assert await redis.hget(f"ql:j:{jid}", "klass") == "app.Job"
        # the client did not make it, so it does not close it
        assert await redis.ping() is True
    finally:
        await redis.aclose()


async def test_a_redis_client_must_decode_responses(server_url: str) -> None:
    redis = aioredis.Redis.from_url(server_url)
    try:
        with pytest.raises(ConfigurationError, match="decode_responses=True"):
            aqless.Client(redis=redis)
    finally:
        await redis.aclose()


async def test_an_unreachable_server_is_connection_lost(tmp_path: Path) -> None:
    async with aqless.Client(f"unix://{tmp_path}/nobody-listens.sock") as client:
        with pytest.raises(ConnectionLostError, match=r"^queue\.length: ") as raised:
            await client.queues["q"].length()
    assert isinstance(raised.value.__cause__, RedisConnectionError)


async def test_worker_name_defaults_to_host_and_pid(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        assert client.worker_name == f"{socket.gethostname()}-{os.getpid()}"
    async with aqless.Client(server_url, worker_name="billing-7") as client:
        await client.redis.flushall()
        await client.queues["q"].put("app.Job")
        job = await pop_one(client.queues["q"])
        assert job.worker_name == "billing-7"


async def test_script_errors_keep_the_command_and_the_server_text(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    with pytest.raises(InvalidArgumentError) as raised:
        await queue.jobs("no-such-state")
    error = raised.value
    assert isinstance(error, ScriptError)
    assert error.command == "queue.jobsByState"
    assert error.detail == 'Jobs(): Unknown type "no-such-state"'
    assert str(error) == 'queue.jobsByState: Jobs(): Unknown type "no-such-state"'
    assert isinstance(error.__cause__, ResponseError)


# -- namespaces --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "prefix"), [("tenant", "tenant:ql:"), ("{billing}", "{billing}:ql:")]
)
async def test_namespace_keeps_every_key_under_its_prefix(
    server_url: str, clock: ManualClock, namespace: str, prefix: str
) -> None:
    async with (
        aqless.Client(server_url, clock=clock) as plain,
        aqless.Client(server_url, namespace=namespace, clock=clock, worker_name=WORKER) as client,
    ):
        await client.redis.flushall()
        assert client.prefix == prefix
        queue = client.queues["q"]
        first = await queue.put("app.Job", {"n": 1}, tags=["t"], throttles=["th"])
        second = await queue.put("app.Job", {"n": 2}, depends=[first], tags=["t"])
        await queue.recur("app.Every", {}, 60, offset=3600)
        await client.config.set("heartbeat", 30)
        await client.throttles["th"].set(3)
        job = await pop_one(queue)
        await job.track()
        await job.complete()
        await (await pop_one(queue)).fail("boom", "it broke")

        keys = [str(key) for key in await client.redis.keys("*")]
        assert keys, "nothing was written"
        assert all(key.startswith(prefix) for key in keys), sorted(keys)
        assert f"{prefix}j:{first}" in keys
        assert f"{prefix}f:boom" in keys

        # the namespaced client sees its jobs; a client without a namespace does not
        assert (await get_job(client, second)).state == JobState.FAILED
        assert await plain.jobs.get(second) is None
        assert await plain.queues.names() == []
        assert (await queue.throttle()).id == f"{prefix}q:q"


# -- the client's states: unopened, open, closed -----------------------------------------------


async def test_close_is_idempotent(server_url: str) -> None:
    client = aqless.Client(server_url)
    await client.close()
    await client.close()
    async with aqless.Client(server_url) as client:
        await client.close()  # and once more on exit


async def test_a_closed_client_refuses_to_be_used(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        queue = client.queues["q"]
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        await queue.put("app.Job")
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        await client.jobs.get("jid")
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        _ = client.redis
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        await client.open()
    with pytest.raises(aqless.ClientClosedError, match="closed"):
        async with client:
            pass


async def test_no_url_and_no_environment_raises_on_first_call_unless_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    client = aqless.Client()
    assert client.url is None
    queue = client.queues["q"]  # no I/O: fine without a server
    with pytest.raises(ConfigurationError, match="AQLESS_URL"):
        await queue.put("app.Job")
    with pytest.raises(ConfigurationError, match="AQLESS_URL"):
        await client.config.all()
    with pytest.raises(ConfigurationError, match="AQLESS_URL"):
        _ = client.redis
    assert repr(client) == "<Client embedded ql:>"
    await client.close()


async def test_aqless_url_from_the_environment(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AQLESS_URL", server_url)
    # AQLESS_URL wins over REDIS_URL, which names a server that does not exist
    monkeypatch.setenv("REDIS_URL", "unix:///nonexistent/redis.sock")
    async with aqless.Client() as client:
        await client.redis.flushall()
        assert client.url == server_url
        jid = await client.queues["q"].put("app.Job")
        assert (await get_job(client, jid)).queue_name == "q"


async def test_redis_url_from_the_environment(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AQLESS_URL", raising=False)
    monkeypatch.setenv("REDIS_URL", server_url)
    async with aqless.Client() as client:
        await client.redis.flushall()
        assert client.url == server_url
        assert await client.queues["q"].length() == 0


# -- client.queues -----------------------------------------------------------------------------


async def test_queues_getitem_does_no_io(server_url: str) -> None:
    client = aqless.Client(server_url)
    await client.close()
    queue = client.queues["emails"]  # even on a closed client: nothing is sent
    assert isinstance(queue, aqless.Queue)
    assert queue.name == "emails"
    assert repr(queue) == "<Queue emails>"
    with pytest.raises(aqless.InvalidValueError, match="queue must be a name"):
        client.queues[""]


async def test_queues_names_and_counts(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    assert await client.queues.names() == []
    assert await client.queues.counts() == []
    await client.queues["b"].put("app.Job")
    await client.queues["b"].put("app.Job", delay=10)
    clock.advance(1)
    await client.queues["a"].put("app.Job")
    await client.queues["a"].pause()
    # in the order the queues were first used
    assert await client.queues.names() == ["b", "a"]
    assert await client.queues.counts() == [
        QueueCounts("b", 1, 0, 0, 1, 0, 0, 0, paused=False),
        QueueCounts("a", 1, 0, 0, 0, 0, 0, 0, paused=True),
    ]


# -- client.jobs -------------------------------------------------------------------------------


async def test_jobs_get(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    jid = await queue.put("app.Job", {"n": 1})
    rjid = await queue.recur("app.Every", {"n": 2}, 60)
    job = await client.jobs.get(jid)
    assert isinstance(job, Job)
    assert (job.jid, job.data) == (jid, {"n": 1})
    recurring = await client.jobs.get(rjid)
    assert isinstance(recurring, RecurringJob)
    assert (recurring.jid, recurring.data) == (rjid, {"n": 2})
    assert await client.jobs.get("no-such-jid") is None


async def test_jobs_get_of_data_another_client_stored(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("app.Job")
    await client.redis.hset(f"ql:j:{jid}", "state", "archived")
    job = await get_job(client, jid)
    assert job.state == "archived"  # a state aqless does not know stays a string
    assert not isinstance(job.state, JobState)
    await client.redis.hset(f"ql:j:{jid}", "data", "{not json")
    with pytest.raises(aqless.PayloadError, match="stored job data is not JSON"):
        await client.jobs.get(jid)


async def test_jobs_get_many(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    first = await queue.put("app.Job", {"n": 1})
    second = await queue.put("app.Job", {"n": 2})
    jobs = await client.jobs.get_many([second, "missing", first])
    assert [(job.jid, job.data) for job in jobs] == [(second, {"n": 2}), (first, {"n": 1})]
    assert all(isinstance(job, Job) for job in jobs)
    assert await client.jobs.get_many([]) == []
    assert await client.jobs.get_many(["missing"]) == []


async def test_jobs_tagged(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    jids = []
    for _ in range(3):
        jids.append(await queue.put("app.Job", tags=["red"]))
        clock.advance(1)
    assert await client.jobs.tagged("red") == Page(total=3, jids=tuple(jids))
    assert await client.jobs.tagged("red", offset=1, count=1) == Page(total=3, jids=(jids[1],))
    assert await client.jobs.tagged("blue") == Page(total=0, jids=())


async def test_jobs_tracked(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await client.jobs.tracked() == ([], [])
    kept = await get_job(client, await queue.put("app.Job"))
    gone = await get_job(client, await queue.put("app.Job"))
    await kept.track()
    await gone.track()
    await gone.cancel()
    jobs, expired = await client.jobs.tracked()
    assert [job.jid for job in jobs] == [kept.jid]
    assert jobs[0].tracked is True
    assert expired == [gone.jid]


async def test_jobs_completed(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await client.jobs.completed() == []
    jids = []
    for _ in range(3):
        jids.append(await queue.put("app.Job"))
        await (await pop_one(queue)).complete()
        clock.advance(1)
    assert await client.jobs.completed() == jids[::-1]  # most recent first
    assert await client.jobs.completed(offset=1, count=1) == [jids[1]]


async def test_jobs_failed_and_failure_groups(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await client.jobs.failure_groups() == {}
    assert await client.jobs.failed("boom") == Page(total=0, jids=())
    jids = []
    for group in ("boom", "boom", "bang"):
        jids.append(await queue.put("app.Job"))
        await (await pop_one(queue)).fail(group, "it broke")
        clock.advance(1)
    assert await client.jobs.failure_groups() == {"boom": 2, "bang": 1}
    assert await client.jobs.failed("boom") == Page(total=2, jids=(jids[1], jids[0]))
    assert await client.jobs.failed("boom", offset=1, count=1) == Page(total=2, jids=(jids[0],))
    assert await client.jobs.failed("bang") == Page(total=1, jids=(jids[2],))


# -- client.config -----------------------------------------------------------------------------


async def test_config_get_set_unset(client: aqless.Client) -> None:
    config = client.config
    assert await config.get("heartbeat") == "60"  # the default
    assert await config.get("grace-period") == "10"
    assert await config.get("no-such-option") is None
    await config.set("heartbeat", 30)
    await config.set("application", "billing")
    await config.set("grace-period", 2.5)
    assert await config.get("heartbeat") == "30"
    assert await config.get("application") == "billing"
    assert await config.get("grace-period") == "2.5"
    await config.unset("heartbeat")
    assert await config.get("heartbeat") == "60"
    await config.unset("no-such-option")  # nothing to unset: no error


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("heartbeat", "banana"),
        ("heartbeat", -5),
        ("heartbeat", "0"),
        ("grace-period", ""),
        ("grace-period", -1),
        ("jobs-history", "nan"),
        ("jobs-history", "-1"),
        ("jobs-history-count", "2.5"),
        ("max-job-history", "ten"),
        ("max-job-history", -1),
        ("max-pop-retry", 1.5),
        ("max-pop-retry", 0),
        ("stats-history", "30d"),
        ("histogram-history", "x"),
        ("emails-heartbeat", "soon"),
        ("emails-heartbeat", -1),
        ("emails-max-concurrency", "many"),
    ],
)
async def test_config_set_refuses_a_value_outside_its_option_rule(
    client: aqless.Client, option: str, value: str | float
) -> None:
    expected = describe(option).expected()  # type: ignore[union-attr]
    with pytest.raises(aqless.ConfigValueError, match=f"{option} must be {expected}") as refused:
        await client.config.set(option, value)
    assert (refused.value.option, refused.value.expected) == (option, expected)
    assert isinstance(refused.value, aqless.InvalidValueError)
    assert await client.redis.hgetall("ql:config") == {}  # nothing was stored


async def test_config_set_refuses_an_unknown_option_unless_forced(client: aqless.Client) -> None:
    with pytest.raises(aqless.ConfigValueError, match="option must be an option the scripts"):
        await client.config.set("hearbeat", 30)
    assert await client.redis.hgetall("ql:config") == {}
    await client.config.set("hearbeat", 30, force=True)  # another client's own option
    assert await client.config.get("hearbeat") == "30"


async def test_config_set_takes_numbers_as_text_and_any_text_for_other_options(
    client: aqless.Client,
) -> None:
    await client.config.set("heartbeat", " 90 ")
    await client.config.set("jobs-history-count", "1e3")
    await client.config.set("jobs-history", 0)  # completed jobs expire at once
    await client.config.set("application", "banana")
    await client.config.set("my-own-option", "anything", force=True)
    assert await client.config.get("jobs-history-count") == "1e3"


@pytest.mark.parametrize(
    ("option", "default"),
    [
        ("heartbeat", "60"),
        ("grace-period", "10"),
        ("jobs-history", "604800"),
        ("jobs-history-count", "50000"),
    ],
)
async def test_config_defaults_are_strings_as_listed(
    client: aqless.Client, option: str, default: str
) -> None:
    # the script answers `config.get` of these with classic integers (a name both
    # vocabularies share); the client promises reqless's strings, as `all()` lists them
    assert await client.config.get(option) == default
    assert (await client.config.all())[option] == default


async def test_config_all(client: aqless.Client) -> None:
    defaults = {
        "application": "reqless",
        "grace-period": "10",
        "heartbeat": "60",
        "jobs-history": "604800",
        "jobs-history-count": "50000",
        "max-job-history": "100",
        "max-pop-retry": "1",
        "max-worker-age": "86400",
    }
    assert await client.config.all() == defaults
    await client.config.set("heartbeat", 5)
    await client.config.set("my-option", "on", force=True)
    assert await client.config.all() == {**defaults, "heartbeat": "5", "my-option": "on"}


# -- client.workers ----------------------------------------------------------------------------


async def test_workers_counts_jobs_and_forget(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await client.workers.counts() == []
    first = await queue.put("app.Job", priority=3)
    second = await queue.put("app.Job", priority=2)
    await queue.put("app.Job", priority=1)
    await queue.pop()  # first, by worker-1
    clock.advance(1)
    await queue.pop(worker="worker-2")  # second
    await queue.pop(worker="worker-3")
    assert await client.workers.jobs(WORKER) == WorkerJobs(jobs=(first,), stalled=())
    assert await client.workers.jobs("worker-2") == WorkerJobs(jobs=(second,), stalled=())
    assert await client.workers.jobs("nobody") == WorkerJobs(jobs=(), stalled=())
    # most recently active first
    assert await client.workers.counts() == [
        WorkerCounts("worker-3", jobs=1, stalled=0),
        WorkerCounts("worker-2", jobs=1, stalled=0),
        WorkerCounts(WORKER, jobs=1, stalled=0),
    ]

    clock.advance(60)  # worker-1's lock (popped 61 s ago) has expired; the others' not yet
    assert await client.workers.jobs(WORKER) == WorkerJobs(jobs=(), stalled=(first,))
    assert (await client.workers.counts())[-1] == WorkerCounts(WORKER, jobs=0, stalled=1)

    await client.workers.forget("worker-2", "worker-3")
    await client.workers.forget()  # no names: nothing to do
    assert [worker.name for worker in await client.workers.counts()] == [WORKER]


# -- client.throttles --------------------------------------------------------------------------


async def test_throttle_get_set_delete(client: aqless.Client) -> None:
    throttle = client.throttles["api"]
    assert throttle.name == "api"
    assert await throttle.get() == ThrottleInfo(id="api", maximum=0, ttl=-2)
    await throttle.set(3)
    assert await throttle.get() == ThrottleInfo(id="api", maximum=3, ttl=-1)
    await throttle.set(2, expiration=600)
    info = await throttle.get()
    assert (info.maximum, 0 < info.ttl <= 600) == (2, True)
    await throttle.delete()
    assert await throttle.get() == ThrottleInfo(id="api", maximum=0, ttl=-2)


async def test_throttle_set_refuses_a_bad_maximum(client: aqless.Client) -> None:
    for bad in (float("nan"), -1, 1.5):
        with pytest.raises(InvalidValueError, match="maximum must be a whole number from 0"):
            await client.throttles["api"].set(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidValueError, match="expiration must be a whole number from 0"):
        await client.throttles["api"].set(2, expiration=-1)
    assert await client.redis.keys("ql:th:*") == []


async def test_throttle_locks_pending_and_release(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    client = timed_client
    throttle = client.throttles["api"]
    await throttle.set(1)
    queue = client.queues["q"]
    first = await queue.put("app.Job", throttles=["api"])
    clock.advance(1)
    second = await queue.put("app.Job", throttles=["api"])
    assert await throttle.locks() == []
    assert await throttle.pending() == []

    popped = await queue.pop_many(2)
    assert [job.jid for job in popped] == [first]
    assert await throttle.locks() == [first]
    assert await throttle.pending() == [second]
    assert (await get_job(client, second)).state == JobState.THROTTLED

    # releasing the holder's slot lets the pending job back into its queue
    await throttle.release(first)
    assert await throttle.locks() == []
    assert await throttle.pending() == []
    assert [job.jid for job in await queue.pop_many(2)] == [second]
    assert await throttle.locks() == [second]


# -- client.tags -------------------------------------------------------------------------------


async def test_tags_top(client: aqless.Client) -> None:
    queue = client.queues["q"]
    assert await client.tags.top() == []
    for tags in (["a", "b"], ["a", "b"], ["a", "c"]):
        await queue.put("app.Job", tags=tags)
    # tags carried by at least two jobs, most used first
    assert await client.tags.top() == ["a", "b"]
    assert await client.tags.top(offset=1, count=1) == ["b"]


async def test_jobs_verbs_on_missing_jobs(client: aqless.Client) -> None:
    """The client-wide reads answer None or empty for what does not exist; the verbs of a
    job fetched earlier and since cancelled raise JobNotFoundError."""
    jid = await client.queues["q"].put("app.Job")
    job = await get_job(client, jid)
    await job.cancel()
    assert await client.jobs.get(jid) is None
    with pytest.raises(JobNotFoundError):
        await job.refresh()


async def test_jobs_cancel_takes_a_clique_together(client: aqless.Client) -> None:
    queue = client.queues["q"]
    first = await queue.put("k", {})
    second = await queue.put("k", {}, depends=[first])
    with pytest.raises(ScriptError, match="dependency"):
        await client.jobs.cancel(first)
    assert await client.jobs.get(first) is not None
    await client.jobs.cancel(first, second)
    assert await client.jobs.get_many([first, second]) == []


async def test_a_cancelled_close_still_releases_the_connections(server_url: str) -> None:
    async with aqless.Client(server_url) as observer:

        async def connections() -> int:
            return len(await observer.redis.client_list(_type="normal"))

        before = await connections()
        client = aqless.Client(server_url)
        await client.queues["q"].length()
        assert await connections() == before + 1
        with anyio.CancelScope() as scope:
            scope.cancel()  # the closing task is cancelled before it starts
            await client.close()
        with anyio.fail_after(2):  # the server notices a closed socket soon after
            while await connections() != before:  # noqa: ASYNC110  # polling the server
                await anyio.sleep(0.01)


@pytest.mark.parametrize("cap", [None, 3], ids=["uncapped", "capped"])
async def test_a_burst_of_concurrent_calls_all_succeed(server_url: str, cap: int | None) -> None:
    options: dict[str, Any] = {} if cap is None else {"max_connections": cap}
    async with aqless.Client(server_url, **options) as client:
        queue = client.queues[f"burst-{cap}"]
        await client.redis.delete(f"ql:q:burst-{cap}-work")
        async with anyio.create_task_group() as group:
            for n in range(300):  # more than redis-py's default pool of 100
                group.start_soon(queue.put, "k", {"n": n})
        assert await queue.length() == 300


async def test_a_worker_whose_channels_the_acl_refuses_raises_the_typed_error(
    server_url: str,
) -> None:
    """The worker listens for lost locks before it pops; an ACL user without channels is
    refused that subscription, and run() raises PermissionDeniedError, not an
    ExceptionGroup of its services."""
    async with as_throwaway_user(server_url, "aqless-deaf-user") as client:
        worker = aqless.Worker(client, ["q"], burst=True)
        with anyio.fail_after(20), pytest.raises(aqless.PermissionDeniedError):
            await worker.run()


async def test_the_script_connection_is_a_setting_with_the_environment_as_fallback(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AQLESS_SCRIPT_CONNECTION", raising=False)
    assert aqless.Client(server_url).protocol.script.uses_lean_connection
    monkeypatch.setenv("AQLESS_SCRIPT_CONNECTION", "redis-py")  # read when a client is made
    through_redis_py = aqless.Client(server_url)
    assert through_redis_py.script_connection == "redis-py"
    assert not through_redis_py.protocol.script.uses_lean_connection
    chosen = aqless.Client(server_url, script_connection="lean")  # the setting wins
    assert chosen.protocol.script.uses_lean_connection
    async with aqless.Client(server_url, script_connection="redis-py") as client:
        await client.queues["q"].put("app.Job", {})
        assert await client.queues["q"].length() == 1


def test_a_script_connection_outside_its_rule_is_refused_naming_it(server_url: str) -> None:
    with pytest.raises(aqless.InvalidValueError, match="script_connection"):
        aqless.Client(server_url, script_connection="pigeon")  # type: ignore[arg-type]
