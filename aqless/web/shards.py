"""The dashboard's pages of a sharded deployment: the Shards page, each shard (its queue
counts, lag and primary's memory, from `ShardedClient.shard_report`) drawn as a table and a
chart (charts.shard_chart), so that a shard that lags or fills up shows; and the about page,
which shows the deployment: its shards and the servers holding them."""

from __future__ import annotations

from starlette.requests import Request

from aqless._concurrency.routing import gathered
from aqless.documents import shard_document
from aqless.sharding.client import AnyClient
from aqless.sharding.reads import primary_info
from aqless.web import reads
from aqless.web.condition import memory_of
from aqless.web.reads import JSON, NotFound


async def shards(client: AnyClient, request: Request) -> JSON:
    if not client.sharded:
        raise NotFound("This dashboard shows one namespace, not a sharded deployment.")
    reports = [shard_document(report) for report in await client.shard_report()]
    return {"deployment": client.deployment, "shards": reports}


async def about(client: AnyClient, request: Request) -> JSON:
    """The about page: one namespace's server, or a sharded deployment's shards and the
    primaries holding them (each one's version and memory)."""
    if not client.sharded:
        return await reads.about(client, request)
    shard_clients = client.clients
    read = await gathered(
        shard_clients,
        lambda shard: primary_info(shard, "server", "memory", "persistence"),
    )
    servers: dict[str, JSON] = {}
    for node, info in read:
        servers.setdefault(
            node, {"node": node, "server": reads.server_of(info), "memory": memory_of(info)}
        )
    return {
        **reads.software(shard_clients[0]),
        "deployment": client.deployment,
        "shards": [
            {"id": shard.id, "namespace": shard.namespace, "state": shard.state, "node": node}
            for shard, (node, _) in zip(client.shards.shards, read, strict=True)
        ],
        "servers": sorted(servers.values(), key=lambda server: str(server["node"])),
    }
