"""GET /api/scaling: the scaling signals as flat JSON for an autoscaler (KEDA's metrics-api
scaler), on a plain and a sharded deployment."""

from __future__ import annotations

import httpx
import pytest
from starlette.requests import Request

import aqless
from aqless.web import create_app
from tests.faults.cluster import Cluster
from tests.support.clients import pop_one
from tests.support.sharding import deployment, key_per_shard

pytest_plugins = ["tests.support.sharding_fixtures"]


async def test_one_queue_answers_a_flat_object_with_its_slots(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["emails"]
    for _ in range(3):
        await queue.put("app.Send", {})
    await (await pop_one(queue)).complete()
    answer = await app_client.get("/api/scaling", params={"queue": "emails", "target": "0.5"})
    assert answer.status_code == 200
    body = answer.json()
    reading = await queue.scaling(0.5)
    assert (body["queue"], body["waiting"], body["completed"]) == ("emails", 2, 1)
    assert body["target_p95"] == 0.5
    assert body["slots"] == reading.slots
    assert body["slots"] >= 1
    again = (await app_client.get("/api/scaling", params={"queue": "emails"})).json()
    assert again["target_p95"] == 2.0  # the default
    assert again["window"] < 3600  # since the first answer, not the whole day


async def test_every_queue_answers_totals_and_each_queue(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["a"].put("app.A", {})
    await client.queues["b"].put("app.B", {})
    await client.queues["b"].put("app.B", {})
    body = (await app_client.get("/api/scaling?target=1")).json()
    assert sorted(body["queues"]) == ["a", "b"]
    assert (body["waiting"], body["running"]) == (3, 0)
    assert body["slots"] == body["queues"]["a"]["slots"] + body["queues"]["b"]["slots"] == 2


@pytest.mark.parametrize(
    "query", ["target=0", "target=-1", "target=soon", "target=inf", "target=nan", "window=0"]
)
async def test_a_bad_target_or_window_is_a_400(app_client: httpx.AsyncClient, query: str) -> None:
    answer = await app_client.get(f"/api/scaling?{query}")
    assert answer.status_code == 400
    assert answer.json()["ok"] is False


async def test_the_view_permission_guards_it(client: aqless.Client) -> None:
    async def auth(request: Request, permission: str) -> bool:
        return request.headers.get("x-user") == "viewer" and permission == "view"

    transport = httpx.ASGITransport(app=create_app(client, auth=auth))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as dash:
        assert (await dash.get("/api/scaling")).status_code == 403
        seen = await dash.get("/api/scaling", headers={"x-user": "viewer"})
        assert seen.status_code == 200


@pytest.mark.timeout(60)
async def test_a_sharded_queue_is_read_over_every_shard(cluster: Cluster) -> None:
    async with deployment(cluster, "webscaling") as client:
        queue = client.queues["emails"]
        for route in key_per_shard(client):
            await queue.put("app.Send", {}, route=route)
        transport = httpx.ASGITransport(app=create_app(client))
        async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
            body = (await http.get("/api/scaling", params={"queue": "emails"})).json()
        assert body["waiting"] == len(key_per_shard(client)) == 3
        assert body["slots"] == 1
        (every,) = await client.queues.scaling(2.0)
        assert every.waiting == 3
