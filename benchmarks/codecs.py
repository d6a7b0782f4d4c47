"""Payload codecs: what compression and encryption cost and spare, on a realistic payload.

The payload is ~100 KB of JSON made to look like an application's: orders with ids (random
UUIDs), names, e-mail addresses, dates, prices and short free-text notes, from the seeded
generator in ``benchmarks/realistic.py`` (so every run measures the same bytes; compare.py's
``--payload-text realistic`` uses it too). Prints:

1. Zstandard's levels (3, 1 and the fast -1, -3, -5) against LZ4's block format (when the
   ``lz4`` package is installed) on 1, 10 and 100 KB of it: ratio, compress and decompress
   time (the least of fifteen runs), and the bytes an envelope stores (base64);
2. ``put_many`` of `--jobs` such payloads, `--batch` a call, plain, with Zstandard at each
   level, and with Zstandard and AES-GCM: jobs/s (the best of three rounds), bytes stored
   per job, and the client's and the server's CPU per job (the least of three);
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


#: the Zstandard levels measured (negative: its fast levels)
LEVELS = (3, 1, -1, -3, -5)


def best_micros(action: Callable[[], object], times: int) -> float:
    """The least of fifteen short `micros` runs: the machine is shared."""
    return min(micros(action, max(1, times // 3)) for _ in range(15))


def compare_compression(raw: bytes) -> None:
    say(f"payload: {len(raw)} bytes of JSON")
    say("| size | codec | ratio | compress µs | decompress µs | stored B (base64) |")
    say("|---|---|---|---|---|---|")
    try:
        import lz4.block as lz4  # type: ignore[import-untyped]
    except ImportError:
        lz4 = None
    for size in (1_000, 10_000, 100_000):
        part = json.dumps(payload(size), separators=(",", ":")).encode()
        times = 100_000 // size * 20
        rows: list[tuple[str, Callable[[bytes], bytes], Callable[[bytes], bytes]]] = []
        for level in LEVELS:
            zstd = Zstd(threshold=0, level=level)
            rows.append((f"zstd {level}", zstd.compress, zstd.decompress))
        if lz4 is not None:
            rows.append(("lz4 block", lz4.compress, lz4.decompress))
        for name, compress, decompress in rows:
            packed = compress(part)
            say(
                f"| {size // 1000} KB | {name} | {len(part) / len(packed):.2f} | "
                f"{best_micros(partial(compress, part), times):.0f} | "
                f"{best_micros(partial(decompress, packed), times):.0f} | "
                f"{(len(packed) + 2) // 3 * 4} |"
            )
    if lz4 is None:
        say("  lz4: not installed")


async def put_many(
    url: str | None, codec: PayloadCodec | None, data: Any, jobs: int, batch: int
) -> tuple[float, float, float, float]:
    """Jobs/s of `jobs` puts in put_many calls of `batch`, the stored bytes per job, and the
    client's and the server's CPU µs per job."""
    async with aqless.Client(url, codec=codec) as client:
        await client.redis.flushall()
        queue = client.queues["bench"]
        await queue.put("app.Job", {})  # connects and loads the script
        requests = [PutRequest("app.Job", data) for _ in range(batch)]
        server = await server_cpu(client)
        started, client_cpu = time.perf_counter(), time.process_time()
        jids: list[str] = []
        for _ in range(jobs // batch):
            jids = await queue.put_many(requests)
        seconds = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu
        server = await server_cpu(client) - server
        jid = jids[-1] if jids else ""
        stored = await client.redis.hstrlen(f"ql:j:{jid}", "data")
        await client.redis.flushall()
    return jobs / seconds, float(stored), client_cpu / jobs * 1e6, server / jobs * 1e6


async def server_cpu(client: aqless.Client) -> float:
    """The server's CPU seconds so far (user and system)."""
    info = await client.redis.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def encryption_cost(ring: KeyRing) -> None:
    for size in (1_000, 100_000):
        data = payload(size)
        plain = PayloadCodec()
        sealed = PayloadCodec(keys=ring)
        both = PayloadCodec(compression=Zstd(), keys=ring)
        for name, codec in (("plain JSON", plain), ("aes-gcm", sealed), ("zstd+aes-gcm", both)):
            written = codec.encode(data, "job data", "jid")
            text = written if isinstance(written, str) else written.decode()
            encode = best_micros(partial(codec.encode, data, "job data", "jid"), 200)
            decode = best_micros(partial(codec.decode, text), 200)
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
    chains: dict[str, PayloadCodec | None] = {"plain": None}
    for level in LEVELS:
        chains[f"zstd {level}"] = PayloadCodec(compression=Zstd(level=level))
    chains["zstd 1+aes-gcm"] = PayloadCodec(compression=Zstd(), keys=ring)
    best: dict[str, tuple[float, float, float, float]] = {}
    for _ in range(3):
        for name, codec in chains.items():
            rate, stored, client_us, server_us = await put_many(url, codec, data, jobs, batch)
            was = best.get(name, (0.0, 0.0, 1e9, 1e9))
            best[name] = (max(was[0], rate), stored, min(was[2], client_us), min(was[3], server_us))
    say("| chain | jobs/s | KB stored a job | client CPU µs/job | server CPU µs/job |")
    say("|---|---|---|---|---|")
    for name, (rate, stored, client_us, server_us) in best.items():
        say(f"| {name} | {rate:.0f} | {stored / 1000:.1f} | {client_us:.0f} | {server_us:.0f} |")
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
