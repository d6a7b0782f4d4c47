"""client.put_hooks: code around every put and put_many (what aqless.tracing builds on)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import aqless
from aqless.puts import PutRequest, PutSender

pytest_plugins = ["tests.support.client_fixtures"]


async def test_hooks_wrap_put_and_put_many_outermost_first(client: aqless.Client) -> None:
    calls: list[str] = []

    def named(name: str) -> aqless.queue.PutHook:
        async def hook(
            queue: aqless.Queue, requests: list[PutRequest], send: PutSender
        ) -> list[str]:
            calls.append(f"{name} {queue.name} {len(requests)}")
            jids = await send([replace(r, data={**r.data, name: True}) for r in requests])
            calls.append(f"{name} got {len(jids)}")
            return jids

        return hook

    client.put_hooks += [named("outer"), named("inner")]
    q = client.queues["hooked"]
    jid = await q.put("Send", {"n": 1})
    many = await q.put_many(PutRequest("Send", {"n": n}) for n in (2, 3))
    assert calls == [
        "outer hooked 1",
        "inner hooked 1",
        "inner got 1",
        "outer got 1",
        "outer hooked 2",
        "inner hooked 2",
        "inner got 2",
        "outer got 2",
    ]
    jobs = await client.jobs.get_many([jid, *many])
    assert [job.data for job in jobs] == [{"n": n, "outer": True, "inner": True} for n in (1, 2, 3)]


async def test_a_hook_sees_the_refusal(client: aqless.Client) -> None:
    seen: list[BaseException] = []

    async def hook(queue: aqless.Queue, requests: list[PutRequest], send: PutSender) -> list[str]:
        try:
            return await send(requests)
        except aqless.AqlessError as error:
            seen.append(error)
            raise

    client.put_hooks.append(hook)
    with pytest.raises(aqless.JobNotFoundError):
        await client.queues["hooked"].put("Send", {}, jid="absent", requeue=True)
    assert [type(error) for error in seen] == [aqless.JobNotFoundError]
