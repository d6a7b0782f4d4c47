"""A worker's payloads: its pops take each job's data apart from the reply (the
``data_apart`` option), and its completes keep the stored data when the job's code left
``job.data`` as it was, and save it when the code changed it, in place or not."""

from __future__ import annotations

import json
from typing import Any

import pytest

import aqless
from aqless import Job
from aqless._connection.protocol import DATA_APART_NO_HISTORY, DATA_BESIDE
from aqless._worker.beside import BesideData
from tests.support.worker import all_complete, make_worker, one, running, until

DATA: list[Any] = [
    {"quote": 'a"b', "line": "a\nb", "accent": "\u00e9", "slash": "a/b", "nested": [1, 2.5]},
    "a string",
    42,
    [],
    {"pad": "x" * 100_000},
]


async def stored_data(client: aqless.Client, jid: str) -> str:
    data = await client.redis.hget(f"{client.protocol.prefix}j:{jid}", "data")
    assert isinstance(data, str)
    return data


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_jobs_get_their_data_as_it_was_put(client: aqless.Client, concurrency: int) -> None:
    seen: dict[str, Any] = {}

    async def code(job: Job) -> None:
        seen[job.jid] = job.data

    queue = client.queues["q"]
    jids = [await queue.put("app.job", data) for data in DATA]
    worker = make_worker(client, handlers=one(code), concurrency=concurrency)
    async with running(worker):
        await all_complete(client, jids)
    assert [seen[jid] for jid in jids] == DATA


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_data_the_code_changes_in_place_is_saved(
    client: aqless.Client, concurrency: int
) -> None:
    async def code(job: Job) -> None:
        job.data["steps"].append("done")  # the popped object itself, changed

    queue = client.queues["q"]
    jids = [await queue.put("app.job", {"n": n, "steps": []}) for n in range(3)]
    worker = make_worker(client, handlers=one(code), concurrency=concurrency)
    async with running(worker):
        await all_complete(client, jids)
    for n, jid in enumerate(jids):
        assert await stored_data(client, jid) == f'{{"n":{n},"steps":["done"]}}'


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_data_the_code_leaves_alone_is_not_sent_back(
    client: aqless.Client, concurrency: int
) -> None:
    """The code writes the stored data behind the job's back: a complete that sent the
    popped data back would overwrite it, one that keeps the stored data leaves it."""

    async def code(job: Job) -> None:
        assert job.data == {"n": 1}
        await job.client.redis.hset(f"{job.client.protocol.prefix}j:{job.jid}", "data", "[9]")

    jid = await client.queues["q"].put("app.job", {"n": 1})
    worker = make_worker(client, handlers=one(code), concurrency=concurrency)
    async with running(worker):
        await all_complete(client, [jid])
    assert await stored_data(client, jid) == "[9]"


@pytest.mark.parametrize("concurrency", [1, 4])
async def test_a_job_whose_stored_data_is_not_json_fails_and_the_others_run(
    client: aqless.Client, concurrency: int
) -> None:
    """Data another writer stored past put's check: the job cannot run; it fails into
    ``<queue>-PayloadError`` and the worker goes on with the jobs popped with it."""
    queue = client.queues["q"]
    bad = await queue.put("app.job", {"n": 0})
    await client.redis.hset(f"{client.protocol.prefix}j:{bad}", "data", "{not json")
    jids = [await queue.put("app.job", {"n": n}) for n in range(1, 4)]
    seen: list[str] = []

    async def code(job: Job) -> None:
        seen.append(job.jid)

    key = f"{client.protocol.prefix}j:{bad}"  # (a Job cannot be made of it: read the hash)

    async def failed() -> bool:
        return await client.redis.hget(key, "state") == "failed"

    worker = make_worker(client, handlers=one(code), concurrency=concurrency)
    async with running(worker):
        await all_complete(client, jids)
        await until(failed)
    assert seen == jids
    failure = json.loads(str(await client.redis.hget(key, "failure")))
    assert failure["group"] == "q-PayloadError"
    assert "not JSON" in failure["message"]


async def test_a_pushed_job_whose_data_python_cannot_read_fails_at_once(
    client: aqless.Client,
) -> None:
    """The script's JSON decoder takes hex numbers, which Python's does not: another
    client's put of such data passes put's check and is pushed to an idle worker. The job
    cannot run; it fails into ``<queue>-PayloadError`` at once (not after its lock
    lapses), and the worker goes on being pushed jobs."""
    seen: list[str] = []
    worker = make_worker(client, handlers=one(lambda job: seen.append(job.jid)), interval=30)
    offers = f"{client.protocol.prefix}offers:q"

    async def offering() -> bool:
        return bool(await client.redis.hlen(offers))

    async with running(worker):
        await until(offering)
        bad = "hex-data"
        await client.protocol.call(
            "queue.put", client.worker_name, "q", bad, "app.job", '{"n":0x10}', 0
        )
        key = f"{client.protocol.prefix}j:{bad}"

        async def failed() -> bool:
            return await client.redis.hget(key, "state") == "failed"

        await until(failed, timeout=5)  # the lock lasts 60 s: a lapse would not fail it
        await until(offering)
        good = await client.queues["q"].put("app.job", {"n": 1})
        await all_complete(client, [good])
    assert seen == [good]
    failure = json.loads(str(await client.redis.hget(key, "failure")))
    assert failure["group"] == "q-PayloadError"
    assert "not JSON" in failure["message"]


# -- big data, read beside the pop (aqless._worker.beside) ----------------------------------


def read_beside(client: aqless.Client) -> list[str]:
    """The jids whose data the worker reads beside its pops, as it reads them (the
    protocol's plain calls, recorded on their way)."""
    read: list[str] = []
    protocol = client.protocol
    plain_many = protocol.plain_many

    async def recording(what: str, calls: Any) -> list[Any]:
        if what == "HMGET":
            read.extend(str(call[1]).rsplit("j:", 1)[1] for call in calls)
        return await plain_many(what, calls)

    protocol.plain_many = recording  # type: ignore[method-assign,assignment]
    return read


async def test_big_data_is_read_beside_the_pop_and_small_data_pays_nothing(
    client: aqless.Client,
) -> None:
    """Once a queue's jobs had big data, the worker's pops leave the data out of their
    replies and the worker reads it (HMGET); the jobs get their data as it was put all the
    same. A queue whose jobs have small data only is popped as before."""
    seen: dict[str, Any] = {}

    async def code(job: Job) -> None:
        seen[job.jid] = job.data

    read = read_beside(client)
    small = [await client.queues["small"].put("app.job", {"n": n}) for n in range(6)]
    worker = make_worker(client, handlers=one(code), concurrency=4, queues=["small"])
    async with running(worker):
        await all_complete(client, small)
    assert read == []  # small data: popped as before

    data = [{"n": n, "pad": "x" * 20_000} for n in range(12)]
    big = [await client.queues["big"].put("app.job", value) for value in data]
    worker = make_worker(client, handlers=one(code), concurrency=4, queues=["big"])
    async with running(worker):
        await all_complete(client, big)
    assert set(read) <= set(big[1:])  # the pops after the first big data (one job each)
    assert len(read) >= 6  # (a few may have been sent before the first came back)
    assert [seen[jid] for jid in big] == data
    assert [seen[jid] for jid in small] == [{"n": n} for n in range(6)]


async def test_a_job_gone_before_its_data_is_read_is_not_run(client: aqless.Client) -> None:
    """The data a pop left out is read after it: a job cancelled (its hash deleted) in
    between is left out of the jobs to run; the others get their data (a hash without
    data, as another writer may leave one, reads as the pop would: {})."""
    prefix = client.protocol.prefix
    await client.redis.hset(f"{prefix}j:big", mapping={"jid": "big", "data": "x" * 20_000})
    await client.redis.hset(f"{prefix}j:bare", "jid", "bare")
    beside = BesideData(client)
    popped: list[dict[str, Any]] = [
        {"jid": "big", "data": None},
        {"jid": "gone", "data": None},
        {"jid": "bare", "data": None},
        {"jid": "inline", "data": "[1]"},
    ]
    read = await beside.read("q", popped)
    assert read == [
        {"jid": "big", "data": "x" * 20_000},
        {"jid": "bare", "data": "{}"},
        {"jid": "inline", "data": "[1]"},
    ]
    assert beside.option("q") == DATA_BESIDE  # big data came: the next pops leave it out
    await beside.read("q", [{"jid": "inline", "data": "[1]"}])
    assert beside.option("q") == DATA_APART_NO_HISTORY  # none big any more
