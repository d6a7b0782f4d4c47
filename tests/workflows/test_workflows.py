"""Workflows run by a worker on the real servers: a step's function runs once across
attempts, a sleep and a wait park the job (no retry spent, no slot held), signals are kept
until a wait takes them and a signal id is taken once, a wait times out."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

import aqless
from aqless import JobState, WorkflowContext
from aqless.codecs import KeyRing, PayloadCodec
from aqless.errors import (
    InvalidValueError,
    PayloadError,
    SignalRefusedError,
    SignalTimeoutError,
    StepNameTakenError,
)
from aqless.testing import perform
from aqless.workflows.record import KEY, parked
from tests.support.deployments import Deployment
from tests.support.worker import WORKER, make_worker, running, until


@pytest.fixture
async def client(deployment: Deployment) -> AsyncIterator[aqless.Client]:
    async with deployment.open_client(worker_name=WORKER) as client:
        await deployment.flush()
        yield client


async def job_of(client: aqless.Client, jid: str) -> aqless.Job:
    job = await client.jobs.get(jid)
    assert isinstance(job, aqless.Job)
    return job


async def state_of(client: aqless.Client, jid: str) -> str:
    return str((await job_of(client, jid)).state)


async def is_scheduled(client: aqless.Client, jid: str) -> bool:
    return await state_of(client, jid) == "scheduled"


async def test_a_step_runs_once_across_attempts_and_sleep_spends_no_retry(
    client: aqless.Client,
) -> None:
    runs: Counter[str] = Counter()
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Order")
    async def order(ctx: WorkflowContext) -> Any:
        async def charge(amount: int) -> dict[str, int]:
            runs["charge"] += 1
            return {"charged": amount}

        charged = await ctx.step("charge", charge, ctx.data["amount"])
        runs["after charge"] += 1
        await ctx.sleep(0.5)

        def ship() -> str:  # a plain function: its result is kept the same way
            runs["ship"] += 1
            return "shipped"

        shipped = await ctx.step("ship", ship)
        return {**charged, "shipped": shipped}

    jid = await client.queues["q"].put("wf.Order", {"amount": 7}, retries=0)
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="asleep")
        job = await job_of(client, jid)
        assert job.data[KEY]["steps"]["charge"]["result"] == {"charged": 7}
        marker = parked(job.state, job.data)
        assert marker is not None
        assert marker.kind == "sleep"
        assert job.retries_left == 0  # no retry spent: it had none
        assert await client.result(jid, timeout=10) == {"charged": 7, "shipped": "shipped"}
    assert runs == {"charge": 1, "after charge": 2, "ship": 1}
    done = await job_of(client, jid)
    assert [e.what for e in done.history].count("parked") == 1
    assert list(done.data[KEY]["steps"]) == ["charge", "ship"]
    assert done.data[KEY]["events"] == ["step:charge", "sleep:1", "step:ship"]


async def test_a_sleeping_workflow_holds_no_slot(client: aqless.Client) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Nap")
    async def nap(ctx: WorkflowContext) -> str:
        await ctx.sleep(3)
        return "woke"

    @handlers.register("wf.Quick")
    async def quick(job: aqless.Job) -> str:
        return "quick"

    queue = client.queues["q"]
    napping = await queue.put("wf.Nap", {})
    async with running(make_worker(client, handlers=handlers, concurrency=1, interval=0.1)):
        await until(lambda: is_scheduled(client, napping), what="asleep")
        quick_jid = await queue.put("wf.Quick", {})
        assert await client.result(quick_jid, timeout=2) == "quick"  # the one slot was free
        assert await state_of(client, napping) == "scheduled"
        assert await client.result(napping, timeout=10) == "woke"


async def test_signals_before_and_after_the_wait_and_a_duplicate_id(
    client: aqless.Client,
) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Approve")
    async def approve(ctx: WorkflowContext) -> Any:
        first = await ctx.wait_for("approval")
        second = await ctx.wait_for("approval")
        return [first, second]

    jid = await client.queues["q"].put("wf.Approve", {})
    assert await client.signal(jid, "approval", {"by": "ann"}, signal_id="s1") == "kept"
    assert await client.signal(jid, "approval", {"by": "ann"}, signal_id="s1") == "duplicate"
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="parked")
        job = await job_of(client, jid)
        marker = parked(job.state, job.data)
        assert marker is not None
        assert (marker.kind, marker.signal) == ("signal", "approval")
        assert job.data[KEY]["waits"]["approval#1"]["taken"]["payload"] == {"by": "ann"}
        assert await client.signal(jid, "approval", "bob", signal_id="s2") == "woken"
        assert await client.signal(jid, "approval", "bob", signal_id="s2") == "duplicate"
        assert await client.result(jid, timeout=10) == [{"by": "ann"}, "bob"]
    with pytest.raises(SignalRefusedError):
        await client.signal(jid, "approval", 1)
    # a delivery sent again after the end is still a duplicate, not a refusal
    assert await client.signal(jid, "approval", "bob", signal_id="s2") == "duplicate"


async def test_a_wait_times_out(client: aqless.Client) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Patient")
    async def patient(ctx: WorkflowContext) -> str:
        try:
            await ctx.wait_for("never", timeout=0.5)
        except SignalTimeoutError as error:
            return f"timed out on {error.signal}"
        return "signalled"

    jid = await client.queues["q"].put("wf.Patient", {})
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == "timed out on never"
    # a signal sent after the timeout changes nothing that was decided
    job = await job_of(client, jid)
    assert job.data[KEY]["waits"]["never#1"]["timed_out"] is True


async def test_deterministic_values_and_versions_replay(client: aqless.Client) -> None:
    seen: list[tuple[float, str, float, int]] = []
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Values")
    async def values(ctx: WorkflowContext) -> Any:
        seen.append((ctx.now(), ctx.uuid(), ctx.random(), ctx.version("v2")))
        await ctx.sleep_until(ctx.now() + 0.2)  # an epoch time
        return "done"

    jid = await client.queues["q"].put("wf.Values", {})
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == "done"
    assert len(seen) == 2
    assert seen[0] == seen[1]
    assert seen[0][3] == 1


async def test_an_old_workflow_takes_the_old_side_of_a_change(client: aqless.Client) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Old")
    async def old(ctx: WorkflowContext) -> Any:
        await ctx.step("a", lambda: 1)
        await ctx.wait_for("go")
        return "old"

    jid = await client.queues["q"].put("wf.Old", {})
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        await until(lambda: is_scheduled(client, jid), what="parked")

    new_handlers = aqless.Handlers()

    @new_handlers.workflow("wf.Old")
    async def new(ctx: WorkflowContext) -> Any:
        side = ctx.version("before-a")  # the running workflow passed here before the change
        await ctx.step("a", lambda: 1)
        await ctx.wait_for("go")
        late = ctx.version("after-wait")  # it had not yet reached this point
        return [side, late]

    async with running(make_worker(client, handlers=new_handlers, interval=0.1)):
        await client.signal(jid, "go")
        assert await client.result(jid, timeout=10) == [0, 1]


async def test_a_step_retry_policy_retries_the_step_with_no_job_retry(
    client: aqless.Client,
) -> None:
    tries: Counter[str] = Counter()
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Flaky")
    async def flaky(ctx: WorkflowContext) -> Any:
        def call() -> str:
            tries["call"] += 1
            if tries["call"] < 3:
                raise ConnectionError("flaky")
            return "ok"

        policy = aqless.RetryPolicy(strategy="fixed", delay=0.1, max_attempts=5)
        return await ctx.step("call", call, retry=policy)

    jid = await client.queues["q"].put("wf.Flaky", {}, retries=0)
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == "ok"
    assert tries["call"] == 3
    job = await job_of(client, jid)
    assert job.data[KEY]["steps"]["call"]["failures"] == 2


async def test_bad_steps_fail_the_run_and_write_nothing(client: aqless.Client) -> None:
    handlers = aqless.Handlers()
    errors: list[BaseException] = []

    @handlers.workflow("wf.Bad")
    async def bad(ctx: WorkflowContext) -> Any:
        for attempt in (
            lambda: ctx.step("same", lambda: 1),
            lambda: ctx.step("same", lambda: 2),
            lambda: ctx.step("set", lambda: {1, 2}),
            lambda: ctx.step("big", lambda: "x" * 70_000),
            lambda: ctx.sleep(-1),
        ):
            try:
                await attempt()
            except (StepNameTakenError, PayloadError, InvalidValueError) as error:
                errors.append(error)
        return "checked"

    jid = await client.queues["q"].put("wf.Bad", {})
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        assert await client.result(jid, timeout=10) == "checked"
    kinds = [type(error) for error in errors]
    assert kinds == [StepNameTakenError, PayloadError, InvalidValueError, InvalidValueError]
    assert list((await job_of(client, jid)).data[KEY]["steps"]) == ["same"]


async def test_a_signal_s_inputs_are_checked_before_anything_is_sent(
    client: aqless.Client,
) -> None:
    jid = await client.queues["q"].put("wf.Any", {})
    with pytest.raises(InvalidValueError):
        await client.signal(jid, "")
    with pytest.raises(PayloadError):
        await client.signal(jid, "s", {1})
    with pytest.raises(aqless.JobNotFoundError):
        await client.signal("missing", "s")
    assert (await job_of(client, jid)).state == JobState.WAITING


async def test_a_failed_saga_undoes_its_steps_newest_first_once_and_fails_for_good(
    client: aqless.Client,
) -> None:
    undone: list[str] = []
    flaky_undo = Counter[str]()
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Saga", retry=aqless.RetryPolicy(delay=0))
    async def saga(ctx: WorkflowContext) -> Any:
        def refund(receipt: str) -> str:
            undone.append(receipt)
            return f"refunded {receipt}"

        def release(hold: str) -> None:
            flaky_undo["release"] += 1
            if flaky_undo["release"] == 1:
                raise ConnectionError("the stock service is down")  # the job's retry
            undone.append(hold)

        await ctx.step("charge", lambda: "receipt-1", undo=refund)
        await ctx.step("hold", lambda: "hold-1", undo=release)

        def ship() -> str:
            flaky_undo["ship"] += 1
            if flaky_undo["ship"] == 1:
                raise ZeroDivisionError("the courier is gone")
            return "shipped"  # never reached: once compensating, no run goes forward

        return await ctx.step("ship", ship)

    jid = await client.queues["q"].put("wf.Saga", {}, retries=5)
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        with pytest.raises(aqless.JobFailedError) as failed:
            await client.result(jid, timeout=10)
    assert failed.value.group == "q-ZeroDivisionError"
    assert undone == ["hold-1", "receipt-1"]  # newest first, each once
    assert flaky_undo == {"ship": 1, "release": 2}
    job = await job_of(client, jid)
    assert job.retries_left == 4  # one retry spent by the undo that raised; then for good
    record = job.data[KEY]
    assert record["steps"]["undo:charge"]["result"] == "refunded receipt-1"
    assert "ship" not in record["steps"]
    assert record["compensating"]["group"] == "q-ZeroDivisionError"


async def test_a_parked_run_is_reported_as_parked_not_retried(client: aqless.Client) -> None:
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Later")
    async def later(ctx: WorkflowContext) -> str:
        await ctx.sleep(60)
        return "woke"

    await client.queues["q"].put("wf.Later", {})
    job = await client.queues["q"].pop()
    assert job is not None
    assert await perform(job, handlers) == "parked"
    assert (job.state, job.worker_name) == (JobState.SCHEDULED, "")


async def test_a_lost_connection_is_no_failure_to_compensate(client: aqless.Client) -> None:
    undone: list[str] = []
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Blip")
    async def blip(ctx: WorkflowContext) -> Any:
        def server_gone() -> int:
            raise aqless.ConnectionLostError("the server went away")  # it may have run

        await ctx.step("first", lambda: 1, undo=undone.append)
        return await ctx.step("second", server_gone)

    jid = await client.queues["q"].put("wf.Blip", {})
    async with running(make_worker(client, handlers=handlers, interval=0.1)):
        with pytest.raises(aqless.JobFailedError) as failed:
            await client.result(jid, timeout=10)
    assert failed.value.group == "q-ConnectionLostError"  # the worker's policy: no retry
    assert undone == []  # not undone: the workflow did not fail, its connection did
    assert "compensating" not in (await job_of(client, jid)).data[KEY]


async def test_a_workflows_record_is_sealed_by_the_clients_codec(server_url: str) -> None:
    codec = PayloadCodec(keys=KeyRing({"k1": KeyRing.new_key()}))
    handlers = aqless.Handlers()

    @handlers.workflow("wf.Sealed")
    async def sealed(ctx: WorkflowContext) -> None:
        await ctx.step("card", lambda: {"card": "4111-1111"})
        await ctx.sleep(600)

    async with aqless.Client(server_url, codec=codec) as client:
        jid = await client.queues["sealed"].put("wf.Sealed", {"email": "ada@example.com"})
        async with running(make_worker(client, ["sealed"], handlers=handlers, interval=0.1)):
            await until(lambda: is_scheduled(client, jid), what="asleep")
        stored = str(await client.redis.hget(f"ql:j:{jid}", "data"))
        assert "4111-1111" not in stored  # the step's result, stored sealed
        assert "ada@example.com" not in stored
        job = await job_of(client, jid)
        assert job.data[KEY]["steps"]["card"]["result"] == {"card": "4111-1111"}
        await client.jobs.cancel(jid)
