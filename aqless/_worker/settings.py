"""A worker's settings, declared once: `WorkerSettings`.

Each field is one setting with its type, its default, its rule (``worker.<name>`` in
`aqless.rules`, checked when the settings are made), its help text and its ``aqless-run``
option and environment variable (`Setting`). `Worker`, `ShardedWorker` and the worker's
Performer take the settings whole; ``aqless-run`` makes its options from these fields
(aqless.run), so a new setting is one field here. The worker's code objects (handlers,
middleware, retry policies, observers, a custom Reserver) are not settings: they are given
to `Worker` beside them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypedDict

from aqless import rules
from aqless._worker import defaults
from aqless._worker.reservers import Reserver, ReserverName

__all__ = ["Setting", "WorkerKeywords", "WorkerSettings", "setting_of", "table_markdown"]

#: The prefix of every ``aqless-run`` environment variable.
ENV_PREFIX: Final = "AQLESS_"


@dataclass(frozen=True, slots=True)
class Setting:
    """How one setting is checked and typed at ``aqless-run``.

    Attributes:
        help: the option's help text.
        rule: the name of its rule in `aqless.rules` (None: a folder).
        flag: the long option (default: ``--`` and the field's name, dashed).
        short: the short option, or None.
        metavar: the option's value name in ``--help``, or None.
        scale: the option's unit in the setting's (``--max-memory`` is in MB, 1 << 20 bytes).
        unit: the option's unit in words when it differs from the setting's (``MB``).
        folder: the value is a folder (resolved to an absolute path).
    """

    help: str
    rule: str | None = None
    flag: str | None = None
    short: str | None = None
    metavar: str | None = None
    scale: int = 1
    unit: str = ""
    folder: bool = False

    def long_flag(self, name: str) -> str:
        return self.flag or "--" + name.replace("_", "-")

    def flags(self, name: str) -> tuple[str, ...]:
        """The option's names, short first: ``("-c", "--concurrency")``."""
        return (*((self.short,) if self.short else ()), self.long_flag(name))

    def env(self, name: str) -> str:
        """Its environment variable, named after its long option: ``AQLESS_MAX_JOBS``."""
        return ENV_PREFIX + self.long_flag(name).removeprefix("--").replace("-", "_").upper()

    def is_flag(self) -> bool:
        """A switch, on when given (no value)."""
        return self.rule is not None and rules.RULES[self.rule].kind == "switch"


def _how(help: str, **how: Any) -> dict[str, Setting]:  # (click's word)
    """A field's metadata: its `Setting`."""
    return {"setting": Setting(help, **how)}


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    """A worker's settings, each checked by its rule (``worker.<name>`` in `aqless.rules`)
    when made: InvalidValueError names the first one refused. ``replace(**changes)`` makes a
    changed copy, checked again. Each field is also an ``aqless-run`` option and environment
    variable (see the table in the worker guide).

    In a few words: ``concurrency`` jobs run at once; ``reserver`` (``"ordered"``,
    ``"round-robin"``, ``"shuffled"`` or a Reserver) orders the queues, by their stored
    priority patterns with ``priorities``; ``interval`` is the longest wait between polls
    while idle (each a random three quarters to all of it; put events and pushes wake a
    worker sooner); ``grace`` is the seconds running jobs get after ``stop()``;
    ``job_timeout`` the seconds a job may run unless its handler says (None: no limit);
    ``workdir`` a folder for the slots' sandboxes (``job.sandbox``); ``max_jobs`` and
    ``max_memory`` (bytes) make a worker finish and return; ``burst`` returns once no job
    runs and a pop finds nothing (jobs scheduled for later are not waited for; jobs a rate
    limit holds back are); ``resume`` first takes back the jobs the server lists as held by
    the worker's name; ``refresh`` is the seconds between re-reading which queues the
    patterns match; ``isolate`` runs plain (sync) code in child processes, stopped
    (SIGTERM, then SIGKILL) when their job is taken away, times out or is cut off by a stop
    (a handler's own ``isolate`` wins), each replaced after ``isolate_max_jobs`` jobs;
    ``prefetch`` pops that many jobs beyond the free slots and holds them (locked,
    heartbeated) until a slot frees, to start at once (not with a shared budget): a held job
    waits behind the running ones and no other worker can take it meanwhile, so use 0 where
    a job must not wait behind another; left at None, a one-slot worker holds three jobs
    while its runs are short (a few ms) and its queue has more, popping two a call, and
    hands a job held 50 ms back to its queue (see the worker guide).

    Attributes:
        concurrency: jobs run at once (default 10).
        prefetch: jobs popped beyond the free slots and held for one (default None: three
            while a one-slot worker's runs are short, none otherwise).
        reserver: the order queues are popped in (default ``"ordered"``).
        priorities: order queues by the stored priority patterns (default False).
        interval: seconds, the longest wait between polls while idle (default 5.0).
        grace: seconds running jobs get after a stop (default 30.0).
        refresh: seconds between re-reading which queues the patterns match (default 60.0).
        job_timeout: seconds a job may run unless its handler says (default None: no limit).
        max_jobs: jobs taken before the worker finishes (default None: no limit).
        max_memory: bytes of resident memory above which it finishes (default None).
        resume: first take back the jobs held under the worker's name (default False).
        burst: return once no job runs and a pop finds none (default False).
        workdir: a folder for each job's sandbox (default None: no sandbox).
        isolate: run plain (sync) job code in child processes (default False).
        isolate_max_jobs: jobs a child runs before it is replaced (default None: no limit).

    Raises:
        InvalidValueError: a field outside its rule (``concurrency=0``,
            ``reserver="random"``), naming the first one refused.

    Examples:
        ```python
        settings = aqless.WorkerSettings(concurrency=20, job_timeout=60.0)
        worker = aqless.Worker(client, ["emails"], settings, burst=True)  # keyword wins
        ```
    """

    concurrency: int = field(
        default=defaults.CONCURRENCY,
        metadata=_how(
            "Jobs run at once by each process.",
            rule="worker.concurrency",
            short="-c",
        ),
    )
    prefetch: int | None = field(
        default=defaults.PREFETCH,
        metadata=_how(
            "Pop up to N jobs beyond the free slots and hold them (locked to the worker, "
            "heartbeated) until a slot frees, when one starts at once: one job at a time no longer "
            "waits a round trip for the next. A held job waits behind the running ones, and no "
            "other worker can take it meanwhile: 0 never holds one. Default: a one-slot worker "
            "holds three while its runs are short and its queue has more, popping two a call, and "
            "hands a job held 50 ms back to its queue.",
            rule="worker.prefetch",
            metavar="N",
        ),
    )
    reserver: ReserverName | Reserver = field(
        default=defaults.RESERVER,
        metadata=_how(
            "The order queues are popped in.",
            rule="worker.reserver",
        ),
    )
    priorities: bool = field(
        default=False,
        metadata=_how(
            "Order queues by the priority patterns stored in the server.", rule="worker.priorities"
        ),
    )
    interval: float = field(
        default=defaults.INTERVAL,
        metadata=_how(
            "Seconds between polls while idle (put events wake a worker sooner).",
            rule="worker.interval",
        ),
    )
    grace: float = field(
        default=defaults.GRACE,
        metadata=_how(
            "Seconds running jobs get after SIGTERM/SIGINT before they are handed back.",
            rule="worker.grace",
        ),
    )
    refresh: float = field(
        default=defaults.REFRESH,
        metadata=_how(
            "Seconds between re-reading which queues the patterns match.",
            rule="worker.refresh",
        ),
    )
    job_timeout: float | None = field(
        default=None,
        metadata=_how(
            "Seconds a job may run unless its handler sets its own (default: no limit).",
            rule="worker.job_timeout",
            flag="--timeout",
        ),
    )
    max_jobs: int | None = field(
        default=None,
        metadata=_how(
            "Replace a worker process after it has taken this many jobs.",
            rule="worker.max_jobs",
        ),
    )
    max_memory: int | None = field(
        default=None,
        metadata=_how(
            "Replace a worker process above this many MB.",
            rule="worker.max_memory",
            scale=1 << 20,
            unit="MB",
        ),
    )
    resume: bool = field(
        default=False,
        metadata=_how(
            "First take back the jobs the server lists as held by this worker name.",
            rule="worker.resume",
        ),
    )
    burst: bool = field(
        default=False,
        metadata=_how(
            "Exit once no job is running and the queues have none waiting.", rule="worker.burst"
        ),
    )
    workdir: Path | None = field(
        default=None, metadata=_how("Give each job a clean folder here (job.sandbox).", folder=True)
    )
    isolate: bool = field(
        default=False,
        metadata=_how(
            "Run plain (sync) job functions in child processes, stopped (SIGTERM, then "
            "SIGKILL) when their job is taken away, times out or is cut off by a stop.",
            rule="worker.isolate",
        ),
    )
    isolate_max_jobs: int | None = field(
        default=None,
        metadata=_how(
            "Replace each child process of --isolate after this many jobs.",
            rule="worker.isolate_max_jobs",
        ),
    )

    def __post_init__(self) -> None:
        for each in dataclasses.fields(self):
            value = getattr(self, each.name)
            how = setting_of(each)
            if how.rule is not None and not isinstance(value, Reserver):
                optional = each.default is None  # None: not set (no limit, no folder)
                check = rules.check_optional if optional else rules.check
                value = check(how.rule, value, "Worker")
            elif how.folder and value is not None:
                value = Path(value)
            object.__setattr__(self, each.name, value)

    def replace(self, **changes: Any) -> WorkerSettings:
        """A copy with `changes` (checked, like the original).

        Raises:
            InvalidValueError: a changed field outside its rule.
            TypeError: a name that is not a field.

        Examples:
            ```python
            busy = settings.replace(concurrency=50, prefetch=5)
            ```
        """
        return dataclasses.replace(self, **changes) if changes else self


class WorkerKeywords(TypedDict, total=False):
    """`WorkerSettings`' fields as keywords (``Worker(client, queues, concurrency=5)``);
    a test checks that the two agree."""

    concurrency: int
    prefetch: int | None
    reserver: ReserverName | Reserver
    priorities: bool
    interval: float
    grace: float
    refresh: float
    job_timeout: float | None
    max_jobs: int | None
    max_memory: int | None
    resume: bool
    burst: bool
    workdir: str | Path | None
    isolate: bool
    isolate_max_jobs: int | None


def setting_of(each: dataclasses.Field[Any]) -> Setting:
    """The `Setting` a field of `WorkerSettings` declares."""
    how: Setting = each.metadata["setting"]
    return how


def table_markdown() -> str:
    """The settings as a Markdown table: the keyword, the option, the environment variable
    and what the value must be (the worker guide shows it; a test keeps it current)."""
    lines = [
        "| `Worker(...)` | `aqless-run` | environment | must be |",
        "|---|---|---|---|",
    ]
    for each in dataclasses.fields(WorkerSettings):
        how = setting_of(each)
        rule = rules.RULES[how.rule] if how.rule else None
        keyword, flags = f"`{each.name}`", ", ".join(f"`{f}`" for f in how.flags(each.name))
        if how.unit:
            keyword, flags = f"{keyword} ({rule.unit if rule else ''})", f"{flags} ({how.unit})"
        must = rule.expected() if rule else "a folder"
        lines.append(f"| {keyword} | {flags} | `{how.env(each.name)}` | {must} |")
    return "\n".join(lines) + "\n"
