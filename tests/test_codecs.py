"""Payload codecs (aqless.codecs) against a real server: each codec's round trip, keys that
rotate over a job's life, wrong and missing keys (typed errors, nothing written plain), a
worker running encrypted jobs, results and checkpoints through the chain, and the claim
check's store: round trip, a failing store refusing the put, blobs swept with their job."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import aqless
import aqless.sync
from aqless.codecs import (
    DirectoryStore,
    KeyRing,
    PayloadCodec,
    Sealed,
    Zstd,
    decoded_text,
    sweep_blobs,
)
from aqless.errors import (
    BlobStoreError,
    DecryptionError,
    InvalidValueError,
    KeyMissingError,
)

PERSONAL = {"name": "Ada Lovelace", "email": "ada@example.com", "card": "4111-1111"}
LARGE = {
    "rows": [{"id": n, "email": f"user{n}@example.com", "paid": n % 3 == 0} for n in range(400)]
}


def ring(*ids: str, keys: dict[str, bytes]) -> KeyRing:
    return KeyRing({key_id: keys[key_id] for key_id in ids})


@pytest.fixture
def keys() -> dict[str, bytes]:
    return {name: KeyRing.new_key() for name in ("k1", "k2", "k3")}


@pytest.fixture
async def raw(server_url: str) -> AsyncIterator[aqless.Client]:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
        yield client


async def pop(queue: aqless.Queue) -> aqless.Job:
    job = await queue.pop()
    assert job is not None
    return job


async def everything(raw: aqless.Client) -> str:
    """Every key of the server and its value, as one text."""
    redis = raw.redis
    read: dict[str, Callable[[str], Awaitable[Any]]] = {
        "string": redis.get,
        "hash": redis.hgetall,
        "list": lambda key: redis.lrange(key, 0, -1),
        "set": redis.smembers,
        "zset": lambda key: redis.zrange(key, 0, -1),
    }
    found: dict[str, str] = {}
    for key in map(str, await redis.keys("*")):
        kind = await redis.type(key)
        found[key] = repr(await read[kind](key)) if kind in read else str(kind)
    return json.dumps(found)


def opened(server_url: str, codec: PayloadCodec | None) -> aqless.Client:
    return aqless.Client(server_url, codec=codec)


async def stored_data(raw: aqless.Client, jid: str) -> str:
    text = await raw.redis.hget(f"ql:j:{jid}", "data")
    assert isinstance(text, str)
    return text


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda keys: PayloadCodec(compression=Zstd(threshold=0)), id="zstd"),
        pytest.param(lambda keys: PayloadCodec(keys=ring("k1", keys=keys)), id="aes-gcm"),
        pytest.param(
            lambda keys: PayloadCodec(compression=Zstd(threshold=0), keys=ring("k1", keys=keys)),
            id="zstd+aes-gcm",
        ),
    ],
)
async def test_each_codec_round_trips_data_and_writes_an_envelope(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes], make: Any
) -> None:
    codec: PayloadCodec = make(keys)
    expected = [
        name for name, part in (("zstd", codec.compression), ("aes-gcm", codec.keys)) if part
    ]
    async with opened(server_url, codec) as client:
        jid = await client.queues["q"].put("app.Job", LARGE)
        job = await client.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert job.data == LARGE
        popped = await pop(client.queues["q"])
        assert popped.data == LARGE
    envelope = json.loads(await stored_data(raw, jid))
    assert envelope["aqless:codec"] == 1
    assert "rows" not in envelope
    assert envelope["codecs"] == expected


async def test_small_data_under_the_threshold_stays_plain_json(
    server_url: str, raw: aqless.Client
) -> None:
    async with opened(server_url, PayloadCodec(compression=Zstd(threshold=1024))) as client:
        jid = await client.queues["q"].put("app.Job", {"small": 1})
    assert json.loads(await stored_data(raw, jid)) == {"small": 1}


async def test_nothing_plain_is_written_when_encrypting(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as client:
        queue = client.queues["q"]
        jid = await queue.put("app.Job", PERSONAL)
        job = await pop(queue)
        await job.checkpoint({"email": "ada@example.com"})
        job.data = {**PERSONAL, "step": 2}
        await job.complete(result={"sent_to": "ada@example.com"})
    text = await everything(raw)
    assert "ada@example.com" not in text
    assert "Lovelace" not in text
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as client:
        assert await client.result(jid, timeout=1) == {"sent_to": "ada@example.com"}
        fetched = await client.jobs.get(jid)
        assert isinstance(fetched, aqless.Job)
        assert fetched.data == {**PERSONAL, "step": 2}


async def test_keys_rotate_over_three_keys_in_one_jobs_life(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as first:
        jid = await first.queues["q"].put("app.Job", PERSONAL)
    # k2 writes now; k1 still opens what it sealed
    async with opened(server_url, PayloadCodec(keys=ring("k2", "k1", keys=keys))) as second:
        job = await pop(second.queues["q"])
        assert job.data == PERSONAL
        await job.checkpoint({"done": 10})
        job.data = {**PERSONAL, "seen": 1}
        await job.complete("next")
    assert json.loads(await stored_data(raw, jid))["key"] == "k2"
    # k3 writes; k1 is dropped, k2 kept
    async with opened(server_url, PayloadCodec(keys=ring("k3", "k2", keys=keys))) as third:
        job = await pop(third.queues["next"])
        assert job.data == {**PERSONAL, "seen": 1}
        job.data = {**PERSONAL, "seen": 2}
        await job.complete(result="ok")
        assert await third.result(jid, timeout=1) == "ok"
    assert json.loads(await stored_data(raw, jid))["key"] == "k3"
    async with opened(server_url, PayloadCodec(keys=ring("k3", keys=keys))) as last:
        fetched = await last.jobs.get(jid)
        assert isinstance(fetched, aqless.Job)
        assert fetched.data == {**PERSONAL, "seen": 2}


async def test_missing_and_wrong_keys_are_typed_errors_and_the_data_is_kept(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    async with opened(server_url, PayloadCodec(keys=ring("k2", keys=keys))) as writer:
        jid = await writer.queues["q"].put("app.Job", PERSONAL)
    stored = await stored_data(raw, jid)
    wrong = KeyRing({"k2": keys["k1"]})  # another key under the same id
    for codec, error in (
        (None, KeyMissingError),
        (PayloadCodec(keys=ring("k1", keys=keys)), KeyMissingError),
        (PayloadCodec(keys=wrong), DecryptionError),
    ):
        async with opened(server_url, codec) as reader:
            job = await pop(reader.queues["q"])
            assert isinstance(job.data, Sealed)
            assert job.data == "encrypted (key k2)"
            assert isinstance(job.data.error, error)
            assert job.data.error.key == "k2"
            await job.complete("q")  # moved on: the stored envelope left as it was
            assert await stored_data(raw, jid) == stored


async def test_a_changed_envelope_does_not_open(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    codec = PayloadCodec(keys=ring("k1", keys=keys))
    async with opened(server_url, codec) as client:
        jid = await client.queues["q"].put("app.Job", PERSONAL)
        envelope = json.loads(await stored_data(raw, jid))
        envelope["codecs"] = []  # claims to be plain: the seal covers the description
        with pytest.raises(DecryptionError):
            codec.open(
                {
                    **envelope,
                    "codecs": ["aes-gcm"],
                    "key": "k1",
                    "data": envelope["data"][:-4] + "AAAA",
                }
            )
        assert codec.open({**envelope, "codecs": ["aes-gcm"]}) == PERSONAL


async def test_a_worker_runs_encrypted_jobs_and_refuses_those_it_cannot_open(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    seen: list[Any] = []
    handlers = aqless.Handlers()

    @handlers.register("app.Send")
    async def send(job: aqless.Job) -> dict[str, str]:
        seen.append(job.data)
        return {"to": job.data["email"]}

    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as client:
        jids = [await client.queues["q"].put("app.Send", {**PERSONAL, "n": n}) for n in range(5)]
        worker = aqless.Worker(client, ["q"], handlers=handlers, burst=True, interval=0.05)
        await worker.run()
        assert sorted(item["n"] for item in seen) == list(range(5))
        assert [await client.result(jid, timeout=1) for jid in jids] == [
            {"to": "ada@example.com"}
        ] * 5
    stranger = await aqless.Client(
        server_url, codec=PayloadCodec(keys=ring("k3", keys=keys))
    ).open()
    async with stranger:
        jid = await stranger.queues["q"].put("app.Send", PERSONAL)
    seen.clear()
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as client:
        worker = aqless.Worker(client, ["q"], handlers=handlers, burst=True, interval=0.05)
        await worker.run()
        job = await client.jobs.get(jid)
        assert seen == []
        assert isinstance(job, aqless.Job)
        assert job.state == aqless.JobState.FAILED
        assert job.failure is not None
        assert job.failure.group == "q-KeyMissingError"


async def test_a_checkpoint_is_sealed_and_read_back(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    codec = PayloadCodec(keys=ring("k1", keys=keys))
    async with opened(server_url, codec) as client:
        jid = await client.queues["q"].put("app.Job", {})
        job = await pop(client.queues["q"])
        await job.checkpoint({"offset": 7, "email": "ada@example.com"})
        text = await raw.redis.hget(f"ql:j:{jid}", "checkpoint")
        assert isinstance(text, str)
        assert "ada@" not in text
        assert await client.jobs.checkpoints(jid) == {
            jid: {"offset": 7, "email": "ada@example.com"}
        }
        await job.retry()
        again = await pop(client.queues["q"])
        assert again.checkpointed == {"offset": 7, "email": "ada@example.com"}


def test_the_key_ring_reads_aqless_keys_through_its_rule(keys: dict[str, bytes]) -> None:
    text = ",".join(f"{name}:{KeyRing.encoded(key)}" for name, key in keys.items())
    parsed = KeyRing.parse(text)
    assert (parsed.writing, parsed.ids) == ("k1", ("k1", "k2", "k3"))
    with pytest.raises(InvalidValueError, match="keys"):
        KeyRing.parse("k1:not base64!")
    with pytest.raises(aqless.ConfigurationError, match="32 bytes"):
        KeyRing({"k1": b"short"})


async def test_a_client_reads_aqless_keys_as_the_cli_and_the_dashboard_do(
    server_url: str, keys: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with opened(server_url, PayloadCodec(keys=ring("k2", keys=keys))) as writer:
        jid = await writer.queues["q"].put("app.Job", PERSONAL)
    monkeypatch.setenv("AQLESS_KEYS", f"k2:{KeyRing.encoded(keys['k2'])}")
    async with aqless.Client(server_url) as reader:
        job = await reader.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        assert job.data == PERSONAL


# -- the claim check ------------------------------------------------------------------------


async def test_the_claim_check_keeps_large_payloads_apart_and_sweeps_them_with_the_job(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes], tmp_path: Path
) -> None:
    store = DirectoryStore(tmp_path / "blobs")
    codec = PayloadCodec(keys=ring("k1", keys=keys), store=store, store_threshold=4096)
    async with opened(server_url, codec) as client:
        queue = client.queues["q"]
        big = {"blob": os.urandom(8192).hex()}
        kept, gone = await queue.put("app.Job", big), await queue.put("app.Job", big)
        small = await queue.put("app.Job", {"small": True})
        for jid in (kept, gone):
            envelope = json.loads(await stored_data(raw, jid))
            assert envelope["blob"].startswith(f"{jid}.")
            assert "data" not in envelope
        assert json.loads(await stored_data(raw, small))["aqless:codec"] == 1
        assert len(list(store.directory.iterdir())) == 2
        job = await client.jobs.get(kept)
        assert isinstance(job, aqless.Job)
        assert job.data == big
        await client.jobs.cancel(gone)
        assert await sweep_blobs(client, grace=0) == 1
        assert [path.name for path in store.directory.iterdir()] == [
            json.loads(await stored_data(raw, kept))["blob"]
        ]
        job = await client.jobs.get(kept)
        assert isinstance(job, aqless.Job)
        assert job.data == big
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as storeless:
        job = await storeless.jobs.get(kept)
        assert isinstance(job, aqless.Job)
        assert isinstance(job.data, Sealed)


async def test_a_store_that_fails_refuses_the_put_before_anything_is_queued(
    server_url: str, raw: aqless.Client, tmp_path: Path
) -> None:
    class Failing(DirectoryStore):
        def put(self, name: str, blob: bytes) -> None:
            raise OSError("disk full")

    codec = PayloadCodec(store=Failing(tmp_path), store_threshold=10)
    async with opened(server_url, codec) as client:
        with pytest.raises(BlobStoreError, match="disk full"):
            await client.queues["q"].put("app.Job", {"x": "y" * 100})
        assert await client.queues["q"].length() == 0
    assert await raw.redis.keys("ql:j:*") == []


async def test_completed_jobs_purged_by_retention_lose_their_blobs_at_the_sweep(
    server_url: str, tmp_path: Path
) -> None:
    store = DirectoryStore(tmp_path)
    codec = PayloadCodec(store=store, store_threshold=1000)
    files = tmp_path.iterdir
    async with opened(server_url, codec) as client:
        await client.redis.flushall()
        await client.config.set("jobs-history-count", 0)
        queue = client.queues["q"]
        for _ in range(20):
            await queue.put("app.Job", {"payload": "x" * 2000})
        for job in await queue.pop_many(20):
            assert job.data == {"payload": "x" * 2000}
            await job.complete()
        assert len(list(files())) == 20
        assert await sweep_blobs(client, grace=0) == 20
        assert list(files()) == []


@pytest.mark.timeout(60)
async def test_an_isolated_job_gets_its_data_decrypted_in_the_child(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes], tmp_path: Path
) -> None:
    from tests.support.worker import make_worker, running, until_state
    from tests.worker import isolated_jobs

    handlers = aqless.Handlers()
    handlers.register("app.job", isolate=True)(isolated_jobs.records)
    async with opened(server_url, PayloadCodec(keys=ring("k1", keys=keys))) as client:
        jid = await client.queues["q"].put("app.job", {"dir": str(tmp_path), **PERSONAL})
        async with running(make_worker(client, ["q"], handlers)):
            await until_state(client, jid, aqless.JobState.COMPLETE, timeout=20)
    seen = json.loads((tmp_path / f"{jid}.json").read_text())
    assert seen["data"] == {"dir": str(tmp_path), **PERSONAL}
    assert "ada@example.com" not in await everything(raw)


async def test_a_queue_has_a_chain_of_its_own(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    payments = PayloadCodec(keys=ring("k3", keys=keys))
    codec = PayloadCodec(compression=Zstd(threshold=0), queues={"payments": payments})
    async with opened(server_url, codec) as client:
        paid = await client.queues["payments"].put("app.Pay", PERSONAL)
        mailed = await client.queues["mail"].put("app.Mail", PERSONAL)
        assert json.loads(await stored_data(raw, paid))["codecs"] == ["aes-gcm"]
        assert json.loads(await stored_data(raw, mailed))["codecs"] == ["zstd"]
        job = await pop(client.queues["payments"])
        assert job.data == PERSONAL
        await job.checkpoint({"email": "ada@example.com"})
        await job.complete(result={"email": "ada@example.com"})
        assert await client.result(paid, timeout=1) == {"email": "ada@example.com"}
    result = await raw.redis.hget(f"ql:j:{paid}", "result")
    assert isinstance(result, str)
    assert json.loads(result)["key"] == "k3"


def test_the_blocking_client_takes_a_codec(server_url: str, keys: dict[str, bytes]) -> None:
    import redis

    codec = PayloadCodec(keys=ring("k1", keys=keys))
    with aqless.sync.Client(server_url, codec=codec) as client:
        jid = client.queues["sync-codecs"].put("app.Job", PERSONAL)
        with redis.Redis.from_url(server_url, decode_responses=True) as connection:
            stored = connection.hget(f"ql:j:{jid}", "data")
        assert isinstance(stored, str)
        assert "Lovelace" not in stored
        job = client.jobs.get(jid)
        assert job is not None
        assert job.data == PERSONAL


async def test_a_job_moved_by_a_client_without_the_key_keeps_its_sealed_data(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    async with opened(server_url, PayloadCodec(keys=ring("k2", keys=keys))) as writer:
        jid = await writer.queues["q"].put("app.Job", PERSONAL)
    stored = await stored_data(raw, jid)
    async with opened(server_url, None) as keyless:
        job = await keyless.jobs.get(jid)
        assert isinstance(job, aqless.Job)
        with pytest.raises(KeyMissingError):
            await job.move("elsewhere")
        with pytest.raises(KeyMissingError):
            await keyless.queues["copy"].put("app.Job", job.data)
    assert await stored_data(raw, jid) == stored
    assert await raw.queues["copy"].length() == 0


async def test_a_job_put_while_the_worker_waits_is_opened_as_it_arrives(
    server_url: str, raw: aqless.Client, keys: dict[str, bytes]
) -> None:
    from tests.support.worker import make_worker, running

    handlers = aqless.Handlers()

    @handlers.register("app.Echo")
    async def echo(job: aqless.Job) -> Any:
        return job.data

    codec = PayloadCodec(compression=Zstd(threshold=0), keys=ring("k1", keys=keys))
    client = opened(server_url, codec)
    async with client, running(make_worker(client, ["echo"], handlers)):
        await anyio.sleep(0.3)  # idle, waiting: the put is pushed or woken for
        jid = await client.queues["echo"].put("app.Echo", PERSONAL)
        assert await client.result(jid, timeout=10) == PERSONAL


def test_a_crafted_zstd_frame_is_refused_not_decompressed(monkeypatch: pytest.MonkeyPatch) -> None:
    import zstandard

    from aqless.codecs import compression

    monkeypatch.setattr(compression, "LARGEST", 1000)  # a frame that says more is refused
    codec = PayloadCodec(compression=Zstd(threshold=0))
    huge = zstandard.ZstdCompressor().compress(b"0" * 2000)
    small = codec.encode_text(json.dumps("x" * 990), "jid")  # 992 bytes: opens
    assert codec.decode(small if isinstance(small, str) else small.decode()) == "x" * 990
    envelope = {"aqless:codec": 1, "codecs": ["zstd"], "key": "", "data": ""}
    for data in (huge, b"not a frame"):
        text = json.dumps({**envelope, "data": base64.b64encode(data).decode()})
        opened_text = decoded_text(codec, text)
        assert isinstance(opened_text, Sealed)
        assert opened_text == "encoded (cannot open)"
