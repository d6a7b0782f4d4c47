"""A workflow's steps (``ctx.step``): run once, their results kept in the record, retried by
their own `RetryPolicy` as durable sleeps; and its saga: the undos of the steps done, run
newest first when a run raises after them (``ctx.compensate``)."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

from aqless import rules
from aqless._worker.outcomes import failure_group, failure_message
from aqless._worker.policies import RetryPolicy
from aqless._worker.workflow_replay import Replay, Undo, kept
from aqless.errors import StepNameTakenError

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["Steps"]

T = TypeVar("T")


class Steps(Replay):
    """A workflow context's steps and undos (`WorkflowContext`)."""

    @overload
    async def step(
        self,
        name: str,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        retry: RetryPolicy | None = None,
        undo: Undo | None = None,
    ) -> T: ...

    @overload
    async def step(
        self,
        name: str,
        fn: Callable[..., T],
        *args: Any,
        retry: RetryPolicy | None = None,
        undo: Undo | None = None,
    ) -> T: ...

    async def step(
        self,
        name: str,
        fn: Callable[..., Any],
        *args: Any,
        retry: RetryPolicy | None = None,
        undo: Undo | None = None,
    ) -> Any:
        """`fn(*args)`'s result (awaited if it is a coroutine), run once: stored with the job
        before it is returned, and on a later attempt returned without running `fn`.
        `undo` (called with the result) compensates the step when a later run raises: see
        `compensate`.

        Args:
            name: the step's key in the workflow's record: unique within a run.
            fn: called as ``fn(*args)``, plain or async; its result must be JSON.
            *args: `fn`'s arguments.
            retry: the step's own policy (default None: an exception ends the run, and the
                job's policies decide); a failure it covers parks the job for its delay.
            undo: called with the result to compensate the step (default None: none).

        Raises:
            StepNameTakenError: `name` was used by a step of this run already (nothing ran).
            PayloadError: the result is not JSON (the step does not count as done).
            InvalidValueError: the result is larger than ``rules.STEP_RESULT_MAX`` bytes.
            InvalidValueError: `name` is not a valid step name (nothing ran).
            whatever `fn` raised, once `retry` (a per-step RetryPolicy: a durable sleep
                between attempts, spending no job retry) does not cover it or gave up.

        Examples:
            ```python
            receipt = await ctx.step("charge", charge, ctx.data["amount"], undo=refund)
            reply = await ctx.step(
                "call", call_partner, retry=aqless.RetryPolicy(delay=5, max_attempts=4)
            )
            ```
        """
        rules.check("step", name, "workflow.step")
        if name in self._ran:
            raise StepNameTakenError(f"step {name!r} ran already in this run of the workflow")
        self._ran.add(name)
        steps: dict[str, Any] = self._record.setdefault("steps", {})
        done = steps.get(name)
        if isinstance(done, dict) and "result" in done:
            self._occur(f"step:{name}")
            self._done(name, undo, done["result"])
            return done["result"]
        self._forward()
        entry: dict[str, Any] = done if isinstance(done, dict) else {}
        started = time.monotonic()
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as error:
            await self._step_failed(name, entry, error, retry)
            raise
        text = kept(result, f"the result of step {name!r}", "workflow.step")
        steps[name] = {
            **entry,
            "result": json.loads(text),
            "attempt": self.job.attempt,
            "at": self._clock(),
            "seconds": round(time.monotonic() - started, 6),
        }
        self._occur(f"step:{name}")
        await self._store()
        self._done(name, undo, result)
        return result

    def _done(self, name: str, undo: Undo | None, result: Any) -> None:
        if undo is not None:
            self._undos.append((name, undo, result))

    @property
    def compensable(self) -> bool:
        """Whether a step of this run registered an undo."""
        return bool(self._undos)

    async def compensate(self, error: BaseException) -> None:
        """Run the undos of the steps done, newest first, each as a step (``undo:<name>``,
        once), then fail the job for good (into ``<queue>-<ExceptionType>`` of `error`): no
        retry runs the workflow forward again. The worker calls it when a run raises after a
        step with an `undo`; call it to give up on purpose (the run should end after it: the
        job is failed, no longer this worker's).

        Raises:
            Exception: what an undo raised: the job is left to its policies, and the next
                run goes on with the undos left.
            LockLostError: the job is no longer this worker's (as `Job.fail`).

        Examples:
            ```python
            if not approved:
                await ctx.compensate(RuntimeError("refused by the approver"))
                return None
            ```
        """
        first = self._record.setdefault(
            "compensating",
            {
                "error": f"{type(error).__name__}: {error}"[:1000],
                "group": failure_group(self.job.queue_name, error),
            },
        )
        self._undoing = True
        await self._store()  # from now on, no run goes forward
        for name, undo, result in reversed(self._undos):
            await self.step(f"undo:{name}", undo, result)
        await self.job.fail(str(first["group"]), failure_message(error))

    async def _step_failed(
        self, name: str, entry: dict[str, Any], error: Exception, retry: RetryPolicy | None
    ) -> None:
        """Park the job for the step's retry when `retry` covers `error` and has attempts
        left (then the run ends here); else return, and the error ends the run."""
        if retry is None or not retry.covers(error):
            return
        failures = int(entry.get("failures", 0)) + 1
        if retry.max_attempts is not None and failures >= retry.max_attempts:
            if retry.on_give_up is not None:
                await _called(retry.on_give_up, self.job, error)
            return
        if retry.on_retry is not None:
            await _called(retry.on_retry, self.job, error)
        self._record.setdefault("steps", {})[name] = {
            **entry,
            "failures": failures,
            "error": f"{type(error).__name__}: {error}"[:1000],
        }
        until = self._clock() + retry.delay_after(failures - 1)
        await self._park_asleep(until, {"kind": "retry", "until": until, "step": name})


async def _called(callback: Callable[..., Any], job: Job, error: BaseException) -> None:
    result = callback(job, error)
    if inspect.isawaitable(result):
        await result
