"""The dashboard's Shards page: each shard of a sharded deployment (its queue counts, lag
and primary's memory, from `ShardedClient.shard_report`), drawn as a table and a chart
(charts.shard_chart), so that a shard that lags or fills up shows."""

from __future__ import annotations

from starlette.requests import Request

from aqless.documents import shard_document
from aqless.sharded import AnyClient, ShardedClient
from aqless.web.reads import JSON, NotFound


async def shards(client: AnyClient, request: Request) -> JSON:
    if not isinstance(client, ShardedClient):
        raise NotFound("This dashboard shows one namespace, not a sharded deployment.")
    reports = [shard_document(report) for report in await client.shard_report()]
    return {"deployment": client.deployment, "shards": reports}
