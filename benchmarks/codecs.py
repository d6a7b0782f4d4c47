"""Payload codecs: what compression and encryption cost and spare, on a realistic payload.

The payload is ~100 KB of JSON made to look like an application's: orders with ids (random
UUIDs), names, e-mail addresses, dates, prices and short free-text notes, from the seeded
generator in ``benchmarks/realistic.py`` (so every run measures the same bytes; compare.py's
``--payload-text realistic`` uses it too). Prints:

1. Zstandard (levels 1 and 3) against LZ4 (when the ``lz4`` package is installed) on that
   payload: ratio, compress and decompress time;
2. ``put_many`` of `--jobs` such payloads, `--batch` a call, plain, with Zstandard, and with
   Zstandard and AES-GCM: jobs/s and bytes stored per job;
3. encryption's cost per job: encode and decode of a 1 KB and of the 100 KB payload with
   AES-GCM (and with Zstandard before it), in µs;
4. with --claim-jobs N: N jobs of 1 MB (random bytes, hex) through a claim-check directory:
   put, popped and read back, completed and purged by retention (jobs-history-count 0),
   then swept; checks that every blob was read back and every one deleted. With
   --s3-endpoint URL the blobs go to a new bucket of that S3-compatible server instead
   (the ``s3`` extra; credentials from boto3's usual places).

    python benchmarks/codecs.py [--url redis://...] [--jobs 1000] [--batch 100]
        [--claim-jobs 1000] [--s3-endpoint http://127.0.0.1:9000]

Without --url it runs on the embedded Valkey (the ``embedded`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aqless  # noqa: E402
from aqless.codecs import (  # noqa: E402
    BlobStore,
    DirectoryStore,
    KeyRing,
    PayloadCodec,
    Zstd,
    sweep_blobs,
)
from aqless.puts import PutRequest  # noqa: E402
from benchmarks.realistic import payload  # noqa: E402


def micros(action: Callable[[], object], times: int = 200) -> float:
    started = time.perf_counter()
    for _ in range(times):
        action()
    return (time.perf_counter() - started) / times * 1e6


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def compare_compression(raw: bytes) -> None:
    say(f"payload: {len(raw)} bytes of JSON")
    for level in (1, 3):
        zstd = Zstd(threshold=0, level=level)
        packed = zstd.compress(raw)
        say(
            f"  zstd level {level}: {len(raw) / len(packed):.2f}x ({len(packed)} B), "
            f"compress {micros(partial(zstd.compress, raw)):.0f} µs, "
            f"decompress {micros(partial(zstd.decompress, packed)):.0f} µs"
        )
    try:
        import lz4.frame as lz4  # type: ignore[import-untyped]
    except ImportError:
        say("  lz4: not installed")
        return
    packed = lz4.compress(raw)
    say(
        f"  lz4 (frame, default): {len(raw) / len(packed):.2f}x ({len(packed)} B), "
        f"compress {micros(lambda: lz4.compress(raw)):.0f} µs, "
        f"decompress {micros(lambda: lz4.decompress(packed)):.0f} µs"
    )


async def put_many(
    url: str | None, codec: PayloadCodec | None, data: Any, jobs: int, batch: int
) -> tuple[float, float]:
    """Jobs/s of `jobs` puts in put_many calls of `batch`, and the stored bytes per job."""
    async with aqless.Client(url, codec=codec) as client:
        await client.redis.flushall()
        queue = client.queues["bench"]
        await queue.put("app.Job", {})  # connects and loads the script
        requests = [PutRequest("app.Job", data) for _ in range(batch)]
        started = time.perf_counter()
        jids: list[str] = []
        for _ in range(jobs // batch):
            jids = await queue.put_many(requests)
        seconds = time.perf_counter() - started
        jid = jids[-1] if jids else ""
        stored = await client.redis.hstrlen(f"ql:j:{jid}", "data")
        await client.redis.flushall()
    return jobs / seconds, float(stored)


def encryption_cost(ring: KeyRing) -> None:
    for size in (1_000, 100_000):
        data = payload(size)
        plain = PayloadCodec()
        sealed = PayloadCodec(keys=ring)
        both = PayloadCodec(compression=Zstd(), keys=ring)
        for name, codec in (("plain JSON", plain), ("aes-gcm", sealed), ("zstd+aes-gcm", both)):
            written = codec.encode(data, "job data", "jid")
            text = written if isinstance(written, str) else written.decode()
            encode = micros(partial(codec.encode, data, "job data", "jid"))
            decode = micros(partial(codec.decode, text))
            say(f"  {size // 1000} KB {name}: encode {encode:.0f} µs, decode {decode:.0f} µs")


def claim_store(folder: str, s3_endpoint: str | None) -> BlobStore:
    if s3_endpoint is None:
        return DirectoryStore(folder)
    from aqless.codecs.s3 import S3Store

    store = S3Store(f"aqless-bench-{uuid.uuid4().hex[:12]}", endpoint_url=s3_endpoint)
    store.client.create_bucket(Bucket=store.bucket)
    return store


async def claim_check(url: str | None, jobs: int, s3_endpoint: str | None) -> None:
    """--claim-jobs: `jobs` payloads of 1 MB through a store, read back, purged, swept."""
    with tempfile.TemporaryDirectory() as folder:
        store = claim_store(folder, s3_endpoint)
        codec = PayloadCodec(store=store, store_threshold=64 * 1024)
        async with aqless.Client(url, codec=codec) as client:
            await client.redis.flushall()
            await client.config.set("jobs-history-count", 0)
            queue = client.queues["claims"]
            started = time.perf_counter()
            for number in range(jobs):
                await queue.put("app.Job", {"n": number, "blob": os.urandom(500_000).hex()})
            put = time.perf_counter() - started
            read = 0
            while popped := await queue.pop_many(50):
                for job in popped:
                    read += len(job.data["blob"]) == 1_000_000
                    await job.complete()
            kept = len(list(store.names(0)))
            swept = await sweep_blobs(client, grace=0)
            left = len(list(store.names(0)))
            await client.config.unset("jobs-history-count")
        say(
            f"claim check ({store!r}): {jobs} jobs of 1 MB put in {put:.1f} s; "
            f"{read} read back whole; "
            f"{kept} blobs after their jobs were purged, {swept} swept, {left} left"
        )


async def main(
    url: str | None, jobs: int, batch: int, claim_jobs: int, s3_endpoint: str | None
) -> None:
    data = payload()
    compare_compression(json.dumps(data, separators=(",", ":")).encode())
    ring = KeyRing({"k1": KeyRing.new_key()})
    say(f"put_many: {jobs} jobs of ~100 KB, {batch} a call (the best of 3 rounds, interleaved)")
    chains = {
        "plain": None,
        "zstd": PayloadCodec(compression=Zstd()),
        "zstd+aes-gcm": PayloadCodec(compression=Zstd(), keys=ring),
    }
    best: dict[str, tuple[float, float]] = {}
    for _ in range(3):
        for name, codec in chains.items():
            rate, stored = await put_many(url, codec, data, jobs, batch)
            best[name] = max(best.get(name, (0.0, 0.0)), (rate, stored))
    for name, (rate, stored) in best.items():
        say(f"  {name}: {rate:.0f} jobs/s, {stored / 1000:.1f} KB stored a job")
    say("encryption's cost per job (client CPU):")
    encryption_cost(ring)
    if claim_jobs:
        await claim_check(url, claim_jobs, s3_endpoint)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--claim-jobs", type=int, default=0)
    parser.add_argument("--s3-endpoint", default=None)
    arguments = parser.parse_args()
    anyio.run(
        main,
        arguments.url,
        arguments.jobs,
        arguments.batch,
        arguments.claim_jobs,
        arguments.s3_endpoint,
    )
