"""aqless in a FastAPI service: the client opened in the lifespan, jobs put from an endpoint,
the server's events streamed to browsers as server-sent events, the dashboard mounted at
``/aqless``, and a worker running in the same process.

    pip install 'aqless[web,embedded]' fastapi uvicorn
    python examples/fastapi_app.py --port 8000      (or: uvicorn examples.fastapi_app:app)

    curl -X POST localhost:8000/signups -H 'content-type: application/json' \\
         -d '{"email": "ann@example.com"}'         # {"jid": "..."}
    curl localhost:8000/jobs/<jid>                 # {"state": "complete", ...}
    curl -X POST localhost:8000/checks -H 'content-type: application/json' \
         -d '{"email": "ann@example.com"}'         # put, then await the job's answer
    curl -N localhost:8000/events                  # every job event, as it happens
    open http://localhost:8000/aqless/             # the dashboard

It uses AQLESS_URL (or the embedded Valkey). In production, run the workers apart
(``aqless-run -i app.jobs signups``) and drop ``worker=True``. With ``tracing=True``
(``pip install 'aqless[otel]'``), a put made while a request's span is active (e.g. with
opentelemetry-instrumentation-fastapi) shows the job's processing in the request's trace.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

import aqless
from aqless.web import create_app as create_dashboard
from aqless.worker import Middleware

handlers = aqless.Handlers()
WELCOME = "signups.SendWelcome"  # the klass name jobs carry; any worker registering it runs them


@handlers.register(WELCOME)
async def send_welcome(job: aqless.Job) -> None:
    await anyio.sleep(0.05)  # e.g. talk to the mail service
    await job.log("sent", to=job.data["email"])


CHECK = "signups.CheckEmail"


@handlers.register(CHECK)
async def check_email(job: aqless.Job) -> dict[str, object]:
    domain = job.data["email"].partition("@")[2]
    if not domain:
        raise ValueError(f"{job.data['email']!r} has no domain")
    return {"deliverable": "." in domain, "domain": domain.lower()}  # kept as the result


class Signup(BaseModel):
    email: str


def create_app(url: str | None = None, *, worker: bool = True, tracing: bool = False) -> FastAPI:
    """The service; `url` names the server (default: AQLESS_URL, else the embedded one)."""
    client = aqless.Client(url)  # no I/O yet: opened in the lifespan
    middleware: list[Middleware] = []
    if tracing:
        from aqless import tracing as otel

        otel.instrument(client)  # every put carries the current trace
        middleware.append(otel.middleware)  # the worker continues it (put it first)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with client, anyio.create_task_group() as tasks:
            runner = aqless.Worker(
                client, ["signups"], handlers=handlers, middleware=middleware, grace=5
            )
            if worker:
                tasks.start_soon(runner.run)
            yield
            runner.stop()  # running jobs get 5 s, then go back to their queue

    app = FastAPI(title="signups", lifespan=lifespan)
    app.mount("/aqless", create_dashboard(client))

    @app.post("/signups")
    async def signup(signup: Signup) -> dict[str, str]:
        jid = await client.queues["signups"].put(WELCOME, {"email": signup.email})
        return {"jid": jid}

    @app.post("/checks")
    async def check(signup: Signup) -> dict[str, object]:
        """Enqueue, then await the answer: a worker anywhere runs the job."""
        jid = await client.queues["signups"].put(CHECK, {"email": signup.email})
        try:
            return {"jid": jid, "result": await client.result(jid, timeout=10)}
        except aqless.JobFailedError as failed:
            raise HTTPException(422, failed.message.strip().splitlines()[-1]) from failed
        except aqless.ResultTimeoutError as late:
            raise HTTPException(504, f"job {jid} is still running") from late

    @app.get("/jobs/{jid}")
    async def job(jid: str) -> dict[str, object]:
        found = await client.jobs.get(jid)
        if not isinstance(found, aqless.Job):
            raise HTTPException(404, f"no job {jid}")
        return {"jid": found.jid, "state": found.state, "queue": found.queue_name}

    @app.get("/events")
    async def events() -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
            # leaving the block (the browser went away) unsubscribes, shielded
            async with client.events("log") as subscription:
                yield ": subscribed\n\n"  # a comment: from here on, no event is missed
                async for event in subscription:
                    fields = {"jid": event.jid, "queue": event.queue, "to": event.to}
                    yield f"event: {event.kind}\ndata: {json.dumps(fields)}\n\n"

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    return app


app = create_app()

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args()
    print(f"serving on http://{options.host}:{options.port} (dashboard: /aqless/)")
    uvicorn.run(app, host=options.host, port=options.port)
