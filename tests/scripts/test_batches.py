"""aqless's batches (batches.lua): `batch.put` writes a batch and its members in one call,
and the ends of a member (complete, fail, exhausted retries, lost locks, cancel) count on it
once, putting each callback job once when its condition is met."""

from __future__ import annotations

import json
from typing import Any

from aqless.scripts.loader import Argument
from tests.conftest import Lua
from tests.scripts._queues_helpers import rpop
from tests.scripts.expect import hfield, refused

CALLBACKS = {
    "success": {"klass": "app.Success", "queue": "callbacks", "jid": "cb-success", "data": {}},
    "complete": {"klass": "app.Complete", "queue": "callbacks", "jid": "cb-complete"},
    "death": {"klass": "app.Death", "queue": "callbacks", "jid": "cb-death", "data": {"x": 1}},
}


def members(*jids: str, queue: str = "q", options: tuple[Argument, ...] = ()) -> list[Argument]:
    arguments: list[Argument] = []
    for jid in jids:
        put: list[Argument] = ["worker", queue, jid, "app.Member", "{}", 0, *options]
        arguments += [len(put), *put]
    return arguments


async def bput(
    lua: Lua,
    now: float,
    *jids: str,
    bid: str = "b1",
    callbacks: dict[str, Any] | None = None,
    options: tuple[Argument, ...] = (),
) -> Any:
    chosen = CALLBACKS if callbacks is None else callbacks
    return await lua(
        "batch.put", now, bid, "nightly", 60, json.dumps(chosen),
        len(jids), *members(*jids, options=options),
    )  # fmt: skip


async def exists(lua: Lua, jid: str) -> bool:
    return bool(await lua.redis.exists(f"ql:j:{jid}"))


async def test_a_batch_and_its_members_are_written_in_one_call(lua: Lua) -> None:
    assert await bput(lua, 1, "a", "b") == "b1"
    assert await lua.redis.hget("ql:j:a", "batch") == "b1"
    assert await lua.redis.hget("ql:j:b", "state") == "waiting"
    record = await lua.json("batch.get", 2, "b1")
    assert (record["total"], record["pending"], record["done"], record["failed"]) == (2, 2, 0, 0)
    assert record["description"] == "nightly"
    assert record["finished"] is None
    assert record["callbacks"]["success"] == {
        "klass": "app.Success", "queue": "callbacks", "jid": "cb-success", "fired": False,
    }  # fmt: skip
    listing = await lua.json("batch.list", 3)
    assert listing["total"] == 1
    assert [b["id"] for b in listing["batches"]] == ["b1"]


async def test_success_and_complete_fire_once_when_every_member_completed(lua: Lua) -> None:
    await bput(lua, 1, "a", "b")
    assert sorted(await rpop(lua, 2, 2, queue="q")) == ["a", "b"]
    await lua("job.complete", 3, "a", "worker", "q", "{}")
    assert not await exists(lua, "cb-success")
    await lua("job.complete", 4, "b", "worker", "q", "{}")
    data = json.loads(await hfield(lua.redis, "ql:j:cb-success", "data"))
    assert data["batch"] == {
        "id": "b1", "event": "success", "description": "nightly",
        "total": 2, "pending": 0, "done": 2, "failed": 0,
    }  # fmt: skip
    assert await lua.redis.hget("ql:j:cb-complete", "queue") == "callbacks"
    assert not await exists(lua, "cb-death")
    record = await lua.json("batch.get", 5, "b1")
    assert record["finished"] == 4
    assert record["expires"] == 64
    assert record["callbacks"]["success"]["fired"] is True
    assert 0 < await lua.redis.pttl("ql:batch:b1") <= 60_000


async def test_the_first_death_fires_on_death_and_success_never(lua: Lua) -> None:
    await bput(lua, 1, "a", "b", "c")
    await rpop(lua, 2, 3, queue="q")
    await lua("job.fail", 3, "a", "worker", "group", "message")
    death = json.loads(await hfield(lua.redis, "ql:j:cb-death", "data"))
    assert death["x"] == 1
    assert death["batch"]["failed"] == 1
    assert death["batch"]["pending"] == 2
    await lua("job.cancel", 4, "b")  # a cancelled member counts as failed
    await lua("job.complete", 5, "c", "worker", "q", "{}")
    assert not await exists(lua, "cb-success")
    complete = json.loads(await hfield(lua.redis, "ql:j:cb-complete", "data"))
    assert complete["batch"]["failed"] == 2
    assert complete["batch"]["done"] == 1
    history = await lua.redis.lrange("ql:j:cb-death-history", 0, -1)
    assert len(history) == 1  # put once: the second failure did not put it again


async def test_a_retried_member_is_not_failed_for_good(lua: Lua) -> None:
    await bput(lua, 1, "a", options=("retries", 1))
    await rpop(lua, 2, queue="q")
    assert await lua("job.retry", 3, "a", "q", "worker") == 0
    assert (await lua.json("batch.get", 4, "b1"))["pending"] == 1
    assert not await exists(lua, "cb-death")
    await rpop(lua, 5, queue="q")
    assert await lua("job.retry", 6, "a", "q", "worker") == -1  # none left: failed
    record = await lua.json("batch.get", 7, "b1")
    assert (record["pending"], record["failed"]) == (0, 1)
    assert await exists(lua, "cb-death")
    assert await exists(lua, "cb-complete")


async def test_a_member_is_counted_once_even_when_put_again(lua: Lua) -> None:
    await bput(lua, 1, "a", "b")
    await rpop(lua, 2, 2, queue="q")
    await lua("job.fail", 3, "a", "worker", "group", "message")
    await lua("queue.unfail", 4, "q", "group", 10)
    await rpop(lua, 5, queue="q")
    await lua("job.complete", 6, "a", "worker", "q", "{}")
    record = await lua.json("batch.get", 7, "b1")
    assert (record["pending"], record["done"], record["failed"]) == (1, 0, 1)


async def test_an_expired_batch_leaves_the_listing(lua: Lua) -> None:
    await bput(lua, 1, "a")
    await rpop(lua, 2, queue="q")
    await lua("job.complete", 3, "a", "worker", "q", "{}")
    await lua.redis.delete("ql:batch:b1", "ql:batch:b1-members")  # as its expiry does
    assert (await lua.json("batch.list", 3 + 61))["total"] == 0
    assert await lua("batch.get", 65, "b1") is None


async def test_bad_batches_are_refused_before_anything_is_written(lua: Lua) -> None:
    await lua("queue.put", 0, "worker", "q", "taken", "app.A", "{}", 0)
    await refused(lua, "member jid already exists: taken", "batch.put", 1, "b", "", 60,
        "{}", 2, *members("new", "taken"))  # fmt: skip
    await refused(lua, "member jid given twice: x", "batch.put", 1, "b", "", 60,
        "{}", 2, *members("x", "x"))  # fmt: skip
    await refused(lua, 'Arg "count" not a number from 1 to 10000: 0', "batch.put", 1, "b", "",
        60, "{}", 0)  # fmt: skip
    await refused(lua, 'Arg "count" not a number from 1 to 10000: 10001', "batch.put", 1, "b",
        "", 60, "{}", 10001)  # fmt: skip
    nameless = json.dumps({"success": {"klass": "", "queue": "q", "jid": "c"}})
    await refused(lua, 'callback "success" needs', "batch.put", 1, "b", "", 60,
        nameless, 1, *members("m"))  # fmt: skip
    taken = json.dumps({"death": {"klass": "A", "queue": "q", "jid": "taken"}})
    await refused(lua, "callback jid already exists: taken", "batch.put", 1, "b", "", 60,
        taken, 1, *members("m"))  # fmt: skip
    await refused(lua, 'Arg "ttl" not a positive number', "batch.put", 1, "b", "", 0, "{}", 1,
        *members("m"))  # fmt: skip
    await refused(lua, "Queue(): no queue name provided", "batch.put", 1, "b", "", 60, "{}", 1,
        *members("m", queue=""))  # fmt: skip
    await bput(lua, 2, "m")
    await refused(lua, "batch already exists: b1", "batch.put", 3, "b1", "", 60, "{}", 1,
        *members("n"))  # fmt: skip


async def test_a_job_outside_any_batch_is_untouched(lua: Lua) -> None:
    await lua("queue.put", 0, "worker", "q", "plain", "app.A", "{}", 0)
    await rpop(lua, 1, queue="q")
    assert await lua("job.complete", 2, "plain", "worker", "q", "{}") == "complete"
    assert await lua.redis.keys("ql:batch*") == []
