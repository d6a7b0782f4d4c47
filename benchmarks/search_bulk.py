"""`aqless search` and an action on every job it found, at scale: `--jobs` failed jobs spread
over 3 queues (and as many waiting ones the search must pass over), then the search timed
with its stated cost, then `--retry` and `--delete` of the whole set found, each timed while
another client pings the server every 2 ms, whose latency (p50, p99, max) says how long the
action held the server (paced slices: about 5 ms a call). Run on demand, not in the tests:

    python benchmarks/search_bulk.py [--jobs 10000] [--url ...]

Without `--url`, an embedded Valkey is started (and thrown away).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence

import redis

import aqless
from benchmarks.lua_cost import server
from benchmarks.operators import BATCH, ENVIRONMENT, WORKER, Builder, Pinger, say

QUEUES = ("imports-a", "imports-b", "imports-c")


def output(url: str, *args: str) -> dict[str, object]:
    """The JSON document `aqless --json ARGS` prints (a process of its own)."""
    done = subprocess.run(  # noqa: S603  # our own command
        [sys.executable, "-m", "aqless.cli", "--url", url, "--json", *args],
        capture_output=True,
        text=True,
        check=True,
        env=ENVIRONMENT,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


class Slowest:
    """The server's own account of the calls that held it (SLOWLOG, from 1 ms): how many,
    and the longest with its command, read after the block."""

    def __init__(self, url: str) -> None:
        self.connection = redis.Redis.from_url(url)

    def __enter__(self) -> Slowest:
        self.connection.config_set("slowlog-log-slower-than", 1000)
        self.connection.config_set("slowlog-max-len", 10000)
        self.connection.slowlog_reset()
        return self

    def __exit__(self, *exc: object) -> None:
        self.entries = self.connection.slowlog_get(10000)

    def summary(self) -> str:
        if not self.entries:
            return "no call held the server 1 ms or more"
        longest = max(self.entries, key=lambda entry: entry["duration"])
        words = longest["command"].split()
        what = " ".join(
            str(word, "utf-8", "replace") if isinstance(word, bytes) else str(word)
            for word in words[:4]
        )
        over5 = sum(1 for entry in self.entries if entry["duration"] > 5000)
        return (
            f"{len(self.entries)} calls held the server 1 ms or more ({over5} over 5 ms), "
            f"the longest {longest['duration'] / 1000:.1f} ms ({what}...)"
        )


def build(url: str, jobs: int) -> None:
    connection = redis.Redis.from_url(url)
    connection.flushall()
    builder = Builder(connection)
    for n, queue in enumerate(QUEUES):
        count = jobs // len(QUEUES) + (1 if n < jobs % len(QUEUES) else 0)
        jids = builder.put(queue, f"{queue}-failed", count, 0)
        for start in range(0, count, BATCH):
            builder.calls([("queue.pop", queue, WORKER, min(BATCH, count - start))])
        builder.calls([("job.fail", jid, WORKER, f"{queue}-Boom", "boom") for jid in jids])
        builder.put(queue, f"{queue}-waiting", count, 0)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000, help="failed jobs (at most 10,000)")
    parser.add_argument("--url", help="a server to fill (FLUSHALL first!); default: embedded")
    arguments = parser.parse_args(argv)
    with server(arguments.url) as url:
        build(url, arguments.jobs)
        say(f"built; aqless from {aqless.__file__}")
        filters = ("--class", "app.Job", "--state", "failed", "--limit", "10000")
        with Slowest(url) as held:
            start = time.perf_counter()
            found = output(url, "search", *filters)
            seconds = time.perf_counter() - start
        say(
            f"`aqless search {' '.join(filters)}`: {found.get('matched')} found in "
            f"{seconds * 1000:.0f} ms (process start-up included); "
            f"stated cost {found.get('cost')}; "
            f"the server's slow log: {held.summary()}"
        )
        with Pinger(url) as quiet:
            time.sleep(3)
        say(f"another client's ping, server idle: {quiet.summary()}")
        for flag in ("--retry", "--delete"):
            chosen = filters if flag == "--retry" else ("--class", "app.Job", "--limit", "10000")
            with Pinger(url) as busy, Slowest(url) as held:
                start = time.perf_counter()
                done = output(url, "search", *chosen, flag, "--yes")
                seconds = time.perf_counter() - start
            action = done.get("action")
            if not isinstance(action, dict):
                raise SystemExit(f"no action in {done}")
            say(
                f"`aqless search ... {flag} --yes`: {action.get('done')} of {action.get('total')} "
                f"jobs in {seconds:.1f} s; another client's ping meanwhile: {busy.summary()}; "
                f"the server's slow log: {held.summary()}"
            )


if __name__ == "__main__":
    main()
