"""Task groups whose failure reaches the caller as the failing task's own error."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["own_errors"]


@contextmanager
def own_errors() -> Iterator[None]:
    """Inside, a task group's failure is re-raised as the failing task's own error (the
    first, when several fail), not anyio's ExceptionGroup: a server condition reaches the
    caller as its typed error."""
    try:
        yield
    except BaseExceptionGroup as group:
        error = _first_error(group)
        raise error.with_traceback(error.__traceback__) from error.__cause__


def _first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    error: BaseException = group
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error
