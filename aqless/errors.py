"""The exceptions aqless raises: one tree, so callers catch meaning rather than strings.

```
AqlessError                  base, never raised itself
├── ConfigurationError       bad URL, option, or a missing optional package (also a ValueError)
│   └── ClientClosedError      a call to, or an open of, a client that was closed
├── ConnectionLostError      server unreachable, restarted or timed out: the call may have run
│   ├── ServerUnavailableError   the server refused to run the call for now (nothing ran):
│   │   │                        loading its data, busy, a read-only replica, its primary down
│   │   └── ServerFullError        out of memory (OOM) or unable to persist (MISCONF)
│   └── SpoolFullError         the server is unreachable and a producer's spool is full
├── ScriptError              the script refused a command; .command, .detail (server text)
│   ├── InvalidArgumentError   e.g. 'Put(): Arg "delay" not a number' (also a ValueError)
│   │   ├── JobDataError         job data that does not fit its handler's declared type
│   │   ├── InvalidValueError    a value outside its input's rule (aqless.rules); .option
│   │   │   └── ConfigValueError   a configuration value outside its option's rule
│   │   ├── CrossShardError      a put whose jid, dependencies, route... name two shards
│   │   │   └── FlowPlacementError   a flow that cannot live on one shard
│   │   └── FlowError            a flow refused before anything of it was written
│   │       ├── FlowCycleError     a jid twice in the tree, or its own descendant
│   │       ├── FlowJidTakenError  a jid of the flow is a job's already
│   │       └── FlowTooLargeError  deeper, wider or larger than the flow bounds
│   ├── JobNotFoundError       the job (or recurring job) does not exist
│   ├── SignalRefusedError     a signal to a job that has ended
│   ├── CancelRefusedError     a cancel refused, nothing cancelled
│   │   ├── JobDependedOnError   a job left out of the cancel depends on one it names
│   │   └── FlowRunningError     a job of a flow it would remove is running
│   ├── LockLostError          the job is no longer ours (expired, cancelled, given away)
│   │   └── StaleAttemptError    a verb of an earlier attempt: the job was popped again since
│   └── PermissionDeniedError  the server's ACL refused the call or a command inside it
├── NotDurableError          a durable put was made, but its copies were not confirmed
├── ShardNotEmptyError       a shard to forget still holds jobs (or drained too briefly)
├── PartialPopError          a sharded pop one shard refused; .jobs popped from the others
├── PayloadError             job data that is not JSON or cannot be encoded as JSON
│   ├── CodecError             an envelope (aqless.codecs) this client cannot open; .key
│   │   ├── KeyMissingError      its key id is not in the client's key ring (or no ring)
│   │   ├── DecryptionError      the ring's key of that id does not open it (wrong key, altered)
│   │   └── BlobMissingError     its claim-check blob is not in the store (or no store)
│   └── BlobStoreError         the claim-check store did not take a blob: nothing was queued
├── ResultError              an awaited job result that is not there; .jid
│   ├── JobFailedError         the job failed; .group, .message
│   ├── JobGoneError           the job was cancelled, or expired, or never existed
│   ├── ResultDroppedError     it completed, but its return value was not kept; .reason
│   └── ResultTimeoutError     it did not finish in time (also a TimeoutError)
├── UnknownJobClassError     no handler for a klass, and importing it is not allowed
└── WorkflowError            a workflow's code broke a rule of its context (aqless.workflows)
    ├── StepNameTakenError     a step name used twice in one run
    ├── SignalTimeoutError     a wait for a signal timed out (also a TimeoutError)
    └── ChildFailedError       a child the workflow gathered failed for good; .name, .jid
```

Catch the meaning you can act on, most specific first:

```python
try:
    await job.complete(result=summary)
except aqless.LockLostError:
    pass  # the job is another worker's now: it runs again there
except aqless.ConnectionLostError:
    raise  # the complete may have run: the worker's retry reads the job again
```
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any


class AqlessError(Exception):
    """Base of every aqless exception; never raised itself."""


class ConfigurationError(AqlessError, ValueError):
    """A bad URL or option, or an optional package that is needed but not installed. Also a
    ValueError."""


class ClientClosedError(ConfigurationError):
    """The client was closed: it takes no call and cannot be opened again; make a new one
    (every client, plain, sharded or blocking)."""


@contextmanager
def needs_extra(extra: str, feature: str) -> Iterator[None]:
    """Imports inside that fail raise the ConfigurationError naming the extra that brings
    what `feature` needs (and what was missing).

    Raises:
        ConfigurationError: an import inside failed (``pip install 'aqless[otel]'``...).

    Examples:
        ```python
        with needs_extra("otel", "aqless.tracing"):
            from opentelemetry import trace
        ```
    """
    try:
        yield
    except ImportError as error:
        raise ConfigurationError(
            f"{feature} needs the {extra!r} extra: pip install 'aqless[{extra}]' ({error})"
        ) from error


class ConnectionLostError(AqlessError):
    """The server could not be reached, went away, or did not answer in time: any call
    that talks to the server may raise it. The call may have run; reading the job again
    tells."""


class ServerUnavailableError(ConnectionLostError):
    """The server answered, but refused to run the call for now, so nothing of it ran: it is
    loading its data after a restart (``LOADING``), running a long script (``BUSY``), a
    replica that takes no writes (``READONLY``, after a failover) or one whose primary is
    down (``MASTERDOWN``). Try again later: a ConnectionLostError, so code that retries over a
    dropped connection retries this too.

    Attributes:
        command: the protocol command that was refused.
        condition: the server's error code (``LOADING``, ``BUSY``, ``READONLY``...).
    """

    def __init__(self, command: str, condition: str, text: str) -> None:
        super().__init__(f"{command}: the server cannot run it now ({condition}): {text}")
        self.command = command
        self.condition = condition


class ServerFullError(ServerUnavailableError):
    """The server refuses writes: it reached ``maxmemory`` (``OOM``) or cannot write its
    data to disk (``MISCONF``). Nothing of the call ran."""


class SpoolFullError(ConnectionLostError):
    """A spooled put (``client.spool(...).put``) that the server could not take and the
    spool had no room for: the put was not accepted, nothing of it is kept. A
    ConnectionLostError, so code that handles an unreachable server handles this too.

    Attributes:
        jid: the job's id, as it would have been put.
        capacity: the most puts the spool holds.
    """

    def __init__(self, jid: str, capacity: int) -> None:
        super().__init__(
            f"the server is unreachable and the spool is full ({capacity} puts): job {jid} "
            "was not accepted"
        )
        self.jid = jid
        self.capacity = capacity


class ScriptError(AqlessError):
    """The qless script refused a command.

    Attributes:
        command: the protocol command that was refused (e.g. ``job.complete``).
        detail: the script's own text (e.g. ``Complete(): Job is not currently running:
            waiting``), without the server's decoration.
    """

    def __init__(self, command: str, detail: str) -> None:
        super().__init__(f"{command}: {detail}")
        self.command = command
        self.detail = detail


class InvalidArgumentError(ScriptError, ValueError):
    """An argument rejected, by the script or before sending: missing, malformed, or not
    allowed here. Also a ValueError."""


class JobDataError(InvalidArgumentError):
    """A job's data does not fit the type its handler declares: refused by ``put`` before
    anything is sent, or, for data already stored, the job failed into ``<queue>-JobDataError``
    with this text."""


class InvalidValueError(InvalidArgumentError):
    """A value outside its input's rule (``aqless.rules``): refused before anything is sent,
    the same way at every door (each client, the CLI, the dashboard, flows and batches).

    Attributes:
        option: the input's name (``interval``, ``queue``, ``heartbeat``...).
        value: the value refused.
        expected: what the value must be (``a positive number of seconds``).
    """

    def __init__(self, command: str, option: str, value: object, expected: str) -> None:
        super().__init__(command, f"{option} must be {expected}, not {value!r}")
        self.option = option
        self.value = value
        self.expected = expected


class ConfigValueError(InvalidValueError):
    """A configuration value outside its option's rule (``heartbeat`` = ``banana`` or
    ``-5``), or an option no rule knows, not forced: refused by ``client.config.set``
    before anything is sent.

    Attributes:
        option: the option's name (``option`` for an unknown name, the name as `value`).
        value: the value refused.
        expected: what the value must be (``a positive number of seconds``...).
    """

    def __init__(self, option: str, value: object, expected: str) -> None:
        super().__init__("config.set", option, value, expected)


class PartialPopError(AqlessError):
    """A sharded pop (`ShardedQueue.pop_many`) that a shard refused after other shards
    had popped jobs. The jobs are locked to the worker that popped them: run them as if
    `pop_many` had returned them; dropping them leaves them to wait until their locks
    expire. Not a ConnectionLostError, so that code retrying a lost connection does not
    drop them unawares.

    Attributes:
        jobs: the jobs popped, in the order `pop_many` would have returned them (`Job`s;
            `SyncJob`s from ``aqless.sync.ShardedClient``).
        shard: the shard that refused.
        error: its own error (a ServerFullError, a ConnectionLostError...), also the
            `__cause__`.
    """

    def __init__(self, jobs: Sequence[Any], shard: int, error: AqlessError) -> None:
        super().__init__(
            f"popped {len(jobs)} jobs (held: run them, see .jobs), but shard {shard} "
            f"refused: {error}"
        )
        self.jobs = list(jobs)
        self.shard = shard
        self.error = error


class CrossShardError(InvalidArgumentError):
    """A put to a sharded deployment (aqless.sharding.client) whose constraints name two shards:
    dependencies on different shards, or a given jid, routing key, throttle, rate limit
    or dedup id owned by another shard than the rest. Raised before anything is
    written."""


class FlowError(InvalidArgumentError):
    """A flow (``client.flows.put``/``chain``) refused before anything of it was written: a
    job of it without a class or queue a job can be put with, a bad option, a name used
    twice among siblings (aqless.flows)."""


class FlowCycleError(FlowError):
    """A flow in which a jid appears twice: a job that would be its own descendant (a
    cycle), or one job in two places of the tree."""


class FlowJidTakenError(FlowError):
    """A flow names a jid that a job already has (a flow only puts new jobs)."""


class FlowTooLargeError(FlowError):
    """A flow deeper, wider or larger than the bounds (aqless.flows.MAX_DEPTH,
    MAX_CHILDREN, MAX_JOBS)."""


class FlowPlacementError(CrossShardError):
    """A flow on a sharded deployment that cannot live on one shard: a job of it names a
    jid, a pinned queue, a throttle or a rate limit that another shard owns than the one
    its root's jid places it on. Raised before anything is written."""


class JobNotFoundError(ScriptError):
    """The job (or recurring job) does not exist: raised by the verbs that change a job
    named by its jid (``client.jobs.cancel``, ``move``, ``tag``...) when none has it."""


class SignalRefusedError(ScriptError):
    """A signal refused: the job it is for has ended (completed or failed). Nothing was
    written."""


class CancelRefusedError(ScriptError):
    """A cancel refused: nothing of it was cancelled."""


class JobDependedOnError(CancelRefusedError):
    """A cancel that leaves out a job depending on one it names (its flow parent aside,
    which stops waiting for it): cancel them together."""


class FlowRunningError(CancelRefusedError):
    """A cancel that would remove a job of a flow while it runs (a job named, or one below a
    flow parent named): a flow is removed only while none of the jobs it would lose runs,
    as BullMQ refuses to remove a locked job. Wait for it to end, then cancel again."""


class LockLostError(ScriptError):
    """The job is not running for us any more: its lock expired and was given to another
    worker, or it was cancelled, moved, retried, completed or failed meanwhile. Raised by
    the verbs of the worker holding a job: `Job.complete`, ``fail``, ``retry``,
    ``heartbeat``, ``checkpoint``, ``progress``, ``hand_back``. Nothing changed; the job
    runs (or ran) elsewhere, so let it go."""


class StaleAttemptError(LockLostError):
    """The verb came from an earlier attempt of the job: it was popped again since (by any
    worker, this one included), and only its current attempt may renew, report or end it.
    Raised by the same verbs as LockLostError, which it is, so code that catches that
    catches this too."""


class PermissionDeniedError(ScriptError):
    """The server's ACL refused the call, or a command the script runs for it (the user
    lacks a command, a key or a channel); ``detail`` is the server's text. See SECURITY.md."""


class NotDurableError(AqlessError):
    """A durable put (``put(..., durable=...)``) WAS made, but the server did not confirm
    the copies asked for: the append-only file is off, too few replicas wrote it within the
    timeout, or the server refused to wait. The job exists (unless a later fault loses it).

    Attributes:
        jids: the jobs that were put.
        detail: what the server answered.
    """

    def __init__(self, jids: list[str], detail: str) -> None:
        jobs = ", ".join(jids[:3]) + (f" and {len(jids) - 3} more" if len(jids) > 3 else "")
        super().__init__(f"put {jobs}, but its durability is not confirmed: {detail}")
        self.jids = jids
        self.detail = detail


class ShardNotEmptyError(AqlessError):
    """A shard of a sharded deployment was to be forgotten while it may still hold jobs:
    some are left, or it has drained for less time than clients take to notice."""

    def __init__(self, shard: int, detail: str) -> None:
        super().__init__(f"shard {shard} cannot be forgotten: {detail}")
        self.shard = shard
        self.detail = detail


class PayloadError(AqlessError):
    """Job data (or log data, or a checkpoint's state) that cannot be encoded as JSON or is
    too large to store, or stored data that is not JSON."""


class CodecError(PayloadError):
    """Stored data in an aqless.codecs envelope that this client cannot open; never written
    back as plain text.

    Attributes:
        key: the id of the key that sealed it ("" when it is not encrypted).
    """

    def __init__(self, key: str, text: str) -> None:
        super().__init__(text)
        self.key = key


class KeyMissingError(CodecError):
    """The envelope's key id is not in the client's key ring, or the client has no ring."""


class DecryptionError(CodecError):
    """The key ring's key of the envelope's id does not open it: a wrong key under that id,
    or bytes changed since they were sealed."""


class BlobMissingError(CodecError):
    """The envelope's payload was put in a claim-check store that this client has not, or
    that holds it no more."""


class BlobStoreError(PayloadError):
    """The claim-check store refused a payload: the put raises it before anything is
    queued."""


class ResultError(AqlessError):
    """What ``job.result()`` / ``client.result(jid)`` raise when there is no result to return.

    Attributes:
        jid: the job awaited.
    """

    def __init__(self, jid: str, text: str) -> None:
        super().__init__(f"job {jid}: {text}")
        self.jid = jid


class JobFailedError(ResultError):
    """The awaited job failed.

    Attributes:
        group: its failure group (e.g. ``<queue>-ValueError``).
        message: its failure message (the worker sends the traceback).
    """

    def __init__(self, jid: str, group: str, message: str) -> None:
        first_line = message.strip().splitlines()[-1:] or [""]
        super().__init__(jid, f"failed ({group}): {first_line[0]}")
        self.group = group
        self.message = message


class JobGoneError(ResultError):
    """The awaited job does not exist: it was cancelled, it expired past the completed
    jobs' retention, or it never existed."""


class ResultDroppedError(ResultError):
    """The awaited job completed, but its return value was not kept: not JSON-serializable,
    or larger than the ``result-max-bytes`` configuration.

    Attributes:
        reason: why, as recorded with the job.
    """

    def __init__(self, jid: str, reason: str) -> None:
        super().__init__(jid, f"completed, but its result was not kept: {reason}")
        self.reason = reason


class ResultTimeoutError(ResultError, TimeoutError):
    """The awaited job did not finish within the timeout of ``job.result(timeout=...)``
    or ``client.result(jid, timeout=...)`` (also a TimeoutError). The job goes on."""


class UnknownJobClassError(AqlessError):
    """A job names a class that has no handler and may not be imported: raised by
    `Handlers.resolve`; a worker fails such a job into ``<queue>-UnknownJobClassError``."""


class WorkflowError(AqlessError):
    """A workflow's code broke a rule of its context (``aqless.workflows``): data that is not
    a JSON object, a step name used twice, a wait that timed out."""


class StepNameTakenError(WorkflowError, ValueError):
    """A step name used twice in one run of a workflow: each step's result is kept by its
    name. Nothing was run or written."""


class SignalTimeoutError(WorkflowError, TimeoutError):
    """A workflow's wait for a signal timed out (also a TimeoutError).

    Attributes:
        signal: the signal waited for.
    """

    def __init__(self, signal: str, timeout: float) -> None:
        super().__init__(f"no signal {signal!r} came within {timeout:g} s")
        self.signal = signal


class ChildFailedError(WorkflowError):
    """A child job a workflow started (``ctx.child``) failed for good, read at its
    ``ctx.gather``: the workflow's code may catch it, else its run ends there (and a saga
    compensates its steps).

    Attributes:
        name: the child's name in the workflow.
        jid: the child's jid.
        group: its failure group (e.g. ``<queue>-ValueError``).
        message: its failure message.
    """

    def __init__(self, name: str, jid: str, group: str, message: str) -> None:
        first_line = message.strip().splitlines()[-1:] or [""]
        super().__init__(f"child {name!r} ({jid}) failed ({group}): {first_line[0]}")
        self.name, self.jid, self.group, self.message = name, jid, group, message
