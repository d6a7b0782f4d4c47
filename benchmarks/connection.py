"""Script calls over the lean connection against redis-py's connections (the
``AQLESS_SCRIPT_CONNECTION=redis-py`` diagnostic), on one server.

For each path a child process runs, for ``--seconds`` each:

1. put: ``--tasks`` concurrent tasks putting jobs one call at a time;
2. drain: the same number of tasks popping one job and completing it (two calls a job), from
   a queue filled beforehand with ``put_many``.

It prints calls/s and the client's CPU µs per call (process time of the child, which does
nothing else). Runs on the embedded Valkey or ``--url``, in the namespace ``aqbench-conn``
(whose keys are deleted before each phase; nothing else is touched).

    python benchmarks/connection.py [--seconds 10] [--tasks 50] [--url redis://...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

import aqless
from aqless.puts import PutRequest

NAMESPACE = "aqbench-conn"
PATHS = ("lean", "redis-py")


async def clear(client: aqless.Client) -> None:
    keys = [key async for key in client.redis.scan_iter(match=f"{NAMESPACE}:*", count=1000)]
    for start in range(0, len(keys), 1000):
        await client.redis.delete(*keys[start : start + 1000])


async def timed(seconds: float, tasks: int, step: Callable[[], Awaitable[int]]) -> dict[str, float]:
    """Run `step` (returning the calls it made, 0 to stop) in `tasks` tasks for `seconds`."""
    calls = 0
    deadline = time.monotonic() + seconds

    async def loop() -> None:
        nonlocal calls
        while time.monotonic() < deadline:
            made = await step()
            if not made:
                return
            calls += made

    cpu, started = time.process_time(), time.monotonic()
    async with anyio.create_task_group() as group:
        for _ in range(tasks):
            group.start_soon(loop)
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu
    return {"calls_per_s": calls / elapsed, "cpu_us_per_call": cpu / max(calls, 1) * 1e6}


async def child(url: str, seconds: float, tasks: int) -> dict[str, Any]:
    async with aqless.Client(url, namespace=NAMESPACE) as client:
        lean = os.environ.get("AQLESS_SCRIPT_CONNECTION", "lean") != "redis-py"
        if client.protocol.script.uses_lean_connection is not lean:
            raise SystemExit("AQLESS_SCRIPT_CONNECTION was not obeyed")
        queue = client.queues["bench"]
        await clear(client)

        async def put() -> int:
            await queue.put("bench.noop", {})
            return 1

        results = {"put": await timed(seconds, tasks, put)}
        await clear(client)
        jobs = max(1000, int(results["put"]["calls_per_s"] * seconds))
        for start in range(0, jobs, 1000):
            await queue.put_many([PutRequest("bench.noop", {}) for _ in range(start, start + 1000)])

        async def drain() -> int:
            job = await queue.pop()
            if job is None:
                return 0
            await job.complete()
            return 2

        results["pop+complete"] = await timed(seconds, tasks, drain)
        await clear(client)
        return results


def run_child(path: str, url: str, arguments: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--url", url]
    command += ["--seconds", str(arguments.seconds), "--tasks", str(arguments.tasks)]
    environment = {**os.environ, "AQLESS_SCRIPT_CONNECTION": path}
    output = subprocess.run(  # noqa: S603  # our own command
        command, env=environment, check=True, capture_output=True, text=True
    )
    result: dict[str, Any] = json.loads(output.stdout)
    return result


async def embedded_url() -> str:
    async with aqless.Client() as client:
        return str(client.url)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--url")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.child:
        figures = anyio.run(child, arguments.url, arguments.seconds, arguments.tasks)
        sys.stdout.write(json.dumps(figures) + "\n")
        return
    url = arguments.url or anyio.run(embedded_url)
    results = {path: run_child(path, url, arguments) for path in PATHS}
    out = sys.stdout
    out.write(f"server {url}, {arguments.tasks} tasks, {arguments.seconds:g} s per phase\n")
    out.write("| workload | path | calls/s | client CPU µs/call |\n|---|---|---|---|\n")
    for workload in ("put", "pop+complete"):
        for path in PATHS:
            figures = results[path][workload]
            out.write(
                f"| {workload} | {path} | {figures['calls_per_s']:,.0f} "
                f"| {figures['cpu_us_per_call']:.1f} |\n"
            )


if __name__ == "__main__":
    main()
