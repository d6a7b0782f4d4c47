"""A workflow run's replay of its record (aqless.workflows.record): the state a run keeps as
it goes through the workflow's code, the order of what it did (``events``), and the record's
writes: stored with the job (renewing its lock), or sent as the job parks (asleep, waiting for
a signal or for children), which ends the run (`Parked`).

`WorkflowContext` (aqless._worker.workflow) is this and the parts that use it: steps, waits,
children and deterministic values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aqless import rules
from aqless._connection.protocol import encode_json
from aqless.errors import WorkflowError
from aqless.models import JobState
from aqless.workflows.record import KEY

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["FOREVER", "Compensating", "Parked", "Replay", "Undo", "kept"]

#: The wake-up time of a wait without a timeout (the year 3000): never promoted.
FOREVER = 32503680000.0


#: A step's compensation: called with the step's result, plain or async.
Undo = Callable[[Any], Any]


class Compensating(WorkflowError):
    """Raised at a workflow's first new work once it is compensating: the run turns to the
    undos (`WorkflowContext.compensate`)."""


class Parked(BaseException):  # a way out of the code, not an error
    """Raised through the workflow's code once its job is parked: the run ends there. A
    BaseException, so that ``except Exception`` in the code does not stop it."""


class Replay:
    """One run's state over the record in `job`'s data (a JSON object), and its writes."""

    def __init__(self, job: Job) -> None:
        self.job = job
        record = job.data.get(KEY)
        if not isinstance(record, dict):
            record = job.data[KEY] = {}
        record.pop("parked", None)  # it runs: whatever parked it is over
        self._record: dict[str, Any] = record
        self.data: dict[str, Any] = {k: v for k, v in job.data.items() if k != KEY}
        self._events: list[str] = record.setdefault("events", [])
        self._recorded = len(self._events)  # what earlier runs did, this run replays
        self._position = 0
        self._ran: set[str] = set()
        self._sleeps = 0
        self._waits: dict[str, int] = {}
        self._used: dict[str, int] = {}
        self._undos: list[tuple[str, Undo, Any]] = []
        self._undoing = False
        self._children = 0
        self._named: set[str] = set()
        self._awaited: dict[str, int] = {}  # gathers and firsts so far, by verb

    def _forward(self) -> None:
        """Refuse new work once the workflow is compensating: the run goes on to the undos."""
        if "compensating" in self._record and not self._undoing:
            raise Compensating(str(self._record["compensating"].get("error", "")))

    # -- the record's writes ----------------------------------------------------------------

    def _occur(self, event: str) -> None:
        if self._position >= len(self._events):
            self._events.append(event)
        self._position += 1

    def _clock(self) -> float:
        return self.job.client.clock()

    def _text(self) -> str | bytes:
        """The job's data with its record, as stored: through the job's codec when it has
        one (aqless.codecs), as every write of a job's data is."""
        plain = encode_json(self.job.data, "the workflow's data")
        codec = self.job._codec()
        return plain if codec is None else codec.encode_text(plain, self.job.jid)

    async def _store(self) -> None:
        """Store the record with the job, renewing its lock, in one call (job.heartbeat)."""
        job = self.job
        fence = () if job.attempt is None else (job.attempt,)
        expires = await job.client.protocol.integer(
            "job.heartbeat", job.jid, job.worker_name, self._text(), *fence
        )
        job.expires_at = float(expires)

    async def _call(self, command: str, text: str | bytes, *args: str | float) -> str:
        job = self.job
        attempt = "" if job.attempt is None else job.attempt
        # a sleep always lets the job go; a wait may not, and a pop sent behind it must not
        # count its slot as free (aqless._worker.running.RunningJobs.free)
        releases = job.jid if command == "job.sleep" else None
        reply = await job._release(
            job.client.protocol.text(
                command, job.jid, job.worker_name, attempt, text, *args, releases=releases
            )
        )
        if reply not in ("parked", "scheduled"):
            job.released = False  # it took a signal or timed out: still this worker's
        return reply

    async def _awaiting(self, command: str, marker: dict[str, Any], *args: str | float) -> str:
        """Call `command` (job.awaitSignal, job.awaitChildren, job.awaitFirst) with the data
        and `args`: its reply, unless the job parked (marked with `marker`, kept in the data
        sent): then the run ends here."""
        self._record["parked"] = marker
        text = self._text()
        self._record.pop("parked")
        reply = await self._call(command, text, *args)
        if reply == "parked":
            self._record["parked"] = marker
            self._left()
        return reply

    async def _park_asleep(self, until: float, marker: dict[str, Any]) -> None:
        self._record["parked"] = marker
        text = self._text()
        await self._parking("job.sleep", text, until)

    async def _parking(self, command: str, text: str | bytes, until: float) -> None:
        await self._call(command, text, until)
        self._left()

    def _left(self) -> None:
        """The job is parked: no longer this worker's; the run ends here."""
        job = self.job
        job.state, job.worker_name, job.expires_at = JobState.SCHEDULED, "", 0.0
        raise Parked


def kept(value: Any, what: str, command: str) -> str:
    """`value` as the JSON text the record keeps: PayloadError when it is not JSON,
    InvalidValueError (``workflow.result_bytes``) when it is over ``rules.STEP_RESULT_MAX``
    bytes: a step's result, a gather's results, a race's winner's."""
    text = encode_json(value, what)
    rules.check("workflow.result_bytes", len(text.encode("utf-8")), command)
    return text
