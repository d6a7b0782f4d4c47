"""around_perform hooks: code that runs around every job (a database session, a span, a log
context...).

A hook is either

- an async context manager factory taking the job, e.g. ``@asynccontextmanager async def
  session(job): ... yield ...``; or
- a wrapper ``async def hook(job, perform): ...; result = await perform(); ...; return result``.

The worker's hooks run outermost, then the job class's, then the job code. An exception a
hook raises is the job's outcome, as if the job code had raised it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, TypeAlias

from aqless.errors import ConfigurationError

if TYPE_CHECKING:
    from aqless.job import Job

__all__ = ["Middleware", "Perform", "Wrapper", "wrapped"]

Perform: TypeAlias = Callable[[], Awaitable[Any]]
Wrapper: TypeAlias = Callable[["Job", Perform], Awaitable[Any]]
ContextFactory: TypeAlias = Callable[["Job"], AbstractAsyncContextManager[Any]]
Middleware: TypeAlias = Wrapper | ContextFactory


def _is_wrapper(hook: Middleware) -> bool:
    try:
        parameters = inspect.signature(hook).parameters.values()
    except (TypeError, ValueError) as error:
        raise ConfigurationError(f"cannot read the signature of middleware {hook!r}") from error
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(positional) not in (1, 2):
        raise ConfigurationError(
            f"middleware {hook!r} must take (job) and return an async context manager, "
            "or take (job, perform)"
        )
    return len(positional) == 2


def as_wrapper(hook: Middleware) -> Wrapper:
    """`hook` in wrapper form."""
    if _is_wrapper(hook):
        return hook  # type: ignore[return-value]
    factory: ContextFactory = hook  # type: ignore[assignment]

    async def around(job: Job, perform: Perform) -> Any:
        async with factory(job):
            return await perform()

    return around


def wrapped(hooks: Sequence[Wrapper], job: Job, perform: Perform) -> Perform:
    """`perform` inside `hooks`, the first one outermost."""
    for hook in reversed(hooks):
        perform = _bound(hook, job, perform)
    return perform


def _bound(hook: Wrapper, job: Job, inner: Perform) -> Perform:
    def call() -> Awaitable[Any]:
        return hook(job, inner)

    return call
