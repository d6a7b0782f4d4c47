"""mypy proves that every async variant satisfies the contracts (aqless.contracts): each
function below only type-checks if its argument is assignable to the contract it returns.
The test runs them on real objects, so that the same assignments also hold at run time."""

from __future__ import annotations

import aqless
from aqless import contracts
from aqless.client import (
    Config,
    Jobs,
    Queues,
    ShardedConfig,
    ShardedJobs,
    ShardedTags,
    ShardedWorkers,
    Tags,
    Throttle,
    Throttles,
    Workers,
)
from aqless.limits import RateLimit, RateLimits, ShardedRateLimits, ShardedThrottles
from aqless.patterns import QueuePatterns, ShardedQueuePatterns
from aqless.sharding.queue import ShardedQueue, ShardedQueues


def plain_client(client: aqless.Client) -> contracts.Client:
    return client


def sharded_client(client: aqless.ShardedClient) -> contracts.Client:
    return client


def plain_parts(
    queues: Queues,
    queue: aqless.Queue,
    jobs: Jobs,
    config: Config,
    workers: Workers,
    tags: Tags,
    throttles: Throttles,
    throttle: Throttle,
    rate_limits: RateLimits,
    rate_limit: RateLimit,
    patterns: QueuePatterns,
) -> tuple[
    contracts.Queues,
    contracts.Queue,
    contracts.Jobs,
    contracts.Config,
    contracts.Workers,
    contracts.Tags,
    contracts.Throttles,
    contracts.Throttle,
    contracts.RateLimits,
    contracts.RateLimit,
    contracts.QueuePatterns,
]:
    return (
        queues,
        queue,
        jobs,
        config,
        workers,
        tags,
        throttles,
        throttle,
        rate_limits,
        rate_limit,
        patterns,
    )


def sharded_parts(
    queues: ShardedQueues,
    queue: ShardedQueue,
    jobs: ShardedJobs,
    config: ShardedConfig,
    workers: ShardedWorkers,
    tags: ShardedTags,
    throttles: ShardedThrottles,
    rate_limits: ShardedRateLimits,
    patterns: ShardedQueuePatterns,
) -> tuple[
    contracts.Queues,
    contracts.Queue,
    contracts.Jobs,
    contracts.Config,
    contracts.Workers,
    contracts.Tags,
    contracts.Throttles,
    contracts.RateLimits,
    contracts.QueuePatterns,
]:
    return (queues, queue, jobs, config, workers, tags, throttles, rate_limits, patterns)


def jobs(
    job: aqless.Job, recurring: aqless.RecurringJob
) -> tuple[contracts.Job, contracts.RecurringJob]:
    return job, recurring


def test_both_clients_hand_out_what_the_contracts_name() -> None:
    plain = aqless.Client("redis://127.0.0.1:1/0")
    sharded = aqless.ShardedClient([("127.0.0.1", 1)], deployment="contracts")
    for client in (plain_client(plain), sharded_client(sharded)):
        queue = client.queues["emails"]
        assert queue.name == "emails"


def test_a_plain_queue_s_rate_limit_is_the_one_its_client_names() -> None:
    client = plain_client(aqless.Client("redis://127.0.0.1:1/0"))
    assert client.queues["emails"].rate_limit.id == client.rate_limits.of_queue("emails").id
