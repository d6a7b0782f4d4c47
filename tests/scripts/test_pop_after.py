"""`queue.popAfter` (popafter.lua): a worker's outcome and its next pop in one call.

The guard is differential: the same workload is run once as the outcome's call followed by
the pop's, and once as one `queue.popAfter` carrying both, on a fresh database each time;
the replies, every key (type, content, expiry) and every publication (channel, payload,
order) must be the same.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis.exceptions import ResponseError

from aqless.scripts.loader import Argument
from tests.conftest import EventCapture, Lua
from tests.scripts._queues_helpers import refused, rpop, rput, snapshot

# each outcome a worker reports, with its arguments after `now` (the popped job is "a",
# held by worker "w" in queue "queue")
OUTCOMES: dict[str, tuple[str, tuple[Argument, ...]]] = {
    "complete": ("job.complete", ("a", "w", "queue", '{"done": 1}')),
    "complete and requeue": (
        "job.completeAndRequeue",
        ("a", "w", "queue", "{}", "next", "delay", 5),
    ),
    "fail": ("job.fail", ("a", "w", "group", "message", '{"x": 2}')),
    "retry": ("job.retry", ("a", "queue", "w", 3, "group", "message")),
    "retry without retries": ("job.retry", ("a", "queue", "w", 0, "group", "message")),
    "requeue": ("job.requeue", ("w", "queue", "a", "klass", "{}", 0, "priority", 2)),
    "lost lock": ("job.complete", ("a", "other", "queue", "{}")),
    "unknown job": ("job.fail", ("nope", "w", "group", "message")),
}

OUTCOME_ARGS = ("a", "w", "queue", "{}")  # job.complete's, for "a"

Run = Callable[[Lua], Awaitable[Any]]


async def workload(lua: Lua, name: str) -> None:
    """Jobs with what an outcome and a pop touch: a tracked, tagged job "a" with a dependent
    "c", popped by "w"; "b" and "d" waiting behind it; worker stats; a throttle."""
    await lua("throttle.set", 0, "t", 2)
    retries = 0 if name == "retry without retries" else 4
    await rput(lua, 1, "a", "tags", '["x"]', "retries", retries, "throttles", '["t"]')
    await rput(lua, 2, "b", "priority", 1, "throttles", '["t"]')
    await rput(lua, 3, "c", "depends", '["a"]')
    await rput(lua, 4, "d")
    await lua("job.track", 5, "a")
    assert await rpop(lua, 6, worker="w") == ["b"]  # the higher priority first
    await lua("job.complete", 7, "b", "w", "queue", "{}")
    assert await rpop(lua, 8, worker="w") == ["a"]


async def recorded(lua: Lua, run: Run) -> tuple[Any, dict[str, Any], list[tuple[str, str]]]:
    async with EventCapture(lua.redis, "ql:*") as captured:
        reply = await run(lua)
    return reply, await snapshot(lua), captured.messages


async def separately(lua: Lua, outcome: str, args: tuple[Argument, ...]) -> Any:
    try:
        outcome_reply: Any = ("ok", await lua(outcome, 9.25, *args))
    except ResponseError as error:
        outcome_reply = ("refused", str(error))
    return await lua("rateLimit.pop", 9.5, "queue", "w", 2), outcome_reply


async def together(lua: Lua, outcome: str, args: tuple[Argument, ...]) -> Any:
    reply = await lua("queue.popAfter", 9.5, "queue", "w", 2, outcome, repr(9.25), *args)
    pop_status, popped, status, *rest = reply
    assert pop_status == "ok"
    return popped, (status, rest[0] if rest else None)


@pytest.mark.parametrize("case", sorted(OUTCOMES))
async def test_an_outcome_and_a_pop_in_one_call_leave_what_the_two_calls_leave(
    lua: Lua, case: str
) -> None:
    outcome, args = OUTCOMES[case]
    await workload(lua, case)
    apart = await recorded(lua, lambda lua: separately(lua, outcome, args))
    await lua.redis.flushall()
    await workload(lua, case)
    joined = await recorded(lua, lambda lua: together(lua, outcome, args))

    (popped, (status, reply)), keys, messages = joined
    (apart_popped, (apart_status, apart_reply)), apart_keys, apart_messages = apart
    assert popped == apart_popped
    assert status == apart_status
    if status == "ok":
        assert reply == apart_reply
    else:  # the text of the refusal, as the server decorates a call's own
        assert reply.split(": ", 1)[1] in apart_reply
    assert keys == apart_keys
    assert messages == apart_messages
    if outcome in ("job.complete", "job.fail") and status == "ok":
        assert messages  # a tracked job's publications: the comparison means something


async def test_a_refused_outcome_does_not_stop_the_pop(lua: Lua) -> None:
    await workload(lua, "lost lock")
    _, popped, status, text = await lua(
        "queue.popAfter", 10, "queue", "w", 5, "job.complete", 9, "a", "thief", "queue", "{}"
    )
    assert status == "refused"
    assert "Complete(): Job has been handed out to another worker: w" in text
    assert [job["jid"] for job in json.loads(popped)["jobs"]] == ["d"]  # "c" waits for "a"
    assert await lua.redis.hget("ql:j:a", "state") == "running"


async def test_a_pop_the_server_refuses_leaves_the_outcome_done(lua: Lua) -> None:
    """Each part answers as its own call would: here the server refuses a command the pop
    runs (its worker list is not a sorted set), after the outcome ran."""
    await workload(lua, "complete")
    await lua.redis.delete("ql:workers")
    await lua.redis.set("ql:workers", "not a sorted set")
    pop_status, text, status, reply = await lua(
        "queue.popAfter", 10, "queue", "w", 1, "job.complete", 9, *OUTCOME_ARGS
    )
    assert (pop_status, status, reply) == ("refused", "ok", "complete")
    assert text.startswith("WRONGTYPE")
    assert await lua.redis.hget("ql:j:a", "state") == "complete"


async def test_the_outcome_runs_with_its_own_now(lua: Lua) -> None:
    await workload(lua, "complete")
    await lua("queue.popAfter", 20, "queue", "w", 1, "job.complete", 15, "a", "w", "queue", "{}")
    history = json.loads(await lua("job.get", 21, "a"))["history"]
    assert [(entry["what"], entry["when"]) for entry in history[-1:]] == [("done", 15)]
    assert await lua.redis.zscore("ql:workers", "w") == 20  # the pop's now marks the worker


async def test_by_evalsha_too(lua: Lua) -> None:
    script_lua = Lua(lua.redis)
    script_lua.script._functions = False
    await workload(lua, "lost lock")
    _, _, status, text = await script_lua(
        "queue.popAfter", 10, "queue", "w", 1, "job.fail", 9, "a", "x", "g", "m"
    )
    assert status == "refused"
    assert text.startswith("user_script:")
    assert "Fail(): Job running with another worker: w" in text


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((), "Queue(): no queue name provided"),
        (("queue",), 'Pop(): Arg "worker" missing'),
        (("queue", "w", "x", "job.complete", 9, *OUTCOME_ARGS), 'Arg "limit" missing or not a'),
        (("queue", "w", 1, "queue.put", 9, *OUTCOME_ARGS), 'Arg "command" not an outcome'),
        (("queue", "w", 1, "job.complete", "x", *OUTCOME_ARGS), 'Arg "now" not a number: x'),
    ],
)
async def test_bad_arguments_are_refused_before_the_outcome_runs(
    lua: Lua, args: tuple[Argument, ...], text: str
) -> None:
    await workload(lua, "complete")
    await refused(lua, text, "queue.popAfter", 10, *args)
