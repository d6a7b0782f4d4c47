"""A bad option is a ConfigurationError (a bad verb argument an InvalidArgumentError),
wherever it is given; both are ValueErrors too, so `except ValueError` keeps working."""

from __future__ import annotations

from typing import Any

import pytest
from redis.asyncio.cluster import RedisCluster

import aqless
from aqless import ConfigurationError, InvalidArgumentError, Retry
from aqless._worker.children import ChildPool
from aqless._worker.outcomes import Backoff
from aqless.scripts.loader import Script

UNREACHABLE = "redis://localhost:1"  # nothing below connects


def test_the_typed_errors_are_value_errors() -> None:
    assert issubclass(ConfigurationError, ValueError)
    assert issubclass(InvalidArgumentError, ValueError)


def test_a_script_on_a_cluster_needs_a_prefix() -> None:
    with pytest.raises(ConfigurationError, match="hash-tagged"):
        Script(RedisCluster(host="127.0.0.1", port=1))


def test_a_child_pool_needs_at_least_one_job_per_child() -> None:
    with pytest.raises(ConfigurationError, match="max_jobs_per_child"):
        ChildPool(max_jobs_per_child=0)


@pytest.mark.parametrize("job_timeout", [0, -1.5])
def test_a_worker_refuses_a_job_timeout_that_is_not_positive(job_timeout: float) -> None:
    with pytest.raises(aqless.InvalidValueError, match="job_timeout must be a positive number"):
        aqless.Worker(aqless.Client(UNREACHABLE), ["q"], job_timeout=job_timeout)


@pytest.mark.parametrize(
    "options", [{"base": -1}, {"factor": 0.5}, {"cap": -1}, {"jitter": 1.5}], ids=str
)
def test_a_bad_backoff_is_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match="bad backoff"):
        Backoff(**options)


@pytest.mark.parametrize("delay", [-1, float("nan")])
def test_a_retry_with_a_bad_delay_is_an_invalid_argument_of_job_retry(delay: float) -> None:
    with pytest.raises(InvalidArgumentError, match="delay must be") as raised:
        Retry(delay)
    assert raised.value.command == "job.retry"
