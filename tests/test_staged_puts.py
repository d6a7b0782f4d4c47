"""Big payloads written beside the script (aqless.scripts.staging): a put whose data is at
least STAGED_BYTES long goes as MULTI, HSET of the data, the put's call, DEL, EXEC, and the
script takes the staged hash as the new job's. What it makes is what a plain put makes, and
refused, deduplicated and ``replace=False`` puts stay exact: nothing written, no staged key
left."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis as sync_redis

import aqless
import aqless.sync
from aqless import PutRequest
from aqless.errors import InvalidArgumentError
from aqless.scripts import staging
from aqless.scripts.staging import STAGED_BYTES, staged
from tests.support.clients import WORKER

pytest_plugins = ["tests.support.client_fixtures"]

BIG = {"payload": "x" * STAGED_BYTES}
OTHER = {"payload": "y" * STAGED_BYTES, "escaped": 'a "quoted" \\ text'}


def stored(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


async def renames(client: aqless.Client) -> int:
    """How many RENAMEs the server has run (one a staged new job)."""
    stats = await client.redis.info("commandstats")
    return int(stats.get("cmdstat_rename", {}).get("calls", 0))


async def leftovers(client: aqless.Client) -> list[str]:
    """The staged keys left on the server (none, ever, once a call has its reply)."""
    return [key async for key in client.redis.scan_iter(match="*-staged")]


async def fields(client: aqless.Client, jid: str) -> dict[str, str]:
    found = await client.redis.hgetall(f"{client.protocol.prefix}j:{jid}")
    return {str(name): str(value) for name, value in found.items()}


def test_only_big_puts_are_staged() -> None:
    small = ("1.0", "w", "q", "j1", "K", "x" * (STAGED_BYTES - 1), 0)
    assert staged("queue.put", small, "ql:") is None
    big = ("1.0", "w", "q", "j1", "K", "x" * STAGED_BYTES, 0, "priority", 3)
    put = staged("queue.put", big, "ql:")
    assert put is not None
    assert put.key == "ql:j:j1-staged"
    assert put.data == big[5]
    assert put.arguments == ("1.0", "w", "q", "j1", "K", "", 0, "priority", 3, "staged", "j1")
    dedup = staged("queue.putDeduplicated", ("1.0", "id", "job", 0, *big[1:]), "{t}:ql:")
    assert dedup is not None
    assert dedup.key == "{t}:ql:j:j1-staged"
    assert staged("job.requeue", big, "ql:") is None  # requeue carries its data as before
    assert staged("job.complete", big, "ql:") is None


async def test_a_staged_put_makes_the_hash_a_plain_put_makes(
    timed_client: aqless.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    queue = timed_client.queues["staged"]
    before = await renames(timed_client)
    await queue.put("app.Big", OTHER, jid="staged", tags=["t"], priority=2, group="g")
    assert await renames(timed_client) == before + 1  # it was staged
    monkeypatch.setattr(staging, "STAGED_BYTES", 10**9)
    await queue.put("app.Big", OTHER, jid="plain", tags=["t"], priority=2, group="g")
    assert await renames(timed_client) == before + 1  # this one was not
    made, plain = await fields(timed_client, "staged"), await fields(timed_client, "plain")
    assert made.pop("jid") == "staged"
    assert plain.pop("jid") == "plain"
    made.pop("time"), plain.pop("time")  # (each put's own, in the client's order of puts)
    assert made == plain
    assert json.loads(made["data"]) == OTHER
    assert await leftovers(timed_client) == []
    job = await queue.pop()
    assert job is not None
    assert job.data == OTHER


async def test_a_refused_staged_put_writes_nothing(client: aqless.Client) -> None:
    big = stored(BIG)
    with pytest.raises(InvalidArgumentError, match="delay"):
        await client.protocol.call("queue.put", WORKER, "staged", "new", "app.Big", big, "soon")
    assert await client.redis.exists(f"{client.protocol.prefix}j:new") == 0
    await client.queues["staged"].put("app.Small", {"n": 1}, jid="old")
    kept = await fields(client, "old")
    with pytest.raises(InvalidArgumentError, match="delay"):
        await client.protocol.call("queue.put", WORKER, "staged", "old", "app.Big", big, "soon")
    assert await fields(client, "old") == kept
    assert await leftovers(client) == []


async def test_a_staged_put_over_a_job_replaces_its_data(client: aqless.Client) -> None:
    queue = client.queues["staged"]
    await queue.put("app.Big", BIG, jid="again", tags=["a"])
    await queue.put("app.Big", OTHER, jid="again", priority=4)
    job = await client.jobs.get("again")
    assert job is not None
    assert job.data == OTHER
    assert job.priority == 4
    assert list(job.tags) == ["a"]
    assert await leftovers(client) == []


async def test_deduplicated_and_existing_puts_keep_the_first_jobs_data(
    client: aqless.Client,
) -> None:
    queue = client.queues["staged"]
    first = await queue.put_result("app.Big", BIG, dedup="once")
    second = await queue.put_result("app.Big", OTHER, dedup="once")
    assert second.deduplicated
    assert second.jid == first.jid
    existed = await queue.put_result("app.Big", OTHER, jid=first.jid, replace=False)
    assert existed.deduplicated
    assert existed.jid == first.jid
    job = await client.jobs.get(first.jid)
    assert job is not None
    assert job.data == BIG
    debounced = await queue.put_result("app.Big", BIG, dedup=aqless.Dedup("d", 60, True))
    again = await queue.put_result("app.Big", OTHER, dedup=aqless.Dedup("d", 60, True))
    assert again.debounced
    assert again.jid == debounced.jid
    job = await client.jobs.get(debounced.jid)
    assert job is not None
    assert job.data == OTHER
    assert await leftovers(client) == []


async def test_put_many_maps_each_staged_reply_back(client: aqless.Client) -> None:
    queue = client.queues["staged"]
    results = await queue.put_many_results(
        [
            PutRequest("app.Big", BIG, jid="a", dedup="many"),
            PutRequest("app.Small", {"n": 1}, jid="b"),
            PutRequest("app.Big", OTHER, jid="c", dedup="many"),
            PutRequest("app.Big", OTHER, jid="d"),
        ],
        batch=3,
    )
    assert [(r.jid, r.deduplicated) for r in results] == [
        ("a", False),
        ("b", False),
        ("a", True),
        ("d", False),
    ]
    assert [job.data for job in await client.jobs.get_many(["a", "b", "d"])] == [
        BIG,
        {"n": 1},
        OTHER,
    ]
    assert await client.jobs.get("c") is None
    big = stored(BIG)
    replies = await client.protocol.many(
        "queue.put",
        [
            (WORKER, "staged", "e", "app.Big", big, 0),
            (WORKER, "staged", "f", "app.Big", big, "soon"),
            (WORKER, "staged", "g", "app.Small", "{}", 0),
        ],
    )
    assert replies[0] == "e"
    assert replies[2] == "g"
    assert isinstance(replies[1], InvalidArgumentError)
    assert await client.jobs.get("f") is None
    assert await leftovers(client) == []


def test_the_blocking_client_stages_its_big_puts(server_url: str) -> None:
    with sync_redis.Redis.from_url(server_url) as connection:
        connection.flushall()
        connection.config_resetstat()
        with aqless.sync.Client(server_url) as client:
            jid = client.queues["staged"].put("app.Big", BIG)
            client.queues["staged"].put_many([PutRequest("app.Big", OTHER)])
            job = client.jobs.get(jid)
            assert job is not None
            assert job.data == BIG
        stats = connection.info("commandstats")
        assert stats["cmdstat_rename"]["calls"] == 2
        assert connection.keys("*-staged") == []


async def test_a_spool_flushes_big_puts_staged(client: aqless.Client) -> None:
    spool = client.spool(capacity=10)
    receipt = await spool.put("staged", "app.Big", BIG)
    assert receipt.queued
    job = await client.jobs.get(receipt.jid)
    assert job is not None
    assert job.data == BIG
    assert await leftovers(client) == []


@pytest.mark.every_deployment
@pytest.mark.deployments("cluster", "acl", "valkey9", reason="the staged key's slot and ACL")
async def test_a_big_put_on_every_deployment(client: aqless.Client) -> None:
    queue = client.queues["staged"]
    jid = await queue.put("app.Big", BIG)
    jids = await queue.put_many([PutRequest("app.Big", OTHER) for _ in range(3)])
    found = await client.jobs.get_many([jid, *jids])
    assert [job.data for job in found] == [BIG, OTHER, OTHER, OTHER]
    staged_keys = [f"{client.protocol.prefix}j:{each}-staged" for each in (jid, *jids)]
    assert [await client.redis.exists(key) for key in staged_keys] == [0, 0, 0, 0]


async def test_a_staged_put_loads_the_protocol_where_the_server_lost_it(
    client: aqless.Client,
) -> None:
    await client.queues["staged"].put("app.Small", {})  # connected, the protocol loaded
    await client.redis.function_flush()
    jid = await client.queues["staged"].put("app.Big", BIG)
    job = await client.jobs.get(jid)
    assert job is not None
    assert job.data == BIG
    assert await leftovers(client) == []


async def test_a_transaction_cut_before_its_exec_leaves_nothing(client: aqless.Client) -> None:
    """The connection drops after MULTI, the staged HSET and the call were queued, before
    EXEC: the server runs none of them, and the next put connects again."""
    queue = client.queues["staged"]
    await queue.put("app.Small", {})  # connected, the protocol loaded
    put = staged("queue.put", ("1.0", WORKER, "staged", "cut", "app.Big", stored(BIG), 0), "ql:")
    assert put is not None
    function = client.protocol.script.function
    replies = await client.protocol.wire.pipeline(
        [
            ("MULTI",),
            ("HSET", put.key, "data", put.data),
            ("FCALL", function, 0, "queue.put", *put.arguments),
        ]
    )
    assert [str(reply) for reply in replies] == ["OK", "QUEUED", "QUEUED"]
    client.protocol.abandon_connection("cut before EXEC")
    assert await client.redis.exists(put.key, f"{client.protocol.prefix}j:cut") == 0
    assert await queue.put("app.Big", BIG, jid="cut") == "cut"
    job = await client.jobs.get("cut")
    assert job is not None
    assert job.data == BIG
    assert await leftovers(client) == []


async def test_a_durable_staged_put_waits_behind_its_transaction(client: aqless.Client) -> None:
    """WAITAOF goes right behind the staged transaction: its refusal (no replica here)
    comes after the put landed, and names its job."""
    if not await client.protocol.knows("WAITAOF"):
        pytest.skip("this server has no WAITAOF")
    wanted = aqless.Durability(local=False, replicas=1, timeout=0.05)
    with pytest.raises(aqless.NotDurableError) as caught:
        await client.queues["staged"].put("app.Big", BIG, jid="durable", durable=wanted)
    assert "durable" in str(caught.value)
    job = await client.jobs.get("durable")
    assert job is not None
    assert job.data == BIG
    assert await leftovers(client) == []
