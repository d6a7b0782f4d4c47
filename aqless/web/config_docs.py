"""What each configuration option the script reads means, and its unit: one table, for the
dashboard's config page and any other reader (this module imports nothing but the standard
library).

Options named after a queue (``<queue>-heartbeat``...) are described by their suffix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final

__all__ = ["OPTIONS", "PER_QUEUE", "OptionDoc", "describe", "documented"]


@dataclass(frozen=True, slots=True)
class OptionDoc:
    """An option's meaning and the unit of its value ("" when it has none)."""

    description: str
    unit: str = ""


OPTIONS: Final[dict[str, OptionDoc]] = {
    "application": OptionDoc("A name for user interfaces; the script never reads it."),
    "heartbeat": OptionDoc(
        "How long a popped job's lock lasts unless its worker heartbeats.", "seconds"
    ),
    "grace-period": OptionDoc(
        "Between the lock-lost warning to a worker and the job being taken back "
        "(0 or less: taken back at once).",
        "seconds",
    ),
    "jobs-history": OptionDoc("How long completed jobs are kept.", "seconds"),
    "jobs-history-count": OptionDoc("How many completed jobs are kept at most.", "jobs"),
    "max-job-history": OptionDoc(
        "History entries kept per job (0 or less: all of them).", "entries"
    ),
    "max-pop-retry": OptionDoc(
        "Passes a pop makes over the queue when throttles or rate limits hold jobs back.",
        "passes",
    ),
    "max-worker-age": OptionDoc("A worker idle this long is forgotten (its jobs stay).", "seconds"),
    "result-max-bytes": OptionDoc(
        "The largest job result kept; a larger one is dropped (the job still completes).",
        "bytes",
    ),
    "stats-history": OptionDoc("Days of summary statistics to keep; no server reads it.", "days"),
    "histogram-history": OptionDoc("Days of histograms to keep; no server reads it.", "days"),
    "aqless-pubsub": OptionDoc(
        "Written by a sharded deployment: 'sharded' publishes events with SPUBLISH."
    ),
}

#: Options a queue's name prefixes, by suffix: ``emails-heartbeat``...
PER_QUEUE: Final[dict[str, OptionDoc]] = {
    "-heartbeat": OptionDoc("This queue's lock duration (instead of heartbeat).", "seconds"),
    "-max-concurrency": OptionDoc(
        "Jobs of this queue running at once at most (0: no limit).", "jobs"
    ),
    "-max-pop-retry": OptionDoc("This queue's max-pop-retry.", "passes"),
}


def describe(option: str) -> OptionDoc | None:
    """The documentation of `option`, a global or per-queue one; None for an unknown one."""
    known = OPTIONS.get(option)
    if known is not None:
        return known
    for suffix, doc in PER_QUEUE.items():
        if option.endswith(suffix) and len(option) > len(suffix):
            return doc
    return None


def documented(options: Mapping[str, object]) -> dict[str, Any]:
    """What the config page adds to `options` (the server's): `docs`, each one's
    {description, unit} (absent for an unknown option), and `unset`, the known global
    options it lacks, with theirs."""
    docs = {name: asdict(doc) for name in options if (doc := describe(name)) is not None}
    unset = {name: asdict(doc) for name, doc in OPTIONS.items() if name not in options}
    return {"docs": docs, "unset": unset}
