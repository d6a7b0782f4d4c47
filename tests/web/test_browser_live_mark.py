"""The live mark in a real Chromium is honest: when the dashboard's server stops under an
open page, the mark turns red and a banner names the condition and when the numbers shown
were read; when the server is back, the mark is green again and the numbers live. When the
dashboard itself stops, the banner says it does not answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, expect

import aqless
from tests.support.servers import restartable_valkey
from tests.web.live_server import live_server

pytestmark = pytest.mark.timeout(90)

ON = re.compile(r"\bon\b")
DOWN = re.compile(r"\bdown\b")
WAIT_MS = 20_000  # the page looks again every 10 s, every 3 s once a look failed


async def put_one(client: aqless.Client) -> str:
    return await client.queues["emails"].put("app.jobs.Send", {})


def test_the_live_mark_turns_red_while_the_server_is_away_and_green_once_back(
    browser: BrowserContext, artifacts: Path
) -> None:
    with restartable_valkey() as valkey:
        tab = browser.new_page()
        problems: list[str] = []
        tab.on("pageerror", lambda error: problems.append(str(error)))
        mark, banner = tab.locator("#live"), tab.locator("#stale")
        with live_server(valkey.url) as live:
            live.run(put_one)
            tab.goto(live.url + "/")
            waiting = tab.locator("tr[data-queue=emails] a.c-waiting")
            expect(waiting).to_have_text("1")
            expect(mark).to_have_class(ON)
            expect(banner).to_be_hidden()

            valkey.stop()
            expect(mark).to_have_class(DOWN, timeout=WAIT_MS)
            expect(mark).not_to_have_class(ON)
            expect(mark).to_have_text("not live")
            expect(banner).to_be_visible()
            expect(banner).to_contain_text("lost its link to the server")
            expect(banner).to_contain_text(re.compile(r"Last updated \S"))
            tab.screenshot(path=artifacts / "live-mark-down.png")

            valkey.start()
            expect(mark).to_have_class(ON, timeout=WAIT_MS)
            expect(mark).not_to_have_class(DOWN)
            expect(mark).to_have_text("live")
            expect(banner).to_be_hidden()
            live.run(put_one)
            expect(waiting).to_have_text("2", timeout=WAIT_MS)

        expect(mark).to_have_class(DOWN, timeout=WAIT_MS)  # the dashboard itself stopped
        expect(banner).to_contain_text("The dashboard does not answer")
        tab.close()
    assert not problems, problems
