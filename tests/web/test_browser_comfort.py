"""Issue 42's comfort and control in a real Chromium: the dashboard follows the system's dark
mode, its live updates can be turned off and on (remembered by the browser) and say when
the numbers were read, and an admin quiets and stops a real ``aqless-run`` from the
workers page."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

import aqless
from tests.support.worker_processes import WORKER, Spawner
from tests.web.live_server import LiveServer

pytestmark = pytest.mark.timeout(90)

WAIT_MS = 5_000


def background(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.documentElement).backgroundColor"))


def lightness(rgb: str) -> int:
    red, green, blue = (int(part) for part in re.findall(r"\d+", rgb)[:3])
    return red + green + blue


def test_the_dashboard_follows_the_systems_dark_mode(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    page.emulate_media(color_scheme="light")
    page.goto(live.url + "/")
    light = background(page)
    assert lightness(light) > 600, light
    page.emulate_media(color_scheme="dark")
    dark = background(page)
    assert lightness(dark) < 150, dark
    card = page.evaluate("getComputedStyle(document.querySelector('.card')).backgroundColor")
    assert lightness(str(card)) < 200, card
    page.screenshot(path=artifacts / "dark-overview.png")
    page.emulate_media(color_scheme="light")


async def put_one(client: aqless.Client) -> str:
    return await client.queues["emails"].put("app.jobs.Send", {})


def test_live_updates_turn_off_and_on_and_say_when_they_were_read(
    live: LiveServer, page: Page
) -> None:
    live.run(put_one)
    page.goto(live.url + "/")
    waiting = page.locator("tr[data-queue=emails] a.c-waiting")
    toggle, mark, updated = (
        page.locator("#live-toggle"),
        page.locator("#live"),
        page.locator("#updated"),
    )
    expect(waiting).to_have_text("1")
    expect(updated).to_have_text(re.compile(r"^updated \S"))
    expect(toggle).to_have_text("auto-refresh: on")
    live.run(put_one)
    expect(waiting).to_have_text("2", timeout=WAIT_MS)  # a put event refreshes the page
    first = page.locator("body").get_attribute("data-refreshed")

    toggle.click()
    expect(toggle).to_have_text("auto-refresh: off")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    expect(mark).to_have_text("paused")
    live.run(put_one)
    page.wait_for_timeout(1_500)  # the put event came: a live page would show 3 by now
    expect(waiting).to_have_text("2")
    assert page.locator("body").get_attribute("data-refreshed") == first

    page.reload()  # the choice is the browser's, kept across pages
    expect(toggle).to_have_text("auto-refresh: off")
    expect(waiting).to_have_text("3")  # a page load shows the present
    live.run(put_one)
    page.wait_for_timeout(1_500)
    expect(waiting).to_have_text("3")

    toggle.click()  # on again: looks at once
    expect(mark).to_have_text("live")
    expect(waiting).to_have_text("4", timeout=WAIT_MS)
    expect(toggle).to_have_text("auto-refresh: on")


def test_pages_without_live_regions_show_no_toggle(live: LiveServer, page: Page) -> None:
    page.goto(live.url + "/about")
    if page.locator("[data-live]").count() == 0:
        expect(page.locator("#live-toggle")).to_be_hidden()
        expect(page.locator("#updated")).to_be_hidden()


async def records(client: aqless.Client) -> dict[str, aqless.WorkerInfo]:
    return await client.workers.records()


def mode_of(live: LiveServer, name: str) -> str | None:
    record = live.run(records).get(name)
    return None if record is None else record.mode


def test_an_admin_quiets_then_stops_a_real_worker_from_the_workers_page(
    live: LiveServer, page: Page, server_url: str, tmp_path: Path, artifacts: Path
) -> None:
    spawner = Spawner(server_url, tmp_path)
    try:
        worker = spawner(*WORKER, "q")
        deadline = time.monotonic() + 20
        while not live.run(records):
            assert time.monotonic() < deadline, worker.log()
            time.sleep(0.1)
        (name,) = live.run(records)
        page.goto(live.url + "/workers")
        row = page.locator(f'tr[data-worker="{name}"]')
        expect(row.locator(".mode")).to_have_text("running")
        row.get_by_role("button", name="Quiet").click()  # the page's tab accepts the confirm
        expect(page.locator(".flash-ok")).to_contain_text("takes no more jobs")
        asked = time.monotonic()
        while mode_of(live, name) != "quiet":
            assert time.monotonic() - asked < 1.5, "not quiet within a second and a half"
            time.sleep(0.05)
        page.reload()
        expect(row.locator(".mode")).to_have_text("quiet")
        expect(row.get_by_role("button", name="Resume")).to_be_visible()
        page.screenshot(path=artifacts / "workers-quiet.png")

        row.get_by_role("button", name="Stop").click()
        expect(page.locator(".flash-ok")).to_contain_text("stops")
        deadline = time.monotonic() + 5
        while worker.process.poll() is None:
            assert time.monotonic() < deadline, "aqless-run did not exit"
            time.sleep(0.05)
        assert worker.process.returncode == 0
    finally:
        spawner.close()


def test_the_classes_page_draws_its_charts(live: LiveServer, page: Page, artifacts: Path) -> None:
    from tests.cli.test_stats_by_class import finish

    live.run(lambda client: finish(client, "mail", "app.Send", [0.2, 0.4, 3.0, -1.0]))
    page.goto(live.url + "/classes")
    expect(page.locator("svg rect.bar.s-p95").first).to_be_visible()
    expect(page.locator('tr[data-class="app.Send"][data-window="hour"] .rate')).to_have_text(
        "25.0%"
    )
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=artifacts / "classes-dark.png", full_page=True)
    page.emulate_media(color_scheme="light")
