"""client.put_hooks: code around every put and put_many (what aqless.tracing builds on)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import aqless
from aqless.flows import FlowNode
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


async def test_hooks_wrap_each_job_a_flow_puts_one_queue_at_a_time(client: aqless.Client) -> None:
    """A flow's jobs go through the hooks as puts into their queues do (grouped by queue,
    parents first, each group inside the one before it), and the flow is still one call:
    the hooks' changes are in every job, and each hook is answered its jobs' jids."""
    calls: list[tuple[str, str, tuple[str | None, ...]]] = []

    async def hook(queue: aqless.Queue, requests: list[PutRequest], send: PutSender) -> list[str]:
        calls.append(("before", queue.name, tuple(r.jid for r in requests)))
        jids = await send([replace(r, data={**r.data, "hooked": queue.name}) for r in requests])
        calls.append(("after", queue.name, tuple(jids)))
        return jids

    client.put_hooks.append(hook)
    flow = await client.flows.put(
        FlowNode("app.Report", {"n": 0}, queue="reports", jid="root"),
        [
            FlowNode("app.Resize", {"n": 1}, queue="images", jid="a"),
            FlowNode("app.Note", {"n": 2}, queue="reports", jid="b"),
            FlowNode("app.Resize", {"n": 3}, queue="images", jid="c"),
        ],
    )
    assert flow.jids == ("root", "a", "b", "c")
    assert calls == [
        ("before", "reports", ("root", "b")),
        ("before", "images", ("a", "c")),
        ("after", "images", ("a", "c")),
        ("after", "reports", ("root", "b")),
    ]
    jobs = {job.jid: job for job in await client.jobs.get_many(list(flow.jids))}
    assert {jid: job.data for jid, job in jobs.items()} == {
        "root": {"n": 0, "hooked": "reports"},
        "a": {"n": 1, "hooked": "images"},
        "b": {"n": 2, "hooked": "reports"},
        "c": {"n": 3, "hooked": "images"},
    }
    assert jobs["root"].state == aqless.JobState.DEPENDS
    assert set(jobs["root"].dependencies) == {"a", "b", "c"}


async def test_a_hook_sees_a_flows_refusal_and_nothing_is_put(client: aqless.Client) -> None:
    seen: list[type[BaseException]] = []

    async def hook(queue: aqless.Queue, requests: list[PutRequest], send: PutSender) -> list[str]:
        try:
            return await send(requests)
        except aqless.AqlessError as error:
            seen.append(type(error))
            raise

    await client.queues["q"].put("app.Job", jid="taken")
    client.put_hooks.append(hook)
    with pytest.raises(aqless.FlowJidTakenError):
        await client.flows.put(
            FlowNode("app.Parent", queue="q", jid="parent"),
            [FlowNode("app.Child", queue="other", jid="taken")],
        )
    assert seen == [aqless.FlowJidTakenError] * 2  # the hook of each queue's jobs
    assert await client.jobs.get("parent") is None


async def test_a_hook_that_drops_a_flows_job_is_refused(client: aqless.Client) -> None:
    async def dropping(
        queue: aqless.Queue, requests: list[PutRequest], send: PutSender
    ) -> list[str]:
        return await send(requests[1:])

    client.put_hooks.append(dropping)
    with pytest.raises(aqless.FlowError, match="must send every job"):
        await client.flows.put(FlowNode("app.Parent", queue="q"), [FlowNode("app.C", queue="q")])
    assert await client.queues.names() == []  # nothing put
