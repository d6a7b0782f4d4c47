"""Handlers: which code processes a job, and which modules a worker may import to find it.

A job names its code in ``klass``: ``"app.jobs.Welcome"`` is the attribute ``Welcome`` of the
module ``app.jobs``. The worker finds it in its registry first; otherwise it imports the
module, but only when the module is in the allow list. A payload in Redis naming any other
module (``os``, ``subprocess``...) fails with UnknownJobClassError and imports nothing.

The code is one of:

- a function taking the job, ``async def`` or plain (plain ones run in a worker thread, or
  with ``isolate`` in a child process that can be stopped: see aqless._worker.children);
- a class with one method per queue name (the pipeline style: a job in queue ``"verify"``
  runs ``Class.verify(job)``) or, failing that, ``process(job)``. Static and class methods are
  called on the class; instance methods on a fresh instance made with no arguments.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack, overload

from aqless._worker.handler import Handler, JobFunction, calls_coroutine
from aqless._worker.outcomes import Backoff, retry_policy
from aqless._worker.policies import RequeuePolicy, RetryPolicy
from aqless._worker.workflow import WorkflowFunction, run_workflow
from aqless.errors import ConfigurationError, UnknownJobClassError
from aqless.puts import class_name

if TYPE_CHECKING:
    from aqless._worker.middleware import Middleware

__all__ = ["Handler", "Handlers", "JobFunction"]

Target = TypeVar("Target", bound=Callable[..., Any])
Workflow = TypeVar("Workflow", bound=WorkflowFunction)


class WorkflowOptions(TypedDict, total=False):
    """`Handlers.workflow`'s options: `Handlers.register`'s, but `isolate`."""

    timeout: float | None
    middleware: Sequence[Middleware]
    retry: RetryPolicy | Backoff | None
    requeue: Sequence[RequeuePolicy]


_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _isolate_attribute(target: Any) -> bool | None:
    """A class's own say on isolation: an ``isolate = True`` (or False) attribute."""
    value = getattr(target, "isolate", None)
    return value if isinstance(value, bool) else None


class Handlers:
    """A registry of job code, and the modules the worker may import to find more.

    Args:
        allow: module names (``"app.jobs"``) whose own and submodules' attributes may be
            imported to process a job that no registration names (default: none, so a
            worker imports nothing a job names).

    Raises:
        ConfigurationError: an `allow` entry that is not a dotted module name.

    Examples:
        ```python
        handlers = aqless.Handlers(allow=["app.jobs"])

        @handlers.register
        async def welcome(job: aqless.Job) -> None:
            await send_welcome(job.data["user_id"])

        worker = aqless.Worker(client, ["emails"], handlers=handlers)
        ```
    """

    def __init__(self, *, allow: Iterable[str] = ()) -> None:
        self._registered: dict[str, Handler] = {}
        self._found: dict[str, Handler] = {}
        self._allowed: tuple[str, ...] = ()
        self.allow(*allow)

    @property
    def allowed(self) -> tuple[str, ...]:
        """The modules a job's klass may be imported from."""
        return self._allowed

    @property
    def registered(self) -> tuple[str, ...]:
        """The klass names registered."""
        return tuple(self._registered)

    def allow(self, *modules: str) -> None:
        """Allow importing from more modules (and their submodules).

        Raises:
            ConfigurationError: a name that is not a dotted module name; none is added.

        Examples:
            ```python
            handlers.allow("app.jobs", "billing.tasks")
            ```
        """
        for module in modules:
            if not _DOTTED.match(module + ".x"):
                raise ConfigurationError(f"not a module name: {module!r}")
        self._allowed = tuple(dict.fromkeys((*self._allowed, *modules)))

    def merge(self, other: Handlers) -> None:
        """Take over another registry's handlers and allowed modules (its registrations
        win over this one's of the same klass).

        Examples:
            ```python
            handlers.merge(billing.handlers)
            ```
        """
        self._registered.update(other._registered)
        self.allow(*other.allowed)

    def add(
        self,
        target: Any,
        klass: str | None = None,
        *,
        timeout: float | None = None,
        middleware: Sequence[Middleware] = (),
        retry: RetryPolicy | Backoff | None = None,
        requeue: Sequence[RequeuePolicy] = (),
        isolate: bool | None = None,
    ) -> Handler:
        """Register a function or class for jobs whose klass is `klass`; `register` is the
        decorator form.

        Args:
            target: an async or plain function taking the job, or a class whose
                ``process`` (or a method named after the job's queue) does.
            klass: the name jobs use (default: the target's ``module.qualname``, which is
                what ``queue.put(target, ...)`` stores).
            timeout: seconds a job of this klass may run before its code is cancelled and
                the job fails with `aqless.JobTimeoutError`, retried as its policy says
                (default None: the target's ``timeout`` attribute, else the worker's
                ``job_timeout``, else no limit).
            middleware: ``around_perform`` hooks for this klass only, inside the worker's
                own: each a wrapper ``async def hook(job, perform)`` that awaits
                ``perform()`` and returns its result, or an async context manager factory
                taking the job (default: the target's ``middleware`` attribute, else
                none).
            retry: how its jobs are retried, instead of the worker's policy: a
                `aqless.RetryPolicy` or `aqless.Backoff` (default None: the worker's).
            requeue: `aqless.RequeuePolicy` entries, ahead of the worker's: exceptions that
                put its jobs back into their queue after a random delay without spending a
                retry (default: none).
            isolate: True runs its plain (sync) code in a child process, stopped (SIGTERM,
                then SIGKILL) when the job is taken away or times out; False runs it in
                the worker's threads (default None: the target's ``isolate`` attribute,
                else the worker's ``isolate`` setting).

        Returns:
            The registered `aqless.Handler`.

        Raises:
            ConfigurationError: `target` is not callable, `timeout` is not positive, or
                ``isolate=True`` for a coroutine function (it runs in the event loop).

        Examples:
            ```python
            handlers.add(resize_image, "images.resize", timeout=120, isolate=True)
            ```
        """
        if not callable(target):
            raise ConfigurationError(f"a handler must be a function or class, got {target!r}")
        name = klass or class_name(target)
        if timeout is not None and not timeout > 0:
            raise ConfigurationError(f"a timeout must be positive, got {timeout!r}")
        if isolate and calls_coroutine(target):
            raise ConfigurationError(
                f"{name}: isolate=True runs plain functions in a child process; "
                "a coroutine function runs in the worker's event loop"
            )
        handler = Handler(
            name,
            target,
            timeout=timeout if timeout is not None else getattr(target, "timeout", None),
            middleware=tuple(middleware or getattr(target, "middleware", ())),
            retry=retry_policy(retry),
            requeue=tuple(requeue),
            isolate=isolate if isolate is not None else _isolate_attribute(target),
        )
        self._registered[name] = handler
        return handler

    @overload
    def register(self, klass: Target, /) -> Target: ...

    @overload
    def register(
        self,
        klass: str | None = None,
        /,
        *,
        timeout: float | None = None,
        middleware: Sequence[Middleware] = (),
        retry: RetryPolicy | Backoff | None = None,
        requeue: Sequence[RequeuePolicy] = (),
        isolate: bool | None = None,
    ) -> Callable[[Target], Target]: ...

    def register(
        self,
        klass: str | Target | None = None,
        /,
        *,
        timeout: float | None = None,
        middleware: Sequence[Middleware] = (),
        retry: RetryPolicy | Backoff | None = None,
        requeue: Sequence[RequeuePolicy] = (),
        isolate: bool | None = None,
    ) -> Target | Callable[[Target], Target]:
        """Decorator registering a function or class: ``@handlers.register`` bare (the klass
        is its ``module.qualname``) or with a klass and options.

        Args:
            klass: the name jobs use (default: the target's ``module.qualname``).
            timeout: seconds a job of this klass may run before its code is cancelled and
                the job fails with `aqless.JobTimeoutError`, retried as its policy says
                (default None: the target's ``timeout`` attribute, else the worker's
                ``job_timeout``, else no limit).
            middleware: ``around_perform`` hooks for this klass only, inside the worker's
                own: each a wrapper ``async def hook(job, perform)`` that awaits
                ``perform()`` and returns its result, or an async context manager factory
                taking the job (default: the target's ``middleware`` attribute, else
                none).
            retry: how its jobs are retried, instead of the worker's policy: a
                `aqless.RetryPolicy` or `aqless.Backoff` (default None: the worker's).
            requeue: `aqless.RequeuePolicy` entries, ahead of the worker's: exceptions that
                put its jobs back into their queue after a random delay without spending a
                retry (default: none).
            isolate: True runs its plain (sync) code in a child process, stopped (SIGTERM,
                then SIGKILL) when the job is taken away or times out; False runs it in
                the worker's threads (default None: the target's ``isolate`` attribute,
                else the worker's ``isolate`` setting).

        Returns:
            The target itself (bare), or a decorator that returns it.

        Raises:
            ConfigurationError: as `add`: `timeout` not positive, ``isolate=True`` on a
                coroutine function, a target that is not callable.

        Examples:
            ```python
            @handlers.register("app.jobs.Welcome", timeout=30, retry=aqless.RetryPolicy())
            async def welcome(job: aqless.Job) -> None:
                ...

            @handlers.register(isolate=True)  # plain code, in a child process
            def render_pdf(job: aqless.Job) -> None:
                ...
            ```
        """
        if callable(klass):
            self.add(klass)
            return klass

        def decorate(target: Target) -> Target:
            self.add(
                target,
                klass,
                timeout=timeout,
                middleware=middleware,
                retry=retry,
                requeue=requeue,
                isolate=isolate,
            )
            return target

        return decorate

    def workflow(
        self, klass: str | None = None, /, **options: Unpack[WorkflowOptions]
    ) -> Callable[[Workflow], Workflow]:
        """Decorator: ``@handlers.workflow("app.Order", timeout=60)`` registers an async
        function of a `WorkflowContext` as a durable workflow (see `WorkflowContext`). A
        workflow must be registered: a worker does not import one by its klass alone.

        Args:
            klass: the job class it runs (default None: the function's
                ``module.qualname``).
            **options: `register`'s but `isolate`, with its defaults: `timeout` (seconds)
                bounds each run, `middleware` wraps it, `retry` and `requeue` are the job's
                policies for an exception that ends a run (a saga wants a `retry`).

        Raises:
            ConfigurationError: the function is not an async function, or an option is
                refused as `register` refuses it (a `timeout` not positive); nothing is
                registered.

        Examples:
            ```python
            @handlers.workflow("shop.Order", retry=aqless.RetryPolicy(delay=5))
            async def order(ctx: aqless.WorkflowContext) -> str:
                return await ctx.step("charge", charge, ctx.data["amount"])
            ```
        """

        def decorate(function: Workflow) -> Workflow:
            if not calls_coroutine(function):
                raise ConfigurationError(f"a workflow must be an async function: {function!r}")
            self.register(klass, **options)(run_workflow(function))
            return function

        return decorate

    def is_allowed(self, module: str) -> bool:
        """Whether importing from `module` is allowed (it or a parent is allowed).

        Examples:
            ```python
            assert aqless.Handlers(allow=["app"]).is_allowed("app.jobs")
            ```
        """
        return any(module == name or module.startswith(name + ".") for name in self._allowed)

    def resolve(self, klass: str) -> Handler:
        """The handler for `klass`: registered, or imported from an allowed module.

        Raises:
            UnknownJobClassError: nothing registered under that name and its module is not
                allowed (nothing is imported), or the module has no such attribute.

        Examples:
            ```python
            handler = handlers.resolve("app.jobs.Welcome")
            ```
        """
        handler = self._registered.get(klass) or self._found.get(klass)
        if handler is not None:
            return handler
        if not _DOTTED.match(klass):
            raise UnknownJobClassError(f"{klass!r} is not a registered handler or a dotted name")
        module_name, _, attribute = klass.rpartition(".")
        if not self.is_allowed(module_name):
            raise UnknownJobClassError(
                f"{klass!r} is not registered and module {module_name!r} is not allowed "
                f"(allowed: {', '.join(self._allowed) or 'none'}); nothing was imported"
            )
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise UnknownJobClassError(f"cannot import {module_name!r}: {error}") from error
        target = getattr(module, attribute, None)
        if target is None or not callable(target):
            raise UnknownJobClassError(f"module {module_name!r} has no callable {attribute!r}")
        handler = Handler(
            klass,
            target,
            timeout=getattr(target, "timeout", None),
            middleware=tuple(getattr(target, "middleware", ())),
            isolate=_isolate_attribute(target),
        )
        self._found[klass] = handler
        return handler
