"""Server cost of rate limits per job: put, pop, heartbeat and complete (FCALL, reqless
vocabulary) without a limit, with the worker's pop (`rateLimit.pop`) and no limit, with a
queue limit, and with a named limiter on every job. Prints the commands the script runs
and the server's microseconds per call, and each case's extra cost over the plain
lifecycle. The limits are set high enough never to hold a pop back: this measures the
bookkeeping, not the pacing.

Server time per call moves by a fifth between runs on a busy machine, so the cases take
turns a hundred calls at a time (each under a key prefix of its own), for --repeats
rounds; the table gives each figure's median, with the lifecycle's min-max and each
case's extra cost measured against the plain case of the same round.

    python benchmarks/rate_limits.py [--jobs 2000] [--repeats 7] [--url redis://...]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import redis

from aqless.scripts import build_library, function_name
from benchmarks.lua_cost import measure, server

PHASES = ("put", "pop", "heartbeat", "complete")
LIMITED = ["rate_limits", '["api"]']
CHUNK = 100  # calls measured at a time, the cases taking turns
# case -> (its limits, the pop command, the put's extra options); a limit id "{queue}" is
# the queue's own limiter (its throttle id under the case's key prefix)
CASES: dict[str, tuple[list[tuple[str, int, float]], str, list[str]]] = {
    "no limit, queue.pop": ([], "queue.pop", []),
    "no limit, rateLimit.pop": ([], "rateLimit.pop", []),
    "queue limit": ([("{queue}", 10**9, 1.0)], "rateLimit.pop", []),
    "named limiter": ([("api", 10**9, 1.0)], "rateLimit.pop", LIMITED),
}

Costs = dict[str, tuple[float, float]]  # phase -> (commands per call, microseconds per call)
BASE = "no limit, queue.pop"


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


def prefix_of(case: str) -> str:
    return f"c{list(CASES).index(case)}:ql:"


def run_round(connection: redis.Redis, jobs: int) -> dict[str, Costs]:
    """One round: every case under a key prefix of its own, each phase run CHUNK calls at
    a time with the cases taking turns, so a slower spell of the machine hits them alike."""
    function = function_name()
    connection.flushdb()
    for case, (limits, _, _) in CASES.items():
        prefix = prefix_of(case)
        for limit_id, limit, period in limits:
            limiter = f"{prefix}q:q" if limit_id == "{queue}" else limit_id
            connection.fcall(function, 1, prefix, "rateLimit.set", 0, limiter, limit, period)
    totals = {case: {phase: [0.0, 0.0] for phase in PHASES} for case in CASES}
    for phase in PHASES:
        for first in range(0, jobs, CHUNK):
            numbers = range(first, min(first + CHUNK, jobs))
            for case, (_, pop, extra) in CASES.items():

                def run(
                    case: str = case,
                    pop: str = pop,
                    extra: list[str] = extra,
                    phase: str = phase,
                    numbers: range = numbers,
                ) -> None:
                    for i in numbers:
                        argv = arguments(phase, pop, extra, i)
                        connection.fcall(function, 1, prefix_of(case), *argv)

                commands, micros = measure(connection, run, len(numbers))
                totals[case][phase][0] += commands * len(numbers)
                totals[case][phase][1] += micros * len(numbers)
    return {
        case: {phase: (c / jobs, us / jobs) for phase, (c, us) in phases.items()}
        for case, phases in totals.items()
    }


def lifecycle(costs: Costs) -> float:
    return sum(micros for _, micros in costs.values())


def report(rounds: list[dict[str, Costs]]) -> None:
    out = sys.stdout
    out.write(f"{len(rounds)} rounds; medians, lifecycle min-max, extra cost against {BASE!r}\n")
    out.write(f"{'case':<24} {'command':<10} {'server cmds':>11} {'us':>7}\n")
    for case in CASES:
        for phase in PHASES:
            commands = statistics.median(r[case][phase][0] for r in rounds)
            micros = statistics.median(r[case][phase][1] for r in rounds)
            out.write(f"{case:<24} {phase:<10} {commands:>11.1f} {micros:>7.1f}\n")
        totals = [lifecycle(r[case]) for r in rounds]
        extras = [100 * (lifecycle(r[case]) / lifecycle(r[BASE]) - 1) for r in rounds]
        out.write(
            f"{case:<24} {'lifecycle':<10} {'':>11} {statistics.median(totals):>7.1f}"
            f"  ({min(totals):.1f}-{max(totals):.1f})"
            f"  extra {statistics.median(extras):+.1f}% ({min(extras):+.1f}..{max(extras):+.1f})\n"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    options = parser.parse_args()
    with server(options.url) as url:
        connection = redis.Redis.from_url(url, decode_responses=True)
        connection.function_load(build_library(), replace=True)
        rounds: list[dict[str, Costs]] = []
        for number in range(options.repeats):
            rounds.append(run_round(connection, options.jobs))
            sys.stderr.write(f"round {number + 1}/{options.repeats} done\n")
        connection.close()
    report(rounds)


if __name__ == "__main__":
    main()
