"""Helpers for testing code that uses aqless; none of them needs pytest.

- ``await perform(job, handlers)`` runs one popped job's code (handler and middleware) as a
  worker would, and reports its outcome (qless's ``job.perform``);
- ``Job.build("app.jobs.Welcome", {...})`` makes a job without a server, for unit tests.

The pytest fixtures (``aqless_url``, ``aqless_client``, ``aqless_queue``,
``aqless_worker``) are in aqless.testing.plugin, which pytest loads by itself once aqless is
installed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aqless.client import Client
from aqless.errors import ConfigurationError
from aqless.handlers import Handlers
from aqless.job import Job
from aqless.worker import Worker, WorkerCounters

__all__ = ["RunWorker", "perform"]

#: pytest loads this package by its entry point (``pytest11``), then the fixtures from here.
pytest_plugins = ["aqless.testing.plugin"]

RunWorker = Callable[..., Awaitable[WorkerCounters]]
"""The type of the ``aqless_worker`` fixture: ``await aqless_worker(handlers, queues=[...],
**worker_options)`` runs a worker until there is nothing left to do and returns its counters."""


async def perform(job: Job, handlers: Handlers | None = None, **worker_options: Any) -> str:
    """Run a popped job's code (handler and middleware) as a worker would, outside one, and
    report its outcome: complete on return, fail or retry on raise. Returns what became of
    it (``completed``, ``failed``, ``retried``...; see ``Worker.perform``); the job's
    attributes show its new state.

    Args:
        job: a job popped through an `aqless.Client` (``await queue.pop()``).
        handlers: the job code (default None: an empty registry, which imports nothing).
        worker_options: `aqless.Worker`'s keywords (``middleware``, ``retry``,
            ``job_timeout``, ``workdir``...).

    Returns:
        What became of the job: ``"completed"``, ``"failed"``, ``"retried"``...

    Raises:
        ConfigurationError: the job was not read through an `aqless.Client`.
        InvalidValueError: a worker option outside its rule.

    Examples:
        ```python
        from aqless.testing import perform

        await queue.put("app.jobs.welcome", {"user": 42})
        job = await queue.pop()
        assert await perform(job, handlers) == "completed"
        ```
    """
    client = job.client
    if not isinstance(client, Client):
        raise ConfigurationError("perform() runs a job read through an aqless.Client")
    worker = Worker(client, [job.queue_name], handlers=handlers, **worker_options)
    return await worker.perform(job)
