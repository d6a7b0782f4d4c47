"""Sentinel failover mid-drain: a Valkey primary with a replica and three Valkey sentinels on
loopback; the primary is SIGKILLed while workers (``Client.from_sentinel``) drain jobs; the
sentinels promote the replica, the clients follow, and every job completes.

Replication is asynchronous: writes the old primary acknowledged but had not yet sent to the
replica are lost in a failover. The jobs are put, and replicated (WAIT), before the fault;
a completion lost that way leaves its job running with a lock that expires, so it runs
again: a duplicate, counted, never a loss."""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest
from redis.exceptions import ResponseError

import aqless
from aqless._connection.endpoint import Address, Endpoint
from aqless._connection.lean import LeanConnection
from tests.faults.harness import (
    DONE,
    QUEUE,
    Report,
    account,
    ask,
    drained,
    prepare,
    put_jobs,
    until,
    valkey_binary,
)
from tests.faults.test_faults import check
from tests.support.connection_kinds import (
    assert_a_worker_is_pushed_its_job,
    assert_script_calls_go_lean,
)
from tests.support.worker_processes import eventually
from tests.test_client_servers import free_port

pytestmark = [pytest.mark.faults, pytest.mark.timeout(120)]

SERVICE = "aqless"


class Group:
    """The processes of the test: a primary, a replica and three sentinels. `wrapper` runs
    each server (e.g. under valgrind)."""

    def __init__(self, folder: Path, wrapper: Sequence[str] = ()) -> None:
        self.folder = folder
        self.wrapper = tuple(wrapper)
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    def server(self, port: int, *arguments: str) -> None:
        self.processes[port] = subprocess.Popen(
            [
                *self.wrapper,
                valkey_binary(),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--dbfilename",
                f"dump-{port}.rdb",
                "--save",
                "",
                "--appendonly",
                "no",
                *arguments,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def sentinel(self, port: int, primary: int, *, quorum: int = 2) -> None:
        config = self.folder / f"sentinel-{port}.conf"
        config.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {self.folder}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary} {quorum}\n"
            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
            f"sentinel failover-timeout {SERVICE} 10000\n"
        )
        self.processes[port] = subprocess.Popen(
            [valkey_binary(), str(config), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def kill(self, port: int) -> None:
        self.processes[port].kill()
        self.processes[port].wait(timeout=10)

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


@pytest.fixture
def sentinels() -> Iterator[tuple[Group, int, list[int]]]:
    """(the group, the primary's port, the sentinels' ports), once all is linked up."""
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="aqless-sent-")))
        group = Group(folder)
        stack.callback(group.close)
        primary, replica = free_port(), free_port()
        group.server(primary, "--repl-diskless-sync-delay", "0")
        until(lambda: ask(primary, "PING"), "the primary is up")
        group.server(replica, "--replicaof", "127.0.0.1", str(primary))
        until(
            lambda: _field(ask(replica, "INFO", "replication"), "master_link_status") == "up",
            "the replica in sync",
        )
        ports = [free_port() for _ in range(3)]
        for port in ports:
            group.sentinel(port, primary)
        for port in ports:
            until(
                lambda port=port: _sentinel_ready(port),
                "every sentinel knows the replica and the other sentinels",
            )
        yield group, primary, ports


def _field(info: object, name: str) -> object:
    assert isinstance(info, dict)
    return info.get(name)


def _sentinel_ready(port: int) -> bool:
    info = ask(port, "SENTINEL", "MASTER", SERVICE)
    fields = dict(zip(info[::2], info[1::2], strict=True)) if isinstance(info, list) else info
    assert isinstance(fields, dict)
    return int(fields["num-other-sentinels"]) == 2 and int(fields["num-slaves"]) == 1


async def test_a_failover_mid_drain_loses_no_job(
    sentinels: tuple[Group, int, list[int]],
) -> None:
    group, primary, ports = sentinels
    addresses = [("127.0.0.1", port) for port in ports]
    handlers = aqless.Handlers()

    @handlers.register("faultjobs.work")
    async def work(job: aqless.Job) -> None:
        await anyio.sleep(float(job.data["sleep"]))
        await job.client.redis.rpush(DONE, job.jid)
        # the side effect on the replica before the job completes: a write the primary
        # acked but did not pass on dies with it in the failover, while the complete, sent
        # again, lands on the new primary (the job done without its effect: the server's
        # loss, not aqless's). After the failover no replica is left: the wait times out.
        await job.client.redis.execute_command("WAIT", 1, 100)  # type: ignore[no-untyped-call,unused-ignore]

    async with aqless.Client.from_sentinel(addresses, SERVICE) as client:
        await prepare(client)
        jids = await put_jobs(client, 1_500, sleep=0.02)
        assert await client.redis.execute_command("WAIT", 1, 5000) == 1  # type: ignore[no-untyped-call,unused-ignore]
        async with anyio.create_task_group() as tasks:
            running = []
            for index in range(2):
                worker_client = aqless.Client.from_sentinel(
                    addresses, SERVICE, worker_name=f"sentinel-worker-{index}"
                )
                worker = aqless.Worker(
                    worker_client,
                    [QUEUE],
                    handlers=handlers,
                    concurrency=10,
                    interval=1,
                    backoff=aqless.Backoff(0.2, cap=2),  # a side effect refused in the failover
                )
                running.append((worker, worker_client))
                tasks.start_soon(worker.run)
            await eventually(lambda: _done_at_least(client, 300), 30, "300 jobs done")
            group.kill(primary)
            killed_at = time.monotonic()
            await eventually(lambda: _promoted(ports[0], primary), 30, "a new primary")
            promoted_after = time.monotonic() - killed_at
            await drained(client, len(jids), timeout=60)
            recovered_after = time.monotonic() - killed_at
            for worker, _ in running:
                worker.stop()
        for _, worker_client in running:
            await worker_client.close()
        final = await account_on_primary(client, ports[0], jids)
        final.faults, final.recoveries = 1, [promoted_after, recovered_after]
        check(final, duplicates_at_most=20)
        assert sum(worker.counters.completed for worker, _ in running) >= len(jids) - 20


async def _done_at_least(client: aqless.Client, count: int) -> bool:
    try:
        return int(await client.redis.llen(DONE)) >= count
    except aqless.ConnectionLostError:
        return False


def _demoted(port: int) -> bool:
    role = ask(port, "ROLE")
    return isinstance(role, list) and role[0] == "slave"


async def _promoted(sentinel: int, old: int) -> bool:
    address = ask(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
    return isinstance(address, list) and int(address[1]) != old


async def account_on_primary(client: aqless.Client, sentinel: int, jids: list[str]) -> Report:
    address = ask(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
    assert isinstance(address, list)
    return await account(client, f"redis://{address[0]}:{address[1]}/0", jids)


async def test_a_sentinel_client_calls_over_the_lean_connection_and_is_pushed_jobs(
    sentinels: tuple[Group, int, list[int]],
) -> None:
    _, primary, ports = sentinels
    addresses = [("127.0.0.1", port) for port in ports]
    async with aqless.Client.from_sentinel(addresses, SERVICE) as client:
        await assert_script_calls_go_lean(client, "sentinel")
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", primary)
        await assert_a_worker_is_pushed_its_job(client)
    url = f"redis+sentinel://127.0.0.1:{ports[0]},127.0.0.1:{ports[1]}/{SERVICE}"
    async with aqless.Client(url, worker_name="by-url") as client:
        await assert_script_calls_go_lean(client, "sentinel")
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", primary)
        await assert_a_worker_is_pushed_its_job(client, "urlq")


async def test_after_a_failover_the_next_calls_find_the_new_primary(
    sentinels: tuple[Group, int, list[int]],
) -> None:
    _, primary, ports = sentinels
    addresses = [("127.0.0.1", port) for port in ports]
    async with aqless.Client.from_sentinel(addresses, SERVICE) as client:
        queue = client.queues["q"]
        await queue.put("app.Work", {})
        assert client.protocol.wire.endpoint.address == ("127.0.0.1", primary)
        ask(ports[0], "SENTINEL", "FAILOVER", SERVICE)  # the old primary lives on, demoted
        await eventually(lambda: _promoted(ports[0], primary), 30, "a new primary")
        await eventually(lambda: _demoted(primary), 30, "the old primary a replica")
        refusals: list[Exception] = []

        async def put_lands() -> bool:
            try:
                await queue.put("app.Work", {})
            except (aqless.ServerUnavailableError, aqless.ConnectionLostError) as error:
                refusals.append(error)  # READONLY, or the connection the demotion closed
                return False
            return True

        await eventually(put_lands, 10, "a put on the new primary")
        assert len(refusals) <= 2, refusals
        address = client.protocol.wire.endpoint.address
        assert isinstance(address, tuple)
        assert address[1] != primary


async def test_a_readonly_reply_makes_the_next_call_find_the_primary_again(
    tmp_path: Path,
) -> None:
    group = Group(tmp_path)
    try:
        primary, replica = free_port(), free_port()
        group.server(primary)
        until(lambda: ask(primary, "PING"), "the primary is up")
        group.server(replica, "--replicaof", "127.0.0.1", str(primary))
        until(lambda: ask(replica, "PING"), "the replica is up")
        named = [("127.0.0.1", replica), ("127.0.0.1", primary)]  # stale, then current

        async def sentinel_says() -> Address:
            return named.pop(0) if len(named) > 1 else named[0]

        wire = LeanConnection(Endpoint("sentinel", sentinel_says, {"decode_responses": True}))
        with pytest.raises(ResponseError, match="READONLY"):
            await wire.call(("SET", "k", "v"))
        assert await wire.call(("SET", "k", "v")) == "OK"
        assert wire.endpoint.address == ("127.0.0.1", primary)
        await wire.close()
    finally:
        group.close()
