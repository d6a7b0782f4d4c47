"""The dashboard's pages of a sharded deployment: the Shards page, each shard (its queue
counts, lag and primary's memory, from `ShardedClient.shard_report`) drawn as a table and a
chart (charts.shard_chart), so that a shard that lags or fills up shows; and the about page,
which shows the deployment: its shards and the servers holding them."""

from __future__ import annotations

from redis.asyncio import Redis
from starlette.requests import Request

from aqless._concurrency.routing import gathered
from aqless._connection.protocol import raising_aqless_errors
from aqless.client import Client
from aqless.documents import shard_document
from aqless.sharding.client import AnyClient
from aqless.sharding.reads import ShardReport, primary_info, queues_and_lag
from aqless.web import reads
from aqless.web.condition import memory_of
from aqless.web.reads import JSON


async def shards(client: AnyClient, request: Request) -> JSON:
    """Each shard's load; a plain client's one namespace as the only shard (deployment
    None), so the page serves there too: its queues' counts, lag and server's memory."""
    if not client.sharded:
        return {"deployment": None, "shards": [shard_document(await namespace_report(client))]}
    reports = [shard_document(report) for report in await client.shard_report()]
    return {"deployment": client.deployment, "shards": reports}


async def namespace_report(client: Client) -> ShardReport:
    """A plain client's namespace as a shard's report (id 0, active, on its server)."""
    queues, lag = await queues_and_lag(client)
    redis = client.redis
    if not isinstance(redis, Redis):  # a namespace on a cluster: its slot's primary
        node, info = await primary_info(client, "memory")
    else:
        where = redis.connection_pool.connection_kwargs
        node = str(where.get("path") or f"{where.get('host')}:{where.get('port')}")
        with raising_aqless_errors("shards.info"):
            info = await redis.info("memory")
    used = info.get("used_memory")
    memory = None if used is None else int(used)
    return ShardReport(0, client.prefix, "active", node, queues, lag, memory)


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
