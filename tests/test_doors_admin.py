"""One rule per operator setting, at every door: a value outside its rule (aqless.rules) is
refused with the same words, naming the input, by the async, sharded and blocking clients,
the `aqless` command and the dashboard's forms, and nothing is written (every key of the
server and of the sharded deployment's cluster unchanged); a worker setting the same way by
`Worker()` and `aqless-run`."""

from __future__ import annotations

from functools import partial

import anyio
import anyio.to_thread
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aqless
import aqless.sync
from aqless import rules
from tests.faults.cluster import Cluster
from tests.support.admin_doors import (
    ADMIN,
    TEMPLATE,
    WORKER,
    Setting,
    bad_values,
    cli_arguments,
    form_of,
    setting,
    snapshot,
    text,
    through_api,
    through_cli,
    through_dashboard,
    through_run,
    through_worker,
    without_audit,
)
from tests.support.sharding import deployment

pytest_plugins = ["tests.support.sharding_fixtures"]

DOORS = settings(  # examples: the profile's (tests/conftest.py)
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cluster_keys(cluster: Cluster) -> dict[bytes, bytes | None]:
    keys: dict[bytes, bytes | None] = {}
    for port in cluster.ports:
        with redis.Redis(port=port) as node:
            keys |= {key: node.dump(key) for key in node.keys("*")}
    return keys


async def every_door(url: str, cluster: Cluster, chosen: Setting, value: float) -> list[str]:
    """`value` for `chosen` through every door that offers it: the refusals' texts."""
    refusals: list[str] = []
    async with aqless.Client(url) as client, deployment(cluster, "admin-doors") as sharded:
        await client.redis.flushall()
        for each in (client, sharded):
            await each.queues["q"].recur("app.Tick", {}, 60, jid=TEMPLATE)
        before, before_cluster = snapshot(url), cluster_keys(cluster)
        refusals.append(await through_api(client, chosen, value))
        refusals.append(await through_api(sharded, chosen, value))
        blocking = await anyio.to_thread.run_sync(aqless.sync.Client, url)
        try:
            refusals.append(await through_api(blocking, chosen, value))
        finally:
            await anyio.to_thread.run_sync(blocking.close)
        arguments = cli_arguments(chosen, text(value))
        if arguments is not None:
            refusals.append(await through_cli(url, arguments))
        assert snapshot(url) == before
        form = form_of(chosen, text(value))
        if form is not None:
            refusals.append(await through_dashboard(client, *form))
        assert without_audit(snapshot(url)) == before  # the log keeps the refused action
        assert cluster_keys(cluster) == before_cluster
    return refusals


@pytest.mark.deployments("valkey9", reason="the doors' checks: the same whatever the server")
@DOORS
@given(data=st.data())
def test_every_door_refuses_an_operator_setting_outside_its_rule_the_same_way(
    server_url: str, cluster: Cluster, data: st.DataObject
) -> None:
    chosen = data.draw(st.sampled_from(ADMIN), label="setting")
    value = data.draw(bad_values(rules.RULES[chosen.rule]), label="value")
    refusals = anyio.run(partial(every_door, server_url, cluster, chosen, value))
    assert len(refusals) >= 3
    for refusal in refusals:
        assert chosen.refusal(value) in refusal


@DOORS
@given(data=st.data())
def test_worker_and_aqless_run_refuse_a_setting_outside_its_rule_the_same_way(
    data: st.DataObject,
) -> None:
    name = data.draw(st.sampled_from(sorted(WORKER)), label="setting")
    chosen = setting(f"worker.{name}")
    value = data.draw(bad_values(rules.RULES[chosen.rule]), label="value")
    for refusal in (through_worker(name, value), through_run(WORKER[name], text(value))):
        assert chosen.refusal(value) in refusal
