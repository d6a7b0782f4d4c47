"""Loading an example as a module, serving an ASGI app with a real uvicorn on a free port,
and an in-memory OpenTelemetry exporter."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import uvicorn
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import aqless
import aqless.sync
from tests.support.processes import run_python

EXAMPLES = Path(__file__).parent.parent.parent / "examples"


def load_example(name: str) -> ModuleType:
    """examples/<name>.py as a module (examples/ is not a package; `name` may name a file
    in a folder, ``django_app/app``)."""
    module_name = f"aqless_example_{name.replace('/', '_')}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """Serve `app` (lifespan included) with uvicorn on 127.0.0.1, a free port; yield its
    base URL. Stopped on exit."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(server.serve)
        with anyio.fail_after(20):
            while not server.started:  # noqa: ASYNC110  # uvicorn offers no event
                await anyio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


@contextmanager
def wsgi_served(app: Any) -> Iterator[str]:
    """Serve a WSGI `app` with werkzeug's threaded server on 127.0.0.1, a free port, on a
    thread; yield its base URL. Stopped on exit."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()


def run_worker(url: str, queues: list[str], handlers: Any) -> threading.Thread:
    """A burst worker on its own thread and event loop: it runs the queues' jobs, then ends."""

    async def work() -> None:
        async with aqless.Client(url) as client:
            await aqless.Worker(client, queues, handlers=handlers, burst=True).run()

    thread = threading.Thread(target=anyio.run, args=(work,))
    thread.start()
    return thread


#: What the sync examples' signups enqueue: the handlers examples/signups.py ships.
signup_handlers = load_example("signups").handlers


def assert_views_wait_for_the_worker(
    app: Any, url: str, client: aqless.sync.Client, *, form: bool
) -> None:
    """Over real HTTP: five signups (posted as a form or as JSON), then one view per job
    that waits for the worker; each request blocks its own thread until its job is done."""
    with wsgi_served(app) as base, httpx.Client(base_url=base, timeout=20) as http:
        jids = []
        for n in range(5):
            fields = {"email": f"{n}@example.com"}
            reply = (
                http.post("/signups", data=fields) if form else http.post("/signups", json=fields)
            )
            jids.append(reply.json()["jid"])
        worker = run_worker(url, ["signups"], signup_handlers)
        try:
            for jid in jids:
                assert http.get(f"/jobs/{jid}", params={"wait": 10}).json()["state"] == "complete"
        finally:
            worker.join()
    job = client.jobs.get(jids[0])
    assert isinstance(job, aqless.sync.SyncJob)
    assert job.history[-2].what == "sent"


_exporter: InMemorySpanExporter | None = None


def span_exporter() -> InMemorySpanExporter:
    """The global tracer provider, set once per process to an SDK one exporting here."""
    global _exporter
    if _exporter is None:
        _exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_exporter))
        trace.set_tracer_provider(provider)
    return _exporter


async def read_events(lines: AsyncIterator[str], until: str) -> list[tuple[str, dict[str, Any]]]:
    """Server-sent events (kind, JSON data) from a stream's lines, up to the first `until`."""
    events: list[tuple[str, dict[str, Any]]] = []
    kind = ""
    with anyio.fail_after(10):
        async for line in lines:
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))
                if kind == until:
                    break
    return events


def run_example(name: str, url: str) -> subprocess.CompletedProcess[str]:
    """Run examples/<name> in a fresh process on the server at `url`."""
    return run_python(str(EXAMPLES / name), env={"AQLESS_URL": url})
