"""aqless: an asyncio-native client and worker for the qless job-queue protocol."""

from aqless._version import __version__
from aqless.client import Client, Config, Jobs, Queues, Tags, Throttle, Throttles, Workers
from aqless.errors import (
    AqlessError,
    ConfigurationError,
    ConnectionLostError,
    InvalidArgumentError,
    JobNotFoundError,
    LockLostError,
    PayloadError,
    ScriptError,
    UnknownJobClassError,
)
from aqless.job import Job, RecurringJob
from aqless.models import (
    Durations,
    Failure,
    HistoryEntry,
    JobState,
    Page,
    QueueCounts,
    QueueStats,
    ThrottleInfo,
    WorkerCounts,
    WorkerJobs,
)
from aqless.queue import PutRequest, Queue

__all__ = [
    "AqlessError",
    "Client",
    "Config",
    "ConfigurationError",
    "ConnectionLostError",
    "Durations",
    "Failure",
    "HistoryEntry",
    "InvalidArgumentError",
    "Job",
    "JobNotFoundError",
    "JobState",
    "Jobs",
    "LockLostError",
    "Page",
    "PayloadError",
    "PutRequest",
    "Queue",
    "QueueCounts",
    "QueueStats",
    "Queues",
    "RecurringJob",
    "ScriptError",
    "Tags",
    "Throttle",
    "ThrottleInfo",
    "Throttles",
    "UnknownJobClassError",
    "WorkerCounts",
    "WorkerJobs",
    "Workers",
    "__version__",
]
