"""examples/fastapi_app.py over real HTTP: uvicorn on a free port, httpx as the client."""

from __future__ import annotations

import httpx
import pytest
from opentelemetry.trace import SpanContext, SpanKind

import aqless
from tests.support.examples import load_example, read_events, served, span_exporter

fastapi_app = load_example("fastapi_app")


async def wait_complete(url: str, jid: str) -> None:
    async with aqless.Client(url) as client:
        assert await client.wait(jid, timeout=10) == aqless.JobState.COMPLETE


async def test_put_from_an_endpoint_stream_its_events_and_see_the_dashboard(
    server_url: str,
) -> None:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
    app = fastapi_app.create_app(server_url)
    async with served(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        async with http.stream("GET", "/events") as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.aiter_lines()
            assert await anext(lines) == ": subscribed"  # no event is missed from here
            reply = await http.post("/signups", json={"email": "ann@example.com"})
            assert reply.status_code == 200
            jid = reply.json()["jid"]
            events = await read_events(lines, until="completed")
        assert ("put", {"jid": jid, "queue": "signups", "to": None}) in events
        assert events[-1][0] == "completed"
        assert events[-1][1]["jid"] == jid
        job = (await http.get(f"/jobs/{jid}")).json()
        assert job == {"jid": jid, "state": "complete", "queue": ""}
        assert (await http.get("/jobs/nope")).status_code == 404
        assert (await http.post("/signups", json={})).status_code == 422
        overview = (await http.get("/aqless/api/overview")).json()
        assert "signups" in [queue["name"] for queue in overview["queues"]]
        page = await http.get("/aqless/")
        assert page.status_code == 200
        assert 'href="/aqless/' in page.text  # links work under the mount prefix


async def test_an_endpoint_puts_a_job_and_awaits_its_result(server_url: str) -> None:
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
    app = fastapi_app.create_app(server_url)
    async with served(app) as base, httpx.AsyncClient(base_url=base, timeout=15) as http:
        reply = await http.post("/checks", json={"email": "ann@Example.com"})
        assert reply.status_code == 200, reply.text
        answer = reply.json()
        assert answer["result"] == {"deliverable": True, "domain": "example.com"}
        job = (await http.get(f"/jobs/{answer['jid']}")).json()
        assert job["state"] == "complete"
        refused = await http.post("/checks", json={"email": "nobody"})
        assert refused.status_code == 422
        assert refused.json() == {"detail": "ValueError: 'nobody' has no domain"}


async def test_a_trace_started_in_a_request_holds_the_workers_processing_span(
    server_url: str,
) -> None:
    exporter = span_exporter()
    exporter.clear()
    async with aqless.Client(server_url) as client:
        await client.redis.flushall()
    app = fastapi_app.create_app(server_url, tracing=True)
    # the caller's trace (as an upstream service would send it); FastAPI's own telemetry
    # starts the request's span from it
    trace_id, caller_span = 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331
    traceparent = f"00-{trace_id:032x}-{caller_span:016x}-01"
    async with served(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        reply = await http.post(
            "/signups", json={"email": "bob@example.com"}, headers={"traceparent": traceparent}
        )
        jid = reply.json()["jid"]
        await wait_complete(server_url, jid)
    finished = exporter.get_finished_spans()
    (request,) = [s for s in finished if s.kind == SpanKind.SERVER and "signups" in s.name]
    spans = {span.name: span for span in finished}
    send, process = spans["send signups"], spans["process signups"]
    assert request.parent is not None
    assert request.parent.span_id == caller_span
    assert send.kind == SpanKind.PRODUCER
    assert process.kind == SpanKind.CONSUMER
    assert request.context.trace_id == trace_id
    assert send.context.trace_id == process.context.trace_id == trace_id
    assert send.parent is not None
    ancestors = {s.context.span_id: s.parent for s in finished if s.parent is not None}
    # the put runs in the endpoint's span, inside the request's
    parent: SpanContext | None = send.parent
    chain: list[int] = []
    while parent is not None:
        chain.append(parent.span_id)
        parent = ancestors.get(parent.span_id)
    assert request.context.span_id in chain
    assert process.parent is not None
    assert process.parent.span_id == send.context.span_id
    assert process.attributes is not None
    assert process.attributes["messaging.message.id"] == jid
    assert process.attributes["messaging.destination.name"] == "signups"
    # the job's code never saw the context, and the completed job keeps none
    async with aqless.Client(server_url) as client:
        job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    assert job.data == {"email": "bob@example.com"}


@pytest.fixture(autouse=True)
def _fresh_spans() -> None:
    span_exporter().clear()
