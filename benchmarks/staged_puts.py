"""The server's share of a put by payload size: its commands' time (INFO commandstats) and the
server's main-thread CPU time (INFO cpu, which counts reading the bytes too), per put, one by
one and with put_many, against the embedded Valkey 9 (or --url).

A put's data from aqless.scripts.staging.STAGED_BYTES up is written beside the script call
(MULTI, HSET, the call, DEL, EXEC); ``--unstaged`` sends every put's data through the script
as before, to compare on one checkout.

    python benchmarks/staged_puts.py [--jobs 300] [--sizes 1000,10000,100000] [--unstaged]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

import aqless
from benchmarks.lua_cost import server
from benchmarks.realistic import text


def cpu(connection: redis.Redis) -> float:
    """The server's main thread's CPU seconds so far."""
    info: dict[str, Any] = connection.info("cpu")
    return float(info["used_cpu_user_main_thread"]) + float(info["used_cpu_sys_main_thread"])


def commands_time(connection: redis.Redis) -> float:
    """Microseconds of the top-level commands since the reset: the script calls, or the
    transactions that hold them (EXEC's time counts the commands inside it)."""
    stats: dict[str, Any] = connection.info("commandstats")

    def usec(name: str) -> float:
        return float(stats.get(f"cmdstat_{name}", {}).get("usec", 0))

    if stats.get("cmdstat_exec"):
        return usec("exec") + usec("multi")
    return usec("fcall")


async def measure(url: str, size: int, jobs: int, many: bool) -> tuple[float, float]:
    payload = {"payload": text(size)}
    connection = redis.Redis.from_url(url)
    async with aqless.Client(url) as client:
        queue = client.queues[f"staged-{size}"]
        await queue.put("bench.Warm", payload)  # connected and loaded
        connection.config_resetstat()
        before = cpu(connection)
        if many:
            await queue.put_many(
                [aqless.PutRequest("bench.Job", payload) for _ in range(jobs)], batch=100
            )
        else:
            for _ in range(jobs):
                await queue.put("bench.Job", payload)
        spent = cpu(connection) - before
        micros = commands_time(connection)
    connection.flushall()
    connection.close()
    return micros / jobs, spent * 1e6 / jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--url", default=None)
    parser.add_argument(
        "--unstaged", action="store_true", help="also every put through the script, in turn"
    )
    options = parser.parse_args()
    modes = ["staged", "unstaged"] if options.unstaged else ["as is"]
    sizes = [int(size) for size in options.sizes.split(",")]
    out = sys.stdout
    out.write(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    out.write("| payload | puts | put: commands µs | put: server CPU µs | put_many: commands µs "
              "| put_many: server CPU µs |\n|---|---|---|---|---|---|\n")  # fmt: skip
    with server(options.url) as url:
        for size in sizes:
            runs: dict[tuple[str, bool], list[tuple[float, float]]] = {}
            for _ in range(options.repeat):  # the modes in turn: the machine's load is shared
                for mode in modes:
                    for many in (False, True):
                        with staged_from(None if mode == "as is" else mode == "staged"):
                            got = asyncio.run(measure(url, size, options.jobs, many))
                        runs.setdefault((mode, many), []).append(got)
            for mode in modes:
                cells = []
                for many in (False, True):
                    commands = statistics.median(run[0] for run in runs[mode, many])
                    spent = statistics.median(run[1] for run in runs[mode, many])
                    cells += [f"{commands:.1f}", f"{spent:.1f}"]
                out.write(f"| {size:,} B | {mode} | " + " | ".join(cells) + " |\n")


@contextmanager
def staged_from(staging: bool | None) -> Iterator[None]:
    """Puts staged from aqless's threshold (True), never (False), or as the checkout does
    (None: a checkout from before staging has no threshold)."""
    if staging is None:
        yield
        return
    from aqless.scripts import staging as module

    kept = module.STAGED_BYTES
    module.STAGED_BYTES = kept if staging else 1 << 62
    try:
        yield
    finally:
        module.STAGED_BYTES = kept


if __name__ == "__main__":
    main()
