"""The context a workflow's code is given (``ctx``), and the job function that runs it.

A workflow is an async function of a `WorkflowContext`, registered with
``@handlers.workflow``. Every attempt runs it from the top; what the record in the job's data
(aqless.workflows.record) holds is replayed instead of done again:

- ``await ctx.step(name, fn, *args)``: runs ``fn`` and stores its result with the job (one
  call of the script, which renews the lock too) before returning it; a later attempt gets
  the stored result and ``fn`` does not run. A step that raised is retried by its own
  `RetryPolicy` (a durable sleep, spending no job retry), else the exception ends the run.
- ``await ctx.sleep(seconds)``, ``await ctx.sleep_until(when)``: the job is parked as
  scheduled until then, spending no retry and holding no worker slot.
- ``await ctx.wait_for(signal, timeout=)``: takes a signal sent to the job (before or after
  the wait is reached), else parks the job until one comes or the timeout passes
  (SignalTimeoutError).
- ``ctx.now()``, ``ctx.uuid()``, ``ctx.random()``: recorded on the first run, replayed after;
  ``ctx.version(change_id)``: which code a workflow started under takes at a change.
- ``await ctx.child(klass, data, queue=)``, ``await ctx.gather(*children)``: starts child
  jobs (each once, its jid made from the workflow's and the child's name) and parks the job
  in ``depends`` until they are done, then returns their results (ChildFailedError for one
  that failed for good).
- ``ctx.step(..., undo=fn)``: a run that raises after such steps runs their undos, newest
  first, each once, and fails the job for good (a saga).

The context is made of parts, each a module: the run's replay of the record and its writes
(workflow_replay), steps and undos (workflow_steps), sleeps and signals (workflow_waits),
children (workflow_children), recorded values and versions (workflow_values).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aqless._worker.workflow_children import ChildJobs
from aqless._worker.workflow_replay import Parked
from aqless._worker.workflow_steps import Steps
from aqless._worker.workflow_values import Values
from aqless._worker.workflow_waits import Waits
from aqless.errors import ConnectionLostError, LockLostError, WorkflowError

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["Parked", "WorkflowContext", "WorkflowFunction", "run_workflow"]

#: A workflow's code: an async function of its context.
WorkflowFunction = Callable[["WorkflowContext"], Awaitable[Any]]


class WorkflowContext(Values, ChildJobs, Waits, Steps):
    """What a workflow's code is given (``ctx``): one per run of the job, made by the
    worker, never by the workflow's code.

    Attributes:
        job: the job (its `attempt` fences every write of the record).
        data: the job's data without the workflow's record.

    Raises:
        WorkflowError: the job's data is not a JSON object (the run ends; the job's
            policies decide, as for any exception).

    Examples:
        ```python
        @handlers.workflow("shop.Order")
        async def order(ctx: aqless.WorkflowContext) -> str:
            receipt = await ctx.step("charge", charge, ctx.data["amount"])
            approval = await ctx.wait_for("approval", timeout=3600)
            return f"{receipt} approved by {approval['by']}"
        ```
    """

    data: dict[str, Any]  # Replay sets it; declared here, the reference shows its type

    def __init__(self, job: Job) -> None:
        if not isinstance(job.data, dict):
            raise WorkflowError(f"job {job.jid}: a workflow's data must be a JSON object")
        super().__init__(job)


def run_workflow(function: WorkflowFunction) -> Callable[[Job], Awaitable[Any]]:
    """The job function of the workflow `function`: runs it with a fresh context; its
    return value is the job's result. A run that parked returns with the job no longer the
    worker's (the worker sends nothing). A run that raised after steps with an `undo`
    compensates them and fails the job for good (a saga); without one, or for a lost
    connection or lock, the exception is the job's outcome, as any job's."""

    async def run(job: Job) -> Any:
        ctx = WorkflowContext(job)
        try:
            return await function(ctx)
        except Parked:
            return None
        except Exception as error:
            if not ctx.compensable or isinstance(error, ConnectionLostError | LockLostError):
                raise  # a lost connection or lock is no failure of the workflow's
            await ctx.compensate(error)  # the undos have no retry policy: they never park
            return None

    run.__name__, run.__qualname__ = function.__name__, function.__qualname__
    run.__module__ = function.__module__
    return run
