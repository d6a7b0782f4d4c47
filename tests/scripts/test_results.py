"""Job results (aqless's own, results.lua): complete's `result` / `result_dropped` options,
kept in the job hash, cleared by a put of the jid, read by `job.result`."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Lua
from tests.scripts._lifecycle_helpers import BOTH, Vocabulary, pop, put
from tests.scripts.expect import hfield, refused

COMPLETE = {"classic": "complete", "reqless": "job.complete"}


async def running(lua: Lua, v: Vocabulary) -> None:
    await put(lua, v, 0)
    assert [job["jid"] for job in await pop(lua, v, 1)] == ["jid"]


async def complete(lua: Lua, v: Vocabulary, *options: str) -> object:
    return await lua(COMPLETE[v.name], 2, "jid", "worker", "queue", "{}", *options)


@BOTH
async def test_a_complete_keeps_its_result_in_the_job_hash(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    assert await complete(lua, v, "result", '{"answer": [4, 2]}') == "complete"
    assert await hfield(lua.redis, "ql:j:jid", "result") == '{"answer": [4, 2]}'
    assert await lua.json("job.result", 3, "jid") == {
        "state": "complete",
        "result": '{"answer": [4, 2]}',
        "failure": {},
    }
    # the job object other clients read is unchanged
    assert "result" not in await lua.json(v.get, 3, "jid")


@BOTH
async def test_a_result_over_the_limit_is_dropped_and_the_job_completes(
    lua: Lua, v: Vocabulary
) -> None:
    await lua("config.set", 0, "result-max-bytes", 10)
    await running(lua, v)
    assert await complete(lua, v, "result", '"eleven char"') == "complete"
    assert await lua.redis.hget("ql:j:jid", "result") is None
    reply = await lua.json("job.result", 3, "jid")
    assert reply["state"] == "complete"
    assert reply["dropped"] == "the result is 13 bytes, over result-max-bytes (10)"
    assert "result" not in reply


@BOTH
async def test_a_dropped_result_keeps_its_reason(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    assert await complete(lua, v, "result_dropped", "not JSON: a set") == "complete"
    assert (await lua.json("job.result", 3, "jid"))["dropped"] == "not JSON: a set"


@BOTH
async def test_a_result_that_is_not_json_is_refused(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await refused(
        lua,
        'Arg "result" not JSON',
        COMPLETE[v.name],
        2,
        "jid",
        "worker",
        "queue",
        "{}",
        "result",
        "{nope",
    )


async def test_a_result_with_a_next_queue_is_refused(lua: Lua) -> None:
    await running(lua, Vocabulary(reqless=False))
    await refused(
        lua,
        '"result" cannot be used with a "next"',
        "complete",
        2,
        "jid",
        "worker",
        "queue",
        "{}",
        "next",
        "other",
        "result",
        "1",
    )


async def test_job_complete_takes_no_other_options(lua: Lua) -> None:
    """The reqless command keeps its meaning: `next` is completeAndRequeue's, not its."""
    v = Vocabulary(reqless=True)
    await running(lua, v)
    assert await complete(lua, v, "next", "other", "result", "7") == "complete"
    assert await hfield(lua.redis, "ql:j:jid", "queue") == ""
    assert await hfield(lua.redis, "ql:j:jid", "result") == "7"


@BOTH
async def test_a_put_of_the_jid_clears_the_last_result(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    await complete(lua, v, "result", "[1]")
    await put(lua, v, 5)
    assert await lua.redis.hmget("ql:j:jid", ["result", "result_dropped"]) == [None, None]
    assert await lua.json("job.result", 6, "jid") == {"state": "waiting", "failure": {}}


@BOTH
async def test_a_complete_without_a_result_stores_none(lua: Lua, v: Vocabulary) -> None:
    await running(lua, v)
    assert await complete(lua, v) == "complete"
    assert not await lua.redis.hexists("ql:j:jid", "result")
    assert await lua.json("job.result", 3, "jid") == {"state": "complete", "failure": {}}


async def test_job_result_shows_a_failure(lua: Lua) -> None:
    v = Vocabulary(reqless=True)
    await running(lua, v)
    await lua("job.fail", 2, "jid", "worker", "group", "it broke")
    reply = await lua.json("job.result", 3, "jid")
    assert reply["state"] == "failed"
    assert reply["failure"] == {
        "group": "group",
        "message": "it broke",
        "when": 2,
        "worker": "worker",
    }


async def test_job_result_of_a_missing_job_is_nil(lua: Lua) -> None:
    assert await lua("job.result", 0, "nothing") is None
    await refused(lua, "Job(): no jid provided", "job.result", 0)


@pytest.mark.parametrize("value", ["null", "false", "0", '""', "[]", json.dumps("é" * 3)])
async def test_every_json_value_is_a_result(lua: Lua, value: str) -> None:
    v = Vocabulary(reqless=True)
    await running(lua, v)
    await complete(lua, v, "result", value)
    assert (await lua.json("job.result", 3, "jid"))["result"] == value
