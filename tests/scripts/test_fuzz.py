"""Hostile arguments for every command: each call either succeeds or fails with the
protocol's own error (or the JSON library's, for malformed JSON), never with a Lua runtime
error, and a call that fails changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aqless.scripts import build, build_library, function_name
from tests.scripts.invariants import snapshot
from tests.scripts.test_script import CLASSIC_COMMANDS, REQLESS_COMMANDS

COMMANDS = sorted(set(CLASSIC_COMMANDS) | set(REQLESS_COMMANDS))

# Texts that betray a crash inside the script rather than a refusal by it.
CRASHES = ("attempt to", "bad argument", "Script attempted", "stack overflow", "nil value")

words = st.sampled_from(
    [
        "",
        "0",
        "1",
        "-1",
        "2.5",
        "1e400",
        "nan",
        "inf",
        "-inf",
        "0x10",
        "foo",
        "jid",
        "queue",
        "worker",
        "{}",
        "[]",
        '["jid"]',
        '{"a":[1,2]}',
        "false",
        "null",
        "true",
        "[}",
        "{]",
        "next",
        "delay",
        "depends",
        "tags",
        "priority",
        "retries",
        "throttles",
        "backlog",
        "interval",
        "on",
        "off",
        "all",
        "add",
        "remove",
        "get",
        "top",
        "track",
        "untrack",
        "running",
        "stalled",
        "scheduled",
        "depends",
        "recurring",
        "complete",
        "throttled",
        "queue:{x}",
        "ünïcödé",
        'a/b"c\\d',
        "ql:q:queue",
        "9999999999999999999999",
    ]
)
arguments = st.lists(st.one_of(words, st.text(max_size=8), st.integers(-5, 5)), max_size=9)


@pytest.mark.parametrize("library", [False, True], ids=["evalsha", "fcall"])
@settings(suppress_health_check=list(HealthCheck))  # examples: the profile's (conftest)
@given(data=st.data())
def test_hostile_arguments_get_clear_errors(
    server_url: str, library: bool, data: st.DataObject
) -> None:
    with redis.Redis.from_url(server_url) as connection:
        evalsha = connection.register_script(build())
        connection.flushall()
        connection.function_load(build_library(), replace=True)

        def script(args: list[Any]) -> Any:
            if library:
                return connection.fcall(function_name(), 0, *args)
            return evalsha(args=args)

        # some state for the commands to trip over
        script(args=["put", 0, "w", "queue", "jid", "K", "{}", 0, "tags", '["t"]'])
        script(args=["queue.put", 0, "w", "queue", "other", "K", "{}", 0, "depends", '["jid"]'])
        script(args=["recur", 0, "queue", "r", "K", "{}", "interval", 60, 0])
        script(args=["pop", 1, "queue", "worker", 1])
        for _ in range(3):
            command = data.draw(st.sampled_from(COMMANDS))
            now = data.draw(st.sampled_from([0, 5, 100, "nan", "x"]))
            args = data.draw(arguments)
            before = snapshot(connection)
            try:
                script(args=[command, now, *args])
            except redis.ResponseError as error:
                text = str(error)
                assert not any(crash in text for crash in CRASHES), (command, args, text)
                assert snapshot(connection) == before, (command, args, text)


def test_ten_thousand_names_in_one_call(server_url: str) -> None:
    with redis.Redis.from_url(server_url, decode_responses=True) as connection:
        script = connection.register_script(build())
        connection.flushall()
        names = [f"q{i}" for i in range(10_000)]
        script(args=["pause", 0, *names])
        assert connection.scard("ql:paused_queues") == 10_000
        script(args=["unpause", 0, *names])
        assert connection.scard("ql:paused_queues") == 0
        jids = [f"j{i}" for i in range(10_000)]
        assert script(args=["job.cancel", 0, *jids]) == jids
