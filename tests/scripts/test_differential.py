"""The differential guard: the protocol's effects stay byte-for-byte what they were.

Other qless clients share the database, so a change to the Lua (a speed-up, a refactor)
must leave every reply, every publication and every key exactly as it was. A fixed
workload (tests/scripts/_differential_workload.py: puts with priorities, delays, tags,
dependencies, tracking, throttles and rate limits; pops of 1 and of 50; heartbeats;
complete, with a next queue and with a result; fail, retry, unfail, requeue, cancel;
recurring spawns; lock expiry; config changes; stats over two days; popAfter,
rateLimit.pop, progress, dedup, offers...) runs at fixed `now`s on a fresh server, as the
function library (FCALL) and as the script (EVALSHA). The capture is:

- every reply (a refusal as its error text, without the line number),
- every publication, in order, as a ``PSUBSCRIBE *`` on another connection sees it (that
  connection also subscribes to the offering worker's push channel),
- every key afterwards: its type, its full content (hashes as sorted items, sorted sets
  with their scores as the server writes them, lists in order, sets sorted) and whether
  it expires.

It is compared with the golden file ``tests/scripts/golden/differential.json``, one
capture per server (Valkey 9, Redis 7). A change to the golden file is acceptable only
for a bug fix, explained where it is made. Recorded again for fenced attempts: every pop
writes aqless's own `attempt` field into the job hash (other clients ignore it), and
aqless's own replies (pops with data_apart, pushes on ql:push:<worker>) end each job object
with it; every reply, publication and key other clients read is as it was. Recorded again
for the throttles' index: `throttle.set` and `queue.throttle.set` add the id to aqless's
own set `ql:throttles` (other clients neither read nor write it). Recorded again for the
per-class figures: complete and each failure add one to a job class's run-time bucket or
failures in aqless's own hour hash `ql:aqless:tp:<hour>:<q>` (fields `<klass>|r<i>`,
`<klass>|f`); only those fields were added. Recorded again for pushes without history:
aqless's own push on ql:push:<worker> leaves out the job's history, as its workers' pops
do; only those publications changed. To record it again from
the current Lua:

    AQLESS_DIFFERENTIAL_RECORD=1 python -m pytest tests/scripts/test_differential.py

(recording runs the FCALL case of each server; the EVALSHA case then compares with it).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from aqless.scripts.loader import Script
from tests.scripts._differential_workload import workload

GOLDEN = Path(__file__).parent / "golden" / "differential.json"
RECORD = os.environ.get("AQLESS_DIFFERENTIAL_RECORD") == "1"
SENTINEL = "aqless-differential-end"
PUSH_CHANNEL = "ql:push:w7"  # the offering worker of the workload listens here

Capture = dict[str, Any]


def _error_text(error: ResponseError) -> str:
    """The refusal's text without what names the script's line (it moves with any edit)."""
    return re.sub(r" script: .*$", "", _without_line(str(error)))


def _without_line(text: str) -> str:
    return re.sub(r"user_(script|function):\d+: ", "", text)


def _reply(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        return _without_line(value)
    if isinstance(value, list):
        return [_reply(item) for item in value]
    return value


async def _keys(redis: aioredis.Redis) -> dict[str, Any]:
    dump: dict[str, Any] = {}
    for key in sorted(str(key) for key in await redis.keys("*")):
        kind = str(await redis.type(key))
        content: Any
        if kind == "string":
            content = await redis.get(key)
        elif kind == "hash":
            content = sorted([field, value] for field, value in (await redis.hgetall(key)).items())
        elif kind == "list":
            content = await redis.lrange(key, 0, -1)
        elif kind == "set":
            content = sorted(await redis.smembers(key))
        elif kind == "zset":  # raw: the scores as the server writes them
            content = await redis.execute_command(  # type: ignore[no-untyped-call]
                "ZRANGE", key, 0, -1, "WITHSCORES"
            )
        else:  # pragma: no cover - the protocol uses no other type
            content = None
        dump[key] = [kind, content, await redis.pttl(key) > 0]
    return dump


async def _run(redis: aioredis.Redis, functions: bool) -> Capture:
    script = Script(redis, functions=functions)
    listener = redis.pubsub()
    await listener.psubscribe("*")
    await listener.subscribe(PUSH_CHANNEL)
    for _ in range(2):
        assert await listener.get_message(timeout=5) is not None  # the confirmations
    calls: list[Any] = []
    for command, now, args in workload():
        try:
            reply = _reply(await script(command, now, *args))
        except ResponseError as error:
            reply = {"error": _error_text(error)}
        calls.append([command, now, [str(arg) for arg in args], reply])
    await redis.publish(SENTINEL, "end")
    messages: list[Any] = []
    while True:
        message = await listener.get_message(timeout=5)
        assert message is not None, "the sentinel never arrived"
        if message["channel"] == SENTINEL:
            break
        if message["type"] in ("message", "pmessage"):
            messages.append([message["type"], message["channel"], message["data"]])
    await listener.aclose()  # type: ignore[no-untyped-call, unused-ignore]
    return {"calls": calls, "messages": messages, "keys": await _keys(redis)}


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _first_difference(expected: Capture, actual: Capture) -> str | None:
    """A readable account of the first item that differs, or None."""
    for i, (want, got) in enumerate(zip(expected["calls"], actual["calls"], strict=False)):
        if want != got:
            return (
                f"call #{i} {want[0]} now={want[1]} args={_show(want[2])}\n"
                f"  expected reply: {_show(want[3])}\n  actual reply:   {_show(got[3])}"
                + ("" if want[:3] == got[:3] else f"\n  (the call itself differs: {got[:3]})")
            )
    if len(expected["calls"]) != len(actual["calls"]):
        return f"{len(expected['calls'])} calls expected, {len(actual['calls'])} made"
    for i, (want, got) in enumerate(zip(expected["messages"], actual["messages"], strict=False)):
        if want != got:
            return (
                f"publication #{i}\n  expected: {_show(want)}\n  actual:   {_show(got)}\n"
                f"  (the publication before: {_show(expected['messages'][i - 1] if i else None)})"
            )
    if len(expected["messages"]) != len(actual["messages"]):
        return (
            f"{len(expected['messages'])} publications expected, "
            f"{len(actual['messages'])} made; the first extra or missing: "
            + _show(
                (expected["messages"] + actual["messages"])[
                    min(len(expected["messages"]), len(actual["messages"]))
                ]
            )
        )
    want_keys, got_keys = expected["keys"], actual["keys"]
    for key in sorted(set(want_keys) | set(got_keys)):
        if want_keys.get(key) != got_keys.get(key):
            return (
                f"key {key}\n  expected: {_show(want_keys.get(key))}\n"
                f"  actual:   {_show(got_keys.get(key))}"
            )
    return None


def _golden() -> dict[str, Capture]:
    if not GOLDEN.exists():
        return {}
    loaded: dict[str, Capture] = json.loads(GOLDEN.read_text())
    return loaded


@pytest.mark.parametrize("functions", [True, False], ids=["fcall", "evalsha"])
async def test_the_protocol_effects_match_the_golden_capture(
    redis: aioredis.Redis, server_url: str, request: pytest.FixtureRequest, functions: bool
) -> None:
    server: str = request.node.callspec.params["server_url"]
    actual = await _run(redis, functions)
    golden = _golden()
    if RECORD and functions:
        golden[server] = actual
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        return
    assert server in golden, f"no golden capture for {server}: record it (see the docstring)"
    difference = _first_difference(golden[server], actual)
    assert difference is None, "the protocol's effects changed at the first difference:\n" + (
        difference or ""
    )


def test_the_workload_is_refused_nowhere_unexpectedly() -> None:
    """The golden capture exercises the paths: most calls succeed, and the refusals in it are
    the ones the workload means (bad arguments, jobs that are not the caller's)."""
    golden = _golden()
    assert golden, "no golden capture: record it (see the docstring)"
    for server, capture in golden.items():
        errors = [call for call in capture["calls"] if isinstance(call[3], dict)]
        assert len(errors) < len(capture["calls"]) // 10, (server, errors)
        assert all("attempt to" not in call[3]["error"] for call in errors), errors


async def test_a_sharded_namespace_publishes_the_same_bytes_with_spublish(
    redis: aioredis.Redis, request: pytest.FixtureRequest
) -> None:
    """With ``aqless-pubsub`` = ``sharded`` (aqless.sharding.pubsub) every publication of the
    workload is the golden one, in the same order, heard by SSUBSCRIBE of its channel; the
    replies are the same but ``config.getAll``'s, which lists the option."""
    server: str = request.node.callspec.params["server_url"]
    golden = _golden()[server]
    expected = [[channel, data] for kind, channel, data in golden["messages"] if kind == "pmessage"]
    channels = sorted({channel for channel, _ in expected})
    await redis.hset("ql:config", "aqless-pubsub", "sharded")
    script = Script(redis)
    listener = redis.pubsub()
    await listener.ssubscribe(*channels, SENTINEL)
    for _ in range(len(channels) + 1):
        assert await listener.get_message(timeout=5) is not None  # the confirmations
    for index, (command, now, args) in enumerate(workload()):
        try:
            reply = _reply(await script(command, now, *args))
        except ResponseError as error:
            reply = {"error": _error_text(error)}
        if command != "config.getAll":
            assert reply == golden["calls"][index][3], (index, command)
    await redis.execute_command("SPUBLISH", SENTINEL, "end")  # type: ignore[no-untyped-call]
    messages: list[Any] = []
    while True:
        message = await listener.get_message(timeout=5)
        assert message is not None, "the sentinel never arrived"
        if message["channel"] == SENTINEL:
            break
        assert message["type"] == "smessage"
        messages.append([message["channel"], message["data"]])
    await listener.aclose()  # type: ignore[no-untyped-call, unused-ignore]
    assert messages == expected
    assert len(messages) > 50  # the workload publishes on many channels
