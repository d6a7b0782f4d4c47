"""aqless's job checkpoints (checkpoint.lua): `job.checkpoint` stores a JSON state in the job
hash together with a heartbeat, refused as the heartbeat is; the next attempt's own pop (and
push) presents it; `jobs.checkpoints` reads it; completion and a new put clear it."""

from __future__ import annotations

import json

import pytest

from aqless._connection.protocol import error_for
from aqless.errors import InvalidArgumentError, LockLostError, StaleAttemptError
from tests.conftest import Lua
from tests.scripts._queues_helpers import rput
from tests.scripts.expect import refused

STATE = '{"offset":4000,"file":"rows.csv"}'


async def own_pop(lua: Lua, now: float, worker: str = "w1") -> list[dict[str, object]]:
    """aqless's own pop (data apart): the job objects, with attempt and checkpoint."""
    reply = await lua("rateLimit.pop", now, "queue", worker, 10, "data_apart")
    jobs: list[dict[str, object]] = json.loads(reply[0])["jobs"]
    return jobs


async def test_a_checkpoint_renews_the_lock_as_a_heartbeat_and_stores_the_state(
    lua: Lua,
) -> None:
    await lua("config.set", 0, "heartbeat", 60)
    await rput(lua, 1, "jid")
    (first,) = await own_pop(lua, 2)
    assert "checkpoint" not in first
    assert await lua("job.checkpoint", 10, "jid", "w1", STATE, 1) == 70
    assert await lua.redis.hget("ql:j:jid", "checkpoint") == STATE
    assert await lua.redis.zscore("ql:q:queue-locks", "jid") == 70
    assert await lua.redis.zscore("ql:w:w1:jobs", "jid") == 70
    assert float(await lua.redis.hget("ql:j:jid", "expires") or 0) == 70
    # a heartbeat without a state leaves the checkpoint; a later checkpoint replaces it
    await lua("job.heartbeat", 11, "jid", "w1", "", 1)
    await lua("job.checkpoint", 12, "jid", "w1", "[1,2]")
    assert await lua.json("jobs.checkpoints", 13, "jid", "missing") == {"jid": [1, 2]}


async def test_the_job_object_is_what_it_was(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua("job.checkpoint", 3, "jid", "w1", STATE, 1)
    job = await lua.json("job.get", 4, "jid")
    assert "checkpoint" not in job
    (listed,) = await lua.json("job.getMulti", 4, "jid")
    assert "checkpoint" not in listed


@pytest.mark.parametrize("how", ["retry", "lock expiry", "hand-back"])
async def test_the_next_attempt_starts_with_the_checkpoint(lua: Lua, how: str) -> None:
    await lua("config.set", 0, "grace-period", 0)
    await lua("config.set", 0, "heartbeat", 10)
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua("job.checkpoint", 3, "jid", "w1", STATE, 1)
    if how == "retry":
        await lua("job.retry", 4, "jid", "queue", "w1", 0, "", "", 1)
    elif how == "hand-back":
        await lua("job.handBack", 4, "jid", "w1", "worker stopping", 1)
    (again,) = await own_pop(lua, 30, worker="w2")
    assert (again["attempt"], again["checkpoint"]) == (2, json.loads(STATE))
    # the protocol's pop (other clients) shows no checkpoint
    await lua("job.handBack", 31, "jid", "w2", "x", 2)
    (theirs,) = await lua.json("queue.pop", 32, "queue", "w3", 1)
    assert "checkpoint" not in theirs
    assert "attempt" not in theirs


async def test_completion_clears_the_checkpoint(lua: Lua) -> None:
    await rput(lua, 1, "a")
    await rput(lua, 1, "b")
    await own_pop(lua, 2)
    for jid in ("a", "b"):
        await lua("job.checkpoint", 3, jid, "w1", STATE, 1)
    assert await lua("job.complete", 4, "a", "w1", "queue", "{}", "attempt", 1) == "complete"
    await lua("job.completeAndRequeue", 4, "b", "w1", "queue", "{}", "next")
    assert await lua("jobs.checkpoints", 5, "a", "b") == "{}"
    assert not await lua.redis.hexists("ql:j:a", "checkpoint")


async def test_a_new_put_clears_the_checkpoint_a_failure_keeps_it(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua("job.checkpoint", 3, "jid", "w1", STATE, 1)
    await lua("job.fail", 4, "jid", "w1", "group", "message", "", 1)
    assert await lua.json("jobs.checkpoints", 5, "jid") == {"jid": json.loads(STATE)}
    await rput(lua, 6, "jid")  # put again: a new job
    assert await lua("jobs.checkpoints", 7, "jid") == "{}"
    (again,) = await own_pop(lua, 8)
    assert "checkpoint" not in again


async def test_cancel_takes_the_checkpoint_with_the_job(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua("job.checkpoint", 3, "jid", "w1", STATE, 1)
    await lua("job.cancel", 4, "jid")
    assert await lua("jobs.checkpoints", 5, "jid") == "{}"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Job(): no jid provided"),
        (("jid",), 'Heatbeat(): Arg "worker" missing'),
        (("jid", "w1"), 'Checkpoint(): Arg "state" missing or not JSON: nil'),
        (("jid", "w1", "{nope"), 'Checkpoint(): Arg "state" missing or not JSON: {nope'),
        (
            ("jid", "w1", '"' + "x" * 65535 + '"'),
            'Checkpoint(): Arg "state" longer than 65536 bytes: 65537',
        ),
        (("missing", "w1", "1"), "Heartbeat(): Job does not exist"),
        (("jid", "w2", "1"), "Heartbeat(): Job given out to another worker: w1"),
        (("jid", "w1", "1", "x"), 'Heartbeat(): Arg "attempt" not a whole number: x'),
        (("jid", "w1", "1", 2), "Job jid attempt 2 is stale: the job is on attempt 1"),
    ],
)
async def test_a_bad_checkpoint_is_refused(lua: Lua, args: tuple[object, ...], text: str) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await refused(lua, text, "job.checkpoint", 3, *args)  # type: ignore[arg-type]


async def test_the_refusals_are_typed(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    stale = await refused(lua, None, "job.checkpoint", 3, "jid", "w1", "1", 2)
    assert isinstance(error_for("job.checkpoint", stale), StaleAttemptError)
    other = await refused(lua, None, "job.checkpoint", 3, "jid", "w2", "1")
    assert isinstance(error_for("job.checkpoint", other), LockLostError)
    bad = await refused(lua, None, "job.checkpoint", 3, "jid", "w1", "{")
    assert isinstance(error_for("job.checkpoint", bad), InvalidArgumentError)


async def test_a_job_no_longer_running_refuses_a_checkpoint(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    await lua("job.complete", 3, "jid", "w1", "queue", "{}")
    await refused(lua, "not currently running: complete", "job.checkpoint", 4, "jid", "w1", "1")


async def test_a_state_of_the_limit_is_taken(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    await own_pop(lua, 2)
    state = '"' + "é" * 32767 + '"'  # 65536 bytes
    await lua("job.checkpoint", 3, "jid", "w1", state)
    assert await lua.json("jobs.checkpoints", 4, "jid") == {"jid": "é" * 32767}
