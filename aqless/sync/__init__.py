"""A blocking client for sync code (Django, Flask, scripts): ``aqless.sync.Client`` and
``aqless.sync.ShardedClient``.

One event loop runs on a daemon thread owned by the client, holding the async client; each
blocking call hands a coroutine to it and waits for its result (see aqless.sync.plain).
"""

from aqless.sync.plain import (
    Client,
    SyncJob,
    SyncJobs,
    SyncQueue,
    SyncQueues,
    SyncRateLimit,
    SyncRateLimits,
    SyncRecurringJob,
    SyncWorkers,
)
from aqless.sync.sharded import (
    ShardedClient,
    SyncShardedConfig,
    SyncShardedJobs,
    SyncShardedQueue,
    SyncShardedQueues,
    SyncThrottle,
    SyncThrottles,
)

__all__ = [
    "Client",
    "ShardedClient",
    "SyncJob",
    "SyncJobs",
    "SyncQueue",
    "SyncQueues",
    "SyncRateLimit",
    "SyncRateLimits",
    "SyncRecurringJob",
    "SyncShardedConfig",
    "SyncShardedJobs",
    "SyncShardedQueue",
    "SyncShardedQueues",
    "SyncThrottle",
    "SyncThrottles",
    "SyncWorkers",
]
