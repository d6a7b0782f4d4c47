"""The codec chain's encoding, fast paths against the plain ones: the envelope joined as
bytes is the JSON the stdlib encoder writes of it, and put_many's encoding on two threads
stores what one thread would, raises what one thread would, before anything is sent."""

from __future__ import annotations

import base64
import binascii
import contextvars
import datetime
import importlib
import json
import os
import random
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import aqless
from aqless.codecs import DirectoryStore, KeyRing, PayloadCodec, Zstd, envelope, threads
from aqless.errors import ConfigurationError, PayloadError

TEXT = json.dumps({"rows": [{"id": n, "email": f"user{n}@example.com"} for n in range(300)]})


def as_bytes(encoded: str | bytes) -> bytes:
    return encoded.encode() if isinstance(encoded, str) else encoded


def chains(tmp_path: Path) -> dict[str, PayloadCodec]:
    ring = KeyRing({"k-2": KeyRing.new_key()})
    return {
        "zstd": PayloadCodec(compression=Zstd()),
        "keys": PayloadCodec(keys=ring),
        "zstd+keys": PayloadCodec(compression=Zstd(), keys=ring),
        "store": PayloadCodec(
            compression=Zstd(), store=DirectoryStore(tmp_path), store_threshold=0
        ),
    }


@pytest.mark.parametrize("name", ["zstd", "keys", "zstd+keys", "store"])
def test_the_joined_envelope_is_the_json_the_stdlib_writes_of_it(tmp_path: Path, name: str) -> None:
    codec = chains(tmp_path)[name]
    written = codec.encode_text(TEXT, "jid-1")
    assert isinstance(written, str)  # an envelope is text, as it always was
    encoded = written.encode()
    envelope = json.loads(encoded)
    assert encoded == json.dumps(envelope, separators=(",", ":")).encode()
    assert list(envelope)[:3] == ["aqless:codec", "codecs", "key"]
    if name == "store":
        assert list(envelope)[3:] == ["blob", "size"]
    else:
        assert list(envelope)[3:] == ["data"]
        base64.b64decode(envelope["data"], validate=True)  # base64, no newline
    assert codec.decode(encoded.decode()) == json.loads(TEXT)


def rows(seed: int, count: int = 200) -> dict[str, object]:
    """About 12 KB of JSON that compresses as an application's would (not to nothing)."""
    rng = random.Random(seed)  # noqa: S311 - made-up data
    return {"rows": [{"id": rng.getrandbits(64), "n": rng.random()} for _ in range(count)]}


#: rows whose envelope (~49 KB) is a group of its own: put_many's threads take one a time
BIG = 2000


def unencodable(n: int) -> object:
    """A value JSON refuses, its type named by `n` (what PayloadError's text says)."""
    return type(f"Bad{n}", (), {})()


class Watched(Zstd):
    """Zstd that notes the thread of each compression; with `wait_from`, the caller's
    thread waits (5 s at most), from its compression of that number on, for the helper to
    take one (the helper could otherwise wake only once the caller had taken them all)."""

    def __init__(self, *, wait_from: int | None = None) -> None:
        super().__init__()
        self.threads: list[str] = []
        self.caller = threading.current_thread().name
        self.helping = threading.Event()
        self.wait_from = wait_from

    def compress(self, plain: bytes) -> bytes:
        name = threading.current_thread().name
        self.threads.append(name)
        if name != self.caller:
            self.helping.set()
        elif self.wait_from is not None and self.threads.count(name) >= self.wait_from:
            self.helping.wait(5)
        return super().compress(plain)


#: the caller's compressions before put_many's helper starts when the data is encoded at
#: once: the first two requests', and the first of the rest
HELPED_FROM = 4


async def stored_as_one_thread_would(raw: aqless.Client, jids: list[str], count: int) -> None:
    """Job `jids[n]` holds what one thread encodes of `rows(n, count)`."""
    serial = PayloadCodec(compression=Zstd())
    for n, jid in enumerate(jids):
        stored = await raw.redis.hget(f"ql:j:{jid}", "data")
        assert stored == as_bytes(serial.encode(rows(n, count), "job data", jid)).decode()


@pytest.fixture
async def raw(server_url: str) -> AsyncIterator[aqless.Client]:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
        yield client


async def test_put_many_on_two_threads_stores_what_one_thread_would(
    server_url: str, raw: aqless.Client
) -> None:
    zstd = Watched(wait_from=HELPED_FROM)
    codec = PayloadCodec(compression=zstd)
    requests = [aqless.PutRequest("app.Job", rows(n, BIG), jid=f"two-{n}") for n in range(9)]
    async with aqless.Client(server_url, codec=codec) as client:
        jids = await client.queues["q"].put_many(requests)
    assert jids == [f"two-{n}" for n in range(9)]
    assert any(name.startswith("aqless-encode") for name in zstd.threads)  # split
    await stored_as_one_thread_would(raw, jids, BIG)


async def test_a_slow_helper_leaves_the_requests_to_this_thread(
    server_url: str, raw: aqless.Client
) -> None:
    """Each thread takes the next request not taken: while the helper is held up on its
    first, this thread encodes the others (a half each gave it five)."""

    class Slow(Watched):
        def compress(self, plain: bytes) -> bytes:
            packed = super().compress(plain)
            if threading.current_thread().name != self.caller:
                time.sleep(0.3)  # the helper: held up on its first
            return packed

    zstd = Slow(wait_from=HELPED_FROM)
    requests = [aqless.PutRequest("app.Job", rows(n, BIG), jid=f"slow-{n}") for n in range(9)]
    async with aqless.Client(server_url, codec=PayloadCodec(compression=zstd)) as client:
        jids = await client.queues["q"].put_many(requests)
    assert jids == [f"slow-{n}" for n in range(9)]
    assert zstd.threads.count(zstd.caller) == 8  # the helper's one took it all the while
    await stored_as_one_thread_would(raw, jids, BIG)


async def test_small_payloads_stay_on_one_thread(server_url: str) -> None:
    zstd = Watched()
    small = {"rows": list(range(400))}  # 1.6 KB of JSON, compressed to less than 4 KB
    async with aqless.Client(server_url, codec=PayloadCodec(compression=zstd)) as client:
        await client.queues["q"].put_many([aqless.PutRequest("app.Job", small)] * 9)
    assert set(zstd.threads) == {threading.current_thread().name}


@pytest.mark.parametrize(
    ("bad", "first"),
    [((7,), 7), ((2,), 2), ((6, 3), 3)],
    ids=["helper's half", "this thread's half", "both: the first in order"],
)
async def test_a_payload_that_fails_on_either_thread_raises_before_anything_is_sent(
    server_url: str, raw: aqless.Client, bad: tuple[int, ...], first: int
) -> None:
    codec = PayloadCodec(compression=Zstd())
    requests = [
        aqless.PutRequest(
            "app.Job", {**rows(n), "bad": type(f"Bad{n}", (), {})()} if n in bad else rows(n)
        )
        for n in range(9)
    ]
    async with aqless.Client(server_url, codec=codec) as client:
        with pytest.raises(PayloadError) as raised:
            await client.queues["q"].put_many(requests)
    assert f"type Bad{first} " in str(raised.value)
    assert await raw.redis.keys("*") == []


def test_a_forked_child_gets_a_helper_thread_of_its_own() -> None:
    assert threads._pool().submit(lambda: 7).result(timeout=5) == 7  # the parent's thread
    child = os.fork()
    if child == 0:  # the child: its copy of the executor has no thread to run anything
        ran = False
        try:
            ran = threads._pool().submit(lambda: 7).result(timeout=5) == 7
        finally:
            os._exit(0 if ran else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("level", [3, 1, -1, -5])
def test_each_level_writes_what_a_reader_of_any_level_opens(level: int) -> None:
    written = PayloadCodec(compression=Zstd(level=level)).encode(rows(1), "job data", "jid")
    envelope = json.loads(written)
    assert envelope["codecs"] == ["zstd"]
    assert PayloadCodec().decode(as_bytes(written).decode()) == rows(1)  # no Zstd given


@pytest.mark.parametrize("level", [0, 23, -131073])
def test_a_level_zstd_has_not_is_refused(level: int) -> None:
    with pytest.raises(ConfigurationError, match="level from 1 to 22"):
        Zstd(level=level)


def test_pybase64_writes_and_reads_what_the_standard_library_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("pybase64")
    fast_encode, fast_decode = envelope._base64()

    def no_pybase64(name: str) -> object:
        raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", no_pybase64)
    encode, decode = envelope._base64()
    assert encode is not fast_encode
    data = os.urandom(30_001)
    assert fast_encode(data) == encode(data)
    assert fast_decode(encode(data).decode()) == decode(encode(data).decode()) == data
    for bad in ("YWJj\n", "ab$=", "abc"):  # a newline, a letter not of base64, no padding
        for read in (fast_decode, decode):
            with pytest.raises(binascii.Error):
                read(bad)


async def test_the_helper_thread_encodes_in_the_callers_context(server_url: str) -> None:
    seen: set[object] = set()
    marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="none")

    class Noting(Zstd):
        def compress(self, plain: bytes) -> bytes:
            seen.add(marker.get())
            return super().compress(plain)

    marker.set("the caller's")
    codec = PayloadCodec(compression=Noting())
    async with aqless.Client(server_url, codec=codec) as client:
        await client.queues["q"].put_many([aqless.PutRequest("app.Job", rows(n)) for n in range(8)])
    assert seen == {"the caller's"}


def padded(n: int) -> dict[str, object]:
    """~60 KB of data msgspec writes as the stdlib does (so put_many may encode it later):
    random words, compressing about 2x."""
    rng = random.Random(n)  # noqa: S311 - made-up data
    words = (
        "".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(9000)
    )
    return {"n": n, "pad": " ".join(words)}


async def test_put_many_encodes_groups_beside_the_sending(
    server_url: str, raw: aqless.Client
) -> None:
    """Data that cannot fail to encode goes through the chain in groups, on the caller's
    thread and the helper's, while the groups done are sent: every job holds what one
    thread would have stored, in the order of the requests."""
    zstd = Watched(wait_from=2)  # the first request's, then the groups
    requests = [aqless.PutRequest("app.Job", padded(n), jid=f"g-{n}") for n in range(12)]
    async with aqless.Client(server_url, codec=PayloadCodec(compression=zstd)) as client:
        jids = await client.queues["q"].put_many(requests, batch=3)
    assert jids == [f"g-{n}" for n in range(12)]
    assert any(name.startswith("aqless-encode") for name in zstd.threads)
    serial = PayloadCodec(compression=Zstd())
    for n, jid in enumerate(jids):
        stored = await raw.redis.hget(f"ql:j:{jid}", "data")
        assert stored == as_bytes(serial.encode(padded(n), "job data", jid)).decode()
    assert [job.jid for job in await raw.queues["q"].peek(12)] == jids


async def test_data_that_could_fail_is_checked_before_anything_is_sent(
    server_url: str, raw: aqless.Client
) -> None:
    requests = [aqless.PutRequest("app.Job", padded(n)) for n in range(8)]
    requests[6] = aqless.PutRequest("app.Job", {"when": datetime.date(2024, 1, 1)})
    codec = PayloadCodec(compression=Zstd())
    async with aqless.Client(server_url, codec=codec) as client:
        with pytest.raises(PayloadError, match="not JSON-serializable"):
            await client.queues["q"].put_many(requests)
    assert await raw.redis.keys("*") == []


async def test_a_compression_that_fails_stops_the_put_many_there(
    server_url: str, raw: aqless.Client
) -> None:
    """A compression failing (out of memory, say) fails the put_many when its group's turn
    comes: the round trips before it were put, nothing after it is."""

    class Failing(Zstd):
        def compress(self, plain: bytes) -> bytes:
            if b'"n":9,' in plain[:16]:
                raise MemoryError("no room")
            return super().compress(plain)

    requests = [aqless.PutRequest("app.Job", padded(n), jid=f"f-{n}") for n in range(12)]
    async with aqless.Client(server_url, codec=PayloadCodec(compression=Failing())) as client:
        with pytest.raises(MemoryError, match="no room"):
            await client.queues["q"].put_many(requests, batch=2)
    jobs = await raw.jobs.get_many([f"f-{n}" for n in range(12)])
    put = sorted(int(job.jid.split("-")[1]) for job in jobs)
    assert put == list(range(len(put)))  # a prefix, in order
    assert len(put) < 9


async def test_the_first_round_trips_go_before_the_last_payloads_are_compressed(
    server_url: str,
) -> None:
    events: list[str] = []

    class Noting(Zstd):
        def compress(self, plain: bytes) -> bytes:
            events.append("compressed")
            time.sleep(0.001)  # each a millisecond, on either thread: groups done in turn
            return super().compress(plain)

    requests = [aqless.PutRequest("app.Job", padded(n % 4)) for n in range(60)]
    async with aqless.Client(server_url, codec=PayloadCodec(compression=Noting())) as client:
        await client.queues["q"].length()  # connected
        wire = client.protocol.wire
        send = wire._send

        async def noting(packed: list[bytes], expected: int, blocks: float = 0.0) -> Any:
            events.append("sent")
            return await send(packed, expected, blocks)

        wire._send = noting  # type: ignore[method-assign]
        assert len(await client.queues["q"].put_many(requests, batch=2)) == 60
    last = len(events) - 1 - events[::-1].index("compressed")
    assert events.index("sent") < last  # before: every compression, then every send
    assert events.count("compressed") == 60
