"""Job results: a handler's return value kept with the job, `job.result()` /
`client.result(jid)` waiting for it or raising why there is none, and the sync client's."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

import aqless
import aqless.sync
from aqless import (
    Handlers,
    Job,
    JobFailedError,
    JobGoneError,
    JobState,
    ResultDroppedError,
    ResultTimeoutError,
)
from tests.support.clients import WORKER, pop_one
from tests.support.worker import make_worker, running
from tests.worker import isolated_jobs

pytest_plugins = ["tests.support.client_fixtures"]


def add(job: Job) -> Any:
    return {"sum": job.data["a"] + job.data["b"]}


async def double(job: Job) -> Any:
    return [job.data["n"], job.data["n"] * 2]


def nothing(job: Job) -> None:
    return None


def unencodable(job: Job) -> Any:
    return {1, 2}


def breaks(job: Job) -> Any:
    raise ValueError("no answer today")


def handlers() -> Handlers:
    registry = Handlers()
    for name, function in (
        ("add", add),
        ("double", double),
        ("nothing", nothing),
        ("unencodable", unencodable),
        ("breaks", breaks),
    ):
        registry.add(function, name)
    return registry


async def test_a_handler_s_return_value_is_the_job_s_result(client: aqless.Client) -> None:
    queue = client.queues["q"]
    async with running(make_worker(client, handlers=handlers())):
        summed = await queue.put("add", {"a": 2, "b": 3})
        doubled = await queue.put("double", {"n": 21})
        assert await client.result(summed, timeout=10) == {"sum": 5}
        job = await client.jobs.get(doubled)
        assert isinstance(job, Job)
        assert await job.result(timeout=10) == [21, 42]
    stored = await client.jobs.stored_result(summed)
    assert stored is not None
    assert (stored.state, stored.text, stored.value) == ("complete", '{"sum":5}', {"sum": 5})
    assert stored.dropped is None
    assert stored.failure is None


async def test_a_handler_returning_none_has_a_none_result(client: aqless.Client) -> None:
    async with running(make_worker(client, handlers=handlers())):
        jid = await client.queues["q"].put("nothing", {})
        assert await client.result(jid, timeout=10) is None
    assert not await client.redis.hexists(f"{client.prefix}j:{jid}", "result")


async def test_a_result_json_cannot_encode_is_dropped_and_the_job_completes(
    client: aqless.Client, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, "aqless.results"):
        async with running(make_worker(client, handlers=handlers())):
            jid = await client.queues["q"].put("unencodable", {})
            with pytest.raises(ResultDroppedError) as info:
                await client.result(jid, timeout=10)
    assert info.value.jid == jid
    assert "not JSON-serializable" in info.value.reason
    assert await client.wait(jid, timeout=1) is JobState.COMPLETE
    assert f"job {jid} completes without its result" in caplog.text


async def test_a_result_over_the_limit_is_dropped_and_the_job_completes(
    client: aqless.Client,
) -> None:
    await client.config.set("result-max-bytes", 100)
    async with running(make_worker(client, handlers=handlers())):
        small = await client.queues["q"].put("double", {"n": 1})
        large = await client.queues["q"].put("double", {"n": "x" * 100})
        assert await client.result(small, timeout=10) == [1, 2]
        with pytest.raises(ResultDroppedError, match="over result-max-bytes \\(100\\)"):
            await client.result(large, timeout=10)
    assert await client.wait(large, timeout=1) is JobState.COMPLETE


async def test_a_failed_job_raises_its_failure(client: aqless.Client) -> None:
    async with running(make_worker(client, handlers=handlers())):
        jid = await client.queues["q"].put("breaks", {}, retries=0)
        with pytest.raises(JobFailedError) as info:
            await client.result(jid, timeout=10)
    assert info.value.group == "q-ValueError"
    assert "ValueError: no answer today" in info.value.message
    assert "no answer today" in str(info.value)


async def test_a_cancelled_or_unknown_job_is_gone(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("add", {"a": 1, "b": 1})

    async def cancel_soon() -> None:
        await client.jobs.cancel(jid)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(cancel_soon)
        with pytest.raises(JobGoneError):
            await client.result(jid, timeout=10)
    with pytest.raises(JobGoneError, match="never-put"):
        await client.result("never-put", timeout=1)


async def test_an_unfinished_job_times_out(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("add", {"a": 1, "b": 1})
    with pytest.raises(ResultTimeoutError) as info:
        await client.result(jid, timeout=0.2)
    assert isinstance(info.value, TimeoutError)
    assert info.value.jid == jid


async def test_a_job_completed_by_hand_keeps_the_result_given(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("add", {"a": 1, "b": 1})
    job = await pop_one(client.queues["q"])
    with pytest.raises(aqless.InvalidArgumentError, match="a result needs the job to finish"):
        await job.complete("other", result=1)
    await job.complete(result={"by": "hand"})
    assert await client.result(jid, timeout=1) == {"by": "hand"}
    assert (await client.jobs.stored_result("missing")) is None


async def test_a_put_of_the_same_jid_forgets_the_old_result(client: aqless.Client) -> None:
    queue = client.queues["q"]
    jid = await queue.put("add", {"a": 1, "b": 1})
    await (await pop_one(queue)).complete(result="first")
    await queue.put("add", {"a": 1, "b": 1}, jid=jid)
    with pytest.raises(ResultTimeoutError):  # waiting again, not the old answer
        await client.result(jid, timeout=0.2)
    await (await pop_one(queue)).complete(result="second")
    assert await client.result(jid, timeout=1) == "second"


def test_the_sync_client_waits_for_results(server_url: str) -> None:
    async def finish(client: aqless.Client) -> None:
        await (await pop_one(client.queues["q"], worker=WORKER)).complete(result=[1, 2, 3])

    with aqless.sync.Client(server_url) as sync_client:
        sync_client.call(lambda client: client.redis.flushall())
        jid = sync_client.queues["q"].put("add", {"a": 1, "b": 1})
        with pytest.raises(ResultTimeoutError):
            sync_client.result(jid, timeout=0.1)
        sync_client.call(finish)
        assert sync_client.result(jid, timeout=5) == [1, 2, 3]
        job = sync_client.jobs.get(jid)
        assert isinstance(job, aqless.sync.SyncJob)
        assert job.result(timeout=5) == [1, 2, 3]
        stored = sync_client.jobs.stored_result(jid)
        assert stored is not None
        assert stored.value == [1, 2, 3]


async def test_an_isolated_handler_s_return_value_is_kept(
    client: aqless.Client, tmp_path: Path
) -> None:
    registry = Handlers()
    registry.register("app.records", isolate=True)(isolated_jobs.records)
    async with running(make_worker(client, handlers=registry)):
        jid = await client.queues["q"].put("app.records", {"dir": str(tmp_path)})
        assert await client.result(jid, timeout=20) == jid  # `records` returns the jid
