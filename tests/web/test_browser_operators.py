"""Operators' pages in a real Chromium: the dashboard's own users and roles, and the Audit
page listing what was done, by whom."""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page

import aqless
from aqless._worker.info import InfoPublisher
from aqless.web.auth import Users
from tests.web.data import Deployment, populate
from tests.web.live_server import LiveServer, live_server

pytestmark = pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)


def as_user(page: Page, name: str, secret: str) -> None:
    token = base64.b64encode(f"{name}:{secret}".encode()).decode()
    page.set_extra_http_headers({"authorization": f"Basic {token}"})


@pytest.fixture(scope="module")
def _guarded_server(server_url: str) -> Iterator[LiveServer]:
    users = Users(["ann:open-sesame", "bob:b0b:read-only"])
    with live_server(server_url, users=users) as server:
        yield server


@pytest.fixture
def guarded(_guarded_server: LiveServer) -> LiveServer:
    _guarded_server.run(lambda client: client.redis.flushall())
    return _guarded_server


def test_the_audit_page_lists_an_action_done_in_the_page(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    live.run(populate)
    page.goto(live.url + "/queues/emails")
    page.get_by_role("button", name="Pause").click()
    page.wait_for_selector(".flash-ok")
    page.get_by_role("navigation").get_by_role("link", name="Audit").click()
    row = page.locator("table.audit tbody tr").first
    assert row.locator("td.action").inner_text() == "queue_pause"
    assert row.locator("td.targets").inner_text() == "emails"
    assert row.locator("td.who").inner_text() == "anonymous (127.0.0.1)"
    assert row.locator("td.outcome").inner_text() == "ok"
    page.screenshot(path=artifacts / "audit.png", full_page=True)


def test_users_sign_in_and_a_read_only_user_cannot_act(guarded: LiveServer, page: Page) -> None:
    deployment: Deployment = guarded.run(populate)
    refused = page.request.get(guarded.url + "/")  # Chromium itself would ask for a password
    assert refused.status == 401
    assert 'Basic realm="aqless dashboard"' in refused.headers["www-authenticate"]

    as_user(page, "bob", "b0b")
    page.goto(guarded.url + "/jobs/" + deployment.waiting[1])
    assert page.locator("main").get_by_text("app.jobs.SendEmail").first.is_visible()
    assert page.get_by_role("button", name="Cancel").count() == 0
    page.goto(guarded.url + "/queues/emails")
    assert page.get_by_role("button", name="Pause").count() == 0

    as_user(page, "ann", "open-sesame")
    page.goto(guarded.url + "/queues/emails")
    page.get_by_role("button", name="Pause").click()
    page.wait_for_selector(".flash-ok")
    assert guarded.run(lambda client: client.queues["emails"].counts()).paused
    page.goto(guarded.url + "/audit")
    assert page.locator("table.audit td.who").all_inner_texts() == ["ann"]


def test_the_workers_page_shows_what_workers_publish(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    live.run(populate)

    async def publish(client: aqless.Client) -> None:
        counters = aqless.WorkerCounters(completed=30)
        await InfoPublisher(client, "aq-worker-1", ["emails", "reports"], 8, counters).publish()

    live.run(publish)
    page.goto(live.url + "/workers")
    row = page.locator("table.workers tr[data-worker=aq-worker-1]")
    assert row.locator("td.host").inner_text() == socket.gethostname()
    assert row.locator("td.pid").inner_text() == str(os.getpid())
    assert row.locator("td.queues").inner_text() == "emails, reports"
    assert row.locator("td.slots").inner_text() == "8"
    assert row.locator("td.done").inner_text() == "30"
    other = page.locator("table.workers tr[data-worker=mail-worker-1]")
    assert "no record" in other.inner_text()  # another client's worker, holding jobs
    assert page.locator("table.others").get_by_text("mail-worker-2").is_visible()  # holds none
    page.screenshot(path=artifacts / "workers.png", full_page=True)
    row.get_by_role("link", name="aq-worker-1").click()
    assert page.locator("dl.worker-info").get_by_text("emails, reports").is_visible()


def drawn(chart: Locator, series: str) -> int:
    """The jobs a chart's bars of `series` stand for (each bar's title: `HH:MM: N series`)."""
    titles = chart.locator(f"rect.bar.s-{series} title").all_text_contents()
    return sum(int(title.rsplit(": ", 1)[1].split()[0]) for title in titles)


def test_the_queue_page_draws_throughput(live: LiveServer, page: Page, artifacts: Path) -> None:
    async def work(client: aqless.Client) -> None:
        queue = client.queues["emails"]
        for _ in range(3):
            await queue.put("app.Send", {})
        first, second, third = await queue.pop_many(3, worker="w")
        await first.complete()
        await second.complete()
        await third.fail("smtp", "down")

    live.run(work)
    page.goto(live.url + "/queues/emails")
    section = page.locator("#throughput")
    assert section.locator("figure.chart").count() == 2
    hour, day = section.locator("figure.chart").all()
    assert "last hour" in hour.locator("figcaption").inner_text()
    assert "last day" in day.locator("figcaption").inner_text()
    for chart in (hour, day):  # (two minutes, or two hours, if the jobs straddle one)
        assert drawn(chart, "completed") == 2
        assert drawn(chart, "failed") == 1
    section.screenshot(path=artifacts / "throughput.png")
