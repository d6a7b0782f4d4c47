"""Server cost of rate limits per job: put, pop, heartbeat and complete (FCALL, reqless
vocabulary) without a limit, with the worker's pop (`rateLimit.pop`) and no limit, with a
queue limit, and with a named limiter on every job. Prints the commands the script runs
and the server's microseconds per call, and each case's extra cost over the plain
lifecycle. The limits are set high enough never to hold a pop back: this measures the
bookkeeping, not the pacing.

    python benchmarks/rate_limits.py [--jobs 2000] [--url redis://...]
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import redis

from aqless.scripts import build_library, function_name
from benchmarks.lua_cost import measure, server

PHASES = ("put", "pop", "heartbeat", "complete")
LIMITED = ["rate_limits", '["api"]']
# case -> (its limits, the pop command, the put's extra options)
CASES: dict[str, tuple[list[tuple[str, int, float]], str, list[str]]] = {
    "no limit, queue.pop": ([], "queue.pop", []),
    "no limit, rateLimit.pop": ([], "rateLimit.pop", []),
    "queue limit": ([("ql:q:q", 10**9, 1.0)], "rateLimit.pop", []),
    "named limiter": ([("api", 10**9, 1.0)], "rateLimit.pop", LIMITED),
}


def arguments(phase: str, pop: str, extra: list[str], i: int) -> list[str | int | float]:
    """The call of `phase` for job i: puts at 0, pops a millisecond apart from 10 s (so
    a 1-s window holds a thousand starts), then heartbeats and completes."""
    if phase == "put":
        return ["queue.put", i * 1e-6, "w", "q", f"j{i}", "K", "{}", 0, *extra]
    if phase == "pop":
        return [pop, 10 + i * 1e-3, "q", "w", 1]
    if phase == "heartbeat":
        return ["job.heartbeat", 20 + i * 1e-3, f"j{i}", "w"]
    return ["job.complete", 30 + i * 1e-3, f"j{i}", "w", "q", "{}"]


def run_case(connection: redis.Redis, case: str, jobs: int) -> dict[str, tuple[float, float]]:
    limits, pop, extra = CASES[case]
    function = function_name()
    connection.flushdb()
    for limit_id, limit, period in limits:
        connection.fcall(function, 0, "rateLimit.set", 0, limit_id, limit, period)
    costs: dict[str, tuple[float, float]] = {}
    for phase in PHASES:

        def run(phase: str = phase) -> None:
            for i in range(jobs):
                connection.fcall(function, 0, *arguments(phase, pop, extra, i))

        costs[phase] = measure(connection, run, jobs)
    return costs


def report(results: dict[str, dict[str, tuple[float, float]]]) -> None:
    out = sys.stdout
    out.write(f"{'case':<24} {'command':<10} {'server cmds':>11} {'us':>7}\n")
    base = sum(micros for _, micros in results["no limit, queue.pop"].values())
    for case, costs in results.items():
        for phase, (commands, micros) in costs.items():
            out.write(f"{case:<24} {phase:<10} {commands:>11.1f} {micros:>7.1f}\n")
        total = sum(micros for _, micros in costs.values())
        extra = 100 * (total - base) / base
        out.write(f"{case:<24} {'lifecycle':<10} {'':>11} {total:>7.1f}  ({extra:+.1f}%)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    options = parser.parse_args()
    with server(options.url) as url:
        connection = redis.Redis.from_url(url, decode_responses=True)
        connection.function_load(build_library(), replace=True)
        results: dict[str, Any] = {case: run_case(connection, case, options.jobs) for case in CASES}
        connection.close()
    report(results)


if __name__ == "__main__":
    main()
