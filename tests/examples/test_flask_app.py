"""examples/flask_app.py: its views in Flask's test client and over real HTTP (werkzeug's
threaded server, httpx), against a real server, a worker running the jobs."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import redis
from flask import Flask

import aqless
import aqless.sync
from tests.examples.helpers import load_example, run_worker, wsgi_served

flask_app = load_example("flask_app")

handlers = aqless.Handlers()


@handlers.register("signups.SendWelcome")
async def send_welcome(job: aqless.Job) -> None:
    await job.log("sent", to=job.data["email"])


@pytest.fixture
def app(server_url: str) -> Iterator[Flask]:
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    app: Flask = flask_app.create_app(server_url)
    yield app
    app.extensions["aqless"].close()


def test_put_and_read_in_the_test_client(app: Flask, server_url: str) -> None:
    http = app.test_client()
    reply = http.post("/signups", json={"email": "ann@example.com"})
    assert reply.status_code == 200
    jid = reply.get_json()["jid"]
    assert http.get(f"/jobs/{jid}").get_json() == {
        "jid": jid,
        "state": "waiting",
        "queue": "signups",
    }
    run_worker(server_url, ["signups"], handlers).join()
    done = http.get(f"/jobs/{jid}?wait=10").get_json()
    assert done == {"jid": jid, "state": "complete", "queue": ""}
    assert http.get("/jobs/nope").status_code == 404
    assert http.post("/signups", json={}).status_code == 422


def test_over_http_a_view_waits_for_the_worker(app: Flask, server_url: str) -> None:
    with wsgi_served(app) as base, httpx.Client(base_url=base, timeout=20) as http:
        jids = [
            http.post("/signups", json={"email": f"{n}@example.com"}).json()["jid"]
            for n in range(5)
        ]
        worker = run_worker(server_url, ["signups"], handlers)
        try:
            for jid in jids:  # each request blocks its own thread until the job is done
                assert http.get(f"/jobs/{jid}", params={"wait": 10}).json()["state"] == "complete"
        finally:
            worker.join()
    client: aqless.sync.Client = app.extensions["aqless"]
    job = client.jobs.get(jids[0])
    assert isinstance(job, aqless.sync.SyncJob)
    assert job.history[-2].what == "sent"
