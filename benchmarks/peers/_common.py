"""What every runner shares: the payload, the meters, a tiny RESP client, the entry point.

Stdlib only (uvloop when installed): a runner runs in its library's own venv, next to a
redis client of whatever version that library pins. The server is read with our own
socket (INFO, FLUSHALL), never through the library under test.

A runner module defines ``RUNNER = SomeRunner()`` and ends with ``main(RUNNER)``; compare.py
starts it as ``python -m benchmarks.peers.<lib> <workload> --url ... --jobs ...`` and reads
one JSON object from its last line of stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

T = TypeVar("T")

QUEUE = "bench"
# latency: seconds for an idle worker to settle before the puts, and for the last jobs after
WARMUP = 1.0
TAIL = 1.0
WORKLOADS: tuple[str, ...] = ("enqueue_one_by_one", "enqueue_fastest", "drain", "latency", "scale")
# the pickup with the producer in a process of its own (benchmarks/peers/_two_process.py)
WORKLOADS += ("latency_2proc", "produce")
# the length of the payload's string field (``--payload-bytes``; compare.py's payload workload)
PAD_BYTES = 64
# what fills it (``--payload-text``): "x" repeated, or the realistic generator's JSON text
PAD_TEXTS = ("x", "realistic")
PAD = "x" * PAD_BYTES


def payload(i: int) -> dict[str, Any]:
    """The same JSON payload for every library: one string field of `PAD_BYTES`."""
    return {"n": i, "pad": PAD}


def pad_text(size: int, text: str = "x") -> str:
    """`size` characters of `text` ("x": the letter repeated; "realistic": the seeded orders
    of ``benchmarks/realistic.py``, the same bytes in every process)."""
    if text == "realistic":
        from benchmarks import realistic

        return realistic.text(size)
    return "x" * size


def set_payload_bytes(size: int, text: str = "x") -> None:
    """The size and text of every `payload` from now on (this process's runner)."""
    global PAD_BYTES, PAD
    PAD_BYTES, PAD = size, pad_text(size, text)


def noop(n: int, pad: str) -> None:
    """The job code's work: nothing (each runner wraps it in its library's job shape)."""


# -- the server, read with our own socket ------------------------------------------------------


class Resp:
    """A minimal synchronous RESP2 client: enough for INFO, FLUSHALL, CONFIG, DBSIZE."""

    def __init__(self, url: str) -> None:
        parsed = urlparse(url)
        if parsed.scheme == "unix":
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(unquote(parsed.path))
        else:
            self.sock = socket.create_connection(
                (parsed.hostname or "localhost", parsed.port or 6379)
            )
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        if parsed.password:
            self.call(
                "AUTH",
                *([unquote(parsed.username)] if parsed.username else []),
                unquote(parsed.password),
            )

    def close(self) -> None:
        self.sock.close()

    def call(self, *words: str | int) -> Any:
        encoded = [str(w).encode() for w in words]
        command = b"*%d\r\n" % len(encoded) + b"".join(
            b"$%d\r\n%s\r\n" % (len(w), w) for w in encoded
        )
        self.sock.sendall(command)
        return self._reply()

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def _reply(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            while len(self.buffer) < size + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise ConnectionError("the server closed the connection")
                self.buffer += chunk
            data, self.buffer = self.buffer[:size], self.buffer[size + 2 :]
            return data.decode()
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def info(self, *sections: str) -> dict[str, str]:
        text: str = self.call("INFO", *sections)
        fields: dict[str, str] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.partition(":")
                fields[name] = value
        return fields


@dataclass(frozen=True, slots=True)
class ServerSample:
    cpu: float  # seconds, user + sys, all threads of the server
    commands: int  # calls in commandstats, INFO itself excluded
    memory: int  # used_memory, bytes

    @classmethod
    def take(cls, url: str) -> ServerSample:
        resp = Resp(url)
        try:
            fields = resp.info("cpu", "commandstats", "memory")
        finally:
            resp.close()
        commands = 0
        for name, value in fields.items():
            if name.startswith("cmdstat_") and name not in ("cmdstat_info", "cmdstat_auth"):
                calls = value.partition("calls=")[2].partition(",")[0]
                commands += int(calls or 0)
        cpu = float(fields["used_cpu_user"]) + float(fields["used_cpu_sys"])
        return cls(cpu, commands, int(fields["used_memory"]))


def flushall(url: str) -> None:
    resp = Resp(url)
    try:
        resp.call("FLUSHALL")
    finally:
        resp.close()


# -- results -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Result:
    """One measured phase. Per-job figures divide by `jobs`."""

    library: str
    version: str
    workload: str
    jobs: int
    concurrency: int | None = None
    seconds: float = 0.0
    rate: float = 0.0  # jobs per second
    client_cpu_us: float = 0.0  # this process's CPU per job (all its threads)
    server_cpu_us: float = 0.0  # the server's CPU per job
    server_commands: float = 0.0  # commands the server ran per job (inside scripts too)
    p50_ms: float | None = None
    p99_ms: float | None = None
    extra: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


class Meter:
    """Wall time, this process's CPU and the server's cost of one phase."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.wall = 0.0
        self.cpu = 0.0
        self.server_cpu = 0.0
        self.server_commands = 0
        self._started = (0.0, 0.0)
        self._server: ServerSample | None = None

    def start(self) -> None:
        self._server = ServerSample.take(self.url)
        self._started = (time.perf_counter(), time.process_time())

    def stop(self) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        after = ServerSample.take(self.url)
        assert self._server is not None, "Meter.stop() before start()"  # noqa: S101
        self.wall = wall - self._started[0]
        self.cpu = cpu - self._started[1]
        self.server_cpu = after.cpu - self._server.cpu
        self.server_commands = after.commands - self._server.commands

    @contextmanager
    def measuring(self) -> Iterator[Meter]:
        self.start()
        yield self
        self.stop()

    def fill(self, result: Result) -> Result:
        n = max(result.jobs, 1)
        result.seconds = self.wall
        result.rate = result.jobs / self.wall if self.wall > 0 else 0.0
        result.client_cpu_us = self.cpu / n * 1e6
        result.server_cpu_us = self.server_cpu / n * 1e6
        result.server_commands = self.server_commands / n
        return result


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


class Countdown:
    """Counts finished jobs; `done` is set by the `total`-th. Thread-safe enough for
    sync workers too (the GIL makes ``+=`` on an attribute racy only across bytecodes,
    so a lock guards it)."""

    def __init__(self, total: int) -> None:
        import threading

        self.total = total
        self.count = 0
        self._lock = threading.Lock()
        self.done = threading.Event()
        self.async_done: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def bind(self) -> None:
        """Call from the event loop that waits (async runners)."""
        self.async_done = asyncio.Event()
        self.loop = asyncio.get_running_loop()

    def tick(self) -> None:
        with self._lock:
            self.count += 1
            finished = self.count == self.total
        if finished:
            self.done.set()
            if self.async_done is not None and self.loop is not None:
                if _in_loop(self.loop):
                    self.async_done.set()
                else:
                    self.loop.call_soon_threadsafe(self.async_done.set)

    async def wait(self, timeout: float) -> None:
        assert self.async_done is not None, "bind() first"  # noqa: S101
        await asyncio.wait_for(self.async_done.wait(), timeout)


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


class Latencies:
    """Put times by job number, and pickup delays (put call -> job code start)."""

    def __init__(self) -> None:
        self.put_at: dict[int, float] = {}
        self.delays: list[float] = []

    def putting(self, n: int) -> None:
        self.put_at[n] = time.perf_counter()

    def started(self, n: int) -> None:
        at = self.put_at.get(n)
        if at is not None:
            self.delays.append(time.perf_counter() - at)

    def fill(self, result: Result) -> Result:
        result.p50_ms = percentile(self.delays, 0.50) * 1e3
        result.p99_ms = percentile(self.delays, 0.99) * 1e3
        result.extra["max_ms"] = max(self.delays, default=float("nan")) * 1e3
        result.extra["samples"] = float(len(self.delays))
        return result


async def paced(rate: float, seconds: float, put: Callable[[int], Awaitable[None]]) -> int:
    """Call `put(i)` at a steady `rate` per second for `seconds`; returns how many."""
    total = int(rate * seconds)
    start = time.perf_counter()
    for i in range(total):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await put(i)
    return total


def paced_sync(rate: float, seconds: float, put: Callable[[int], None]) -> int:
    total = int(rate * seconds)
    start = time.perf_counter()
    for i in range(total):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        put(i)
    return total


async def concurrently(
    total: int, put: Callable[[int], Awaitable[object]], limit: int = 100
) -> None:
    """``put(0) .. put(total - 1)`` with `limit` calls in flight: the fastest way for a
    library that has no batch call (its connection pool pipelines nothing by itself)."""
    counter = iter(range(total))

    async def lane() -> None:
        for i in counter:
            await put(i)

    await asyncio.gather(*(lane() for _ in range(min(limit, total))))


async def stop_task(task: asyncio.Task[Any], timeout: float = 5.0) -> None:
    """Cancel a worker's task and give it a moment to unwind (it is not measured)."""
    task.cancel()
    await asyncio.wait([task], timeout=timeout)


# -- the runner interface ----------------------------------------------------------------------


@dataclass(slots=True)
class Options:
    url: str
    jobs: int
    concurrency: int
    rate: float
    seconds: float
    timeout: float
    budget: float  # drain: seconds before measuring what was done so far
    features: tuple[str, ...] = ()  # aqless only: "metrics", "tracing", "zstd"


class Runner:
    """One library. Each method runs one workload on an empty server and returns its
    Result; only the measured phase is inside the Meter."""

    library = "?"
    distribution = "?"  # the PyPI name whose version is reported

    def version(self) -> str:
        from importlib.metadata import version

        return version(self.distribution)

    def result(self, workload: str, options: Options, **extra: Any) -> Result:
        return Result(self.library, self.version(), workload, options.jobs, **extra)

    def enqueue_one_by_one(self, options: Options) -> Result:
        raise NotImplementedError

    def enqueue_fastest(self, options: Options) -> Result:
        raise NotImplementedError

    def drain(self, options: Options) -> Result:
        raise NotImplementedError

    def latency(self, options: Options) -> Result:
        raise NotImplementedError

    def scale(self, options: Options) -> Result:
        raise NotImplementedError

    def latency_2proc(self, options: Options) -> Result:
        """Pickup latency, the producer in a process of its own (``produce``)."""
        raise NotImplementedError

    def produce(self, options: Options) -> Result:
        """The producer of ``latency_2proc``: each job's ``n`` is its put's time.time_ns()."""
        raise NotImplementedError


class AsyncRunner(Runner):
    """An asyncio library: a runner fills in the hooks, the workloads are measured here the
    same way for all. The job code every library runs is ``self.job(n, pad)``."""

    async def open(self, options: Options) -> None:
        """Connect (not measured)."""

    async def close(self) -> None:
        """Disconnect (not measured)."""

    async def put(self, i: int) -> None:
        """Enqueue job `i` with ``payload(i)``, one awaited call."""
        raise NotImplementedError

    async def put_many(self, total: int) -> None:
        """Enqueue jobs ``0 .. total - 1`` the fastest way the library offers."""
        await concurrently(total, self.put)

    async def work(self, options: Options) -> None:
        """Run a worker at ``options.concurrency`` until cancelled; its jobs call
        ``self.job(n, pad)``."""
        raise NotImplementedError

    # -- measured here ---------------------------------------------------------------------------

    countdown: Countdown | None = None
    latencies: Latencies | None = None

    def job(self, n: int, pad: str) -> None:
        if self.latencies is not None:
            self.latencies.started(n)
        if self.countdown is not None:
            self.countdown.tick()

    def enqueue_one_by_one(self, options: Options) -> Result:
        return run_async(self._enqueue(options, "enqueue_one_by_one"))

    def enqueue_fastest(self, options: Options) -> Result:
        return run_async(self._enqueue(options, "enqueue_fastest"))

    async def _enqueue(self, options: Options, workload: str) -> Result:
        await self.open(options)
        meter = Meter(options.url)
        with meter.measuring():
            if workload == "enqueue_fastest":
                await self.put_many(options.jobs)
            else:
                for i in range(options.jobs):
                    await self.put(i)
        await self.close()
        return meter.fill(self.result(workload, options))

    def drain(self, options: Options) -> Result:
        return run_async(self._drain(options))

    async def _drain(self, options: Options) -> Result:
        await self.open(options)
        await self.put_many(options.jobs)
        self.countdown = Countdown(options.jobs)
        self.countdown.bind()
        meter = Meter(options.url)
        meter.start()
        worker = asyncio.create_task(self.work(options))
        waiting = asyncio.create_task(self.countdown.wait(options.budget))
        await asyncio.wait([worker, waiting], return_when=asyncio.FIRST_COMPLETED)
        meter.stop()
        if not waiting.done():
            waiting.cancel()
            worker.result()  # the worker's error
            raise RuntimeError("the worker stopped before the queue was drained")
        timed_out = waiting.exception() is not None
        await stop_task(worker)
        await self.close()
        return drained(self, meter, options, self.countdown.count if timed_out else None)

    def latency(self, options: Options) -> Result:
        return run_async(self._latency(options))

    async def _latency(self, options: Options) -> Result:
        latencies = Latencies()

        async def put(i: int) -> None:
            latencies.putting(i)
            await self.put(i)

        return await self.paced_latency(
            "latency", options, latencies, lambda: paced(options.rate, options.seconds, put)
        )

    async def paced_latency(
        self,
        workload: str,
        options: Options,
        latencies: Latencies,
        feed: Callable[[], Awaitable[int]],
    ) -> Result:
        """The worker run here while, after the warm-up, `feed` puts jobs at the steady
        rate (returning how many it put); `latencies` filled in for `workload`."""
        await self.open(options)
        self.latencies = latencies
        worker = asyncio.create_task(self.work(options))
        await asyncio.sleep(WARMUP)
        if worker.done():
            worker.result()
        meter = Meter(options.url)
        meter.start()
        options.jobs = await feed()
        await asyncio.sleep(TAIL)
        meter.stop()
        await stop_task(worker)
        await self.close()
        result = meter.fill(self.result(workload, options, concurrency=options.concurrency))
        return latencies.fill(result)

    def latency_2proc(self, options: Options) -> Result:
        from benchmarks.peers import _two_process

        return run_async(_two_process.latency_2proc(self, options))

    def produce(self, options: Options) -> Result:
        from benchmarks.peers import _two_process

        return run_async(_two_process.produce(self, options))


def drained(runner: Runner, meter: Meter, options: Options, partial: int | None) -> Result:
    """A drain's result; `partial`: how many jobs ran when the time budget ran out."""
    result = runner.result("drain", options, concurrency=options.concurrency)
    if partial is not None:
        result.extra["partial_of"] = float(result.jobs)
        result.jobs = partial
    return meter.fill(result)


# the runner of this process, for job code that the library finds by import (reqless)
ACTIVE: Runner | None = None


def run_async(coroutine: Awaitable[T]) -> T:
    """Run on uvloop when it is installed (every asyncio runner uses this)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)  # type: ignore[arg-type]
    return uvloop.run(coroutine)  # type: ignore[arg-type]


def main(runner: Runner) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("--url", required=True)
    parser.add_argument("--jobs", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--payload-bytes", type=int, default=PAD_BYTES)
    parser.add_argument("--payload-text", choices=PAD_TEXTS, default="x")
    parser.add_argument("--features", default="", help="aqless: metrics,tracing,zstd")
    arguments = parser.parse_args()
    options = Options(
        arguments.url,
        arguments.jobs,
        arguments.concurrency,
        arguments.rate,
        arguments.seconds,
        arguments.timeout,
        arguments.budget,
        tuple(name for name in arguments.features.split(",") if name),
    )
    global ACTIVE
    ACTIVE = runner
    set_payload_bytes(arguments.payload_bytes, arguments.payload_text)
    try:
        result = getattr(runner, arguments.workload)(options)
    except NotImplementedError:
        sys.stdout.write(json.dumps({"error": "not implemented for this library"}) + "\n")
        return
    except BaseException as error:
        traceback.print_exc()
        sys.stdout.write(json.dumps({"error": f"{type(error).__name__}: {error}"[:300]}) + "\n")
        sys.stdout.flush()
        os._exit(1)
    sys.stdout.write(result.to_json() + "\n")
    sys.stdout.flush()
    # some libraries leave threads or connections behind; the result is out
    os._exit(0)
