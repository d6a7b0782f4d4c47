"""`jobs.puts` (popafter.lua's Queue.puts): many puts in one call, each as its own `queue.put`.

The guard is differential, as for `jobs.outcomes`: the same puts are run once as one call
each and once as one `jobs.puts` carrying them all, on a fresh database each time; the
replies, every key and every publication must be the same. aqless's client sends a round
trip's runs of plain puts so (aqless.scripts.loader: `Script.send_many`).
"""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ResponseError

from aqless.scripts.loader import Argument, Call, Script
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import refused, rpop, rput, snapshot

Put = tuple[float, tuple[Argument, ...]]


def put(now: float, jid: str, *options: Argument, queue: str = "q", data: str = "{}") -> Put:
    return (now, ("w", queue, jid, "K", data, 0, *options))


# new jobs in two queues, one tracked put again, one running put again by another worker,
# one refused (its data is not JSON), one with options, one put twice, one delayed
PUTS: list[Put] = [
    put(10.25, "a"),
    put(10.5, "b", queue="r"),
    put(10.75, "t"),
    put(11.0, "run", queue="r"),
    put(11.25, "bad", data="{not json"),
    put(11.5, "c", "priority", 5, "tags", '["x"]', "retries", 2),
    put(11.75, "a", queue="r"),
    put(12.0, "d", "depends", '["a"]'),
    put(12.5, "e", data='{"n": 1}'),
    (12.75, ("w", "q", "f", "K", "{}", 30)),
]


async def workload(lua: Lua) -> None:
    """t tracked before it is put again; `run` running under another worker."""
    await rput(lua, 1, "t")
    await lua("job.track", 2, "t")
    await rput(lua, 3, "run", queue="r")
    assert await rpop(lua, 4, 1, queue="r", worker="other") == ["run"]


async def one_by_one(lua: Lua, puts: list[Put]) -> list[Any]:
    replies: list[Any] = []
    for now, args in puts:
        try:
            replies.append(("ok", await lua("queue.put", now, *args)))
        except ResponseError as error:
            replies.append(("refused", str(error)))
    return replies


async def in_one_call(lua: Lua, puts: list[Put]) -> list[Any]:
    framed: list[Argument] = []
    for now, args in puts:
        framed += [repr(now), len(args), *args]
    reply = await lua("jobs.puts", puts[0][0], *framed)
    return [(reply[i], reply[i + 1]) for i in range(0, len(reply), 2)]


async def recorded(lua: Lua, puts: list[Put], run: Any) -> tuple[Any, ...]:
    await lua.redis.flushall()
    await workload(lua)
    async with EventCapture(lua.redis, "ql:*") as captured:
        replies = await run(lua, puts)
    return replies, await snapshot(lua), captured.messages


async def test_puts_in_one_call_leave_what_one_call_each_leaves(lua: Lua) -> None:
    apart = await recorded(lua, PUTS, one_by_one)
    joined = await recorded(lua, PUTS, in_one_call)
    assert [reply[0] for reply in joined[0]] == [reply[0] for reply in apart[0]]
    for (status, one), (_, other) in zip(joined[0], apart[0], strict=True):
        if status == "ok":
            assert one == other
        else:
            assert one.split(": ", 1)[1] in other  # as the server decorates a call's error
    assert [reply[0] for reply in joined[0]].count("refused") == 1
    assert joined[1] == apart[1]
    assert joined[2] == apart[2]
    assert ("ql:put", "t") in joined[2]  # the tracked job's put is published
    assert ("ql:w:other", '{"jid":"run","event":"lock_lost","worker":"other"}') in joined[2]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("x", 0), 'Puts(): Arg "now" not a number: x'),
        ((1, 5, "w"), 'Puts(): Arg "count" not a count of the arguments left: 5'),
        ((1, -1), 'Puts(): Arg "count" not a count of the arguments left: -1'),
    ],
)
async def test_bad_framing_is_refused_before_any_put_runs(
    lua: Lua, args: tuple[Argument, ...], text: str
) -> None:
    now, first = put(1, "a")
    await refused(lua, text, "jobs.puts", 1, repr(now), len(first), *first, *args)
    assert await lua.redis.exists("ql:j:a") == 0


async def test_a_round_trip_of_puts_goes_as_runs_in_one_call_each(lua: Lua) -> None:
    """Script.send_many: a run of puts is one `jobs.puts` (at most 100 puts), a put alone or
    another command between them goes as it was; each reply in its place, a refused put's
    the server's error."""
    script: Script = lua.script
    calls: list[Call] = [("queue.put", (repr(now), *args)) for now, args in PUTS[:6]]
    calls.insert(3, ("job.get", ("11", "a")))
    calls += [("queue.put", ("13", "w", "q", f"m{i}", "K", "{}", 0)) for i in range(150)]
    pipeline = script._pipeline
    sent: list[list[str]] = []

    async def recording(calls: Any, then: Any) -> Any:
        sent.append([command for command, _ in calls])
        return await pipeline(calls, then)

    script._pipeline = recording  # type: ignore[method-assign]
    replies = await script.send_many(calls)
    # 3 puts; job.get; then 153 puts: 100 and 53 (the library loaded again, once: twice)
    assert sent[-1] == ["jobs.puts", "job.get", "jobs.puts", "jobs.puts"]
    assert replies[:3] == ["a", "b", "t"]
    assert '"jid":"a"' in str(replies[3])
    assert replies[4] == "run"
    assert isinstance(replies[5], ResponseError)
    assert "Expected object key string" in str(replies[5])  # cjson's, as a call of its own
    assert replies[6:] == ["c", *(f"m{i}" for i in range(150))]
