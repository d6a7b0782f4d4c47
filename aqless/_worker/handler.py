"""A job class's code and how to run it (`Handler`), as the worker's `Performer` reads it;
the public registry that makes them is aqless.handlers.Handlers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from aqless._worker.policies import RequeuePolicy, RetryPolicy
from aqless.errors import UnknownJobClassError
from aqless.typed import is_job_method

if TYPE_CHECKING:
    from aqless._worker.middleware import Middleware
    from aqless.job import Job

__all__ = ["Handler", "JobFunction", "Resolver", "calls_coroutine"]

JobFunction = Callable[["Job"], Any]


@dataclass(frozen=True, slots=True)
class Handler:
    """The code for one klass, and how to run it.

    Attributes:
        klass: the name jobs use.
        target: the function or class.
        timeout: seconds a job may run (None: the worker's default).
        middleware: around_perform hooks for this klass only, inside the worker's own.
        retry: how its jobs are retried, instead of the worker's policy (None: the worker's).
        requeue: which exceptions put its jobs back, ahead of the worker's policies.
        isolate: run plain (sync) code in a child process (None: as the worker says).
    """

    klass: str
    target: Any
    timeout: float | None = None
    middleware: Sequence[Middleware] = field(default=())
    retry: RetryPolicy | None = None
    requeue: Sequence[RequeuePolicy] = field(default=())
    isolate: bool | None = None

    def function_for(self, queue: str) -> JobFunction:
        """What to call with a job of `queue`."""
        if not inspect.isclass(self.target):
            return self.target  # type: ignore[no-any-return]
        name = queue if is_job_method(self.target, queue) else "process"
        if not is_job_method(self.target, name):
            raise UnknownJobClassError(
                f"{self.klass} has neither a {queue!r} method nor a 'process' method"
            )
        static = inspect.getattr_static(self.target, name)
        if isinstance(static, staticmethod | classmethod):
            return getattr(self.target, name)  # type: ignore[no-any-return]
        return getattr(self.target(), name)  # type: ignore[no-any-return]


def calls_coroutine(function: object) -> bool:
    """Whether calling `function` returns an awaitable (else it runs in a thread)."""
    call = getattr(function, "__call__", None)  # noqa: B004  # callable objects too
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)


class Resolver(Protocol):
    """Where the worker finds a klass's handler (aqless.handlers.Handlers)."""

    def resolve(self, klass: str) -> Handler: ...
