"""A blocking client for sync code (Django, Flask, scripts): ``aqless.sync.Client`` and
``aqless.sync.ShardedClient``.

One event loop runs on a daemon thread owned by the client, holding the async client; each
blocking call hands a coroutine to it and waits for its result (aqless.sync.runtime). The
façades (aqless.sync.parts, over aqless.sync.facades) derive every blocking verb from the
contract's (aqless.contracts), once for plain and sharded clients.
"""

from aqless.sync.clients import Client, ShardedClient
from aqless.sync.facades import SyncEvents, SyncJob, SyncRecurringJob
from aqless.sync.parts import (
    SyncBatches,
    SyncConfig,
    SyncFlows,
    SyncJobs,
    SyncQueue,
    SyncQueuePatterns,
    SyncQueues,
    SyncRateLimit,
    SyncRateLimits,
    SyncShardedQueue,
    SyncShardedQueues,
    SyncTags,
    SyncThrottle,
    SyncThrottles,
    SyncWorkers,
)
from aqless.sync.spool import SyncShardedSpool, SyncSpool

# One façade serves plain and sharded clients; these names stay for code that used them.
SyncShardedConfig = SyncConfig
"""`SyncConfig` under its former name: one façade serves plain and sharded clients."""
SyncShardedJobs = SyncJobs
"""`SyncJobs` under its former name: one façade serves plain and sharded clients."""

__all__ = [
    "Client",
    "ShardedClient",
    "SyncBatches",
    "SyncConfig",
    "SyncEvents",
    "SyncFlows",
    "SyncJob",
    "SyncJobs",
    "SyncQueue",
    "SyncQueuePatterns",
    "SyncQueues",
    "SyncRateLimit",
    "SyncRateLimits",
    "SyncRecurringJob",
    "SyncShardedConfig",
    "SyncShardedJobs",
    "SyncShardedQueue",
    "SyncShardedQueues",
    "SyncShardedSpool",
    "SyncSpool",
    "SyncTags",
    "SyncThrottle",
    "SyncThrottles",
    "SyncWorkers",
]
