"""SECURITY.md's ACL users on real servers (Valkey 9 and Redis 7): each works with exactly the
permissions documented, and is refused beyond them."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import NoPermissionError

import aqless
from aqless.scripts import build_library
from aqless.scripts.loader import Script
from aqless.scripts.staging import STAGED_BYTES
from tests.scripts.invariants import snapshot
from tests.security.acl import PASSWORD, ROLES, commands, documented, rules_for

NAMESPACES = (None, "{a}", "{b}")
#: What every role may do besides the data commands.
PLUMBING = {"ping", "fcall", "subscribe", "unsubscribe", "ssubscribe", "sunsubscribe"}
#: A big put's transaction (aqless.scripts.staging) is the client's, around the script call.
PLUMBING |= {"multi", "exec"}
#: The reads aqless makes itself, outside the script: a sharded deployment's tag listing
#: (aqless.client.ShardedTags) reads each shard's tag counts with ZMSCORE.
CLIENT_READS = {"zmscore"}


def user(role: str, namespace: str | None) -> str:
    return f"aqless-{role}" + (f"-{namespace.strip('{}')}" if namespace else "")


@pytest.fixture
def users(redis: aioredis.Redis, server_url: str) -> Iterator[None]:
    """Every documented user, for the default namespace and for {a} and {b}."""
    admin = redis_sync(server_url)
    names = []
    for namespace in NAMESPACES:
        for role in ROLES:
            names.append(user(role, namespace))
            command(admin, "ACL", "SETUSER", names[-1], "reset", *rules_for(role, namespace))
    try:
        yield
    finally:
        command(admin, "ACL", "DELUSER", *names)
        admin.close()


def redis_sync(url: str, **options: Any) -> redis.Redis:
    return redis.Redis.from_url(url, **options)


def command(connection: redis.Redis, *words: str) -> Any:
    return connection.execute_command(*words)  # type: ignore[no-untyped-call]


async def raw(connection: aioredis.Redis, *words: str) -> Any:
    return await connection.execute_command(*words)  # type: ignore[no-untyped-call]


@pytest.fixture
def as_user(server_url: str, users: None) -> Callable[..., Any]:
    """``async with as_user("producer") as client``: an aqless Client logged in as that user."""

    @asynccontextmanager
    async def connect(role: str, namespace: str | None = None) -> AsyncIterator[aqless.Client]:
        async with aqless.Client(
            server_url, namespace=namespace, username=user(role, namespace), password=PASSWORD
        ) as client:
            yield client

    return connect


@pytest.fixture
async def deployed(as_user: Callable[..., Any]) -> None:
    """The function library, loaded by the deployer (nobody else may)."""
    async with as_user("deployer") as deployer:
        await Script(deployer.redis).load_library()


SUBCOMMANDS = {"PUBSUB"}


def script_commands() -> set[str]:
    """Every command the protocol's Lua code runs, lower case."""
    folder = Path(str(resources.files("aqless.scripts").joinpath("lua")))
    text = "".join(path.read_text() for path in sorted(folder.rglob("*.lua")))
    calls = re.findall(r"call(?:_batched)?\(\s*'([A-Z]+)'(?:,\s*'([A-Z]+)')?", text)
    # a container command is allowed by its subcommand (PUBSUB NUMSUB: pubsub|numsub)
    return {(f"{name}|{sub}" if name in SUBCOMMANDS else name).lower() for name, sub in calls}


async def test_the_command_lists_cover_the_script_and_the_viewer_only_reads(
    redis: aioredis.Redis,
) -> None:
    used = script_commands() | CLIENT_READS
    assert {"hset", "zadd", "publish", "hmget", "zrangebyscore"} <= used  # the regex works
    assert set(documented()) == set(ROLES)
    producer = commands("producer")
    assert producer - PLUMBING == used, "the producer's list is exactly the script's commands"
    listens = {"subscribe", "unsubscribe", "ssubscribe", "sunsubscribe"}
    assert commands("worker") == commands("dashboard") == producer | listens
    reads = commands("viewer") - PLUMBING
    info = await raw(redis, "COMMAND", "INFO", *sorted(used))
    flags = {name: set(details["flags"]) for name, details in info.items()}
    assert reads == {name for name in used if "readonly" in flags[name]}
    assert not any("write" in flags[name] for name in reads)
    assert commands("deployer") == {"ping", "function|load", "function|list"}


async def refused(operation: Any) -> str:
    """Run the awaitable; it must be refused by the ACL. Returns the refusal's text."""
    with pytest.raises((aqless.PermissionDeniedError, NoPermissionError)) as caught:
        await operation
    return str(caught.value)


async def listen(client: aqless.Client) -> None:
    """Subscribe to the client's ``log`` channel (confirmed by the server), then leave."""
    async with client.events("log"):
        pass


async def refusals_every_role_gets(client: aqless.Client) -> None:
    r = client.redis
    assert isinstance(r, aioredis.Redis)
    await refused(r.function_load(build_library(), replace=True))
    await refused(r.function_flush())
    await refused(r.flushall())
    await refused(r.eval("return 1", 0))
    await refused(r.config_set("appendonly", "no"))
    await refused(r.keys("*"))
    await refused(raw(r, "CLIENT", "KILL", "TYPE", "normal"))
    await refused(raw(r, "ACL", "LIST"))
    await refused(r.get("session:1234"))  # a key of the application, not of qless
    await refused(r.append("ql:x", "1"))  # a command the script does not use, even on ql: keys


async def test_a_producer_of_an_older_acl_still_puts_without_pushes(
    redis: aioredis.Redis, server_url: str, deployed: None
) -> None:
    """Before offers, the rule had no HLEN, HRANDFIELD or PUBSUB: puts go on, unpushed."""
    added = {"+hlen", "+hrandfield", "+pubsub|numsub"}
    older = [word for word in rules_for("producer") if word not in added]
    admin = redis_sync(server_url)
    command(admin, "ACL", "SETUSER", "aqless-older", "reset", *older)
    try:
        async with aqless.Client(
            server_url, username="aqless-older", password=PASSWORD
        ) as producer:
            await redis.hset("ql:offers:q", "w1", "5 99999999999.000")
            jid = await producer.queues["q"].put("app.Send", {"to": "ann"})
            job = await producer.jobs.get(jid)
            assert isinstance(job, aqless.Job)
            assert job.state == "waiting"
    finally:
        command(admin, "ACL", "DELUSER", "aqless-older")
        admin.close()


@pytest.mark.parametrize("refused", ["+multi", "+rename"])
async def test_a_producer_of_an_acl_older_than_staging_puts_big_data_as_before(
    redis: aioredis.Redis, server_url: str, deployed: None, refused: str
) -> None:
    """Before big puts were staged (aqless.scripts.staging), the rule had no MULTI, EXEC or
    RENAME: the refused staged put wrote nothing and is sent again with its data."""
    older = [word for word in rules_for("producer") if word != refused]
    admin = redis_sync(server_url)
    command(admin, "ACL", "SETUSER", "aqless-older", "reset", *older)
    big = {"text": "x" * STAGED_BYTES}
    try:
        async with aqless.Client(
            server_url, username="aqless-older", password=PASSWORD
        ) as producer:
            queue = producer.queues["q"]
            await redis.config_resetstat()
            jid = await queue.put("app.Send", big)
            jids = await queue.put_many([aqless.PutRequest("app.Send", big) for _ in range(2)])
            found = await producer.jobs.get_many([jid, *jids])
            assert [job.data for job in found] == [big] * 3
            assert await redis.keys("*-staged") == []
            stats = (await redis.info("commandstats")).get("cmdstat_multi", {})
            tried = stats.get("calls", 0) + stats.get("rejected_calls", 0)
            assert tried == 1  # the first put only: the client stopped staging
    finally:
        command(admin, "ACL", "DELUSER", "aqless-older")
        admin.close()


async def test_the_producer_puts_and_reads_and_nothing_more(
    as_user: Callable[..., Any], deployed: None
) -> None:
    async with as_user("producer") as producer:
        jid = await producer.queues["q"].put("app.Send", {"to": "ann"}, tags=["vip"])
        more = await producer.queues["q"].put_many(
            aqless.PutRequest("app.Send", {"n": n}) for n in range(3)
        )
        found = await producer.jobs.get(jid)
        assert isinstance(found, aqless.Job)
        assert found.data == {"to": "ann"}
        assert (await producer.queues["q"].counts()).waiting == 4
        assert len(await producer.jobs.get_many(more)) == 3
        assert (await producer.jobs.tagged("vip")).jids == (jid,)
        await refused(listen(producer))
        await refusals_every_role_gets(producer)


async def test_the_worker_drains_jobs_with_events_and_nothing_more(
    as_user: Callable[..., Any], deployed: None
) -> None:
    handlers = aqless.Handlers()
    ran: list[str] = []

    @handlers.register("app.Work")
    async def work(job: aqless.Job) -> None:
        await job.heartbeat()
        ran.append(job.jid)
        if job.data["n"] % 5 == 0:
            raise ValueError("every fifth job fails")

    async with as_user("producer") as producer, as_user("worker") as client:
        jids = await producer.queues["q"].put_many(
            aqless.PutRequest("app.Work", {"n": n}) for n in range(20)
        )
        async with client.events("log") as events:
            worker = aqless.Worker(client, ["q"], handlers=handlers, burst=True, concurrency=5)
            counters = await worker.run()
            first = await anext(aiter(events))
            assert first.kind in ("popped", "put", "completed", "failed")
        assert (counters.completed, counters.failed) == (16, 4)
        assert sorted(ran) == sorted(jids)
        states = [str(job.state) for job in await producer.jobs.get_many(jids)]
        assert states.count("complete") == 16
        assert states.count("failed") == 4
        await refusals_every_role_gets(client)


async def test_the_viewer_reads_everything_and_every_write_is_refused_changing_nothing(
    as_user: Callable[..., Any], deployed: None, server_url: str
) -> None:
    async with as_user("dashboard") as admin, as_user("viewer") as viewer:
        jid = await admin.queues["q"].put("app.Send", {"n": 1}, tags=["vip"])
        failing = await admin.queues["q"].put("app.Send", {"n": 2})
        popped = await admin.queues["q"].pop_many(2)
        await next(job for job in popped if job.jid == failing).fail("boom", "it broke")
        assert (await viewer.queues["q"].counts()).running == 1
        assert [c.name for c in await viewer.queues.counts()] == ["q"]
        found = await viewer.jobs.get(jid)
        assert isinstance(found, aqless.Job)
        assert found.state == "running"
        assert await viewer.jobs.failure_groups() == {"boom": 1}
        assert (await viewer.jobs.failed("boom")).jids == (failing,)
        assert (await viewer.config.all())["heartbeat"] == "60"
        assert [w.jobs for w in await viewer.workers.counts()] == [1]
        assert (await viewer.queues["q"].stats()).failed == 1
        assert (await viewer.jobs.tagged("vip")).jids == (jid,)
        await listen(viewer)
        before = snapshot(redis_sync(server_url))
        viewed = await viewer.jobs.get(jid)
        assert isinstance(viewed, aqless.Job)
        attempts: list[Callable[[], Any]] = [
            lambda: viewer.queues["q"].put("app.Send", {}),
            lambda: viewer.queues["q"].pop(),
            viewed.cancel,
            lambda: viewed.set_priority(5),
            lambda: viewed.tag("x"),
            viewed.track,
            lambda: viewer.config.set("heartbeat", 1),
            lambda: viewer.queues["q"].pause(),
            lambda: viewer.queues["q"].unfail("boom", 10),
            lambda: viewer.workers.forget(viewer.worker_name),
        ]
        for attempt in attempts:
            text = await refused(attempt())
            assert "permission" in text.lower() or "can't run" in text
        assert snapshot(redis_sync(server_url)) == before, "a refused verb changed something"
        await refusals_every_role_gets(viewer)


async def test_the_dashboard_runs_the_admin_verbs(
    as_user: Callable[..., Any], deployed: None
) -> None:
    async with as_user("producer") as producer, as_user("dashboard") as dashboard:
        jids = [await producer.queues["q"].put("app.Send", {"n": n}) for n in range(3)]
        await dashboard.config.set("heartbeat", 30)
        assert await dashboard.config.get("heartbeat") == "30"
        await dashboard.queues["q"].pause()
        assert await dashboard.queues["q"].pop() is None
        await dashboard.queues["q"].unpause()
        await dashboard.jobs.cancel(jids[0])
        job = await dashboard.jobs.get(jids[1])
        assert isinstance(job, aqless.Job)
        await job.set_priority(9)
        popped = await dashboard.queues["q"].pop()
        assert popped is not None
        assert popped.jid == jids[1]
        await popped.fail("boom", "broke")
        assert await dashboard.queues["q"].unfail("boom", 10) == 1
        assert (await dashboard.queues["q"].counts()).waiting == 2
        await refusals_every_role_gets(dashboard)


async def test_only_the_deployer_loads_the_library(
    as_user: Callable[..., Any], redis: aioredis.Redis
) -> None:
    await redis.function_flush()  # nothing loaded yet
    async with as_user("deployer") as deployer, as_user("worker") as worker:
        text = await refused(worker.queues["q"].put("app.Send", {}))
        assert "function|load" in text or "function" in text.lower()
        await Script(deployer.redis).load_library()
        await worker.queues["q"].put("app.Send", {})
        await refused(deployer.queues["q"].length())  # the deployer has no data rights
        await refused(deployer.redis.function_flush())
        await refused(raw(deployer.redis, "FUNCTION", "DELETE", "anything"))
        await redis.function_flush()  # the server lost it (an operator, or no persistence)
        await refused(worker.queues["q"].length())
        await Script(deployer.redis).load_library()
        assert await worker.queues["q"].length() == 1


async def test_a_namespace_user_reaches_only_its_own_deployment(
    as_user: Callable[..., Any], deployed: None
) -> None:
    async with as_user("worker", "{a}") as a, as_user("producer", "{b}") as b:
        jid = await a.queues["q"].put("app.Send", {"for": "a"})
        await b.queues["q"].put("app.Send", {"for": "b"})
        popped = await a.queues["q"].pop()
        assert popped is not None
        assert popped.jid == jid
        await popped.complete()
        await listen(a)
        intruder = aqless.Client(redis=a.redis, namespace="{b}")
        await refused(intruder.queues["q"].pop())
        default = aqless.Client(redis=a.redis)
        await refused(default.queues["q"].put("app.Send", {}))
        await refused(a.redis.hgetall("{b}:ql:j:" + jid))
        await refused(listen(intruder))
        await refused(listen(default))
        assert await b.queues["q"].length() == 1  # untouched by a


async def test_refusals_are_permission_errors_with_the_servers_whole_text(
    as_user: Callable[..., Any], deployed: None
) -> None:
    async with as_user("viewer") as viewer:
        with pytest.raises(aqless.PermissionDeniedError) as caught:
            await viewer.queues["q"].put("app.Send", {})
        refusal = caught.value
        assert isinstance(refusal, aqless.ScriptError)  # code catching ScriptError still does
        assert refusal.command == "queue.put"
        assert re.fullmatch(
            # Valkey 9 names the command; Redis 7 does not
            r"ACL failure in script: User aqless-viewer has no permissions to run the '\w+' "
            r"command|The user executing the script can't run this command or subcommand",
            refusal.detail,
        ), refusal.detail
        started = time.monotonic()
        with pytest.raises(aqless.PermissionDeniedError, match="subscribe"):
            await listen(aqless.Client(redis=viewer.redis, namespace="{b}"))
        assert time.monotonic() - started < 1.0, "a refused subscription failed slowly"
