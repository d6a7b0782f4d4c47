"""Hostile arguments through the public API: every call either succeeds or raises an aqless
error (or ValueError/TypeError for arguments Python itself refuses), never anything else,
and the data model's invariants hold after every call."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aqless
from tests.scripts.invariants import violations

# what a caller may legitimately get back for a bad argument
EXPECTED = (aqless.AqlessError,)

names = st.one_of(
    st.text(min_size=0, max_size=30),
    st.sampled_from(["", ":", "{}", "{a}:b", "q:work", "ql:q:x", "über", "🚀", "a" * 300]),
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 2**53, -(2**53), math.nan, math.inf, -math.inf]),
)
leaves = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20), st.binary(max_size=10))
payloads = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
deep = st.integers(min_value=1, max_value=5000).map(lambda depth: _nested(depth))


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


async def _attempt(call: Callable[[], Awaitable[Any]]) -> None:
    with contextlib.suppress(*EXPECTED):
        await call()


def _fuzz(server_url: str, scenario: Callable[[aqless.Client], Awaitable[None]]) -> None:
    async def run() -> None:
        async with aqless.Client(server_url) as client:
            await scenario(client)

    anyio.run(run)
    with redis.Redis.from_url(server_url) as connection:
        queues = [name.decode() for name in connection.zrange("ql:queues", 0, -1)]
        assert violations(connection, queues) == []


FUZZ = settings(  # examples: the profile's (tests/conftest.py)
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def clean(server_url: str) -> str:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    return server_url


@FUZZ
@given(
    queue=names,
    klass=names,
    data=st.one_of(payloads, deep),
    priority=numbers,
    delay=numbers,
    retries=numbers,
    tags=st.lists(names, max_size=3),
)
def test_put_with_hostile_arguments(
    clean: str,
    queue: str,
    klass: str,
    data: Any,
    priority: Any,
    delay: Any,
    retries: Any,
    tags: list[str],
) -> None:
    async def scenario(client: aqless.Client) -> None:
        await _attempt(
            lambda: client.queues[queue].put(
                klass, data, priority=priority, delay=delay, retries=retries, tags=tags
            )
        )
        await _attempt(lambda: client.queues[queue].pop())

    _fuzz(clean, scenario)


@FUZZ
@given(
    jid=names,
    worker=names,
    group=names,
    message=st.text(max_size=50),
    priority=numbers,
    delay=numbers,
    tag=names,
)
def test_job_verbs_on_unknown_or_foreign_jobs(
    clean: str,
    jid: str,
    worker: str,
    group: str,
    message: str,
    priority: Any,
    delay: Any,
    tag: str,
) -> None:
    async def scenario(client: aqless.Client) -> None:
        real = await client.queues["q"].put("k", {"n": 1})
        await client.queues["q"].pop(worker="holder")
        for target in (jid, real):  # an unknown jid, and a job another worker holds
            job = aqless.Job(client, {"jid": target, "queue": "q", "worker": worker})
            for verb in (
                job.complete,
                partial(job.fail, group, message),
                partial(job.retry, delay, group, message),
                job.heartbeat,
                partial(job.progress, priority, message),
                partial(job.set_priority, priority),
                partial(job.tag, tag),
                partial(job.depend, jid),
                job.track,
            ):
                await _attempt(verb)
        await _attempt(lambda: client.jobs.get(jid))
        await _attempt(lambda: client.jobs.tagged(tag, offset=delay, count=priority))
        await _attempt(lambda: client.throttles[tag].set(priority))
        await _attempt(lambda: client.config.set(tag, message))

    _fuzz(clean, scenario)
