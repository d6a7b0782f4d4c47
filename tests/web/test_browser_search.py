"""The search page in a real Chromium: the names offered as a filter is typed, a search over
every queue, and an action on the whole set found (not a page), confirmed by its count, its
progress shown, the jobs changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page

import aqless
from tests.web.live_server import LiveServer

pytestmark = pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)

PER_QUEUE = 120


async def failures(client: aqless.Client) -> dict[str, list[str]]:
    made: dict[str, list[str]] = {"wanted": [], "other": []}
    for queue in ("imports-a", "imports-b", "imports-c"):
        for klass, kind in (("app.Import", "wanted"), ("app.Export", "other")):
            count = PER_QUEUE if kind == "wanted" else 3
            made[kind] += [await client.queues[queue].put(klass, {"n": n}) for n in range(count)]
            for job in await client.queues[queue].pop_many(count):
                await job.fail(f"{queue}-Boom", "it broke")
    return made


def test_search_then_retry_every_job_found(live: LiveServer, page: Page, artifacts: Path) -> None:
    made = live.run(failures, timeout=60)
    questions: list[str] = []

    def asked(dialog: Dialog) -> None:
        questions.append(dialog.message)

    page.on("dialog", asked)
    page.goto(live.url + "/search")
    klass = page.get_by_label("Class")
    klass.focus()  # the names are fetched as a filter is first used
    page.wait_for_selector(
        "#search-classes option[value='app.Export']", state="attached", timeout=5000
    )
    offered = page.eval_on_selector_all("#search-classes option", "os => os.map(o => o.value)")
    assert {"app.Import", "app.Export"} <= set(offered)
    klass.fill("app.Import")
    page.get_by_label("failed").check()
    page.get_by_role("button", name="Search").click()
    total = 3 * PER_QUEUE
    heading = page.locator("#search-results h2")
    assert heading.inner_text().startswith(f"{total} matches")
    assert "Server cost:" in page.locator("#search-cost").inner_text()
    assert page.locator("#search-results table.jobs tbody tr").count() == 50  # a page listed

    page.get_by_label("Action").select_option("retry")
    page.get_by_role("button", name=f"Apply to all {total}").click()
    page.wait_for_selector("#search-act[data-outcome]", timeout=30000)
    assert questions == [f"Retry {total} jobs?"]
    status = page.locator("#search-act-status").inner_text()
    assert page.locator("#search-act").get_attribute("data-outcome") == "ok", status
    assert page.locator("#search-act-status").inner_text() == f"Retried {total} jobs"
    bar = page.locator("#search-act-progress")
    assert bar.evaluate("b => [b.value, b.max]") == [total, total]
    page.screenshot(path=artifacts / "search-bulk-retry.png", full_page=True)

    async def states(client: aqless.Client) -> tuple[set[str], set[str]]:
        wanted = await client.jobs.get_many(made["wanted"])
        other = await client.jobs.get_many(made["other"])
        return {str(job.state) for job in wanted}, {str(job.state) for job in other}

    assert live.run(states) == ({"waiting"}, {"failed"})
