"""The dashboard in a real Chromium: every page loads, every action changes Redis, a live
update arrives without a reload, and screenshots are saved for a person to look at."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

import aqless
from tests.web.data import Deployment, populate, put_as_another_client
from tests.web.live_server import LiveServer

# a browser session is slow to start: these run on the first server only
pytestmark = pytest.mark.parametrize("server_url", ["valkey9"], indirect=True)


def path(*parts: str) -> str:
    return "/" + "/".join(quote(part, safe="") for part in parts)


@pytest.fixture
def populated(live: LiveServer) -> Deployment:
    return live.run(populate)


def job_of(live: LiveServer, jid: str) -> aqless.Job:
    found = live.run(lambda client: client.jobs.get(jid))
    assert isinstance(found, aqless.Job)
    return found


def test_every_page_loads_and_screenshots(
    live: LiveServer, populated: Deployment, page: Page, artifacts: Path
) -> None:
    page.goto(live.url + "/")
    row = page.locator("tr[data-queue=emails]")
    assert row.locator("a.c-running").inner_text() == "2"
    assert row.locator("a.c-waiting").inner_text() == "2"
    assert page.locator("tr[data-queue=billing]").get_by_text("paused").is_visible()
    assert page.get_by_role("link", name="mail-worker-1").is_visible()
    page.screenshot(path=artifacts / "overview.png", full_page=True)

    page.goto(live.url + path("queues", "emails") + "?state=running")
    assert page.locator("table.jobs tbody tr").count() == 2
    assert page.locator("figure.chart svg rect.bar").count() > 0  # today's run histogram
    page.screenshot(path=artifacts / "queue.png", full_page=True)

    failed_jid = populated.failed[0]
    page.goto(live.url + path("jobs", failed_jid))
    assert page.locator("pre.traceback").inner_text().endswith("within 30 s")
    assert '"n": 0' in page.locator("pre.json").inner_text()
    assert page.locator("ol.timeline li").count() >= 3  # put, popped, failed
    page.screenshot(path=artifacts / "job.png", full_page=True)

    page.goto(live.url + "/failed")
    assert page.locator("section.group h2").all_inner_texts() == ["smtp.Timeout 2", "ValueError 1"]
    page.screenshot(path=artifacts / "failed.png", full_page=True)

    expectations = {
        path("queues", "emails") + "?state=depends": "app.jobs.Followup",
        path("queues", "emails") + "?state=scheduled": "app.jobs.SendDigest",
        path("queues", "reports") + "?state=recurring": "app.jobs.DailyReport",
        path("jobs", populated.recurring): "app.jobs.DailyReport",
        path("failed", "smtp.Timeout"): "app.jobs.Export",
        "/tags?tag=welcome": "app.jobs.SendEmail",
        "/workers": "mail-worker-1",
        path("workers", "mail-worker-1"): "app.jobs.SendEmail",
        "/recurring": "app.jobs.DailyReport",
        "/throttles": "queue billing",  # the queue's own throttle, ql:q:billing
        "/config": "heartbeat",
        "/patterns": "@default",
        "/about": "Function library",
        "/completed": "app.jobs.Export",
        "/tracked": "No job is tracked.",
    }
    for url, text in expectations.items():
        response = page.goto(live.url + url)
        assert response is not None, url
        assert response.ok, url
        assert page.get_by_text(text).first.is_visible(), url
    page.goto(live.url + path("queues", "reports"))
    page.screenshot(path=artifacts / "queue-stats.png", full_page=True)
    page.goto(live.url + "/patterns")
    page.screenshot(path=artifacts / "patterns.png", full_page=True)


def test_job_actions(live: LiveServer, populated: Deployment, page: Page) -> None:
    jid = populated.waiting[1]
    page.goto(live.url + path("jobs", jid))

    page.get_by_role("button", name="Track").click()
    page.wait_for_selector(".flash-ok")
    assert job_of(live, jid).tracked

    page.get_by_placeholder("tag, another").first.fill("urgent, vip")
    page.get_by_role("button", name="Tag").click()
    page.wait_for_selector(".flash-ok")
    assert {"urgent", "vip"} <= set(job_of(live, jid).tags)

    page.locator(".tag-edit", has_text="urgent").get_by_role("button").click()
    page.wait_for_selector(".flash-ok")
    assert "urgent" not in job_of(live, jid).tags

    page.locator("input[name=priority]").fill("25")
    page.get_by_role("button", name="Set").click()
    page.wait_for_selector(".flash-ok")
    assert job_of(live, jid).priority == 25

    page.locator("input[name=queue]").fill("elsewhere")
    page.get_by_role("button", name="Move").click()
    page.wait_for_selector(".flash-ok")
    assert job_of(live, jid).queue_name == "elsewhere"

    page.get_by_role("button", name="Untrack").click()
    page.wait_for_selector(".flash-ok")
    assert not job_of(live, jid).tracked

    page.get_by_role("button", name="Cancel").click()  # the confirmation is accepted
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.jobs.get(jid)) is None

    running = populated.running[0]
    page.goto(live.url + path("jobs", running))
    page.get_by_role("button", name="Time out").click()
    page.wait_for_selector(".flash-ok")
    assert job_of(live, running).state == "stalled"

    dependent = job_of(live, populated.depends)
    page.goto(live.url + path("jobs", dependent.jid))
    page.locator(".tag-edit", has_text=dependent.dependencies[0][:12]).get_by_role("button").click()
    page.wait_for_selector(".flash-ok")
    assert job_of(live, dependent.jid).state == "waiting"


def test_a_refused_action_is_reported(live: LiveServer, populated: Deployment, page: Page) -> None:
    # the followup depends on this job: the server refuses to cancel it
    page.goto(live.url + path("jobs", populated.waiting[0]))
    page.get_by_role("button", name="Cancel").click()
    assert "is a dependency of" in page.locator(".flash-error").inner_text()
    assert page.url.endswith(path("jobs", populated.waiting[0]))  # back where it was asked
    assert job_of(live, populated.waiting[0]).state == "waiting"


def test_failed_actions(live: LiveServer, populated: Deployment, page: Page) -> None:
    page.goto(live.url + "/failed")
    page.locator("section.group", has_text="smtp.Timeout").get_by_role(
        "button", name="Retry all"
    ).click()
    page.wait_for_selector(".flash-ok")
    groups = live.run(lambda client: client.jobs.failure_groups())
    assert groups == {"ValueError": 1}
    assert page.locator("section.group h2").all_inner_texts() == ["ValueError 1"]

    page.goto(live.url + path("failed", "ValueError"))
    page.locator("input[data-select-all]").check()
    page.locator("form.bulk").get_by_role("button", name="Cancel").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.jobs.failure_groups()) == {}
    remaining = live.run(lambda client: client.jobs.get_many(populated.failed))
    assert sorted(job.state for job in remaining) == ["waiting", "waiting"]


def test_the_bulk_confirmation_names_the_action_and_the_count(
    live: LiveServer, populated: Deployment, page: Page
) -> None:
    asked: list[str] = []
    page.on("dialog", lambda dialog: asked.append(dialog.message))
    page.goto(live.url + path("failed", "ValueError"))
    page.locator("input[data-select-all]").check()
    page.locator("form.bulk").get_by_role("button", name="Retry").click()
    page.wait_for_selector(".flash-ok")
    assert asked == ["Retry 1 selected job?"]  # the group holds one job


def test_queue_recurring_throttle_config_and_worker_actions(
    live: LiveServer, populated: Deployment, page: Page
) -> None:
    page.goto(live.url + path("queues", "emails"))
    page.get_by_role("button", name="Pause").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.queues["emails"].counts()).paused
    page.get_by_role("button", name="Resume").click()
    page.wait_for_selector(".flash-ok")
    assert not live.run(lambda client: client.queues["emails"].counts()).paused
    page.locator("input[name=maximum]").fill("3")
    page.get_by_role("button", name="Throttle").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.queues["emails"].throttle()).maximum == 3

    page.goto(live.url + path("queues", "emails") + "?state=waiting")
    page.locator("tbody input[type=checkbox]").last.check()  # the first one has a dependent
    page.locator("form.bulk").get_by_role("button", name="Cancel").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.queues["emails"].counts()).waiting == 1

    page.goto(live.url + "/recurring")
    page.locator("input[name=interval]").fill("600")
    page.locator("td.edit input[name=priority]").fill("7")
    page.get_by_role("button", name="Save").click()
    page.wait_for_selector(".flash-ok")
    template = live.run(lambda client: client.jobs.get(populated.recurring))
    assert isinstance(template, aqless.RecurringJob)
    assert (template.interval, template.priority) == (600, 7)
    page.get_by_role("button", name="Stop").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.jobs.get(populated.recurring)) is None

    page.goto(live.url + "/throttles")
    new = page.locator("form.row")
    new.locator("input[name=name]").fill("smtp")
    new.locator("input[name=maximum]").fill("4")
    new.get_by_role("button", name="Set").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.throttles["smtp"].get()).maximum == 4
    page.locator("tr", has_text="smtp").get_by_role("button", name="Delete").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.throttles["smtp"].get()).maximum == 0

    page.goto(live.url + "/config")
    page.locator("form.row input[name=option]").fill("heartbeat")
    page.locator("form.row input[name=value]").fill("90")
    page.get_by_role("button", name="Set", exact=True).click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.config.get("heartbeat")) == "90"
    page.locator("tr", has_text="heartbeat").first.get_by_role("button", name="Reset").click()
    page.wait_for_selector(".flash-ok")
    assert live.run(lambda client: client.config.get("heartbeat")) == "60"

    page.goto(live.url + "/workers")
    page.locator("tr", has_text="mail-worker-2").get_by_role("button", name="Forget").click()
    page.wait_for_selector(".flash-ok")
    names = [w.name for w in live.run(lambda client: client.workers.counts())]
    assert "mail-worker-2" not in names
    assert "mail-worker-1" in names


def test_a_live_update_arrives_without_a_reload(live: LiveServer, page: Page) -> None:
    live.run(lambda client: client.queues["live"].put("app.Job", {}))
    page.goto(live.url + "/")
    page.wait_for_selector("#live.on")  # the event stream is open
    page.evaluate("window.__sameDocument = true")
    cell = page.locator("tr[data-queue=live] a.c-waiting")
    assert cell.inner_text() == "1"
    live.run(lambda client: client.queues["live"].put("app.Job", {}))
    # well before the 10 s poll: it came from the event stream
    expect(cell).to_have_text("2", timeout=5000)
    assert page.evaluate("window.__sameDocument") is True

    jid = live.run(lambda client: client.queues["watched"].put("app.Job", {}))
    page.goto(live.url + path("jobs", jid))
    page.wait_for_selector("#live.on")
    live.run(lambda client: client.queues["watched"].pop())
    live.run(lambda client: job_fail(client, jid))
    page.wait_for_selector("#job-failure", timeout=5000)
    assert "gone wrong" in page.locator("pre.traceback").inner_text()


async def job_fail(client: aqless.Client, jid: str) -> None:
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    await job.fail("live.Failure", "gone wrong")


PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b>bold</b>'


async def hostile(client: aqless.Client) -> tuple[str, str]:
    """Jobs whose every user-given field is markup: data, tags, class, queue, worker,
    failure group and message."""
    queue = client.queues["q" + PAYLOAD]  # a name other clients may give (aqless.rules)
    failed = await put_as_another_client(client, queue.name, PAYLOAD, {"html": PAYLOAD}, [PAYLOAD])
    waiting = await put_as_another_client(
        client, queue.name, PAYLOAD, {"html": PAYLOAD}, [PAYLOAD]
    )  # a top tag now
    job = await queue.pop(worker="w" + PAYLOAD)
    assert job is not None
    assert job.jid == failed
    await job.track()
    await job.fail(PAYLOAD, PAYLOAD)
    return failed, waiting


def test_markup_in_job_fields_renders_inert_everywhere(
    live: LiveServer, page: Page, artifacts: Path
) -> None:
    failed, waiting = live.run(hostile)
    pages = [
        "/",
        path("queues", "q" + PAYLOAD),
        path("jobs", failed),
        path("jobs", waiting),
        "/failed",
        path("failed", PAYLOAD),
        "/tracked",
        "/tags?tag=" + quote(PAYLOAD, safe=""),
        "/workers",
        path("workers", "w" + PAYLOAD),
    ]
    for url in pages:
        page.goto(live.url + url)
        assert page.evaluate("window.__pwned") is None, url
        assert page.locator("main b", has_text="bold").count() == 0, url
        assert page.locator("main img").count() == 0, url
        assert PAYLOAD in page.locator("main").inner_text(), url
    page.goto(live.url + path("jobs", failed))
    assert f'"html": {json.dumps(PAYLOAD)}' in page.locator("pre.json").inner_text()
    assert page.locator("pre.traceback").inner_text() == PAYLOAD
    page.screenshot(path=artifacts / "job-with-markup.png", full_page=True)


async def report_progress(client: aqless.Client, jid: str, fraction: float, message: str) -> None:
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    await job.progress(fraction, message)


def test_a_progress_bar_moves_without_a_reload(live: LiveServer, page: Page) -> None:
    jid = live.run(lambda client: client.queues["resize"].put("app.Job", {}))
    live.run(lambda client: client.queues["resize"].pop())
    live.run(lambda client: report_progress(client, jid, 0.2, "2 of 10"))
    page.goto(live.url + path("jobs", jid))
    page.wait_for_selector("#live.on")
    page.evaluate("window.__sameDocument = true")
    bar = page.locator("#job-facts progress")
    assert bar.get_attribute("value") == "0.2"
    live.run(lambda client: report_progress(client, jid, 0.7, "7 of 10"))
    expect(bar).to_have_attribute("value", "0.7", timeout=5000)
    expect(page.locator("#job-facts .progress .message")).to_have_text("7 of 10")
    assert page.evaluate("window.__sameDocument") is True  # swapped in, not reloaded
    page.goto(live.url + path("queues", "resize") + "?state=running")
    expect(page.locator("#listing progress")).to_have_attribute("value", "0.7")


def test_a_flow_is_drawn_as_a_tree_with_each_job_s_state(live: LiveServer, page: Page) -> None:
    from aqless.flows import FlowNode

    payload = '<img src=x onerror="window.__pwned=1">'
    middle = FlowNode(
        "app.Sum", queue="q", name="middle", children=[FlowNode("app.Leaf", queue="q")]
    )
    root = FlowNode(
        "app.Report", queue="q", children=[middle, FlowNode("app.Leaf", queue="q", name=payload)]
    )
    flow = live.run(lambda client: client.flows.put(root))
    page.goto(live.url + path("jobs", flow.jids[2]))
    nodes = page.locator("#job-flow li.flow-node")
    expect(nodes).to_have_count(4)
    assert page.locator("#job-flow li.flow-node.current").count() == 1
    assert page.locator("#job-flow > ul > li > ul > li").count() == 2  # the root's children
    assert page.locator("#job-flow > ul > li > ul > li > ul > li").count() == 1
    assert payload in page.locator("#job-flow").inner_text()  # shown as text
    assert page.evaluate("window.__pwned") is None
    states = page.locator("#job-flow li.flow-node").all_inner_texts()
    assert "depends" in states[0]
    assert "waiting" in states[2]
