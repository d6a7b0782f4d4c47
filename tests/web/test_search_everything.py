"""One search over every queue and state (failed and completed included) by class, tag,
failure group, worker, data and result, bounded and stating its cost; an action on the whole
set found (not a page), paced, audited with every jid, refused to a read-only user."""

from __future__ import annotations

import json

import httpx

import aqless
from aqless.ops import audit, suggest
from aqless.ops import search as finding
from aqless.web import create_app
from aqless.web.auth import Users
from tests.web.conftest import csrf_token
from tests.web.test_auth_audit import USERS, basic


async def failed(
    client: aqless.Client, queue: str, klass: str, n: int, tags: tuple[str, ...] = ()
) -> list[str]:
    jids = [await client.queues[queue].put(klass, {"n": i}, tags=tags) for i in range(n)]
    for job in await client.queues[queue].pop_many(n):
        await job.fail(f"{queue}-Boom", "it broke")
    return jids


async def test_finds_failed_and_completed_jobs_of_other_queues_by_each_filter(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["mail"].put("app.Send", {"to": "ada"}, tags=["vip"])
    broken = (await failed(client, "billing", "app.Charge", 1, tags=("vip",)))[0]
    done = await client.queues["reports"].put("app.Report", {"month": 3}, tags=["monthly"])
    popped = await client.queues["reports"].pop()
    assert popped is not None
    await popped.complete(result={"rows": 12, "file": "march.csv"})

    async def search(**params: str) -> set[str]:
        answer = (await app_client.get("/api/search", params=params)).json()
        assert answer["searched"] is True, answer
        return {job["jid"] for job in answer["jobs"]}

    assert await search(**{"class": "app.Charge"}) == {broken}
    assert await search(**{"class": "app.Report"}) == {done}
    assert broken in await search(tag="vip")
    assert await search(tag="monthly") == {done}
    assert await search(group="billing-Boom") == {broken}
    assert await search(where="month = 3") == {done}
    assert await search(where="n = 0", state="failed") == {broken}
    assert await search(result="rows = 12") == {done}
    assert await search(result="file = march.csv", state="complete") == {done}
    assert await search(state="failed,complete") == {broken, done}
    assert await search(**{"class": "app.Report"}, state="waiting") == set()
    page = (await app_client.get("/search", params={"result": "rows = 12"})).text
    assert "1 match" in page
    assert "Server cost:" in page


async def test_examines_no_more_than_its_limit_shared_between_queues(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    for n in range(300):
        await client.queues["big"].put("app.Job", {"n": n})
    await client.queues["small"].put("app.Job", {"n": -1})
    answer = (
        await app_client.get("/api/search", params={"class": "app.Job", "limit": "50"})
    ).json()
    assert answer["examined"] <= 50
    assert (answer["listed"], answer["complete"]) == (301, False)
    assert answer["cost"]["jobs_read"] == answer["examined"]
    # the queues, the failure groups, the sizes, the listings, one batch of reads
    assert answer["cost"]["round_trips"] == 5
    small = (await app_client.get("/api/search", params={"where": "n = -1", "limit": "50"})).json()
    assert small["matched"] == 1  # the big queue left the small one its part
    found = await finding.find(client, finding.Filters.parse({"class": ["app.Job"]}), limit=10)
    assert found.examined == 10
    assert len(found.jids) == 10


async def test_a_bulk_retry_of_a_filtered_set_across_queues_retries_exactly_those(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    wanted: list[str] = []
    for queue in ("q1", "q2", "q3"):
        wanted += await failed(client, queue, "app.Import", 400)
    other_class = await failed(client, "q1", "app.Export", 5)
    waiting = await client.queues["q2"].put("app.Import", {"n": "waits"})
    params = {"class": "app.Import", "state": "failed", "limit": "5000"}
    answer = (await app_client.get("/api/search", params=params)).json()
    assert answer["matched"] == 1200
    page = (await app_client.get("/search", params=params)).text
    assert "Apply to all 1200" in page
    form = {**params, "action": "retry", "csrf": csrf_token(page), "progress": "p1"}
    done = await app_client.post(
        "/actions/search_act", data=form, headers={"accept": "application/json"}
    )
    assert done.json() == {"ok": True, "message": "Retried 1200 jobs"}
    jobs = await client.jobs.get_many(wanted)
    assert {str(job.state) for job in jobs} == {"waiting"}
    assert sorted(job.queue_name for job in jobs) == sorted(["q1", "q2", "q3"] * 400)
    assert {str(job.state) for job in await client.jobs.get_many(other_class)} == {"failed"}
    assert len(await client.jobs.get_many([waiting])) == 1
    tally = (await app_client.get("/api/search/progress", params={"id": "p1"})).json()
    assert (tally["done"], tally["total"], tally["finished"]) == (1200, 1200, True)
    entry = (await audit.read(client, limit=1))[0]
    assert entry.action == "search_act"
    assert entry.detail["count"] == "1200"
    assert set(entry.detail["jids"].split(", ")) == set(wanted)
    assert entry.detail["class"] == "app.Import"


async def test_move_cancel_and_delete_take_what_their_verb_takes(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    kept = await failed(client, "src", "app.Job", 3)
    live = [await client.queues["src"].put("app.Job", {"n": n}, tags=["t"]) for n in range(3)]
    token = csrf_token((await app_client.get("/search", params={"tag": "t"})).text)
    headers = {"accept": "application/json"}

    async def act(**form: str) -> dict[str, object]:
        posted = await app_client.post(
            "/actions/search_act", data={**form, "csrf": token}, headers=headers
        )
        answer: dict[str, object] = posted.json()
        return answer

    moved = await act(tag="t", action="move", to="dst")
    assert moved == {"ok": True, "message": "Moved 3 jobs to dst"}
    for job in await client.jobs.get_many(live):
        assert (job.queue_name, job.tags) == ("dst", ("t",))
    refused = await act(tag="t", action="move", to="bad queue")
    assert refused["ok"] is False
    assert "to must be" not in str(refused["message"])
    assert "queue must be a name" in str(refused["message"])
    retried = await act(queue="dst", action="retry")
    assert retried["message"] == "Retried 0 jobs; left 3 jobs alone (not failed)"
    await act(queue="dst", action="cancel")
    assert await client.jobs.get_many(live) == []
    assert len(await client.jobs.get_many(kept)) == 3
    assert (await act(group="src-Boom", action="delete"))["message"] == "Deleted 3 jobs"
    assert await client.jobs.get_many(kept) == []
    nothing = await act(action="cancel")
    assert nothing["ok"] is False
    assert "at least one filter" in str(nothing["message"])


async def test_a_read_only_user_cannot_act_on_a_search(client: aqless.Client) -> None:
    jids = await failed(client, "q", "app.Job", 3)
    app = create_app(client, users=Users(USERS))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://d"
    ) as http:
        admin, viewer = basic("ann", "open-sesame"), basic("bob", "b0b")
        params = {"state": "failed"}
        seen = await http.get("/search", params=params, headers=viewer)
        assert seen.status_code == 200
        assert "search_act" not in seen.text
        token = csrf_token((await http.get("/search", params=params, headers=admin)).text)
        form = {**params, "action": "cancel", "csrf": token}
        refused = await http.post("/actions/search_act", data=form, headers=viewer)
        assert refused.status_code == 403
    assert len(await client.jobs.get_many(jids)) == 3


async def test_names_for_the_autocomplete_come_from_the_indexes(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["mail"].put("app.Send", {}, tags=["vip", "eu"])
    await failed(client, "billing", "app.Charge", 2)
    names = (await app_client.get("/api/search/names")).json()
    assert {"mail", "billing"} <= set(names["queues"])
    assert {"vip", "eu"} <= set(names["tags"])
    assert names["groups"] == ["billing-Boom"]
    assert {"app.Send", "app.Charge"} <= set(names["classes"])
    assert names["cost"]["round_trips"] == 3
    assert names["cost"]["jobs_read"] <= suggest.CLASS_SAMPLE


async def test_a_bad_filter_is_refused_naming_it(app_client: httpx.AsyncClient) -> None:
    for params, words in (
        ({"where": "no equals sign"}, "where must be a condition written field.path = value"),
        ({"state": "finished"}, "state must be one of waiting, running"),
        ({"class": "a b"}, "class must be a name"),
        ({"tag": "x", "shown": "0"}, "shown must be a whole number"),
    ):
        refused = await app_client.get("/api/search", params=params)
        assert refused.status_code == 400, params
        assert words in refused.json()["error"], (params, refused.json())
    page = await app_client.get("/search", params={"where": "<b>x</b>"})
    assert "&lt;b&gt;x&lt;/b&gt;" in page.text


def test_a_condition_compares_as_json() -> None:
    def holds(text: str, value: object) -> bool:
        return finding.Condition.parse("search.result", text).holds(value)

    assert holds("a.b = 1", {"a": {"b": 1.0}})
    assert not holds("a = 1", {"a": True})
    assert holds("= 42", 42)
    assert holds("0.x = y", [{"x": "y"}])
    assert json.dumps(finding.shares([1, 100, 100], 51)) == "[1, 25, 25]"
    assert finding.shares([0, 5], 10) == [0, 5]


async def test_running_and_stalled_jobs_are_told_apart_and_found_by_worker(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["work"]
    jids = [await queue.put("app.Job", {"n": n}) for n in range(3)]
    held = await queue.pop_many(2, worker="w-1")
    lost = held[0].jid
    await client.redis.hset(f"{client.prefix}j:{lost}", "expires", 1)  # its lock expired
    await client.redis.zadd(f"{client.prefix}q:work-locks", {lost: 1})

    async def found(**params: str) -> set[str]:
        answer = (await app_client.get("/api/search", params=params)).json()
        return set(answer["jids"])

    assert await found(state="stalled") == {lost}
    assert await found(state="running") == {held[1].jid}
    assert await found(worker="w-1", state="running,stalled") == {job.jid for job in held}
    assert await found(worker="w-1") == {job.jid for job in held}  # every state: each set read
    assert await found(state="waiting", queue="work") == set(jids) - {job.jid for job in held}
    by_worker = (
        await app_client.get("/api/search", params={"worker": "w-1", "state": "running"})
    ).json()
    assert by_worker["listed"] == 2  # the worker's own jobs, not the queues' sets
