"""The queue page shows a grouped queue's fairness groups in a small table, escaped."""

from __future__ import annotations

import httpx

import aqless
from aqless import PutRequest
from aqless.web import create_app
from aqless.web.auth import Users
from tests.web.conftest import csrf_token
from tests.web.test_auth_audit import USERS, basic

ADMIN = basic("ann", "open-sesame")
VIEWER = basic("bob", "b0b")

NO_RATE = {"rate_limit": 0, "rate_period": 0.0, "rate_used": 0}


async def test_the_queue_page_lists_its_groups_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    name = "<b>tenant</b>"
    await queue.put_many([PutRequest("app.Call", group=name)] * 3 + [PutRequest("app.Call")])
    await queue.set_group_weight(name, 2)
    await queue.pop_many(2)
    document = (await app_client.get("/api/queues/q")).json()
    assert document["groups"] == [
        {"name": None, "waiting": 0, "running": 1, "weight": 1.0, "concurrency": 0, **NO_RATE},
        {"name": name, "waiting": 2, "running": 1, "weight": 2.0, "concurrency": 0, **NO_RATE},
    ]
    page = (await app_client.get("/queues/q")).text
    assert 'id="groups"' in page
    assert "&lt;b&gt;tenant&lt;/b&gt;" in page
    assert name not in page


async def test_the_queue_page_shows_a_groups_rate_limit(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    # a window that outlasts the test: of 0.5 s, the two starts had left it before the page
    # was read on a loaded machine ("0 of 2")
    await queue.set_group_rate_limit("<i>a</i>", 2, per=30)
    await queue.put_many([PutRequest("app.Call", group="<i>a</i>")] * 3)
    await queue.pop_many(3)
    (document,) = (await app_client.get("/api/queues/q")).json()["groups"]
    assert (document["rate_limit"], document["rate_period"], document["rate_used"]) == (2, 30, 2)
    page = (await app_client.get("/queues/q")).text
    assert "2 of 2 per 30 s" in page
    assert "&lt;i&gt;a&lt;/i&gt;" in page
    assert "<i>a</i>" not in page


async def test_an_ungrouped_queue_shows_no_groups(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.Call", {})
    assert (await app_client.get("/api/queues/q")).json()["groups"] == []
    assert 'id="groups"' not in (await app_client.get("/queues/q")).text


async def test_every_table_of_the_queue_page_is_styled(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["q"]
    await queue.put_many([PutRequest("app.Call", group="tenant")] * 2)
    page = (await app_client.get("/queues/q")).text
    groups = page[page.index('id="groups"') :]
    assert groups.index('<table class="grid groups">') < groups.index("tenant")
    assert "<table>" not in page  # a bare table draws with the browser's defaults


async def test_an_admin_sets_a_groups_weight_cap_and_rate_from_the_queue_page(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    """The groups table's form sets what is filled in, through the rules the verbs and the
    CLI check with: a bad value is refused naming it and nothing is written; "none" lifts
    the rate limit; an empty group name is the jobs put without one."""
    queue = client.queues["gq"]
    await queue.put_many([PutRequest("app.Call", group="<b>t</b>"), PutRequest("app.Call")])
    page = (await app_client.get("/queues/gq")).text
    assert 'action="/actions/group_set"' in page
    token = csrf_token(page)
    json = {"accept": "application/json"}

    async def post(**fields: str) -> httpx.Response:
        data = {"queue": "gq", "csrf": token, **fields}
        return await app_client.post("/actions/group_set", data=data, headers=json)

    set_all = await post(group="<b>t</b>", weight="3", concurrency="2", limit="5", per="60")
    assert set_all.json()["ok"] is True, set_all.text
    ungrouped = await post(group="", weight="0.5")
    assert ungrouped.json()["ok"] is True, ungrouped.text
    refused = await post(group="<b>t</b>", weight="4", concurrency="-1")
    assert refused.json()["ok"] is False
    assert "concurrency" in refused.json()["message"]
    groups = {g.name: g for g in await queue.groups()}
    grouped = groups["<b>t</b>"]
    assert (grouped.weight, grouped.concurrency, grouped.rate_limit) == (3.0, 2, 5)
    assert grouped.rate_period == 60.0
    assert groups[None].weight == 0.5
    lifted = await post(group="<b>t</b>", limit="none", concurrency="0")
    assert lifted.json()["ok"] is True, lifted.text
    grouped = {g.name: g for g in await queue.groups()}["<b>t</b>"]
    assert (grouped.weight, grouped.concurrency, grouped.rate_limit) == (3.0, 0, 0)


async def test_a_read_only_user_sees_no_group_form_and_cannot_post_it(
    client: aqless.Client,
) -> None:
    queue = client.queues["gq2"]
    await queue.put("app.Call", {}, group="t")
    app = create_app(client, users=Users(USERS))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        viewing = (await http.get("/queues/gq2", headers=VIEWER)).text
        assert "/actions/group_set" not in viewing
        token = csrf_token((await http.get("/queues/gq2", headers=ADMIN)).text)
        form = {"queue": "gq2", "group": "t", "weight": "9", "csrf": token}
        refused = await http.post("/actions/group_set", data=form, headers=VIEWER)
        assert refused.status_code == 403
    (group,) = await queue.groups()
    assert group.weight == 1.0
