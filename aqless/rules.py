"""One rule per input a user can set, checked in one place by every door.

Each input (a put's option, a recurring job's interval, a config option, a worker setting,
a count or an offset of a listing...) has one `Rule` in `RULES`: its kind, its range, its
unit and its meaning. Every door checks through `check` (a value from Python code) or
`parse` (a value typed as text, at the CLI or a dashboard form), so the same bad value is
refused with the same `InvalidValueError` whether it comes from the async, sharded or
blocking client, the CLI, the dashboard, a flow or a batch. The script keeps its own checks
as the last line, for the other qless clients.

``docs/reference/inputs.md`` is generated from this table (`table_markdown`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from aqless.errors import InvalidValueError

Kind = Literal["number", "whole", "name", "names", "text", "choice", "switch", "condition"]

#: The longest name (a queue, a group, a tag, a throttle...) any door accepts.
NAME_MAX: Final = 128

#: The largest result a workflow step, gather or race may keep, in bytes of JSON
#: (aqless.workflows).
STEP_RESULT_MAX: Final = 65536
#: What a recurring job's due run may do while its last run is live (its ``overlap``).
OVERLAPS: Final = ("skip", "buffer_one", "buffer_all", "cancel_other", "allow_all")


@dataclass(frozen=True, slots=True)
class Rule:
    """What one input must be.

    Attributes:
        kind: ``number`` (finite, not a bool), ``whole`` (an int, not a bool), ``name`` (a
            non-empty string of at most `longest` characters, without whitespace or control
            characters unless `spaces`), ``names`` (a list of such names, never a lone
            string), ``text`` (any string, non-empty unless `minimum` is 0), ``choice`` (one
            of `choices`), ``switch`` (True or False, not 0 or 1) or ``condition`` (a
            field path and a value, ``path = value``: keys or list indexes joined by dots,
            none of them empty; with `minimum` 0 the path may be left out, for the whole
            value).
        meaning: what it is, for the reference table.
        unit: its unit (``seconds``, ``jobs``...), "" for none.
        minimum: the least value allowed (numbers), or None.
        above: the minimum itself is refused (a positive number: minimum 0, above).
        maximum: the greatest value allowed (numbers), or None.
        choices: the values a ``choice`` may take.
        spaces: a ``name`` may hold spaces (not tabs, newlines or other control characters).
        longest: the longest ``name``.
    """

    kind: Kind
    meaning: str
    unit: str = ""
    minimum: float | None = None
    above: bool = False
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    spaces: bool = False
    longest: int = NAME_MAX

    def expected(self) -> str:
        """What a value must be, in words: ``a whole number from 1``."""
        if self.kind in ("number", "whole"):
            noun = "a whole number" if self.kind == "whole" else "a number"
            if self.unit and self.kind == "number":
                noun += f" of {self.unit}"
            if self.minimum is not None:
                if self.above and self.minimum == 0:
                    noun = "a positive " + noun.removeprefix("a ")
                elif self.above:
                    noun += f" above {_shown(self.minimum)}"
                else:
                    noun += f" from {_shown(self.minimum)}"
            if self.maximum is not None:
                noun += f" up to {_shown(self.maximum)}"
            return noun
        if self.kind == "name":
            return f"a name of 1 to {self.longest} characters without {self._forbidden()}"
        if self.kind == "names":
            return f"a list of names (1 to {self.longest} characters, no {self._forbidden()})"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "switch":
            return "true or false"
        if self.kind == "condition":
            whole = " (or = value, the whole value)" if self.minimum == 0 else ""
            return f"a condition written field.path = value{whole}"
        return "a text" if self.minimum == 0 else "a non-empty text"

    def check(self, value: object, name: str, command: str) -> Any:
        """`value` if it keeps the rule (a whole number given as 3.0 comes back as 3), else
        InvalidValueError naming `name` and what it must be."""
        checked = self._checked(value)
        if checked is _REFUSED:
            raise InvalidValueError(command, name, value, self.expected())
        return checked

    def parse(self, text: str, name: str, command: str) -> Any:
        """`text` (typed at the CLI or in a form) as this rule's type, checked."""
        value: object = text
        if self.kind in ("number", "whole"):
            value = _number(text.strip())
            if value is None:
                raise InvalidValueError(command, name, text, self.expected())
        elif self.kind == "names":
            value = [part.strip() for part in text.split(",") if part.strip()]
        elif self.kind == "switch":
            value = _SWITCH_WORDS.get(text.strip().lower(), text)
        return self.check(value, name, command)

    def _checked(self, value: object) -> object:
        if self.kind in ("number", "whole"):
            return self._checked_number(value)
        if self.kind == "name":
            return value if self._is_name(value) else _REFUSED
        if self.kind == "names":
            if isinstance(value, str | bytes) or not isinstance(value, Iterable):
                return _REFUSED
            names = list(value)
            return names if all(self._is_name(n) for n in names) else _REFUSED
        if self.kind == "choice":
            return value if value in self.choices else _REFUSED
        if self.kind == "switch":
            return value if isinstance(value, bool) else _REFUSED
        if self.kind == "condition":
            return value if self._is_condition(value) else _REFUSED
        if not isinstance(value, str) or (self.minimum != 0 and not value):
            return _REFUSED
        return value

    def _checked_number(self, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return _REFUSED
        if not math.isfinite(value):
            return _REFUSED
        if self.kind == "whole":
            if isinstance(value, float) and not value.is_integer():
                return _REFUSED
            value = int(value)
        if self.minimum is not None and (
            value < self.minimum or (self.above and value == self.minimum)
        ):
            return _REFUSED
        if self.maximum is not None and value > self.maximum:
            return _REFUSED
        return value

    def _is_name(self, value: object) -> bool:
        if not isinstance(value, str) or not 0 < len(value) <= self.longest:
            return False
        # isprintable: no control character, and no whitespace but the space (str's own
        # loop: a put checks its tags and queue with it)
        return value.isprintable() and (self.spaces or " " not in value)

    def _is_condition(self, value: object) -> bool:
        if not isinstance(value, str) or "=" not in value:
            return False
        path = value.partition("=")[0].strip()
        if not path:
            return self.minimum == 0
        return all(key.strip() for key in path.split("."))

    def _forbidden(self) -> str:
        return "control characters" if self.spaces else "whitespace or control characters"


class _Refused:
    pass


_REFUSED: Final = _Refused()

#: How a switch may be typed.
_SWITCH_WORDS: Final = {
    **dict.fromkeys(("1", "true", "yes", "on"), True),
    **dict.fromkeys(("0", "false", "no", "off"), False),
}


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


#: What a config option's name is keyed by in `RULES` when it is a queue's own
#: (``emails-heartbeat`` is ``<queue>-heartbeat``).
PER_QUEUE: Final = "<queue>"


def _config_rules() -> dict[str, Rule]:
    """The config options the scripts read (config.lua and its callers) and those aqless
    writes, by name; a queue's own options by ``<queue>-`` and their suffix."""
    seconds = "seconds"
    return {
        "application": Rule("text", "A name for user interfaces; the script never reads it."),
        "heartbeat": Rule(
            "number",
            "How long a popped job's lock lasts unless its worker heartbeats.",
            seconds,
            0,
            True,
        ),
        "grace-period": Rule(
            "number",
            "Between the lock-lost warning to a worker and the job being taken back "
            "(0: taken back at once).",
            seconds,
            minimum=0,
        ),
        "jobs-history": Rule(
            "number", "How long completed jobs are kept (0: not at all).", seconds, minimum=0
        ),
        "jobs-history-count": Rule(
            "whole", "How many completed jobs are kept at most.", "jobs", minimum=0
        ),
        "max-job-history": Rule(
            "whole", "History entries kept per job (0: all of them).", "entries", minimum=0
        ),
        "max-pop-retry": Rule(
            "whole",
            "Passes a pop makes over the queue when throttles or rate limits hold jobs back.",
            "passes",
            minimum=1,
        ),
        "max-worker-age": Rule(
            "number", "A worker idle this long is forgotten (its jobs stay).", seconds, 0
        ),
        "result-max-bytes": Rule(
            "whole",
            "The largest job result kept; a larger one is dropped (the job still completes).",
            "bytes",
            minimum=0,
        ),
        "stats-history": Rule(
            "whole", "Days of summary statistics to keep; no server reads it.", "days", minimum=0
        ),
        "histogram-history": Rule(
            "whole", "Days of histograms to keep; no server reads it.", "days", minimum=0
        ),
        "aqless-pubsub": Rule(
            "text",
            "Written by a sharded deployment: 'sharded' publishes events with SPUBLISH.",
            minimum=0,
        ),
        f"{PER_QUEUE}-heartbeat": Rule(
            "number", "This queue's lock duration (instead of heartbeat).", seconds, 0, True
        ),
        f"{PER_QUEUE}-max-concurrency": Rule(
            "whole", "Jobs of this queue running at once at most (0: no limit).", "jobs", 0
        ),
        f"{PER_QUEUE}-max-pop-retry": Rule(
            "whole", "This queue's max-pop-retry.", "passes", minimum=1
        ),
    }


#: The states a queue's own sets hold jobs in, in the order listings offer them.
_QUEUE_STATES: Final = ("waiting", "running", "scheduled", "stalled", "depends", "throttled")


def _rules() -> dict[str, Rule]:
    return {
        # names
        "queue": Rule("name", "A queue's name."),
        "group": Rule("name", "A fairness group's name in its queue.", spaces=True),
        "failure_group": Rule("name", "A failure group's name.", spaces=True, longest=256),
        "tag": Rule("name", "A tag to find jobs by.", spaces=True),
        "tags": Rule("names", "Tags to find a job by.", spaces=True),
        "throttle": Rule("name", "A named throttle."),
        "throttles": Rule("names", "Throttles a job must hold to run."),
        "rate_limits": Rule("names", "Named rate limits a job's start counts on."),
        "jid": Rule("name", "A job's id (other qless clients make ids with spaces).", spaces=True),
        "depends": Rule("names", "Jids that must complete before the job runs.", spaces=True),
        "worker": Rule("name", "A worker's name.", spaces=True, longest=256),
        # a job's numbers
        "priority": Rule("number", "Higher runs earlier."),
        "delay": Rule("number", "Seconds before the job may run.", unit="seconds", minimum=0),
        "retries": Rule("whole", "Lost locks or retries a job may spend.", minimum=0),
        # texts
        "reason": Rule("text", "Why a job was handed back or failed."),
        "message": Rule("text", "A failure's message.", minimum=0),
        # listings
        "count": Rule("whole", "How many items a listing returns.", minimum=1),
        "offset": Rule("whole", "How many items a listing skips.", minimum=0),
        "page": Rule("whole", "A page of a listing, from 1.", minimum=1),
        # operators' settings: recurring jobs, throttles, groups, rate limits, workers (the
        # config options' rules are in the block after this one)
        "interval": Rule(
            "number", "Seconds between two spawns of a recurring job.", "seconds", 0, True
        ),
        "recurring.offset": Rule(
            "number", "Seconds before a recurring job's first spawn.", "seconds", minimum=0
        ),
        "backlog": Rule(
            "whole", "Missed spawns a recurring job catches up at most (0: all).", minimum=0
        ),
        "maximum": Rule(
            "whole", "Jobs holding a throttle at once at most (0: no limit).", "jobs", 0
        ),
        "expiration": Rule(
            "whole", "Seconds until a throttle is lifted (0: never).", "seconds", minimum=0
        ),
        "weight": Rule(
            "number",
            "A group's turns of the pops for each turn of a group of weight 1.",
            "",
            0,
            True,
        ),
        "concurrency": Rule(
            "whole", "A group's jobs running at once at most (0: no cap).", "jobs", minimum=0
        ),
        "limit": Rule("whole", "Job starts at most in any window of `per`.", "jobs", minimum=1),
        "per": Rule("number", "A rate limit's window.", "seconds", minimum=0, above=True),
        "worker.concurrency": Rule("whole", "Jobs a worker runs at once.", "jobs", minimum=1),
        "worker.prefetch": Rule(
            "whole",
            "Jobs a worker pops beyond its free slots and holds (unset: one while a one-slot "
            "worker's runs are short).",
            "jobs",
            minimum=0,
        ),
        "worker.interval": Rule(
            "number", "A worker's longest wait between polls while idle.", "seconds", 0, True
        ),
        "worker.grace": Rule(
            "number", "Seconds running jobs get to finish after a stop.", "seconds", minimum=0
        ),
        "worker.job_timeout": Rule(
            "number", "Seconds a job may run unless its handler says.", "seconds", 0, True
        ),
        "worker.refresh": Rule(
            "number",
            "Seconds between re-reading the queues a worker's patterns match.",
            "seconds",
            0,
            True,
        ),
        "worker.max_jobs": Rule(
            "whole", "Jobs a worker (process) takes before it finishes.", "jobs", minimum=1
        ),
        "worker.isolate_max_jobs": Rule(
            "whole", "Jobs a child process runs before it is replaced.", "jobs", minimum=1
        ),
        "worker.max_memory": Rule(
            "whole", "Resident memory above which a worker finishes.", "bytes", minimum=1
        ),
        "worker.reserver": Rule(
            "choice",
            "The order a worker pops its queues in.",
            choices=("ordered", "round-robin", "shuffled"),
        ),
        "worker.priorities": Rule(
            "switch", "A worker orders its queues by the stored priority patterns."
        ),
        "worker.resume": Rule(
            "switch", "A worker first takes back the jobs the server lists as its own."
        ),
        "worker.burst": Rule("switch", "A worker returns once it finds no more work."),
        "worker.isolate": Rule("switch", "A worker runs plain job code in child processes."),
        # config options (aqless.scripts.options describes them by these rules)
        **CONFIG,
        # the dashboard's and CLI's listings
        "state": Rule(
            "choice",
            "A state of a queue's jobs a listing shows (recurring: its recurring jobs).",
            choices=(*_QUEUE_STATES, "recurring"),
        ),
        "target_p95": Rule(
            "number", "The p95 wait a scaling reading sizes the slots for.", "seconds", 0, True
        ),
        "sample": Rule(
            "number",
            "Seconds between two scaling readings (0: one reading, over the day so far).",
            unit="seconds",
            minimum=0,
            maximum=3600,
        ),
        "search_limit": Rule(
            "whole", "How many jobs a search examines at most.", "jobs", 1, maximum=10_000
        ),
        # search over every queue and state (aqless.ops.search), and acting on what it found
        "search.state": Rule(
            "choice",
            "A state a search looks in.",
            choices=(*_QUEUE_STATES, "failed", "complete"),
        ),
        "search.class": Rule("name", "The job class a search finds jobs of.", longest=256),
        "search.where": Rule("condition", "A value a found job's data holds at a field path."),
        "search.result": Rule(
            "condition", "A value a found job's result holds at a field path.", minimum=0
        ),
        "search.shown": Rule(
            "whole", "How many found jobs a search lists.", "jobs", minimum=1, maximum=1000
        ),
        "search.action": Rule(
            "choice",
            "What to do to every job a search found.",
            choices=("cancel", "retry", "requeue", "move", "delete"),
        ),
        # operators' control and comfort (issue 42): a request to a running aqless worker,
        # the dashboard's page sizes
        "page_size": Rule(
            "choice", "Rows a page of a dashboard listing shows.", choices=("25", "50", "100")
        ),
        "worker_command": Rule(
            "choice",
            "What an operator asks of a running aqless worker: quiet (take no more jobs), "
            "stop (quiet, then exit once its jobs end or its grace runs out), or resume.",
            choices=("quiet", "stop", "resume"),
        ),
        # a client's settings
        "client.script_connection": Rule(
            "choice",
            "What carries a client's script calls: aqless's lean connection, or redis-py's "
            "pool (a diagnostic).",
            choices=("lean", "redis-py"),
        ),
        # workflows (aqless.workflows): steps, sleeps, signals
        "signal": Rule("name", "A workflow signal's name.", spaces=True),
        "signal_id": Rule(
            "name", "A signal's id: a second delivery of one id is taken once.", longest=256
        ),
        "step": Rule("name", "A workflow step's name, its key in the workflow's record."),
        "change_id": Rule("name", "A workflow code change's name, for `ctx.version`."),
        "workflow.seconds": Rule(
            "number", "Seconds a workflow sleeps.", "seconds", minimum=0, maximum=10**9
        ),
        "workflow.until": Rule(
            "number", "The epoch time a workflow sleeps until.", "seconds", minimum=0
        ),
        "workflow.timeout": Rule(
            "number", "Seconds a workflow waits for a signal.", "seconds", 0, True, 10**9
        ),
        "workflow.kind": Rule(
            "choice",
            "Why a parked workflow waits: asleep, for a signal, for a step's retry, for its "
            "children.",
            choices=("sleep", "signal", "retry", "children"),
        ),
        "workflow.latest": Rule("whole", "A code change's newest version.", minimum=1),
        "workflow.result_bytes": Rule(
            "whole",
            "What a workflow keeps of a step's result, a gather's results or a race's "
            "winner's result: its size as JSON.",
            "bytes",
            0,
            maximum=STEP_RESULT_MAX,
        ),
        # recurring templates registered by name
        "name": Rule("name", "A recurring template's name, its id: registered again, it updates."),
        # schedules' policies (recurring templates: overlap, catch-up, pause, jitter, backfill)
        "overlap": Rule(
            "choice",
            "What a recurring job's due run does while its last run is still live.",
            choices=OVERLAPS,
        ),
        "catchup": Rule(
            "number",
            "Seconds a recurring job's missed run may be late and still run (0: any).",
            "seconds",
            minimum=0,
        ),
        "pause_after": Rule(
            "whole", "Failed runs in a row that pause a recurring job (0: never).", minimum=0
        ),
        "jitter": Rule(
            "number", "Seconds a recurring job's run may start after its time.", "seconds", 0
        ),
        "backfill.start": Rule(
            "number", "The epoch time a backfill's range starts at.", "seconds", minimum=0
        ),
        "backfill.end": Rule(
            "number", "The epoch time a backfill's range ends before.", "seconds", minimum=0
        ),
        # a producer's spool (reliable push, aqless.spool)
        "spool.capacity": Rule(
            "whole", "Puts a producer's spool holds at most while the server is away.", "puts", 1
        ),
        "spool.path": Rule(
            "text", "The file a spool keeps its puts in (append-only, fsynced); none: memory."
        ),
        "spool.dedup_ttl": Rule(
            "number",
            "Seconds a spooled put's dedup id is held, so a flush sent again makes no second job.",
            "seconds",
            0,
            True,
        ),
        "spool.batch": Rule("whole", "Spooled puts a flush sends in one round trip.", "puts", 1),
        # pops
        "pop.count": Rule("whole", "How many jobs a pop takes at most.", "jobs", minimum=1),
        # payload codecs (aqless.codecs)
        "codec.key_id": Rule(
            "name", "A key's id in a key ring, written in each envelope.", longest=64
        ),
        "codec.keys": Rule(
            "names",
            "A key ring as AQLESS_KEYS writes it: id:base64key pairs, the writing key first.",
            longest=200,
        ),
    }


#: The config options' rules, by option name (``<queue>-heartbeat`` for a queue's own).
CONFIG: Final[dict[str, Rule]] = _config_rules()

#: Every input's rule, by the name its doors give it.
RULES: Final[dict[str, Rule]] = _rules()


#: The rule of each input of a recurring job's template, by the name `Queue.recur`,
#: `RecurringJob.update`, ``aqless recurring update`` and the dashboard's recurring form give
#: it: every door checks a recurring input through `check_recurring` or `parse_recurring`.
RECURRING: Final = {
    "interval": "interval",
    "offset": "recurring.offset",
    "priority": "priority",
    "retries": "retries",
    "backlog": "backlog",
    "tags": "tags",
    "throttles": "throttles",
    "queue": "queue",
    "name": "name",
    "overlap": "overlap",
    "catchup": "catchup",
    "pause_after": "pause_after",
    "jitter": "jitter",
}


def check_recurring(command: str, inputs: Mapping[str, object]) -> dict[str, Any]:
    """The recurring job's `inputs` that `RECURRING` has a rule for (None: not given), each
    checked by it (InvalidValueError naming the first one outside it); the others (``cron``,
    ``tz``, ``data``...) are left out."""
    return {
        name: check_optional(RECURRING[name], value, command)
        for name, value in inputs.items()
        if name in RECURRING
    }


def parse_recurring(name: str, text: str, command: str) -> Any:
    """A recurring job's input `name` typed as `text` (the CLI, a form), parsed and checked
    by its rule in `RECURRING`."""
    return parse(RECURRING[name], text, command)


def shown(name: str) -> str:
    """What a refusal calls the input of rule `name`: the part after its last dot
    (``worker.interval`` is the worker's ``interval``)."""
    return name.rpartition(".")[2]


def check(name: str, value: object, command: str) -> Any:
    """`value` checked against `name`'s rule (see `Rule.check`)."""
    return RULES[name].check(value, shown(name), command)


def check_optional(name: str, value: object, command: str) -> Any:
    """`check`, letting None (not given) through."""
    return None if value is None else RULES[name].check(value, shown(name), command)


def parse(name: str, text: str, command: str) -> Any:
    """`text` parsed and checked against `name`'s rule (see `Rule.parse`)."""
    return RULES[name].parse(text, shown(name), command)


def checked_listing(offset: object, count: object, command: str) -> tuple[int, int]:
    """A listing's `offset` and `count`, each checked by its rule."""
    return check("offset", offset, command), check("count", count, command)


def table_markdown(names: Sequence[str] | None = None) -> str:
    """The rules as a Markdown table (name, what it must be, unit, meaning)."""
    lines = ["| input | must be | unit | meaning |", "|---|---|---|---|"]
    for name in names or sorted(RULES):
        rule = RULES[name]
        lines.append(f"| `{name}` | {rule.expected()} | {rule.unit} | {rule.meaning} |")
    return "\n".join(lines) + "\n"
