"""Fixtures of the dashboard's tests.

- ``app_client``: an httpx client bound in-process to ``create_app(client)`` (both servers).
- ``live``: the dashboard on uvicorn (one per session, data flushed per test) and
  ``page``: a fresh Chromium page (Debian's chromium through Playwright) for browser tests.
- ``artifacts``: where screenshots go (``AQLESS_ARTIFACTS``, default ``artifacts/``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

import aqless
from aqless.web import create_app
from tests.web.live_server import LiveServer, live_server

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, ConsoleMessage, Page


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def client(server_url: str) -> AsyncIterator[aqless.Client]:
    """An open client on a clean server."""
    async with aqless.Client(server_url) as opened:
        await opened.redis.flushall()
        yield opened


@pytest.fixture
async def app_client(client: aqless.Client) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        yield http


def csrf_token(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = Path(os.environ.get("AQLESS_ARTIFACTS") or REPO / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def _live_server(server_url: str) -> Iterator[LiveServer]:
    with live_server(server_url) as server:
        yield server


@pytest.fixture
def live(_live_server: LiveServer) -> LiveServer:
    """The session's dashboard server, on a flushed database."""
    _live_server.run(lambda client: client.redis.flushall())
    return _live_server


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    # module scope: Playwright's sync API keeps an event loop running in this thread, and
    # the async tests of other modules need it stopped
    if not Path(CHROMIUM).exists():
        if os.environ.get("AQLESS_REQUIRE_CHROMIUM") == "1":
            pytest.fail("AQLESS_REQUIRE_CHROMIUM=1 but /usr/bin/chromium is not installed")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="aqless-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


def page_refused(message: ConsoleMessage, tab: Page) -> bool:
    """Whether `message` is Chromium's note that the page itself came with a 4xx status (a
    404 for a name never seen, a 400 for a bad parameter): the answer, not a fault of it."""
    refused = message.text.startswith("Failed to load resource: the server responded with a")
    return refused and " status of 4" in message.text and message.location.get("url") == tab.url


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """A new tab that accepts confirmations; a script error or a CSP violation fails the test."""
    tab = browser.new_page()
    problems: list[str] = []
    tab.on("dialog", lambda dialog: dialog.accept())
    tab.on("pageerror", lambda error: problems.append(str(error)))

    def console(message: ConsoleMessage) -> None:
        if message.type == "error" and not page_refused(message, tab):
            problems.append(message.text)

    tab.on("console", console)
    yield tab
    tab.close()
    assert not problems, problems
