"""Payloads the server neither escapes nor decodes again (aqless's own options).

- ``data_apart``, the last argument of ``rateLimit.pop`` (and of ``queue.popAfter``'s pop):
  each job's stored data text comes after the reply's JSON text, as it is, instead of
  escaped into the job object.
- ``data_apart_no_history``, the same for aqless's workers, whose job objects also leave out
  their history (no job's history list is read).
- ``keep_data``, an option of ``job.complete`` and ``job.completeAndRequeue``: the job keeps
  its stored data; the `data` argument is neither decoded nor written.

Each is held to the call without it: the same keys and publications, the same reply but
where the data travels.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua
from tests.scripts.expect import refused, snapshot

# stored data texts as a pop finds them: an object with what JSON escapes, a JSON string
# (which, spliced into the reply, would read as a text to decode again), a number, and a
# text that is not JSON (another writer's)
DATA = {
    "escapes": '{"quote":"a\\"b","slash":"a/b","line":"a\\nb","accent":"\u00e9","tab":"\\t"}',
    "string": '"just a string"',
    "number": "42.5",
    "not json": "{not json",
}


async def jobs(lua: Lua) -> None:
    """A job per DATA text (the last written past put's check, as another writer could),
    a throttle and a tracked job: what a pop writes and publishes."""
    for i, (jid, data) in enumerate(DATA.items()):
        text = "{}" if jid == "not json" else data
        assert await lua("queue.put", i, "w", "queue", jid, "K", text, 0, "priority", -i) == jid
    await lua.redis.hset("ql:j:not json", "data", DATA["not json"])
    await lua("job.track", 10, "escapes")


Run = Callable[[Lua], Awaitable[Any]]


async def recorded(lua: Lua, run: Run) -> tuple[Any, dict[str, Any], list[tuple[str, str]]]:
    """The reply of `run` after `jobs`, the keys after it and its publications; the
    database is flushed first."""
    await lua.redis.flushall()
    await jobs(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        reply = await run(lua)
    return reply, await snapshot(lua), captured.messages


def without_data(reply: str) -> tuple[dict[str, Any], list[str]]:
    """A plain pop reply's value with the data left out of its objects, and the data
    texts, in order; each object with the `attempt` that a pop with data apart (aqless's
    own) adds (the jobs of these tests are popped for the first time)."""
    value = json.loads(reply)
    for job in value["jobs"]:
        job["attempt"] = 1
    return value, [job.pop("data") for job in value["jobs"]]


@pytest.mark.parametrize("count", [1, 3, 5])
async def test_a_pop_with_data_apart_does_what_the_pop_does_and_sends_the_stored_texts(
    lua: Lua, count: int
) -> None:
    plain = await recorded(lua, lambda lua: lua("rateLimit.pop", 20, "queue", "w", count))
    apart = await recorded(
        lua, lambda lua: lua("rateLimit.pop", 20, "queue", "w", count, "data_apart")
    )
    assert apart[1:] == plain[1:]  # keys and publications
    text, *texts = apart[0]
    expected, expected_texts = without_data(plain[0])
    assert json.loads(text) == expected
    assert '"data"' not in text
    assert texts == expected_texts == list(DATA.values())[:count]


async def test_a_pop_of_nothing_with_data_apart_is_the_reply_alone(lua: Lua) -> None:
    reply = await lua("rateLimit.pop", 1, "empty", "w", 5, "data_apart")
    assert isinstance(reply, list)
    assert [json.loads(reply[0])] == [{"jobs": [], "wait": None, "held": False}]


async def test_other_trailing_arguments_leave_the_pop_as_it_was(lua: Lua) -> None:
    plain = await recorded(lua, lambda lua: lua("rateLimit.pop", 20, "queue", "w", 2))
    other = await recorded(lua, lambda lua: lua("rateLimit.pop", 20, "queue", "w", 2, "x"))
    assert other == plain


OUTCOME = ("job.complete", 19, "escapes", "w", "queue", '{"done":1}')


async def popped_then(lua: Lua, run: Run) -> Any:
    """`run` once the pop of a first job (``escapes``) by worker w."""
    await lua("rateLimit.pop", 15, "queue", "w", 1)
    return await run(lua)


async def test_pop_after_passes_data_apart_to_its_pop(lua: Lua) -> None:
    plain = await recorded(
        lua,
        lambda lua: popped_then(
            lua, lambda lua: lua("queue.popAfter", 20, "queue", "w", 2, *OUTCOME)
        ),
    )
    apart = await recorded(
        lua,
        lambda lua: popped_then(
            lua, lambda lua: lua("queue.popAfter", 20, "queue", "w", 2, "data_apart", *OUTCOME)
        ),
    )
    assert apart[1:] == plain[1:]
    pop_status, (text, *texts), status, outcome = apart[0]
    assert (pop_status, status, outcome) == ("ok", "ok", "complete")
    expected, expected_texts = without_data(plain[0][1])
    assert json.loads(text) == expected
    assert texts == expected_texts == [DATA["string"], DATA["number"]]
    assert await lua.redis.hget("ql:j:escapes", "data") == '{"done":1}'


def lranges(ran: dict[str, Any]) -> int:
    return int(ran.get("cmdstat_lrange", {}).get("calls", 0))


# the worker's pops (at 20): alone, after one outcome, after many (of the first job, `escapes`)
POPS: dict[str, Callable[[str], tuple[Argument, ...]]] = {
    "rateLimit.pop": lambda option: ("queue", "w", 3, option),
    "queue.popAfter": lambda option: ("queue", "w", 3, option, *OUTCOME),
    "jobs.outcomes": lambda option: ("queue", "w", 3, option, *OUTCOME[:2], 4, *OUTCOME[2:]),
}


@pytest.mark.parametrize("command", list(POPS))
async def test_the_workers_pop_without_history_does_what_data_apart_does_reading_none(
    lua: Lua, command: str
) -> None:
    async def run(option: str) -> tuple[Any, ...]:
        async def pop(lua: Lua) -> tuple[Any, int]:
            await lua.redis.config_resetstat()
            reply = await lua(command, 20, *POPS[command](option))
            return reply, lranges(await lua.redis.info("commandstats"))

        return await recorded(lua, lambda lua: popped_then(lua, pop))

    (apart, apart_lranges), *apart_state = await run("data_apart")
    (bare, bare_lranges), *bare_state = await run("data_apart_no_history")
    assert bare_state == apart_state  # keys and publications
    assert (apart_lranges, bare_lranges) == (3, 0)  # a history read per job popped
    if command != "rateLimit.pop":  # the pop's part of the reply; the outcomes' the same
        assert bare[2:] == apart[2:] == ["ok", "complete"]
        apart, bare = apart[1], bare[1]
    (text, *texts), (bare_text, *bare_texts) = apart, bare
    expected = json.loads(text)
    assert len(expected["jobs"]) == 3
    for job in expected["jobs"]:
        assert job.pop("history")[-1]["what"] == "popped"
    assert json.loads(bare_text) == expected
    assert bare_texts == texts


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("queue", "w", 1, "data_apart", "queue.put", 9), 'Arg "command" not an outcome'),
        (("queue", "w", 1, "data_apart", "job.complete", "x"), 'Arg "now" not a number: x'),
        (("queue", "w", 1, "data_apart"), 'Arg "command" not an outcome: nil'),
    ],
)
async def test_pop_after_with_data_apart_checks_the_outcome_as_before(
    lua: Lua, args: tuple[Argument, ...], text: str
) -> None:
    await refused(lua, text, "queue.popAfter", 10, *args)


# -- keep_data ---------------------------------------------------------------------------------

STORED = '{ "a" : [1, 2.50] }'  # as another client may write it: not as cjson or aqless would


async def stored_and_popped(lua: Lua) -> None:
    assert await lua("queue.put", 1, "w", "queue", "j", "K", STORED, 0) == "j"
    await lua("job.track", 2, "j")
    await lua("rateLimit.pop", 3, "queue", "w", 1)


COMPLETES: dict[str, tuple[str, tuple[Argument, ...], tuple[Argument, ...]]] = {
    # name: command, its arguments before the options, the options
    "complete": ("job.complete", ("j", "w", "queue"), ()),
    "with a result": ("job.complete", ("j", "w", "queue"), ("result", "[7]")),
    "and requeue": ("job.completeAndRequeue", ("j", "w", "queue"), ("next", "delay", 5)),
}


def keeping(args: tuple[Argument, ...], options: tuple[Argument, ...]) -> tuple[Argument, ...]:
    """The arguments with `data` left empty and keep_data among the options."""
    if options[:1] == ("next",):  # completeAndRequeue: next comes before the options
        return (*args, "", "next", "keep_data", "1", *options[1:])
    return (*args, "", "keep_data", "1", *options)


@pytest.mark.parametrize("case", sorted(COMPLETES))
async def test_keep_data_does_what_complete_with_the_stored_data_does(lua: Lua, case: str) -> None:
    command, args, options = COMPLETES[case]

    async def stored_then(run: Run) -> tuple[Any, dict[str, Any], list[tuple[str, str]]]:
        await lua.redis.flushall()
        await stored_and_popped(lua)
        async with EventCapture(lua.redis, "ql:*") as captured:
            reply = await run(lua)
        return reply, await snapshot(lua), captured.messages

    written = await stored_then(lambda lua: lua(command, 10, *args, STORED, *options))
    kept = await stored_then(lambda lua: lua(command, 10, *keeping(args, options)))
    assert kept == written
    assert await lua.redis.hget("ql:j:j", "data") == STORED
    assert written[2]  # a tracked job's publications: the comparison means something


async def test_keep_data_writes_nothing_of_the_data_argument(lua: Lua) -> None:
    await stored_and_popped(lua)
    await lua.redis.hset("ql:j:j", "data", "[3]")  # written while it ran: kept as it is
    reply = await lua("job.complete", 10, "j", "w", "queue", "not json", "keep_data", "1")
    assert reply == "complete"
    assert await lua.redis.hget("ql:j:j", "data") == "[3]"


async def test_without_keep_data_the_data_is_still_checked_and_written(lua: Lua) -> None:
    await stored_and_popped(lua)
    await refused(lua, "invalid token", "job.complete", 10, "j", "w", "queue", "not json")
    assert await lua("job.complete", 10, "j", "w", "queue", "[4]") == "complete"
    assert await lua.redis.hget("ql:j:j", "data") == "[4]"


async def test_the_classic_complete_keeps_its_meaning(lua: Lua) -> None:
    """keep_data is aqless's own, for the reqless commands its workers send: the classic
    `complete` writes its data whatever the options."""
    await stored_and_popped(lua)
    assert await lua("complete", 10, "j", "w", "queue", "[5]", "keep_data", "1") == "complete"
    assert await lua.redis.hget("ql:j:j", "data") == "[5]"


async def test_a_refused_complete_with_keep_data_is_refused_as_before(lua: Lua) -> None:
    await stored_and_popped(lua)
    await refused(
        lua,
        "Complete(): Job has been handed out to another worker: w",
        "job.complete",
        10,
        "j",
        "other",
        "queue",
        "",
        "keep_data",
        "1",
    )
    assert await lua.redis.hget("ql:j:j", "data") == STORED


# -- data_beside -------------------------------------------------------------------------------


def sized(size: int) -> str:
    """A JSON text of exactly `size` bytes."""
    return '{"p":"' + "y" * (size - 8) + '"}'


# the jobs' data by jid, in the order a pop takes them
BESIDE = {"big": sized(100_000), "small": "{}", "edge": sized(16384)}


async def beside_jobs(lua: Lua) -> None:
    """The BESIDE jobs, the big one tracked (a tracked job's pop publishes more)."""
    for i, (jid, data) in enumerate(BESIDE.items()):
        assert await lua("queue.put", i, "w", "queue", jid, "K", data, 0, "priority", -i) == jid
    await lua("job.track", 8, "big")


@pytest.mark.parametrize("command", list(POPS))
async def test_a_pop_with_data_beside_does_what_no_history_does_but_leaves_the_data_out(
    lua: Lua, command: str
) -> None:
    async def run(option: str) -> tuple[Any, ...]:
        async def pop(lua: Lua) -> Any:
            await lua("rateLimit.pop", 15, "queue", "w", 1)  # the first job, for the outcome
            return await lua(command, 20, *POPS[command](option))

        await lua.redis.flushall()
        await beside_jobs(lua)
        # (OUTCOME's job)
        assert await lua("queue.put", 9, "w", "queue", "escapes", "K", "{}", 0, "priority", 9)
        async with EventCapture(lua.redis, "ql:*") as captured:
            reply = await pop(lua)
        return reply, await snapshot(lua), captured.messages

    bare = await run("data_apart_no_history")
    beside = await run("data_beside")
    assert beside[1:] == bare[1:]  # keys and publications
    (bare_reply, beside_reply) = (bare[0], beside[0])
    if command != "rateLimit.pop":  # the pop's part of the reply; the outcomes' the same
        assert beside_reply[2:] == bare_reply[2:] == ["ok", "complete"]
        bare_reply, beside_reply = bare_reply[1], beside_reply[1]
    assert beside_reply[0] == bare_reply[0]
    assert bare_reply[1:] == list(BESIDE.values())
    assert beside_reply[1:] == [None, None, None]  # read by the worker, beside


async def test_a_pop_with_data_beside_refused_leaves_the_next_pops_reading_data(lua: Lua) -> None:
    # a function library keeps its tables between calls: the next pops read data again
    await beside_jobs(lua)
    await refused(lua, 'Arg "limit"', "rateLimit.pop", 10, "queue", "w", "x", "data_beside")
    [job] = json.loads(await lua("pop", 11, "queue", "w", 1))
    assert job["data"] == BESIDE["big"]
    _, data = await lua("rateLimit.pop", 12, "queue", "w", 1, "data_apart")
    assert data == BESIDE["small"]
