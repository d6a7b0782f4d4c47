"""Where a pickup's time goes: one put -> the start of its job's code, step by step, with the
producer in a process of its own (issue 21: the two-process pickup).

This process runs an ``aqless.Worker`` (``--concurrency`` slots) and, once it listens, starts
a producer process (``--produce``) that puts one job at a time at ``--rate`` per second. Both
read the same wall clock (``time.time_ns()``); the stamps of each job:

- call: just before the producer's ``queue.put``; sent: the put's command written to the
  socket (``RespStream.send``); reply: when the put returned;
- read: the worker's subscriber read the push (``Subscriber.data_received`` entered);
- taken: the push was parsed and handed to the worker (``Worker._take_pushed``);
- start: the job's code started.

It prints the median and p99 of each step, and of call -> start, with the put script's own
time in the server (SLOWLOG, set to log every command while the producer runs: that adds a
little to each script's time); jobs that were popped rather than pushed are counted apart.
Stamps are taken by wrapping those methods here, so the library itself is measured
unchanged (plus a clock read per step).

    python -m benchmarks.pickup_timeline [--rate 200] [--seconds 10] [--concurrency 50]
        [--tcp] [--no-uvloop] [--no-freeze] [--url redis://...]

The worker's heap is frozen before it runs (``gc.freeze()``), as ``aqless-run`` does;
``--no-freeze`` leaves it to the cyclic collector's full passes.

By default the server is an embedded Valkey on a unix socket (``--tcp``: a fresh Valkey on
a loopback TCP port, as benchmarks/compare.py runs it).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import wraps
from pathlib import Path
from typing import Any

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.soak import own_server  # noqa: E402

QUEUE = "timeline"
KLASS = "timeline.Stamp"
NAMESPACE = "aqtimeline"
WARMUP = 1.0  # seconds for the idle worker to settle (subscribe, offer)
STEPS = (
    ("call", "sent", "put call -> command written"),
    ("sent", "read", "command written -> push read by the worker"),
    ("call", "reply", "put call -> script reply"),
    ("call", "read", "put call -> push read by the worker"),
    ("read", "taken", "push read -> handed to the worker"),
    ("taken", "start", "handed over -> job code starts"),
    ("call", "start", "put call -> job code starts (pickup)"),
)


class Stamps:
    """The worker's stamps per jid, and the time of the read being handled."""

    def __init__(self) -> None:
        self.by_jid: dict[str, dict[str, int]] = {}
        self.reading = 0

    def stamp(self, jid: str, step: str, at: int | None = None) -> None:
        self.by_jid.setdefault(jid, {})[step] = time.time_ns() if at is None else at


def instrument(stamps: Stamps) -> None:
    """Wrap the methods a pushed job passes through (the library is otherwise unchanged)."""
    from aqless._connection.subscriber import Subscriber
    from aqless.worker import Worker

    received: Callable[[Subscriber, bytes], None] = Subscriber.data_received
    taking: Callable[[Worker, Any, Any], None] = Worker._take_pushed

    @wraps(received)
    def data_received(self: Subscriber, data: bytes) -> None:
        stamps.reading = time.time_ns()
        received(self, data)

    @wraps(taking)
    def take_pushed(self: Worker, jobs: Any, unreadable: Any = ()) -> None:
        now = time.time_ns()
        for job in jobs:
            stamps.stamp(job.jid, "read", stamps.reading)
            stamps.stamp(job.jid, "taken", now)
        taking(self, jobs, unreadable)

    Subscriber.data_received = data_received  # type: ignore[method-assign]
    Worker._take_pushed = take_pushed  # type: ignore[method-assign, assignment]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def report(puts: list[dict[str, Any]], stamps: Stamps, server_us: list[float]) -> str:
    rows, popped = [], 0
    merged = []
    for put in puts:
        seen = stamps.by_jid.get(put["jid"], {})
        if "start" not in seen:
            continue
        if "read" not in seen:
            popped += 1
            continue
        merged.append({**put, **seen})
    for first, last, label in STEPS:
        micros = [(job[last] - job[first]) / 1e3 for job in merged]
        if micros:
            middle, high = percentile(micros, 0.5), percentile(micros, 0.99)
            rows.append(f"| {label} | {middle:,.0f} | {high:,.0f} |")
        if (first, last) == ("sent", "read") and server_us:  # inside that step
            middle, high = percentile(server_us, 0.5), percentile(server_us, 0.99)
            rows.append(
                f"| (of which the put script in the server) | {middle:,.0f} | {high:,.0f} |"
            )
    header = [
        f"{len(merged)} pushed jobs of {len(puts)} puts ({popped} popped instead)",
        "",
        "| step | median us | p99 us |",
        "|---|---|---|",
    ]
    return "\n".join(header + rows)


# -- the producer process -----------------------------------------------------------------------


async def produce(options: argparse.Namespace) -> None:
    """Put at `rate` for `seconds`; print one JSON line per put: jid, call and reply times."""
    from aqless._connection.lean import RespStream

    sending: Callable[..., Any] = RespStream.send
    sent = [0]

    @wraps(sending)
    def send(self: RespStream, packed: list[bytes], expected: int, blocks: float = 0.0) -> Any:
        sent[0] = time.time_ns()
        return sending(self, packed, expected, blocks)

    RespStream.send = send  # type: ignore[method-assign]
    async with aqless.Client(options.url, namespace=NAMESPACE) as client:
        queue = client.queues[QUEUE]
        await queue.length()  # connected, the library loaded
        total = int(options.rate * options.seconds)
        start = time.perf_counter()
        lines = []
        for index in range(total):
            await anyio.sleep(max(0.0, start + index / options.rate - time.perf_counter()))
            call = time.time_ns()
            jid = await queue.put(KLASS, {"n": index})
            stamps = {"jid": jid, "call": call, "sent": sent[0], "reply": time.time_ns()}
            lines.append(json.dumps(stamps))
    sys.stdout.write("\n".join(lines) + "\n")


# -- the worker process (this one) --------------------------------------------------------------


def producer(url: str, options: argparse.Namespace) -> list[dict[str, Any]]:
    command = [sys.executable, "-m", "benchmarks.pickup_timeline", "--produce", "--url", url]
    command += ["--rate", str(options.rate), "--seconds", str(options.seconds)]
    if not options.uvloop:
        command.append("--no-uvloop")
    finished = subprocess.run(  # noqa: S603  # our own command
        command, cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in finished.stdout.splitlines() if line.strip()]


@contextmanager
def tcp_server(tcp: bool) -> Iterator[str | None]:
    """A fresh Valkey on a loopback TCP port (compare.py's), or None: the embedded one."""
    if not tcp:
        yield None
        return
    from benchmarks.compare import server

    with server(None) as url:
        yield url


@asynccontextmanager
async def a_server(options: argparse.Namespace) -> Any:
    with tcp_server(options.tcp and options.url is None) as tcp:
        async with own_server(options.url or tcp) as url:
            yield url


@asynccontextmanager
async def slowlog(client: aqless.Client) -> Any:
    """The server's time for each put script run in the block, in microseconds."""
    redis = client.redis
    before = {str(k): str(v) for k, v in (await redis.config_get("slowlog-*")).items()}
    await redis.config_set("slowlog-max-len", 1_000_000)
    await redis.config_set("slowlog-log-slower-than", 0)
    await redis.slowlog_reset()
    timings: list[float] = []
    try:
        yield timings
    finally:
        entries = await redis.execute_command("SLOWLOG", "GET", -1)
        for name, value in before.items():
            await redis.config_set(name, value)
    for entry in entries:
        words = [w.decode() if isinstance(w, bytes) else str(w) for w in entry[3]]
        if words[0].upper() == "FCALL" and "queue.put" in words:
            timings.append(float(entry[2]))


async def measure(options: argparse.Namespace) -> None:
    stamps = Stamps()
    instrument(stamps)
    handlers = aqless.Handlers()

    @handlers.register(KLASS)
    async def stamp(job: aqless.Job) -> None:
        stamps.stamp(job.jid, "start")

    async with a_server(options) as url, aqless.Client(url, namespace=NAMESPACE) as client:
        worker = aqless.Worker(client, [QUEUE], handlers=handlers, concurrency=options.concurrency)
        if options.freeze:
            gc.freeze()
        async with anyio.create_task_group() as group:
            group.start_soon(worker.run)
            await anyio.sleep(WARMUP)
            async with slowlog(client) as server_us:
                puts = await anyio.to_thread.run_sync(producer, url, options)
            await anyio.sleep(0.5)  # the last jobs
            worker.stop()
        await client.redis.flushdb()
    loads = " ".join(f"{load:.2f}" for load in os.getloadavg())
    where = "tcp" if options.tcp else "unix socket"
    sys.stdout.write(
        f"{options.rate:g} puts/s for {options.seconds:g} s, concurrency {options.concurrency}, "
        f"{where}, uvloop {'on' if options.uvloop else 'off'}, heap frozen "
        f"{'yes' if options.freeze else 'no'}, load average {loads}\n"
    )
    sys.stdout.write(report(puts, stamps, server_us) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200.0, help="puts per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to put")
    parser.add_argument("--concurrency", type=int, default=50, help="the worker's slots")
    parser.add_argument("--tcp", action="store_true", help="a Valkey on a loopback TCP port")
    parser.add_argument("--no-uvloop", dest="uvloop", action="store_false")
    parser.add_argument("--no-freeze", dest="freeze", action="store_false")
    parser.add_argument("--url", default=None, help="a server to use (its db is flushed)")
    parser.add_argument("--produce", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    work = produce if options.produce else measure
    anyio.run(work, options, backend="asyncio", backend_options={"use_uvloop": options.uvloop})


if __name__ == "__main__":
    main()
