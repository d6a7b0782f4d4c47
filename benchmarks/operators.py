"""The operators' pages and commands at scale: one queue of `--waiting` jobs, failed jobs in 50
groups, completed, scheduled (and tagged) and recurring ones, a few throttles; then each
dashboard page and its `/api` twin (in-process) and each CLI command (a process of its own,
start-up included) timed, with the server's work for it read from INFO commandstats (its CPU time,
its commands, its SCANs); and `aqless queue empty` of `--empty` jobs timed while another
client pings the server, whose latency (p50, p99, max) says how long the emptying held it.

The default dataset is a tenth of the issue's (100,000 waiting, 10,000 failed and
completed, 1,000 scheduled, 1,000 recurring templates); `--waiting 1000000` is the full
one. Run on demand, not in the test suite:

    python benchmarks/operators.py [--waiting 100000] [--empty 20000] [--repeat 3] [--url ...]

Without `--url`, an embedded Valkey is started (and thrown away); with `--url` and
`--reuse`, the dataset a run before built there (with the same sizes) is timed again. The
same script run with another checkout first on PYTHONPATH measures that checkout (a command
or page it lacks prints n/a).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import anyio
import httpx
import redis

import aqless
from aqless.scripts import build_library, function_name
from benchmarks.lua_cost import server

QUEUE = "big"
EMPTIED = "drain"
TEMPLATES = "reports"
GROUPS = 50
TAG = "nightly"
WORKER = "bench-worker"
BATCH = 2000

#: Wall milliseconds, the server's CPU milliseconds, its commands (those the script ran
#: included) and its SCANs.
Figures = tuple[float, float, int, int]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiting", type=int, default=100_000)
    parser.add_argument("--failed", type=int, help="default: a tenth of --waiting")
    parser.add_argument("--completed", type=int, help="default: a tenth of --waiting")
    parser.add_argument("--scheduled", type=int, help="default: a hundredth of --waiting")
    parser.add_argument("--recurring", type=int, default=1000)
    parser.add_argument("--empty", type=int, default=20_000, help="jobs `queue empty` cancels")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each page and command")
    parser.add_argument("--url", help="a server to fill (FLUSHALL first!); default: embedded")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="with --url: time the dataset a run before built there (built by the same sizes)",
    )
    parser.add_argument(
        "--parts",
        default="pages,commands,empty",
        help="what to time, of pages,commands,empty (default: all)",
    )
    arguments = parser.parse_args(argv)
    tenth = arguments.waiting // 10
    arguments.failed = tenth if arguments.failed is None else arguments.failed
    arguments.completed = tenth if arguments.completed is None else arguments.completed
    scheduled = arguments.waiting // 100
    arguments.scheduled = scheduled if arguments.scheduled is None else arguments.scheduled
    return arguments


# -- the dataset -------------------------------------------------------------------------------


class Builder:
    """Writes the dataset through the script, pipelined."""

    def __init__(self, connection: redis.Redis) -> None:
        self.connection = connection
        connection.function_load(build_library(), replace=True)
        self.function = function_name()

    def calls(self, argvs: Sequence[Sequence[Any]]) -> list[Any]:
        replies: list[Any] = []
        for start in range(0, len(argvs), BATCH):
            pipe = self.connection.pipeline(transaction=False)
            for argv in argvs[start : start + BATCH]:
                pipe.fcall(self.function, 0, argv[0], time.time(), *argv[1:])
            replies += pipe.execute()
        return replies

    def put(self, queue: str, prefix: str, count: int, delay: float, *options: Any) -> list[str]:
        jids = [f"{prefix}-{n}" for n in range(count)]
        data = '{"n": 1, "to": "someone@example.com"}'
        self.calls(
            [("queue.put", "", queue, jid, "app.Job", data, delay, *options) for jid in jids]
        )
        return jids

    def finish(self, prefix: str, count: int, how: str) -> None:
        """`count` jobs put, popped and failed (in GROUPS groups) or completed."""
        jids = self.put(QUEUE, prefix, count, 0, "priority", 100)
        for start in range(0, count, BATCH):
            self.calls([("queue.pop", QUEUE, WORKER, min(BATCH, count - start))])
        if how == "failed":
            self.calls(
                [
                    ("job.fail", jid, WORKER, f"app.Job-Error{n % GROUPS}", "boom")
                    for n, jid in enumerate(jids)
                ]
            )
        else:
            self.calls([("job.complete", jid, WORKER, QUEUE, "{}") for jid in jids])


def build(url: str, arguments: argparse.Namespace) -> None:
    connection = redis.Redis.from_url(url)
    connection.flushall()
    builder = Builder(connection)
    builder.calls([("config.set", "jobs-history-count", 10 * arguments.completed + 1)])
    builder.finish("failed", arguments.failed, "failed")
    builder.finish("done", arguments.completed, "complete")
    builder.put(QUEUE, "later", arguments.scheduled, 3600, "tags", f'["{TAG}"]')
    builder.put(QUEUE, "job", arguments.waiting, 0)
    builder.calls(
        [
            ("queue.recurAtInterval", TEMPLATES, f"r-{n}", "app.Report", "{}", 86400, 86400)
            for n in range(arguments.recurring)
        ]
    )
    builder.calls([("throttle.set", f"api-{n}", 10) for n in range(5)])
    builder.calls([("queue.throttle.set", QUEUE, 8)])
    keys = connection.dbsize()
    memory = connection.info("memory")["used_memory_human"]
    say(
        f"dataset: {arguments.waiting:,} waiting, {arguments.failed:,} failed in {GROUPS} "
        f"groups, {arguments.completed:,} completed, {arguments.scheduled:,} scheduled, "
        f"{arguments.recurring:,} recurring templates; {keys:,} keys, {memory}"
    )


# -- measuring ---------------------------------------------------------------------------------


def server_work(connection: redis.Redis) -> tuple[float, int, int]:
    """The server's CPU milliseconds, commands and SCANs so far (INFO commandstats, itself
    left out)."""
    stats: dict[str, Any] = connection.info("commandstats")
    ignored = ("cmdstat_info",)
    micros = sum(v["usec"] for k, v in stats.items() if k not in ignored)
    calls = sum(v["calls"] for k, v in stats.items() if k not in ignored)
    return micros / 1000, calls, int(stats.get("cmdstat_scan", {}).get("calls", 0))


def measured(connection: redis.Redis, repeat: int, run: Callable[[], bool]) -> Figures | None:
    """The medians of `repeat` runs of `run` (None when `run` says the checkout lacks it)."""
    figures = []
    for _ in range(repeat):
        before = server_work(connection)
        start = time.perf_counter()
        if not run():
            return None
        wall = (time.perf_counter() - start) * 1000
        after = server_work(connection)
        figures.append((wall, *(a - b for a, b in zip(after, before, strict=True))))
    return medians(figures)


def medians(figures: Sequence[Sequence[float]]) -> Figures | None:
    """Wall ms, server CPU ms, server commands and SCANs: each the median of the runs."""
    if not figures:
        return None
    wall, cpu, commands, scans = (
        statistics.median(column) for column in zip(*figures, strict=True)
    )
    return wall, cpu, int(commands), int(scans)


def row(name: str, figures: Figures | None) -> str:
    if figures is None:
        return f"| {name} | n/a | | | |"
    wall, cpu, commands, scans = figures
    return f"| {name} | {wall:,.0f} | {cpu:,.1f} | {commands:,} | {scans:,} |"


def last_page(count: int, size: int = 25) -> int:
    return max(1, -(-count // size))


def page_paths(arguments: argparse.Namespace) -> list[str]:
    """Every dashboard page, with the listings' first and last pages (the deepest offset)
    and their biggest page size, and the search page's ways of looking."""
    waiting, per_group = arguments.waiting, arguments.failed // GROUPS
    group = "app.Job-Error0"
    return [
        "/",
        f"/queues/{QUEUE}?state=waiting",
        f"/queues/{QUEUE}?state=waiting&page={last_page(waiting)}",
        f"/queues/{QUEUE}?state=waiting&size=100&page={last_page(waiting, 100)}",
        f"/queues/{QUEUE}?state=scheduled&page={last_page(arguments.scheduled)}",
        f"/queues/{QUEUE}?state=running",
        f"/queues/{TEMPLATES}?state=recurring&size=100&page={last_page(arguments.recurring, 100)}",
        "/jobs/job-0",
        "/jobs/failed-0",
        "/failed",
        f"/failed/{group}?page={last_page(per_group)}",
        f"/failed/{group}?size=100&page={last_page(per_group, 100)}",
        "/completed",
        f"/completed?page={last_page(arguments.completed)}",
        "/tracked",
        "/tags",
        f"/tags?tag={TAG}&size=100&page={last_page(arguments.scheduled, 100)}",
        "/workers",
        f"/workers/{WORKER}",
        "/recurring",
        "/throttles",
        "/batches",
        "/config",
        "/patterns",
        "/about",
        "/shards",
        "/audit",
        "/classes",
        "/search?jid=job-7",
        "/search?class=app.Report",
        f"/search?group={group}&state=failed",
        f"/search?tag={TAG}",
        "/search?state=complete&where=n=1",
        "/search?queue=big&state=waiting&where=to=nobody",
        "/search?result=x=1&limit=5000",
        "/api/search/names",
        "/api/scaling",
    ]


def twins(path: str) -> list[str]:
    """The page and its `/api` twin (the endpoints that are only JSON alone)."""
    if path.startswith("/api/"):
        return [path]
    return [path, "/api/overview" if path == "/" else "/api" + path]


def pages(url: str, connection: redis.Redis, arguments: argparse.Namespace) -> list[str]:
    """Each page and its `/api` twin, in-process, on one client warmed up first."""
    from aqless.web import create_app

    paths = [twin for path in page_paths(arguments) for twin in twins(path)]
    lines = []

    async def visit() -> None:
        async with aqless.Client(url) as client:
            transport = httpx.ASGITransport(app=create_app(client))
            async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
                await http.get("/api/about")  # the connection and the script, before timing
                for path in paths:
                    figures = []
                    status = 200
                    for _ in range(arguments.repeat):
                        before = server_work(connection)
                        start = time.perf_counter()
                        reply = await http.get(path)
                        wall = (time.perf_counter() - start) * 1000
                        after = server_work(connection)
                        status = reply.status_code
                        if status not in (200, 303):  # 303: a jid search's way to the job
                            break
                        figures.append((wall, *(a - b for a, b in zip(after, before, strict=True))))
                    name = f"page `{path}`" if status == 200 else f"page `{path}` ({status})"
                    lines.append(row(name, medians(figures)))

    anyio.run(visit)
    return lines


#: The commands' environment: bytecode cached (as installed code has it), outside the checkout.
ENVIRONMENT = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "aqless-operators-pycache"),
}


def command(url: str, *args: str) -> bool:
    done = subprocess.run(  # noqa: S603  # our own command
        [sys.executable, "-m", "aqless.cli", "--url", url, *args],
        capture_output=True,
        text=True,
        check=False,
        env=ENVIRONMENT,
    )
    return done.returncode == 0


def commands(url: str, connection: redis.Redis, arguments: argparse.Namespace) -> list[str]:
    runs = [
        ("--version",),
        ("--help",),
        ("recurring", "list"),
        ("jobs", QUEUE, "failed", "--offset", str(max(0, arguments.failed - 25))),
        ("throttle", "list"),
        ("search", "--class", "app.Job", "--where", "to = nobody"),
        ("search", "--group", "app.Job-Error0"),
    ]
    return [
        row(
            f"`aqless {' '.join(args)}`",
            measured(connection, arguments.repeat, partial(command, url, *args)),
        )
        for args in runs
    ]


class Pinger:
    """Another client pinging the server every 2 ms on a thread; its latencies (ms)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.latencies: list[float] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self) -> None:
        other = redis.Redis.from_url(self.url)
        while not self.stop.is_set():
            start = time.perf_counter()
            other.ping()
            self.latencies.append((time.perf_counter() - start) * 1000)
            time.sleep(0.002)

    def __enter__(self) -> Pinger:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def summary(self) -> str:
        latencies = sorted(self.latencies)
        p50 = latencies[len(latencies) // 2]
        p99 = latencies[int(len(latencies) * 0.99)]
        return f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {latencies[-1]:.1f} ms"


def emptying(url: str, connection: redis.Redis, arguments: argparse.Namespace) -> list[str]:
    """`aqless queue empty` of `--empty` jobs, while another client pings every 2 ms; the
    same pings over 3 quiet seconds first, for the machine's own noise."""
    Builder(connection).put(EMPTIED, "drained", arguments.empty, 0)
    with Pinger(url) as quiet:
        time.sleep(3)
    with Pinger(url) as busy:
        start = time.perf_counter()
        done = command(url, "queue", "empty", EMPTIED, "--yes")
        seconds = time.perf_counter() - start
    left = connection.zcard(f"ql:q:{EMPTIED}-work")
    outcome = "done" if done and left == 0 else f"failed, {left} left"
    return [
        f"another client's ping, server idle: {quiet.summary()}",
        f"`aqless queue empty` of {arguments.empty:,} jobs: {seconds:.1f} s ({outcome}); "
        f"another client's ping meanwhile: {busy.summary()}",
    ]


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> None:
    arguments = parse(argv)
    with server(arguments.url) as url:
        started = time.perf_counter()
        if not (arguments.reuse and arguments.url):
            build(url, arguments)
        say(f"built in {time.perf_counter() - started:.0f} s; aqless from {aqless.__file__}")
        connection = redis.Redis.from_url(url)
        say(f"\n| what | ms (median of {arguments.repeat}) | server CPU ms | commands | SCANs |")
        say("|---|---|---|---|---|")
        parts = arguments.parts.split(",")
        if "pages" in parts:
            for line in pages(url, connection, arguments):
                say(line)
        if "commands" in parts:
            for line in commands(url, connection, arguments):
                say(line)
        if "empty" in parts:
            for line in ["", *emptying(url, connection, arguments)]:
                say(line)


if __name__ == "__main__":
    main()
