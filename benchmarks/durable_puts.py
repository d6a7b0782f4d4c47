"""Durable puts against a server SIGKILLed right after each reply, and what durability costs.

For each ``appendfsync`` (``always``, ``everysec``): a Valkey server of its own (AOF on) takes
`--tries` durable puts (``durable=True``: WAITAOF 1 0), each followed at once by a SIGKILL
of the server and a restart on the same data; prints how many acknowledged jobs were
missing afterwards. Then, on a server left running, the time of a durable put against a
plain one (`--puts` each, one after another).

    python benchmarks/durable_puts.py [--tries 1000] [--puts 500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import anyio

import aqless

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.faults.durable import kill_after_each_put  # noqa: E402
from tests.faults.harness import OwnServer  # noqa: E402


async def put_times(server: OwnServer, puts: int, durable: bool) -> list[float]:
    """Seconds of each of `puts` puts made one after another."""
    seconds: list[float] = []
    async with aqless.Client(server.url) as client:
        queue = client.queues["cost"]
        await queue.put("app.Job", {}, durable=durable)  # connects and loads the protocol
        for _ in range(puts):
            started = time.perf_counter()
            await queue.put("app.Job", {}, durable=durable)
            seconds.append(time.perf_counter() - started)
    return seconds


def describe(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(tries: int, puts: int) -> None:
    for appendfsync in ("always", "everysec"):
        server = OwnServer(appendfsync)
        server.start()
        try:
            tally = await kill_after_each_put(server, tries, durable=True)
            lost = f"lost {len(tally.lost)} of {tally.tries} durable puts"
            say(f"appendfsync {appendfsync}: {lost}, SIGKILLed after each")
            plain = await put_times(server, puts, durable=False)
            durable = await put_times(server, puts, durable=True)
            say(f"  plain put:   {describe(plain)}")
            say(f"  durable put: {describe(durable)}")
        finally:
            server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tries", type=int, default=1000)
    parser.add_argument("--puts", type=int, default=500)
    options = parser.parse_args()
    anyio.run(main, options.tries, options.puts)
