"""What a workflow's child costs to start: the time of each ``await ctx.child(...)`` (its jid
made, then one put) on one in-process worker, over --workflows workflows of --children
children each, on a plain deployment (p50/p99/mean); and the CPU of a child's jid alone, for
a plain and a sharded deployment (the sharded one searches the workflow's bucket).

Run it on another checkout (PYTHONPATH) to compare: it uses only the public API.

Uses its own Valkey (the embedded binary, on a free loopback port and a temporary folder).

    python benchmarks/workflow_children.py [--workflows 50] [--children 10]
"""

from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
import uuid
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import aqless  # noqa: E402
from aqless.workflows.children import child_jid  # noqa: E402
from tests.faults.harness import OwnServer, free_port  # noqa: E402


def figures(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p50, p99 = ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, len(ordered) * 99 // 100)]
    mean = statistics.fmean(ordered)
    return f"p50 {p50 * 1e3:.3f} ms, p99 {p99 * 1e3:.3f} ms, mean {mean * 1e3:.3f} ms"


def jid_cost(count: int) -> None:
    sharded_kind = "sharded" in inspect.signature(child_jid).parameters
    kinds = [("plain", {"sharded": False}), ("sharded", {"sharded": True})]
    for kind, options in kinds if sharded_kind else [("every deployment", {})]:
        seconds = []
        for n in range(count):
            workflow = uuid.uuid4().hex
            started = time.perf_counter()
            child_jid(workflow, str(n), **options)
            seconds.append(time.perf_counter() - started)
        sys.stdout.write(f"child_jid, {kind}: {figures(seconds)}\n")


async def put_cost(workflows: int, children: int) -> None:
    handlers = aqless.Handlers()
    seconds: list[float] = []

    @handlers.workflow("bench.Fan")
    async def fan(ctx: aqless.WorkflowContext) -> int:
        for n in range(children):
            started = time.perf_counter()
            await ctx.child("bench.Kid", {}, queue="kids", name=str(n))
            seconds.append(time.perf_counter() - started)
        return children

    server = OwnServer(port=free_port())
    server.start()
    try:
        async with aqless.Client(server.url) as client:
            jids = [await client.queues["fans"].put("bench.Fan", {}) for _ in range(workflows)]
            worker = aqless.Worker(client, ["fans"], handlers=handlers, interval=0.1)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(worker.run)
                for jid in jids:
                    await client.result(jid, timeout=60)
                worker.stop()
    finally:
        server.close()
    sys.stdout.write(
        f"ctx.child on a plain deployment ({len(seconds)} children): {figures(seconds)}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workflows", type=int, default=50)
    parser.add_argument("--children", type=int, default=10)
    arguments = parser.parse_args()
    jid_cost(arguments.workflows * arguments.children)
    anyio.run(put_cost, arguments.workflows, arguments.children)


if __name__ == "__main__":
    main()
