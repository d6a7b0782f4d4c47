"""aqless: an asyncio-native client and worker for the qless job-queue protocol.

Every public name is imported from its module when first used (PEP 562), so that ``import
aqless`` costs only what a program uses: the ``aqless`` command starts without loading the
worker, redis-py or the dashboard until a command needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from aqless._version import __version__

if TYPE_CHECKING:
    from aqless._worker.children import ChildProcessDied, ChildTraceback
    from aqless._worker.observers import WorkerObserver
    from aqless._worker.outcomes import Backoff, JobTimeoutError, Retry
    from aqless._worker.policies import RequeuePolicy, RetryPolicy
    from aqless._worker.reservers import QueueSelection, Reserver
    from aqless._worker.workflow import WorkflowContext
    from aqless.batches import Batch, BatchCallback, Batches
    from aqless.client import (
        Client,
        Config,
        Jobs,
        Queues,
        ShardedConfig,
        ShardedJobs,
        Tags,
        Throttle,
        Throttles,
        Workers,
    )
    from aqless.errors import (
        AqlessError,
        BlobMissingError,
        BlobStoreError,
        CancelRefusedError,
        ChildFailedError,
        ClientClosedError,
        CodecError,
        ConfigurationError,
        ConfigValueError,
        ConnectionLostError,
        CrossShardError,
        DecryptionError,
        FlowCycleError,
        FlowError,
        FlowJidTakenError,
        FlowPlacementError,
        FlowRunningError,
        FlowTooLargeError,
        InvalidArgumentError,
        InvalidValueError,
        JobDataError,
        JobDependedOnError,
        JobFailedError,
        JobGoneError,
        JobNotFoundError,
        KeyMissingError,
        LockLostError,
        NotDurableError,
        PartialPopError,
        PayloadError,
        PermissionDeniedError,
        ResultDroppedError,
        ResultError,
        ResultTimeoutError,
        ScriptError,
        ServerFullError,
        ServerUnavailableError,
        ShardNotEmptyError,
        SignalRefusedError,
        SignalTimeoutError,
        SpoolFullError,
        StaleAttemptError,
        StepNameTakenError,
        UnknownJobClassError,
        WorkflowError,
    )
    from aqless.handlers import Handler, Handlers
    from aqless.job import Job, RecurringJob
    from aqless.limits import RateLimit, RateLimits, ShardedRateLimits, ShardedThrottles
    from aqless.models import (
        Durations,
        Failure,
        GroupCounts,
        HistoryEntry,
        JobResult,
        JobState,
        Page,
        PriorityPattern,
        QueueCounts,
        QueueStats,
        RateLimitInfo,
        RecurringChanges,
        SeenWorker,
        SeenWorkers,
        ThrottleInfo,
        WorkerCounts,
        WorkerInfo,
        WorkerJobs,
    )
    from aqless.patterns import QueuePatterns, ShardedQueuePatterns
    from aqless.progress import Progress
    from aqless.puts import Dedup, Durability, PutOptions, PutRequest, PutResult
    from aqless.queue import Queue
    from aqless.scaling import QueueScaling, ScalingWindow
    from aqless.sharding.client import ShardedClient
    from aqless.sharding.map import Shard, ShardMap
    from aqless.sharding.queue import ShardedQueue, ShardedQueues
    from aqless.sharding.spool import ShardedSpool
    from aqless.spool import PutReceipt, Spool, SpoolStats
    from aqless.worker import Heartbeats, ShardedWorker, Worker, WorkerCounters, WorkerSettings

#: The module defining each public name.
_MODULES: dict[str, tuple[str, ...]] = {
    "aqless._worker.children": (
        "ChildProcessDied",
        "ChildTraceback",
    ),
    "aqless._worker.observers": ("WorkerObserver",),
    "aqless._worker.outcomes": (
        "Backoff",
        "JobTimeoutError",
        "Retry",
    ),
    "aqless._worker.policies": (
        "RequeuePolicy",
        "RetryPolicy",
    ),
    "aqless._worker.reservers": (
        "QueueSelection",
        "Reserver",
    ),
    "aqless._worker.workflow": ("WorkflowContext",),
    "aqless.batches": (
        "Batch",
        "BatchCallback",
        "Batches",
    ),
    "aqless.client": (
        "Client",
        "Config",
        "Jobs",
        "Queues",
        "ShardedConfig",
        "ShardedJobs",
        "Tags",
        "Throttle",
        "Throttles",
        "Workers",
    ),
    "aqless.errors": (
        "AqlessError",
        "BlobMissingError",
        "BlobStoreError",
        "CancelRefusedError",
        "ChildFailedError",
        "ClientClosedError",
        "CodecError",
        "ConfigValueError",
        "ConfigurationError",
        "ConnectionLostError",
        "CrossShardError",
        "DecryptionError",
        "FlowCycleError",
        "FlowError",
        "FlowJidTakenError",
        "FlowPlacementError",
        "FlowRunningError",
        "FlowTooLargeError",
        "InvalidArgumentError",
        "InvalidValueError",
        "JobDataError",
        "JobDependedOnError",
        "JobFailedError",
        "JobGoneError",
        "JobNotFoundError",
        "KeyMissingError",
        "LockLostError",
        "NotDurableError",
        "PartialPopError",
        "PayloadError",
        "PermissionDeniedError",
        "ResultDroppedError",
        "ResultError",
        "ResultTimeoutError",
        "ScriptError",
        "ServerFullError",
        "ServerUnavailableError",
        "ShardNotEmptyError",
        "SignalRefusedError",
        "SignalTimeoutError",
        "SpoolFullError",
        "StaleAttemptError",
        "StepNameTakenError",
        "UnknownJobClassError",
        "WorkflowError",
    ),
    "aqless.handlers": (
        "Handler",
        "Handlers",
    ),
    "aqless.job": (
        "Job",
        "RecurringJob",
    ),
    "aqless.limits": (
        "RateLimit",
        "RateLimits",
        "ShardedRateLimits",
        "ShardedThrottles",
    ),
    "aqless.models": (
        "Durations",
        "Failure",
        "GroupCounts",
        "HistoryEntry",
        "JobResult",
        "JobState",
        "Page",
        "PriorityPattern",
        "QueueCounts",
        "QueueStats",
        "RateLimitInfo",
        "RecurringChanges",
        "SeenWorker",
        "SeenWorkers",
        "ThrottleInfo",
        "WorkerCounts",
        "WorkerInfo",
        "WorkerJobs",
    ),
    "aqless.patterns": (
        "QueuePatterns",
        "ShardedQueuePatterns",
    ),
    "aqless.progress": ("Progress",),
    "aqless.puts": (
        "Dedup",
        "Durability",
        "PutOptions",
        "PutRequest",
        "PutResult",
    ),
    "aqless.queue": ("Queue",),
    "aqless.scaling": (
        "QueueScaling",
        "ScalingWindow",
    ),
    "aqless.sharding.client": ("ShardedClient",),
    "aqless.sharding.map": (
        "Shard",
        "ShardMap",
    ),
    "aqless.sharding.queue": (
        "ShardedQueue",
        "ShardedQueues",
    ),
    "aqless.sharding.spool": ("ShardedSpool",),
    "aqless.spool": (
        "PutReceipt",
        "Spool",
        "SpoolStats",
    ),
    "aqless.worker": (
        "Heartbeats",
        "ShardedWorker",
        "Worker",
        "WorkerCounters",
        "WorkerSettings",
    ),
}
_HOMES: dict[str, str] = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use; a submodule
    (``aqless.errors``), imported as ``import aqless`` once did."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value
    if name.isidentifier() and not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (`__all__`), whether imported yet or not."""
    return sorted([*_HOMES, "__version__"])


__all__ = [
    "AqlessError",
    "Backoff",
    "Batch",
    "BatchCallback",
    "Batches",
    "BlobMissingError",
    "BlobStoreError",
    "CancelRefusedError",
    "ChildFailedError",
    "ChildProcessDied",
    "ChildTraceback",
    "Client",
    "ClientClosedError",
    "CodecError",
    "Config",
    "ConfigValueError",
    "ConfigurationError",
    "ConnectionLostError",
    "CrossShardError",
    "DecryptionError",
    "Dedup",
    "Durability",
    "Durations",
    "Failure",
    "FlowCycleError",
    "FlowError",
    "FlowJidTakenError",
    "FlowPlacementError",
    "FlowRunningError",
    "FlowTooLargeError",
    "GroupCounts",
    "Handler",
    "Handlers",
    "Heartbeats",
    "HistoryEntry",
    "InvalidArgumentError",
    "InvalidValueError",
    "Job",
    "JobDataError",
    "JobDependedOnError",
    "JobFailedError",
    "JobGoneError",
    "JobNotFoundError",
    "JobResult",
    "JobState",
    "JobTimeoutError",
    "Jobs",
    "KeyMissingError",
    "LockLostError",
    "NotDurableError",
    "Page",
    "PartialPopError",
    "PayloadError",
    "PermissionDeniedError",
    "PriorityPattern",
    "Progress",
    "PutOptions",
    "PutReceipt",
    "PutRequest",
    "PutResult",
    "Queue",
    "QueueCounts",
    "QueuePatterns",
    "QueueScaling",
    "QueueSelection",
    "QueueStats",
    "Queues",
    "RateLimit",
    "RateLimitInfo",
    "RateLimits",
    "RecurringChanges",
    "RecurringJob",
    "RequeuePolicy",
    "Reserver",
    "ResultDroppedError",
    "ResultError",
    "ResultTimeoutError",
    "Retry",
    "RetryPolicy",
    "ScalingWindow",
    "ScriptError",
    "SeenWorker",
    "SeenWorkers",
    "ServerFullError",
    "ServerUnavailableError",
    "Shard",
    "ShardMap",
    "ShardNotEmptyError",
    "ShardedClient",
    "ShardedConfig",
    "ShardedJobs",
    "ShardedQueue",
    "ShardedQueuePatterns",
    "ShardedQueues",
    "ShardedRateLimits",
    "ShardedSpool",
    "ShardedThrottles",
    "ShardedWorker",
    "SignalRefusedError",
    "SignalTimeoutError",
    "Spool",
    "SpoolFullError",
    "SpoolStats",
    "StaleAttemptError",
    "StepNameTakenError",
    "Tags",
    "Throttle",
    "ThrottleInfo",
    "Throttles",
    "UnknownJobClassError",
    "Worker",
    "WorkerCounters",
    "WorkerCounts",
    "WorkerInfo",
    "WorkerJobs",
    "WorkerObserver",
    "WorkerSettings",
    "Workers",
    "WorkflowContext",
    "WorkflowError",
    "__version__",
]
