"""examples/flask_app.py: its views in Flask's test client and over real HTTP (werkzeug's
threaded server, httpx), against a real server, a worker running the jobs."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
import redis
from flask import Flask

from tests.support.examples import (
    EXAMPLES,
    assert_views_wait_for_the_worker,
    load_example,
    run_worker,
    signup_handlers,
    wsgi_served,
)

flask_app = load_example("flask_app")


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
    run_worker(server_url, ["signups"], signup_handlers).join()
    done = http.get(f"/jobs/{jid}?wait=10").get_json()
    assert done == {"jid": jid, "state": "complete", "queue": ""}
    assert http.get("/jobs/nope").status_code == 404
    assert http.post("/signups", json={}).status_code == 422


def test_over_http_a_view_waits_for_the_worker(app: Flask, server_url: str) -> None:
    assert_views_wait_for_the_worker(app, server_url, app.extensions["aqless"], form=False)


def test_the_shipped_job_module_finishes_a_signup_over_http(app: Flask, server_url: str) -> None:
    """What the example's docstring says to run: the app over HTTP, and ``aqless-run`` with
    examples/signups.py's handlers as the worker."""
    with wsgi_served(app) as base, httpx.Client(base_url=base, timeout=20) as http:
        jid = http.post("/signups", json={"email": "ann@example.com"}).json()["jid"]
        worker = subprocess.run(
            [
                sys.executable, "-m", "aqless.run", "--url", server_url, "--path", str(EXAMPLES),
                "--handlers", "signups:handlers", "-q", "signups", "--burst",
            ],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert worker.returncode == 0, worker.stderr
        assert http.get(f"/jobs/{jid}", params={"wait": 10}).json()["state"] == "complete"
