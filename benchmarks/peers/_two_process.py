"""The pickup latency with the producer in a process of its own, as users run it: a web
service puts, a worker process runs the jobs.

The worker's runner (workload ``latency_2proc``) starts its library's worker, lets it settle,
then starts ``python -m benchmarks.peers.<lib> produce ...`` with the same interpreter. The
producer puts at a steady rate; each job's ``n`` is the wall clock (``time.time_ns()``) just
before its put call, so the payload keeps its shape and size and every runner's job code
stays ``job(n, pad)``. The worker's job code subtracts that from the clock when it starts:
one machine, one clock.

Stdlib only, like ``_common``.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

from benchmarks.peers._common import Latencies, Options, Result

if TYPE_CHECKING:
    from benchmarks.peers._common import AsyncRunner, Runner

PRODUCE = "produce"
LATENCY_2PROC = "latency_2proc"


class WallLatencies(Latencies):
    """Pickup delays where ``n`` is the put call's ``time.time_ns()`` (another process's)."""

    def started(self, n: int) -> None:
        self.delays.append((time.time_ns() - n) / 1e9)


def producer_command(runner: Runner, options: Options) -> list[str]:
    """The producer: this library's runner module, with this interpreter."""
    command = [sys.executable, "-m", f"benchmarks.peers.{runner.library}", PRODUCE]
    command += ["--url", options.url, "--rate", str(options.rate)]
    command += ["--seconds", str(options.seconds), "--timeout", str(options.timeout)]
    return command


def produced(finished: subprocess.CompletedProcess[str]) -> int:
    """How many jobs the producer put (its last line of stdout), or its error raised."""
    lines = finished.stdout.strip().splitlines()
    try:
        reply: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = finished.stderr.strip().splitlines()[-1:] or [f"exit {finished.returncode}"]
        raise RuntimeError(f"the producer failed: {tail[0][:200]}") from None
    if "error" in reply:
        raise RuntimeError(f"the producer failed: {reply['error']}")
    return int(reply["jobs"])


def produce_result(runner: Runner, options: Options, jobs: int) -> Result:
    options.jobs = jobs
    return runner.result(PRODUCE, options)


def run_producer(runner: Runner, options: Options) -> int:
    """Start the producer, wait for it (blocking: for a sync runner), return its count."""
    finished = subprocess.run(  # noqa: S603  # our own runner
        producer_command(runner, options),
        capture_output=True,
        text=True,
        timeout=options.timeout,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    return produced(finished)


async def produce(runner: AsyncRunner, options: Options) -> Result:
    """The producer process: put at ``options.rate`` for ``options.seconds``, each job's
    ``n`` the wall clock just before its put call."""
    from benchmarks.peers._common import paced

    await runner.open(options)

    async def put(_: int) -> None:
        await runner.put(time.time_ns())

    jobs = await paced(options.rate, options.seconds, put)
    await runner.close()
    return produce_result(runner, options, jobs)


async def latency_2proc(runner: AsyncRunner, options: Options) -> Result:
    """The worker process: a worker at ``options.concurrency``, a producer process putting."""
    return await runner.paced_latency(
        LATENCY_2PROC,
        options,
        WallLatencies(),
        lambda: asyncio.to_thread(run_producer, runner, options),
    )
