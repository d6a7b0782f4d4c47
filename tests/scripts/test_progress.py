"""aqless's job progress (progress.lua): `job.progress` from the worker holding the job,
stored as extra job-hash fields and published on ``ql:progress``; `jobs.progress` reads it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import rpop, rput
from tests.scripts.expect import refused


async def running_job(lua: Lua, jid: str = "jid", worker: str = "w1") -> None:
    await rput(lua, 1, jid)
    assert await rpop(lua, 2, 1, worker=worker) == [jid]


async def test_a_report_is_stored_and_published(lua: Lua) -> None:
    await running_job(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        assert await lua("job.progress", 3, "jid", "w1", 0.4, "resized 4 of 10") is None
    assert captured.channels() == ["ql:progress"]
    assert json.loads(captured.on("ql:progress")[0]) == {
        "jid": "jid",
        "event": "progress",
        "queue": "queue",
        "worker": "w1",
        "fraction": 0.4,
        "message": "resized 4 of 10",
    }
    fraction, message, at = await lua.redis.hmget(
        "ql:j:jid", ["progress", "progress_message", "progress_at"]
    )
    assert (fraction, message, at) == ("0.4", "resized 4 of 10", "3")
    assert await lua.json("jobs.progress", 4, "jid", "other") == {
        "jid": {"fraction": 0.4, "message": "resized 4 of 10", "at": 3}
    }


async def test_the_job_object_is_what_it_was(lua: Lua) -> None:
    await running_job(lua)
    before = await lua.json("job.get", 3, "jid")
    await lua("job.progress", 3, "jid", "w1", 1)
    assert await lua.json("job.get", 3, "jid") == before


async def test_the_last_report_wins_and_the_message_is_optional(lua: Lua) -> None:
    await running_job(lua)
    await lua("job.progress", 3, "jid", "w1", 0.2, "first")
    await lua("job.progress", 4, "jid", "w1", 1)
    assert await lua.json("jobs.progress", 5, "jid") == {
        "jid": {"fraction": 1, "message": "", "at": 4}
    }


async def test_no_report_reads_as_an_empty_object(lua: Lua) -> None:
    await rput(lua, 1, "jid")
    assert await lua("jobs.progress", 2, "jid", "missing") == "{}"
    assert await lua("jobs.progress", 2) == "{}"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Job(): no jid provided"),
        (("jid",), 'Progress(): Arg "worker" missing'),
        (("jid", "w1"), 'Progress(): Arg "fraction" not a number from 0 to 1: nil'),
        (("jid", "w1", "half"), 'Progress(): Arg "fraction" not a number from 0 to 1: half'),
        (("jid", "w1", 1.5), 'Progress(): Arg "fraction" not a number from 0 to 1: 1.5'),
        (("jid", "w1", -0.1), 'Progress(): Arg "fraction" not a number from 0 to 1: -0.1'),
        (("jid", "w1", "nan"), 'Progress(): Arg "fraction" not a number from 0 to 1: nan'),
        (("jid", "w1", 0.5, "x" * 1025), 'Progress(): Arg "message" longer than 1024 bytes: 1025'),
        (("missing", "w1", 0.5), "Progress(): Job missing does not exist"),
        (("jid", "w2", 0.5), "Progress(): Job jid given out to another worker: w1"),
    ],
)
async def test_a_bad_report_is_refused(lua: Lua, args: tuple[object, ...], text: str) -> None:
    await running_job(lua)
    await refused(lua, text, "job.progress", 3, *args)  # type: ignore[arg-type]


async def test_a_job_no_longer_running_refuses_reports(lua: Lua) -> None:
    await running_job(lua)
    await lua("job.complete", 3, "jid", "w1", "queue", "{}")
    await refused(
        lua,
        "Progress(): Job jid not currently running: complete",
        "job.progress",
        4,
        "jid",
        "w1",
        0.5,
    )


async def test_a_message_of_the_limit_is_taken(lua: Lua) -> None:
    await running_job(lua)
    await lua("job.progress", 3, "jid", "w1", 0, "é" * 512)
    reply = await lua.json("jobs.progress", 4, "jid")
    assert reply["jid"]["message"] == "é" * 512
