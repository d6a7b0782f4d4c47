"""aqless: an asyncio-native client and worker for the qless job-queue protocol."""

from aqless._version import __version__
from aqless._worker.observers import WorkerObserver
from aqless._worker.outcomes import Backoff, JobTimeoutError, Retry
from aqless._worker.policies import RequeuePolicy, RetryPolicy
from aqless._worker.reservers import QueueSelection, Reserver
from aqless.client import Client, Config, Jobs, Queues, Tags, Throttle, Throttles, Workers
from aqless.errors import (
    AqlessError,
    ConfigurationError,
    ConnectionLostError,
    CrossShardError,
    InvalidArgumentError,
    JobDataError,
    JobFailedError,
    JobGoneError,
    JobNotFoundError,
    LockLostError,
    NotDurableError,
    PayloadError,
    PermissionDeniedError,
    ResultDroppedError,
    ResultError,
    ResultTimeoutError,
    ScriptError,
    ServerFullError,
    ServerUnavailableError,
    ShardNotEmptyError,
    UnknownJobClassError,
)
from aqless.handlers import Handler, Handlers
from aqless.job import Job, RecurringChanges, RecurringJob
from aqless.limits import RateLimit, RateLimitInfo, RateLimits
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
from aqless.patterns import PriorityPattern, QueuePatterns
from aqless.progress import Progress
from aqless.puts import Dedup, Durability, PutOptions, PutRequest, PutResult
from aqless.queue import Queue
from aqless.results import JobResult
from aqless.sharding.client import (
    ShardedClient,
    ShardedConfig,
    ShardedJobs,
    ShardedQueue,
    ShardedQueuePatterns,
    ShardedQueues,
    ShardedRateLimits,
    ShardedThrottles,
)
from aqless.sharding.map import Shard, ShardMap
from aqless.sharding.queue import PartialPopError
from aqless.sharding.worker import ShardedWorker
from aqless.worker import Heartbeats, Worker, WorkerCounters

__all__ = [
    "AqlessError",
    "Backoff",
    "Client",
    "Config",
    "ConfigurationError",
    "ConnectionLostError",
    "CrossShardError",
    "Dedup",
    "Durability",
    "Durations",
    "Failure",
    "Handler",
    "Handlers",
    "Heartbeats",
    "HistoryEntry",
    "InvalidArgumentError",
    "Job",
    "JobDataError",
    "JobFailedError",
    "JobGoneError",
    "JobNotFoundError",
    "JobResult",
    "JobState",
    "JobTimeoutError",
    "Jobs",
    "LockLostError",
    "NotDurableError",
    "Page",
    "PartialPopError",
    "PayloadError",
    "PermissionDeniedError",
    "PriorityPattern",
    "Progress",
    "PutOptions",
    "PutRequest",
    "PutResult",
    "Queue",
    "QueueCounts",
    "QueuePatterns",
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
    "ScriptError",
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
    "ShardedThrottles",
    "ShardedWorker",
    "Tags",
    "Throttle",
    "ThrottleInfo",
    "Throttles",
    "UnknownJobClassError",
    "Worker",
    "WorkerCounters",
    "WorkerCounts",
    "WorkerJobs",
    "WorkerObserver",
    "Workers",
    "__version__",
]
