"""A first look at aqless: a worker running the classic qless examples, drawn as it goes.

Runs on the embedded Valkey 9 (or AQLESS_URL), under the namespace ``aqless-demo``:

- the gnomes' plan, a pipeline: underpants -> unknown -> profit, each step handing the job on
  with ``job.complete(next_queue)``;
- a turkey that waits for its stuffing (a dependency);
- a recurring job, spawned every second;
- a flaky job that fails once and is retried after a backoff.

    python examples/demo.py            (or: nox -s demo)
"""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import sys

import anyio
from rich.console import Console
from rich.live import Live
from rich.table import Table

import aqless
from aqless import embedded

NAMESPACE = "aqless-demo"
PIPELINE = ("underpants", "unknown", "profit")
handlers = aqless.Handlers()


@handlers.register("demo.Gnomes")
class Gnomes:
    """Collect underpants; ?; profit. One method per queue, each handing the job on."""

    @staticmethod
    async def underpants(job: aqless.Job) -> None:
        await anyio.sleep(0.2)
        job.data["underpants"] = job.data["gnome"] * 3
        await job.complete("unknown")

    @staticmethod
    async def unknown(job: aqless.Job) -> None:
        await anyio.sleep(0.3)
        await job.complete("profit")

    @staticmethod
    async def profit(job: aqless.Job) -> None:
        await anyio.sleep(0.1)
        await job.log("profit", underpants=job.data["underpants"])


@handlers.register("demo.Stuffing")
async def stuffing(job: aqless.Job) -> None:
    await anyio.sleep(0.5)


@handlers.register("demo.Turkey")
async def turkey(job: aqless.Job) -> None:
    await anyio.sleep(0.2)  # runs only once the stuffing is complete


@handlers.register("demo.Tick")
async def tick(job: aqless.Job) -> None:
    pass


@handlers.register("demo.Flaky")
async def flaky(job: aqless.Job) -> None:
    if job.retries_left == job.original_retries:
        raise ConnectionError("the first attempt always fails")


async def clear(client: aqless.Client) -> None:
    """Remove what an earlier demo left in the namespace."""
    async for key in client.redis.scan_iter(match=f"{NAMESPACE}:ql:*", count=1000):
        await client.redis.delete(key)


async def enqueue(client: aqless.Client) -> list[str]:
    queues = client.queues
    jids = await queues["underpants"].put_many(
        aqless.PutRequest("demo.Gnomes", {"gnome": n}, tags=("gnomes",)) for n in range(1, 9)
    )
    stuffing_jid = await queues["kitchen"].put("demo.Stuffing", {})
    jids += [stuffing_jid, await queues["kitchen"].put("demo.Turkey", {}, depends=[stuffing_jid])]
    jids.append(await queues["kitchen"].put("demo.Flaky", {}, retries=2))
    await queues["clock"].recur("demo.Tick", {}, interval=1, jid="tick")
    return jids


def progress(counts: list[aqless.QueueCounts], done: int, total: int) -> Table:
    table = Table(title=f"aqless demo: {done}/{total} jobs finished", title_justify="left")
    for column in ("queue", "waiting", "running", "scheduled", "depends", "recurring"):
        table.add_column(column, justify="left" if column == "queue" else "right")
    for queue in sorted(counts, key=lambda c: c.name):
        table.add_row(
            queue.name,
            *(
                str(value)
                for value in (
                    queue.waiting,
                    queue.running,
                    queue.scheduled,
                    queue.depends,
                    queue.recurring,
                )
            ),
        )
    return table


async def watch(client: aqless.Client, jids: list[str], console: Console) -> None:
    """Redraw the queues' counts until every job put is complete."""
    with Live(console=console, refresh_per_second=10, transient=False) as live:
        while True:
            jobs = await client.jobs.get_many(jids)
            done = sum(job.state == aqless.JobState.COMPLETE for job in jobs)
            live.update(progress(await client.queues.counts(), done, len(jids)))
            if done == len(jids):
                return
            await anyio.sleep(0.1)


async def summary(client: aqless.Client, console: Console) -> None:
    table = Table(title="today's statistics", title_justify="left")
    for column in ("queue", "runs", "mean wait ms", "mean run ms", "failures", "retries"):
        table.add_column(column, justify="left" if column == "queue" else "right")
    for name in (*PIPELINE, "kitchen", "clock"):
        stats = await client.queues[name].stats()
        table.add_row(
            name,
            str(stats.run.count),
            f"{stats.wait.mean * 1000:.1f}",
            f"{stats.run.mean * 1000:.1f}",
            str(stats.failures),
            str(stats.retries),
        )
    console.print(table)


def listening_socket(preferred: int = 8000) -> socket.socket:
    """A socket bound to `preferred` if nothing listens there, else to any free port; held
    from here on, so no other program can take the port before the dashboard serves it."""
    for port in (preferred, 0):
        bound = socket.socket()
        try:
            bound.bind(("127.0.0.1", port))
        except OSError:
            bound.close()
            continue
        return bound
    raise OSError("no free port")


async def dashboard(client: aqless.Client, bound: socket.socket, stop: anyio.Event) -> None:
    """Serve the dashboard on the `bound` socket until `stop` is set."""
    import uvicorn

    from aqless.web import create_app

    config = uvicorn.Config(create_app(client), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    with bound:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [bound])
            await stop.wait()
            server.should_exit = True


async def main() -> None:
    console = Console()
    async with aqless.Client(namespace=NAMESPACE) as client, anyio.create_task_group() as web:
        console.print(f"server: [bold]{client.url}[/], keys under [bold]{client.prefix}[/]")
        stop_dashboard = anyio.Event()
        if importlib.util.find_spec("uvicorn") is not None:
            bound = listening_socket()
            port = bound.getsockname()[1]
            web.start_soon(dashboard, client, bound, stop_dashboard)
            console.print(f"dashboard: [bold]http://127.0.0.1:{port}/[/] (live while this runs)")
        await clear(client)
        jids = await enqueue(client)
        worker = aqless.Worker(
            client,
            [*PIPELINE, "kitchen", "clock"],
            handlers=handlers,
            concurrency=8,
            interval=0.5,
            backoff=aqless.Backoff(base=0.5, jitter=0),
        )
        async with anyio.create_task_group() as group:
            group.start_soon(worker.run)
            with anyio.fail_after(60):
                await watch(client, jids, console)
            worker.stop()
        recurring = await client.jobs.get("tick")
        if isinstance(recurring, aqless.RecurringJob):
            await recurring.cancel()
        await summary(client, console)
        counters = worker.counters
        console.print(
            f"worker {worker.name}: {counters.completed} completed, {counters.retried} retried, "
            f"{counters.failed} failed"
        )
        if not stop_dashboard.is_set() and sys.stdin.isatty():
            console.print("The dashboard stays up: press Ctrl-C to stop.")
            await anyio.sleep_forever()
        stop_dashboard.set()
        console.print(
            f"Later: [bold]aqless web --namespace {NAMESPACE}[/] serves the dashboard again "
            "(pip install 'aqless\\[web]')."
        )
        running = embedded.find()
        if running is not None and client.url == running.url:
            console.print(
                "The embedded Valkey keeps running, with your data, after the demo: "
                "[bold]aqless server status[/] shows it, [bold]aqless server stop[/] stops it."
            )


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(130)
