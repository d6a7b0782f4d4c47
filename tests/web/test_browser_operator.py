"""The operator-trial features in a real Chromium: the header's jid box, the data search,
the completed page's columns, rate-limited jobs, the queue header's limits, editing a cron
expression in place and the config page's descriptions; markup in any of them stays text."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

import aqless
from tests.support.clients import pop_one
from tests.web.data import Deployment, populate, put_as_another_client
from tests.web.live_server import LiveServer

# a browser session is slow to start: these run on the first server only
pytestmark = pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>'


def path(*parts: str) -> str:
    return "/" + "/".join(quote(part, safe="") for part in parts)


def assert_inert(page: Page) -> None:
    assert page.evaluate("window.__pwned") is None
    assert page.locator("main b", has_text="bold").count() == 0
    assert page.locator("main img").count() == 0


def test_the_jid_box_goes_to_the_job_or_says_there_is_none(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    made: Deployment = live.run(populate)
    page.goto(live.url + "/failed")
    box = page.get_by_role("searchbox", name="Go to a job by its id")
    box.fill(made.failed[0])
    box.press("Enter")
    page.wait_for_url(live.url + path("jobs", made.failed[0]))
    expect(page.locator("h1 .jid")).to_have_text(made.failed[0])

    box = page.get_by_role("searchbox", name="Go to a job by its id")
    box.fill(PAYLOAD)
    page.get_by_role("button", name="Go", exact=True).click()
    expect(page.locator("#no-such-job")).to_contain_text("No job has the id")
    expect(page.locator("#no-such-job code")).to_have_text(PAYLOAD)
    assert_inert(page)
    page.screenshot(path=artifacts / "search-missing-jid.png", full_page=True)


async def orders(client: aqless.Client) -> list[str]:
    queue = client.queues["orders"]
    wanted = [
        await queue.put("app.Order", {"user": {"id": 42}, "note": PAYLOAD}),
        await queue.put(PAYLOAD, {"user": {"id": 42}}),
    ]
    for n in range(10):
        await queue.put("app.Order", {"user": {"id": n}})
    return wanted


def test_a_data_search_lists_the_matches_and_its_cost(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    wanted = live.run(orders)
    page.goto(live.url + "/search")
    page.locator("form.search input[name=queue]").fill("orders")
    page.locator("form.search input[name=state][value=waiting]").check()
    page.locator("form.search input[name=where]").fill("user.id = 42")
    page.locator("form.search input[name=limit]").fill("5")
    page.get_by_role("button", name="Search").click()
    results = page.locator("#search-results")
    expect(results.locator("h2")).to_contain_text("in 5 jobs examined of 12 listed")
    expect(page.locator("#search-cost")).to_contain_text("Not every job was examined")
    expect(page.locator("#search-cost")).to_contain_text("Server cost: 5 job reads")

    page.locator("form.search input[name=limit]").fill("1000")
    page.get_by_role("button", name="Search").click()
    expect(results.locator("h2")).to_contain_text("2 matches in 12 jobs examined of 12")
    shown = results.locator("table.jobs a.jid")
    assert sorted(link.get_attribute("title") or "" for link in shown.all()) == sorted(wanted)
    assert PAYLOAD in results.inner_text()
    assert_inert(page)
    page.screenshot(path=artifacts / "search.png", full_page=True)


async def answered(client: aqless.Client) -> str:
    queue = client.queues["q" + PAYLOAD]  # a name other clients may give (aqless.rules)
    jid = await put_as_another_client(client, queue.name, "app.Answer", {})
    await (await pop_one(queue, worker="w")).complete(result={"html": PAYLOAD})
    return jid


def test_the_completed_page_shows_queue_finish_duration_and_result(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    jid = live.run(answered)
    page.goto(live.url + "/completed")
    row = page.locator("table.completed tbody tr", has=page.locator(f"a[title='{jid}']"))
    expect(row.locator("td.queue a")).to_have_text("q" + PAYLOAD)
    expect(row.locator("td.finished")).to_contain_text(" UTC")
    expect(row.locator("td.duration")).to_have_text("under 1 s")
    expect(row.locator("td.result code")).to_contain_text('{"html":"<script>')
    assert_inert(page)
    page.screenshot(path=artifacts / "completed.png", full_page=True)


async def limited(client: aqless.Client) -> str:
    await client.rate_limits["api"].set(1, per=300)
    queue = client.queues["calls"]
    await queue.set_throttle(4)
    await queue.set_rate_limit(10, per=60)
    await queue.put("app.Call", {}, rate_limits=["api"])
    held = await queue.put("app.Call", {}, rate_limits=["api"])
    await queue.put("app.Later", {}, delay=7200)
    await queue.pop_many(2, worker="w")
    return held


def test_a_rate_limited_job_and_the_queue_limits_are_shown(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    held = live.run(limited)
    page.goto(live.url + path("queues", "calls") + "?state=scheduled")
    expect(page.locator("#queue-limits .throttle")).to_have_text(
        "throttle: at most 4 running at once"
    )
    expect(page.locator("#queue-limits .rate-limit")).to_contain_text(
        "rate limit: at most 10 starts per 1 min (1 in the window"
    )
    row = page.locator("table.jobs tbody tr", has=page.locator(f"a[title='{held}']"))
    expect(row.locator(".state")).to_have_text("rate-limited")
    expect(row.locator("td.details")).to_contain_text("rate-limited by api · next start in 5 min")
    other = page.locator("table.jobs tbody tr", has_text="app.Later")
    expect(other.locator(".state")).to_have_text("scheduled")
    expect(other.locator("td.details")).to_contain_text("next start in 2 h")
    page.screenshot(path=artifacts / "queue-rate-limited.png", full_page=True)


async def nightly(client: aqless.Client) -> None:
    await client.queues["reports"].recur("app.Nightly", cron="30 2 * * *", jid="nightly")


async def schedule_of(client: aqless.Client) -> tuple[str | None, str | None]:
    template = await client.jobs.get("nightly")
    assert isinstance(template, aqless.RecurringJob)
    return template.cron, template.tz


def test_a_cron_expression_is_edited_in_place(live: LiveServer, page: Page) -> None:
    live.run(nightly)
    page.goto(live.url + path("jobs", "nightly"))
    page.get_by_label("Cron").fill("61 * * * *")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash-error")).to_contain_text(
        "The schedule is unchanged: bad cron '61 * * * *': Bad minute"
    )
    assert live.run(schedule_of) == ("30 2 * * *", "UTC")

    page.get_by_label("Cron").fill("0 6 * * 1")
    page.get_by_label("Time zone").fill("Asia/Tokyo")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash-ok")).to_contain_text("cron 0 6 * * 1 (Asia/Tokyo)")
    assert live.run(schedule_of) == ("0 6 * * 1", "Asia/Tokyo")
    expect(page.locator("dd code").first).to_have_text("0 6 * * 1")
    expect(page.locator(".next-run").first).to_contain_text("06:00:00+09:00")


def test_the_config_page_describes_each_option(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    live.run(lambda client: client.config.set("emails-max-concurrency", 3))
    page.goto(live.url + "/config")
    row = page.locator("#config tr[data-option=heartbeat]")
    expect(row.locator("td.unit")).to_have_text("seconds")
    expect(row.locator("td.meaning")).to_contain_text("lock lasts")
    row = page.locator("#config tr[data-option=emails-max-concurrency]")
    expect(row.locator("td.unit")).to_have_text("jobs")
    expect(page.locator("#config-unset tr[data-option=result-max-bytes] td.unit")).to_have_text(
        "bytes"
    )
    page.screenshot(path=artifacts / "config.png", full_page=True)
