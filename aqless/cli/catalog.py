"""Every command of `aqless`: its name, the module of aqless.cli defining it, and its short
help, so that `aqless --help` lists them and `aqless --version` answers without importing
any command's module; a command's module is imported when the command runs (or its own
help is asked for). tests/cli/test_startup.py checks that this table is what the modules
define."""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    """A command: its `name`, the `module` (of aqless.cli) and `attribute` defining it,
    and its `short_help` as the command itself gives it."""

    name: str
    module: str
    attribute: str
    short_help: str


ENTRIES: tuple[Entry, ...] = (
    Entry("audit", "audit", "audit", "Who changed what, and when (dashboard and CLI)."),
    Entry("batch", "batches", "batch", "A batch's totals and callbacks."),
    Entry("batches", "batches", "batches", "The batches kept, newest first."),
    Entry(
        "cancel", "cancel", "cancel", "Cancel jobs: the given jids, or every failed job of --group."
    ),
    Entry("config", "config", "config", "Read and change the deployment's settings."),
    Entry(
        "events", "events", "events", "Print events as they happen, one line each, until Ctrl-C."
    ),
    Entry("failed", "failures", "failed", "Failure groups with counts; or one group's jobs."),
    Entry("flow", "flows", "flow", "Draw the flow a job belongs to, with each job's state."),
    Entry("get", "jobs", "get", "Show a job: fields, progress, data, result, history."),
    Entry("groups", "groups", "groups", "A queue's fairness groups; set a group's settings."),
    Entry("jobs", "queues", "jobs", "A queue's jobs in one state, a page at a time."),
    Entry("outbox", "outbox", "outbox", "Relay the transactional outbox; show what waits in it."),
    Entry("patterns", "patterns", "patterns", "Queue identifier and priority patterns."),
    Entry(
        "pause", "queues", "pause", "Stop queues from handing out jobs (put and peek still work)."
    ),
    Entry("peek", "queues", "peek", "The jobs QUEUE would hand out next, without taking them."),
    Entry("priority", "jobs", "priority", "Set a job's priority (higher runs earlier)."),
    Entry("put", "put", "put", "Put a job (or a JSON-lines file of jobs) into a queue."),
    Entry("queue", "emptying", "queue", "Operate on one queue: empty it."),
    Entry("queues", "queues", "queues", "Every queue's job counts by state."),
    Entry("rate-limit", "ratelimit", "rate_limit", "Show, set and delete rate limits."),
    Entry(
        "recurring",
        "recurring",
        "recurring",
        "List, change, backfill, pause and cancel recurring jobs.",
    ),
    Entry(
        "retry",
        "failures",
        "retry",
        "Requeue failed jobs: a group's, every group's, or given jids.",
    ),
    Entry("script", "script", "script", "Print the Lua script, or the function library."),
    Entry(
        "search",
        "search",
        "search",
        "Find jobs in every queue and state; act on all of them.",
    ),
    Entry("server", "server", "server", "See, start, stop or reset the embedded Valkey server."),
    Entry(
        "shards",
        "shards",
        "shards",
        "A sharded deployment's shards: counts, lag, memory; add, drain, forget.",
    ),
    Entry("signal", "workflows", "signal", "Send a signal to a workflow."),
    Entry(
        "stats", "queues", "stats", "A queue's wait/run times and failures for a day; --scaling."
    ),
    Entry("tag", "jobs", "tag", "Add tags to a job (or a recurring job); prints its tags."),
    Entry("throttle", "throttle", "throttle", "Show, set and delete throttles."),
    Entry("track", "jobs", "track", "Track jobs; with no JID, list the tracked ones."),
    Entry(
        "unfail",
        "failures",
        "retry",
        "Requeue failed jobs: a group's, every group's, or given jids.",
    ),
    Entry("unpause", "queues", "unpause", "Let paused queues hand out jobs again."),
    Entry("untag", "jobs", "untag", "Remove tags from a job (or a recurring job)."),
    Entry("untrack", "jobs", "untrack", "Stop tracking jobs."),
    Entry("web", "web", "web", "Serve the web dashboard."),
    Entry("worker", "workers", "worker", "Quiet, stop or resume a running aqless worker."),
    Entry(
        "workers", "workers", "workers", "Workers: host, pid, queues, jobs; or one worker's jobs."
    ),
    Entry("workflows", "workflows", "workflows", "A queue's parked workflows and why they wait."),
)

BY_NAME: dict[str, Entry] = {entry.name: entry for entry in ENTRIES}
