"""The dashboard on a sharded deployment of a real three-primary Valkey Cluster: the merged
pages (HTML and JSON), the Shards page with its table and chart, escaping, actions on a
jid routed to its shard, and the pages a sharded deployment does not have yet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from starlette.types import Message

import aqless
from aqless.web import create_app
from aqless.web.live import EventSourceResponse
from tests.faults.cluster import Cluster
from tests.support.sharding import deployment, kept_elsewhere, key_per_shard
from tests.web.conftest import csrf_token

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'


@asynccontextmanager
async def dashboard(
    cluster: Cluster, name: str
) -> AsyncIterator[tuple[aqless.ShardedClient, httpx.AsyncClient]]:
    async with deployment(cluster, name) as client:
        transport = httpx.ASGITransport(app=create_app(client))
        async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
            yield client, http


async def test_the_pages_show_the_whole_deployment(cluster: Cluster) -> None:
    async with dashboard(cluster, "webread") as (client, http):
        queue = client.queues["emails"]
        jids = [
            await queue.put("app.Send", {"n": n}, route=route, tags=["vip"])
            for n, route in enumerate(key_per_shard(client) * 2)
        ]
        popped = await queue.pop_many(3, worker="ann")
        assert len({client.shard_of(job.jid) for job in popped}) == 3
        for job in popped:
            await job.fail("app.Timeout", "slow")
        for jid in jids[3:5]:
            found = await client.jobs.get(jid)
            assert isinstance(found, aqless.Job)
            await found.track()

        overview = (await http.get("/api/overview")).json()
        assert [(q["name"], q["waiting"]) for q in overview["queues"]] == [("emails", 3)]
        assert overview["failed"] == {"groups": 1, "jobs": 3}
        assert overview["tracked"] == 2
        page = (await http.get("/api/queues/emails")).json()
        assert page["counts"]["waiting"] == 3
        assert sorted(job["jid"] for job in page["jobs"]) == sorted(jids[3:])
        assert page["today"]["wait"]["count"] == 3
        for jid in jids:  # each on its own shard
            job = (await http.get(f"/api/jobs/{jid}")).json()
            assert job["job"]["jid"] == jid
        failed = (await http.get("/api/failed")).json()
        assert [(g["group"], g["count"]) for g in failed["groups"]] == [("app.Timeout", 3)]
        group = (await http.get("/api/failed/app.Timeout")).json()
        assert sorted(job["jid"] for job in group["jobs"]) == sorted(j.jid for j in popped)
        tagged = (await http.get("/api/tags", params={"tag": "vip"})).json()
        assert (tagged["total"], len(tagged["jobs"])) == (6, 6)
        tracked = (await http.get("/api/tracked")).json()
        assert sorted(job["jid"] for job in tracked["jobs"]) == sorted(jids[3:5])
        workers = (await http.get("/api/workers")).json()
        # ann holds no job now and publishes no record: listed apart, not as a worker
        assert (workers["workers"], workers["others"]) == ([], ["ann"])
        for path in ("/", "/queues/emails", f"/jobs/{jids[0]}", "/failed", "/tracked",
                     "/tags?tag=vip", "/workers", "/workers/ann", "/completed", "/recurring",
                     "/config", "/throttles", "/patterns", "/about"):  # fmt: skip
            response = await http.get(path)
            assert response.status_code == 200, path
            assert 'href="/shards"' in response.text, path  # the nav shows the Shards page


async def test_the_shards_page_draws_each_shard(cluster: Cluster) -> None:
    async with dashboard(cluster, "webshards") as (client, http):
        routes = key_per_shard(client)
        for _ in range(3):
            await client.queues["work"].put("app.Work", {}, route=routes[2])
        documents = (await http.get("/api/shards")).json()
        assert documents["deployment"] == "webshards"
        assert [s["waiting"] for s in documents["shards"]] == [0, 0, 3]
        assert all(s["used_memory"] > 0 for s in documents["shards"])
        html = (await http.get("/shards")).text
        for shard in client.shards.shards:
            assert shard.namespace in html
        assert "<svg" in html
        assert "shard 2: 3 waiting" in html  # the chart's bar for the full shard


async def test_every_shown_name_is_escaped(cluster: Cluster) -> None:
    async with dashboard(cluster, 'web<b>"x') as (client, http):
        await client.queues["work"].put("app.Work", {}, tags=[PAYLOAD])
        shards = (await http.get("/shards")).text
        assert "web&lt;b&gt;" in shards
        assert "web<b>" not in shards
        tags = (await http.get("/tags", params={"tag": PAYLOAD})).text
        assert PAYLOAD not in tags
        assert "&lt;script&gt;" in tags


async def test_an_action_on_a_jid_goes_to_its_shard(cluster: Cluster) -> None:
    async with dashboard(cluster, "webact") as (client, http):
        jids = [
            await client.queues["q"].put("app.Work", {}, route=r) for r in key_per_shard(client)
        ]
        for jid in jids:
            token = csrf_token((await http.get(f"/jobs/{jid}")).text)
            done = await http.post(
                "/actions/job_cancel", data={"jid": jid, "csrf": token, "next": "/"}
            )
            assert done.status_code == 303
            assert await client.jobs.get(jid) is None


async def test_live_updates_follow_every_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "weblive") as client:
        written: list[str] = []
        wanted: list[str] = []
        subscribed, seen, gone = anyio.Event(), anyio.Event(), anyio.Event()

        async def send(message: Message) -> None:
            written.append(bytes(message.get("body", b"")).decode())
            text = "".join(written)
            if ": subscribed" in text:
                subscribed.set()
            if wanted and all(jid in text for jid in wanted):
                seen.set()

        async def receive() -> Message:
            await gone.wait()
            return {"type": "http.disconnect"}

        response = EventSourceResponse(client, interval=0.01)
        async with anyio.create_task_group() as page:
            page.start_soon(response, {"type": "http"}, receive, send)
            with anyio.fail_after(10):
                await subscribed.wait()
                for route in key_per_shard(client):
                    wanted.append(await client.queues["q"].put("app.Work", {}, route=route))
                await seen.wait()  # one page hears a put on each shard
            gone.set()
        assert "event: change" in "".join(written)


async def test_the_throttles_page_shows_each_on_its_shard(cluster: Cluster) -> None:
    async with dashboard(cluster, "webthrottles") as (client, http):
        await client.throttles["smtp"].set(3)
        await client.throttles[PAYLOAD].set(1)
        await client.rate_limits["api"].set(5, per=2)
        name = kept_elsewhere(client)  # its throttle's id is no name the keeper routes home
        token = csrf_token((await http.get("/throttles")).text)  # the queue is not seen yet
        pinned = await http.post(  # a queue's throttle pins the queue
            "/actions/queue_throttle",
            data={"queue": name, "maximum": "2", "csrf": token},
            headers={"accept": "application/json"},
        )
        assert pinned.status_code == 200, pinned.text
        await client.reread_map()
        pin = client.shards.pinned[name]
        own = f"{client.shard(pin).prefix}q:{name}"
        page = (await http.get("/api/throttles")).json()
        shown = {t["id"]: (t["shard"], t["maximum"]) for t in page["throttles"]}
        assert shown == {
            "smtp": (client.keeper_of("smtp"), 3),
            PAYLOAD: (client.keeper_of(PAYLOAD), 1),
            own: (pin, 2),
        }
        limits = [(r["id"], r["shard"], r["limit"]) for r in page["rate_limits"]]
        assert limits == [("api", client.keeper_of("api"), 5)]
        html = await http.get("/throttles")
        assert html.status_code == 200
        assert own in html.text
        assert PAYLOAD not in html.text
        assert "&lt;script&gt;" in html.text
        changed = await http.post(  # a row's form names the queue's throttle by its id
            "/actions/throttle_set",
            data={"name": own, "maximum": "4", "csrf": token},
            headers={"accept": "application/json"},
        )
        assert changed.status_code == 200, changed.text
        assert (await client.queues[name].throttle()).maximum == 4


async def test_the_patterns_page_sets_them_on_every_shard(cluster: Cluster) -> None:
    async with dashboard(cluster, "webpatterns") as (client, http):
        token = csrf_token((await http.get("/patterns")).text)
        for verb, form in (
            ("identifier_set", {"name": "mail", "patterns": f"mail-* {PAYLOAD}"}),
            ("priorities_set", {"groups": "urgent-*\ndefault"}),
        ):
            done = await http.post(
                f"/actions/{verb}",
                data={**form, "csrf": token},
                headers={"accept": "application/json"},
            )
            assert done.status_code == 200, done.text
        for shard in client.clients:
            assert (await shard.queue_patterns.identifiers())["mail"][0] == "mail-*"
            assert [str(g) for g in await shard.queue_patterns.priorities()] == [
                "urgent-*",
                "default",
            ]
        page = (await http.get("/api/patterns")).json()
        assert page["identifiers"]["mail"][0] == "mail-*"
        assert [group["text"] for group in page["priorities"]] == ["urgent-*", "default"]
        html = (await http.get("/patterns")).text
        assert "mail-*" in html
        assert "<script>window" not in html


async def test_the_about_page_shows_the_deployment(cluster: Cluster) -> None:
    async with dashboard(cluster, 'about<i>"x') as (client, http):
        about = (await http.get("/api/about")).json()
        assert about["deployment"] == 'about<i>"x'
        assert [(s["id"], s["namespace"]) for s in about["shards"]] == [
            (shard.id, shard.namespace) for shard in client.shards.shards
        ]
        assert len(about["servers"]) == 3  # each shard on a primary of its own
        assert {s["node"] for s in about["shards"]} == {s["node"] for s in about["servers"]}
        assert all(s["server"]["name"] == "valkey" for s in about["servers"])
        assert all(s["memory"]["used"] != "?" for s in about["servers"])
        html = (await http.get("/about")).text
        assert "about&lt;i&gt;" in html
        assert "about<i>" not in html
        for server in about["servers"]:
            assert server["node"] in html


async def test_a_plain_dashboard_shows_its_namespace_as_the_one_shard(
    client: aqless.Client,
) -> None:
    for _ in range(2):
        await client.queues["work"].put("app.Work", {})
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        answer = await http.get("/api/shards")
        assert answer.status_code == 200
        document = answer.json()
        assert document["deployment"] is None
        [shard] = document["shards"]
        assert (shard["namespace"], shard["waiting"], shard["state"]) == (
            client.prefix,
            2,
            "active",
        )
        assert shard["used_memory"] > 0
        assert shard["lag"] >= 0
        page = await http.get("/shards")
        assert page.status_code == 200
        assert "not sharded: one namespace" in page.text
        assert "shard 0: 2 waiting" in page.text
        assert 'href="/shards"' not in (await http.get("/")).text  # nothing to compare: no tab


async def test_search_scheduled_and_completed_pages_cover_every_shard(cluster: Cluster) -> None:
    async with dashboard(cluster, "websearch") as (client, http):
        queue = client.queues["orders"]
        routes = key_per_shard(client)
        wanted = [
            await queue.put("app.Ship", {"user": {"id": 42}}, route=route) for route in routes
        ]
        for route in routes:
            await queue.put("app.Ship", {"user": {"id": 7}}, route=route)
        params = {"queue": "orders", "state": "waiting", "where": "user.id = 42"}
        found = (await http.get("/api/search", params=params)).json()
        assert sorted(job["jid"] for job in found["jobs"]) == sorted(wanted)
        assert (found["scanned"], found["total"]) == (6, 6)
        assert found["cost"]["round_trips"] == 9  # sizes, listings, a batch of reads per shard
        limited = (await http.get("/api/search", params={**params, "limit": "4"})).json()
        assert (limited["scanned"], limited["complete"]) == (4, False)
        assert (await http.get("/search", params={"jid": wanted[2]})).status_code == 303

        later = [await queue.put("app.Later", {}, route=route, delay=600) for route in routes]
        scheduled = (await http.get("/api/queues/orders", params={"state": "scheduled"})).json()
        starts = {job["jid"]: job["next_start"] for job in scheduled["jobs"]}
        assert sorted(starts) == sorted(later)
        assert all(start > client.clock() + 500 for start in starts.values())

        for job in await queue.pop_many(6, worker="w"):
            await job.complete(result={"shipped": job.jid})
        completed = (await http.get("/api/completed")).json()["jobs"]
        assert len(completed) == 6
        assert {job["queue"] for job in completed} == {"orders"}
        assert all(job["result"]["value"] == {"shipped": job["jid"]} for job in completed)


async def test_a_search_and_an_action_on_what_it_found_cover_every_shard(
    cluster: Cluster,
) -> None:
    async with dashboard(cluster, "websearchact") as (client, http):
        queue = client.queues["imports"]
        routes = key_per_shard(client)
        jids = [await queue.put("app.Import", {"n": n}, route=r) for n, r in enumerate(routes)]
        for job in await queue.pop_many(len(jids), worker="w"):
            await job.fail("imports-Boom", "it broke")
        params = {"class": "app.Import", "state": "failed"}
        found = (await http.get("/api/search", params=params)).json()
        assert sorted(found["jids"]) == sorted(jids)
        token = csrf_token((await http.get("/search", params=params)).text)
        done = await http.post(
            "/actions/search_act",
            data={**params, "action": "retry", "csrf": token},
            headers={"accept": "application/json"},
        )
        assert done.json() == {"ok": True, "message": f"Retried {len(jids)} jobs"}
        assert {str(job.state) for job in await client.jobs.get_many(jids)} == {"waiting"}
