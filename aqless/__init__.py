"""aqless: an asyncio-native client and worker for the qless job-queue protocol."""

from aqless._version import __version__
from aqless.client import Client, Config, Jobs, Queues, Tags, Throttle, Throttles, Workers
from aqless.dedup import Dedup, PutResult
from aqless.durability import Durability
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
from aqless.observers import WorkerObserver
from aqless.outcomes import Backoff, JobTimeoutError, Retry
from aqless.patterns import PriorityPattern, QueuePatterns
from aqless.policies import RequeuePolicy, RetryPolicy
from aqless.progress import Progress
from aqless.queue import PutOptions, PutRequest, Queue
from aqless.ratelimits import RateLimit, RateLimitInfo, RateLimits
from aqless.reservers import QueueSelection, Reserver
from aqless.results import JobResult
from aqless.shard_map import Shard, ShardMap
from aqless.sharded import (
    ShardedClient,
    ShardedConfig,
    ShardedJobs,
    ShardedQueue,
    ShardedQueuePatterns,
    ShardedQueues,
    ShardedRateLimits,
    ShardedThrottles,
)
from aqless.sharded_queue import PartialPopError
from aqless.sharded_worker import ShardedWorker
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
