"""One lifecycle for every client (aqless._connection.lifecycle): made, opened, closed. A closed
client refuses every call and every open with ClientClosedError, closing twice is harmless and
``async with`` closes through `aclose`; plain, sharded and blocking alike. And what every
client tells of its deployment: `sharded` and `servers`.

The plain clients here use a namespace of the tests' cluster, so that every variant runs on
the same servers (tests.support.sharding_fixtures)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest

import aqless
import aqless.sync
from aqless import ClientClosedError, ConfigurationError
from tests.faults.cluster import Cluster
from tests.support.sharding import addresses, cluster_url

pytestmark = pytest.mark.timeout(60)
pytest_plugins = ["tests.support.sharding_fixtures"]

AnyClient = aqless.Client | aqless.ShardedClient
Make = Callable[[], AnyClient]


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


@pytest.fixture(params=["plain", "sharded"])
def make(request: pytest.FixtureRequest, cluster: Cluster) -> Make:
    """A maker of unopened clients of one deployment of the variant."""
    if request.param == "plain":
        namespace = "{" + unique("life") + "}"
        return lambda: aqless.Client.from_cluster(addresses(cluster), namespace=namespace)
    name = unique("life")
    return lambda: aqless.ShardedClient(addresses(cluster), deployment=name, shards=2)


async def test_a_closed_client_refuses_every_call_and_every_open(make: Make) -> None:
    async with make() as client:
        queue = client.queues["q"]
        await queue.put("app.Job")
    for call in (
        lambda: queue.put("app.Job"),
        client.queues.names,
        lambda: client.jobs.get("jid"),
        client.config.all,
        client.open,
    ):
        with pytest.raises(ClientClosedError, match="is closed; make a new one"):
            await call()
    with pytest.raises(ClientClosedError):
        async with client:
            pass


async def test_closing_twice_is_harmless_opened_or_not(make: Make) -> None:
    unopened = make()
    await unopened.aclose()
    await unopened.aclose()
    with pytest.raises(ClientClosedError):  # closed before it opened: it never will
        await unopened.open()
    async with make() as client:
        await client.aclose()  # and once more on exit
    await client.aclose()
    with pytest.raises(ClientClosedError):
        await client.queues.names()


async def test_leaving_async_with_closes_through_aclose(make: Make) -> None:
    closes: list[AnyClient] = []
    client = make()
    closing = client.aclose

    async def aclose() -> None:
        closes.append(client)
        await closing()

    client.aclose = aclose  # type: ignore[method-assign]
    async with client:
        pass
    assert closes == [client]
    with pytest.raises(ClientClosedError):
        await client.queues.names()


async def test_a_failed_sharded_open_is_not_a_close_and_can_be_tried_again(
    cluster: Cluster,
) -> None:
    name = unique("late")
    client = aqless.ShardedClient(addresses(cluster), deployment=name)
    with pytest.raises(ConfigurationError, match="give shards=N") as refused:
        await client.open()
    assert not isinstance(refused.value, ClientClosedError)
    async with aqless.ShardedClient(addresses(cluster), deployment=name, shards=2):
        pass  # the deployment now exists
    async with client:
        assert len(client.servers) == 2


async def test_every_client_tells_whether_it_is_sharded_and_its_servers(
    cluster: Cluster,
) -> None:
    namespace = "{" + unique("one") + "}"
    async with aqless.Client.from_cluster(addresses(cluster), namespace=namespace) as plain:
        assert plain.sharded is False
        assert plain.servers == [plain]
    async with aqless.ShardedClient(
        addresses(cluster), deployment=unique("two"), shards=3
    ) as sharded:
        assert sharded.sharded is True
        assert sharded.servers == [sharded.shard(shard.id) for shard in sharded.shards.shards]
        assert [server.namespace for server in sharded.servers] == [
            shard.namespace for shard in sharded.shards.shards
        ]
        assert not any(server.sharded for server in sharded.servers)


# -- the blocking clients ------------------------------------------------------------------------


@pytest.fixture(params=["blocking", "blocking sharded"])
def blocking(
    request: pytest.FixtureRequest, cluster: Cluster
) -> Callable[[], aqless.sync.Client | aqless.sync.ShardedClient]:
    if request.param == "blocking":
        namespace = "{" + unique("sync") + "}"
        return lambda: aqless.sync.Client(cluster_url(cluster), namespace=namespace)
    name = unique("sync")
    return lambda: aqless.sync.ShardedClient(addresses(cluster), deployment=name, shards=2)


def test_a_closed_blocking_client_refuses_calls_and_closing_twice_is_harmless(
    blocking: Callable[[], aqless.sync.Client | aqless.sync.ShardedClient],
) -> None:
    with blocking() as client:
        client.open()
        client.queues["q"].put("app.Job")
        assert client.sharded is isinstance(client, aqless.sync.ShardedClient)
    client.close()  # once more after `with`
    for call in (client.queues.names, client.open, lambda: client.jobs.get("jid")):
        with pytest.raises(ClientClosedError, match="is closed; make a new one"):
            call()
    unopened = blocking()
    unopened.close()
    unopened.close()
    with pytest.raises(ClientClosedError):
        unopened.queues.names()
