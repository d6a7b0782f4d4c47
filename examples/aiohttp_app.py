"""aqless in an aiohttp service: the client opened in a cleanup context, jobs put from a
handler, the server's events streamed as server-sent events, and a worker in the same
process. The dashboard is an ASGI app, which aiohttp does not host: serve it beside the
service with ``aqless web --port 8001``.

    pip install 'aqless[web,embedded]' aiohttp
    python examples/aiohttp_app.py --port 8000

    curl -X POST localhost:8000/signups -H 'content-type: application/json' \\
         -d '{"email": "ann@example.com"}'         # {"jid": "..."}
    curl localhost:8000/jobs/<jid>                 # {"state": "complete", ...}
    curl -N localhost:8000/events                  # every job event, as it happens
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator

import anyio
from aiohttp import web

import aqless

handlers = aqless.Handlers()
WELCOME = "signups.SendWelcome"
CLIENT = web.AppKey("client", aqless.Client)


@handlers.register(WELCOME)
async def send_welcome(job: aqless.Job) -> None:
    await anyio.sleep(0.05)  # e.g. talk to the mail service
    await job.log("sent", to=job.data["email"])


async def signup(request: web.Request) -> web.Response:
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("email"), str):
        raise web.HTTPUnprocessableEntity(text="expected {'email': '...'}")
    jid = await request.app[CLIENT].queues["signups"].put(WELCOME, {"email": body["email"]})
    return web.json_response({"jid": jid})


async def job(request: web.Request) -> web.Response:
    found = await request.app[CLIENT].jobs.get(request.match_info["jid"])
    if not isinstance(found, aqless.Job):
        raise web.HTTPNotFound(text="no such job")
    return web.json_response({"jid": found.jid, "state": found.state, "queue": found.queue_name})


async def events(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    # the client going away cancels this handler; leaving the block unsubscribes, shielded
    async with request.app[CLIENT].events("log") as subscription:
        await response.write(b": subscribed\n\n")  # from here on, no event is missed
        async for event in subscription:
            fields = json.dumps({"jid": event.jid, "queue": event.queue, "to": event.to})
            await response.write(f"event: {event.kind}\ndata: {fields}\n\n".encode())
    return response


def create_app(url: str | None = None, *, worker: bool = True) -> web.Application:
    """The service; `url` names the server (default: AQLESS_URL, else the embedded one)."""
    app = web.Application()

    async def aqless_context(app: web.Application) -> AsyncIterator[None]:
        async with aqless.Client(url) as client, anyio.create_task_group() as tasks:
            app[CLIENT] = client
            runner = aqless.Worker(client, ["signups"], handlers=handlers, grace=5)
            if worker:
                tasks.start_soon(runner.run)
            yield
            runner.stop()

    app.cleanup_ctx.append(aqless_context)
    app.router.add_post("/signups", signup)
    app.router.add_get("/jobs/{jid}", job)
    app.router.add_get("/events", events)
    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    options = parser.parse_args()
    print(f"serving on http://{options.host}:{options.port}; dashboard: aqless web")
    web.run_app(create_app(), host=options.host, port=options.port)
