"""``client.workers``: the workers the server has seen, the records aqless workers publish
about themselves (and their keys), and an operator's requests to one (quiet, stop, resume)."""

from __future__ import annotations

import json
from typing import Final

from aqless import rules
from aqless._client.jobs import listed_objects
from aqless._connection.protocol import hash_fields
from aqless.contracts import ScriptClient as Client
from aqless.contracts.derived import WorkersScripted
from aqless.models import SeenWorkers, WorkerCounts, WorkerInfo, WorkerJobs, listed


def worker_record_key(prefix: str, name: str) -> str:
    """The record an aqless worker publishes about itself (aqless._worker.info)."""
    return f"{prefix}aqless:w:{name}"  # no qless key starts with ql:aqless:


def worker_index_key(prefix: str) -> str:
    """The names of the workers whose records are alive, by when each was last written."""
    return prefix + "aqless:workers"


def worker_control_key(prefix: str, name: str) -> str:
    """What an operator asked of an aqless worker (quiet, stop, resume), until the worker
    reads it (aqless._worker.control): aqless's own, as its record is."""
    return f"{prefix}aqless:control:{name}"


#: The event on a worker's channel (``ql:w:<worker>``) that tells it to read its control
#: key now; its ``command`` field says what was asked, for those who watch the channel.
CONTROL_EVENT: Final = "aqless:control"


#: Seconds a control request waits for its worker to read it (a worker reads it within a
#: second; one that died leaves it to expire).
CONTROL_TTL: Final = 60


class Workers(WorkersScripted):
    """The workers the server has seen: ``client.workers``.

    Examples:
        ```python
        for worker in await client.workers.counts():
            print(worker.name, worker.jobs, worker.stalled)
        ```
    """

    def __init__(self, client: Client) -> None:
        self._client = client

    async def counts(self) -> list[WorkerCounts]:
        """Every worker, most recently active first, with how many jobs it holds (and how
        many of those are stalled).

        Examples:
            ```python
            busiest = max(await client.workers.counts(), key=lambda w: w.jobs)
            ```
        """
        reply = await self._client.protocol.json("workers.counts")
        return [
            WorkerCounts(name=str(w["name"]), jobs=int(w["jobs"]), stalled=int(w["stalled"]))
            for w in listed_objects(reply)
        ]

    async def jobs(self, worker: str) -> WorkerJobs:
        """The jids one worker holds, its running and its stalled jobs apart.

        Args:
            worker: the worker's name.

        Examples:
            ```python
            held = await client.workers.jobs("host-1-4242")
            print(held.jobs, held.stalled)
            ```
        """
        reply = await self._client.protocol.json("worker.jobs", worker)
        return WorkerJobs(
            jobs=tuple(listed(reply["jobs"])), stalled=tuple(listed(reply["stalled"]))
        )

    async def forget(self, *workers: str) -> None:
        """Drop workers from the list of workers (their jobs are not touched); none given,
        nothing sent.

        Args:
            workers: the workers' names.

        Examples:
            ```python
            await client.workers.forget("host-1-4242", "host-2-17")
            ```
        """
        if workers:
            await self._client.protocol.call("worker.forget", *workers)

    async def records(self) -> dict[str, WorkerInfo]:
        """What each live aqless worker says of itself (host, pid, queues, slots, version,
        jobs per minute...), by name; other clients' workers publish no record.

        Examples:
            ```python
            for name, info in (await client.workers.records()).items():
                print(name, info.host, info.pid, info.queues)
            ```
        """
        protocol, prefix = self._client.protocol, self._client.prefix
        listed = await protocol.plain("workers.records", "ZRANGE", worker_index_key(prefix), 0, -1)
        names = [str(name) for name in listed]
        raws = await protocol.plain_many(
            "workers.records", [("HGETALL", worker_record_key(prefix, name)) for name in names]
        )
        found = (
            WorkerInfo.parse(name, hash_fields(raw)) for name, raw in zip(names, raws, strict=True)
        )
        return {info.name: info for info in found if info is not None}

    async def control(self, worker: str, command: str) -> None:
        """Ask a running aqless worker to ``quiet`` (take no more jobs; its running jobs
        finish), ``stop`` (quiet, then exit once its running jobs end or its grace runs
        out: `aqless-run` exits 0) or ``resume`` (take jobs again after a quiet). The
        request waits in the worker's control key (``ql:aqless:control:<worker>``, for
        `CONTROL_TTL` seconds), and an event on the worker's channel tells it to read it
        now; a worker reads the key every second anyway. The worker says what it is doing
        in its record (`WorkerInfo.mode`). Other clients' workers read no such key.

        Args:
            worker: the worker's name.
            command: ``"quiet"``, ``"stop"`` or ``"resume"``.

        Raises:
            InvalidValueError: `worker` is no worker's name, or `command` is none of those;
                nothing is written.

        Examples:
            ```python
            await client.workers.control("host-1-4242", "quiet")
            ```
        """
        rules.check("worker", worker, "workers.control")
        rules.check("worker_command", command, "workers.control")
        prefix = self._client.prefix
        key = worker_control_key(prefix, worker)
        event = json.dumps({"event": CONTROL_EVENT, "command": command, "worker": worker})
        await self._client.protocol.plain_many(
            "workers.control",
            [("SET", key, command, "EX", CONTROL_TTL), ("PUBLISH", f"{prefix}w:{worker}", event)],
        )

    async def seen(self) -> SeenWorkers:
        """The workers that hold jobs or publish a record, each with both; and the other
        clients qless lists.

        Examples:
            ```python
            seen = await client.workers.seen()
            print(len(seen.workers), seen.others)
            ```
        """
        return SeenWorkers.of(await self.counts(), await self.records())
