"""examples/django_app/app.py: its views in Django's test client and over real HTTP (its
WSGI application on werkzeug's threaded server, httpx), against a real server, a worker
running the jobs."""

from __future__ import annotations

from collections.abc import Iterator

import django
import pytest
import redis
from django.core.wsgi import get_wsgi_application
from django.test import Client as DjangoClient

import aqless
import aqless.sync
from tests.support.examples import (
    assert_views_wait_for_the_worker,
    load_example,
    run_worker,
    signup_handlers,
)

django_app = load_example("django_app/app")
django.setup()


@pytest.fixture
def client(server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[aqless.sync.Client]:
    """The project's client, on this test's server (it reads AQLESS_URL when it starts)."""
    with redis.Redis.from_url(server_url) as connection:
        connection.flushall()
    with aqless.sync.Client(server_url) as client:
        monkeypatch.setattr(django_app, "client", client)
        yield client


def test_put_and_read_in_the_test_client(client: aqless.sync.Client, server_url: str) -> None:
    http = DjangoClient()
    reply = http.post("/signups", {"email": "ann@example.com"})
    assert reply.status_code == 200
    jid = reply.json()["jid"]
    assert http.get(f"/jobs/{jid}").json() == {"jid": jid, "state": "waiting", "queue": "signups"}
    assert client.queues["signups"].length() == 1
    run_worker(server_url, ["signups"], signup_handlers).join()
    done = http.get(f"/jobs/{jid}", {"wait": 10}).json()
    assert done == {"jid": jid, "state": "complete", "queue": ""}
    assert http.get("/jobs/nope").status_code == 404
    assert http.post("/signups", {}).status_code == 422
    assert http.get("/signups").status_code == 405


def test_over_http_a_view_waits_for_the_worker(client: aqless.sync.Client, server_url: str) -> None:
    assert_views_wait_for_the_worker(get_wsgi_application(), server_url, client, form=True)
