"""Fixtures shared by every test: real servers (Valkey 9 and Redis 7) and the script."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import redis.asyncio as aioredis
from hypothesis import settings

from aqless.scripts import function_name
from aqless.scripts.loader import Argument, Script
from tests.support import deployments, servers

SERVERS = {"valkey9": servers.valkey9, "redis7": servers.redis7}

# Hypothesis: the default suite draws a few examples per property (each one a round of
# server calls); ``nox -s tests_long`` (``--hypothesis-profile=long``, or
# AQLESS_HYPOTHESIS_PROFILE=long) draws many. A test sets no max_examples of its own, so the
# profile decides; its failures are replayed first from .hypothesis either way.
settings.register_profile("short", max_examples=20, deadline=None)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("AQLESS_HYPOTHESIS_PROFILE", "short"))


@pytest.fixture(scope="session")
def _server_stack() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


_started: dict[str, str] = {}


def _unix_server(name: str, stack: ExitStack) -> str:
    if name == "redis7":
        servers.redis7_or_skip()
    if name not in _started:
        _started[name] = stack.enter_context(SERVERS[name]())
    return _started[name]


@pytest.fixture(scope="session")
def _deployments(_server_stack: ExitStack) -> deployments.Started:
    return deployments.Started(_server_stack)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``server_url`` runs a test on Valkey 9 and on Redis 7, unless the test parametrises it
    itself or a ``deployments`` marker names one of them. A test that uses ``deployment``, or
    ``server_url`` in a module marked ``every_deployment``, runs on each kind its module and
    markers allow (tests/support/deployments.py);
    its ``server_url`` is then that kind's first node, as the admin."""
    chosen: set[str] = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0]
        chosen.update(names.replace(" ", "").split(",") if isinstance(names, str) else names)
    wanted = set(metafunc.fixturenames) - chosen
    every = metafunc.definition.get_closest_marker("every_deployment") is not None
    if "deployment" in wanted or (every and "server_url" in wanted):
        names = [name for name in ("deployment", "server_url") if name in wanted]
        metafunc.parametrize(
            names,
            [
                pytest.param(*[kind.values[0]] * len(names), id=kind.id, marks=kind.marks)
                for kind in deployments.kinds_for(
                    metafunc.definition.originalname,
                    every=every,
                    limit=metafunc.definition.get_closest_marker("deployments"),
                )
            ],
            indirect=True,
            scope="session",
        )
    elif "server_url" in wanted:
        names = sorted(SERVERS)
        limit = metafunc.definition.get_closest_marker("deployments")
        if limit is not None:  # e.g. a slow process test on Valkey 9 only
            kinds = deployments.kinds_for(
                metafunc.definition.originalname, every=False, limit=limit
            )
            names = [kind.values[0] for kind in kinds]
        metafunc.parametrize("server_url", names, indirect=True, scope="session")


@pytest.fixture(scope="session")
def server_url(
    request: pytest.FixtureRequest,
    _server_stack: ExitStack,
    _deployments: deployments.Started,
) -> str:
    """The URL of a real server; every test that uses it runs on Valkey 9 and on Redis 7.
    In a test that runs on every deployment kind: that kind's first node, as the admin."""
    name: str = request.param
    if name in SERVERS:
        return _unix_server(name, _server_stack)
    return _deployments(name).nodes[0]


@pytest.fixture(scope="session")
def deployment(
    request: pytest.FixtureRequest,
    _server_stack: ExitStack,
    _deployments: deployments.Started,
) -> deployments.Deployment:
    """One deployment kind (see tests/support/deployments.py), started once per session."""
    kind: str = request.param
    if kind in SERVERS:
        return deployments.unix(kind, _unix_server(kind, _server_stack))
    return _deployments(kind)


@pytest.fixture
async def redis(server_url: str) -> AsyncIterator[aioredis.Redis]:
    """A clean database on the server: flushed before each test. The protocol's function
    library stays when it is the only one loaded (its name is its code's digest, so it is
    this checkout's): compiling it again costs the server about 20 ms, in 3,000 tests."""
    connection = aioredis.Redis.from_url(server_url, decode_responses=True)
    await connection.flushall()
    await connection.script_flush()
    if await _libraries(connection) != [function_name()]:
        await connection.function_flush()
    try:
        yield connection
    finally:
        await connection.aclose()


async def _libraries(connection: aioredis.Redis) -> list[str]:
    """The names of the function libraries loaded on the server."""
    listed: list[Any] = await connection.function_list()
    # each library's fields: a dict or a flat list of names and values (the servers differ)
    fields = [
        entry if isinstance(entry, dict) else dict(zip(entry[::2], entry[1::2], strict=True))
        for entry in listed
    ]
    return [str(library["library_name"]) for library in fields]


class Lua:
    """Calls the script like the qless test harnesses do: ``await lua('put', 0, ...)``.

    ``await lua(...)`` returns the raw reply (str, int, None or list); ``await lua.json(...)``
    decodes a JSON reply.
    """

    def __init__(self, redis: aioredis.Redis, prefix: str | None = None) -> None:
        self.redis = redis
        self.script = Script(redis, prefix=prefix)

    async def __call__(self, command: str, now: float, *args: Argument) -> Any:
        return await self.script(command, now, *args)

    async def json(self, command: str, now: float, *args: Argument) -> Any:
        reply = await self.script(command, now, *args)
        assert isinstance(reply, str), f"expected a JSON text, got {reply!r}"
        return json.loads(reply)


@pytest.fixture
def lua(redis: aioredis.Redis) -> Lua:
    return Lua(redis)


class Captured:
    """Messages published while a block ran, in order: a list of (channel, payload)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def channels(self) -> list[str]:
        return [channel for channel, _ in self.messages]

    def on(self, channel: str) -> list[str]:
        return [payload for name, payload in self.messages if name == channel]


class EventCapture:
    """``async with events() as captured:`` records every ``ql:*`` publication in the block.

    No sleeping: on exit a sentinel is published on a private channel and messages are read
    until it arrives; a server delivers one connection's messages in publication order.
    """

    SENTINEL = "aqless-test-sentinel"

    def __init__(self, redis: aioredis.Redis, pattern: str) -> None:
        self._redis = redis
        self._pattern = pattern
        self._pubsub = redis.pubsub()
        self.captured = Captured()

    async def __aenter__(self) -> Captured:
        await self._pubsub.psubscribe(self._pattern, self.SENTINEL)
        for _ in range(2):
            await self._pubsub.get_message(timeout=5)  # the two subscribe confirmations
        return self.captured

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            if exc_info[0] is None:
                await self._redis.publish(self.SENTINEL, "end")
                while True:
                    message = await self._pubsub.get_message(timeout=5)
                    assert message is not None, "the sentinel never arrived"
                    if message["channel"] == self.SENTINEL:
                        break
                    if message["type"] == "pmessage":
                        self.captured.messages.append((message["channel"], message["data"]))
        finally:
            await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]


@pytest.fixture
def events(redis: aioredis.Redis) -> Any:
    """``async with events() as captured`` (default pattern ``ql:*``)."""

    def capture(pattern: str = "ql:*") -> EventCapture:
        return EventCapture(redis, pattern)

    return capture
