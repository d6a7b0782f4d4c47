"""Find anything: one bounded search over every queue and every state (failed and completed
included), by jid, class, tag, failure group, worker, queue, a field of the data and a field
of the result. The CLI's ``aqless search`` and the dashboard's search page both run it.

The server is never asked to look inside a job, nor to walk its keyspace: a search reads the
indexes the protocol keeps (`ql:queues` and each queue's sets, `ql:failures` and its groups'
lists, `ql:completed`, a tag's set, a worker's jobs) to list candidate jids, at most `limit`
of them in all, then reads those jobs' fields with HMGET, pipelined `BATCH` at a time, and
compares on the client. The most specific index given is the only one read (a jid, else a
tag, else a failure group, else a worker's jobs when only running or stalled jobs are asked
for); otherwise every queue's chosen states are read, the limit shared between them so that a
big one leaves the others their part. Its cost, stated in every answer: one round trip for
the indexes' sizes, one for their listings, one per `BATCH` jobs examined, and the bytes of
data and results sent back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from aqless import rules
from aqless.client import Client
from aqless.codecs import Sealed, decoded_text
from aqless.errors import PayloadError
from aqless.ops import known
from aqless.sharding.client import AnyClient

#: The command a refused search input is named under, at the CLI and the dashboard alike.
COMMAND: Final = "search"
#: Every state a search looks in, as the ``search.state`` rule lists them.
STATES: Final[tuple[str, ...]] = tuple(rules.RULES["search.state"].choices)
LIMIT_DEFAULT: Final = 1000  # jobs examined unless told otherwise
LIMIT_MAX: Final[int] = int(rules.RULES["search_limit"].maximum or 0)
SHOWN_DEFAULT: Final = 50  # found jobs listed unless told otherwise
BATCH: Final = 200  # job reads a round trip
#: The job fields a search reads; ``data`` and ``result`` only when a condition needs them.
FIELDS: Final = ("jid", "klass", "state", "queue", "worker", "tags", "failure", "expires")
#: The listing of a queue's state: its set's suffix, and whether the newest come first.
QUEUE_SETS: Final = {
    "waiting": ("work", True),
    "running": ("locks", False),
    "stalled": ("locks", False),
    "scheduled": ("scheduled", False),
    "depends": ("depends", False),
    "throttled": ("throttled", False),
}


@dataclass(frozen=True, slots=True)
class Condition:
    """`path = value`: the field at `path` (keys, or list indexes) holds `value`, the JSON
    the right side parses as, else its text; an empty path is the whole value."""

    path: tuple[str, ...]
    value: Any
    text: str

    @classmethod
    def parse(cls, name: str, text: str, command: str = COMMAND) -> Condition:
        """`text` checked by rule `name` (``search.where``, ``search.result``)."""
        checked: str = rules.parse(name, text, command)
        left, _, right = checked.partition("=")
        path = tuple(key.strip() for key in left.strip().split(".")) if left.strip() else ()
        value_text = right.strip()
        try:
            value = json.loads(value_text)
        except ValueError:
            value = value_text
        return cls(path, value, value_text)

    def holds(self, data: Any) -> bool:
        found, value = at_path(data, self.path)
        if not found:
            return False
        if same_json(value, self.value):
            return True
        return isinstance(value, str) and value == self.text  # `name = 42` finds "42" too

    def __str__(self) -> str:
        return f"{'.'.join(self.path)} = {self.text}".strip()


def at_path(data: Any, path: Sequence[str]) -> tuple[bool, Any]:
    """Whether `data` has a value at `path`, and the value."""
    for key in path:
        if isinstance(data, dict) and key in data:
            data = data[key]
        elif isinstance(data, list) and key.isdigit() and int(key) < len(data):
            data = data[int(key)]
        else:
            return False, None
    return True, data


def same_json(found: Any, wanted: Any) -> bool:
    """JSON equality: `true` is not `1`, but `1` is `1.0`."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return found is wanted
    if isinstance(found, int | float) and isinstance(wanted, int | float):
        return bool(found == wanted)
    return type(found) is type(wanted) and bool(found == wanted)


#: A filter's input name (CLI option, form field) and the rule that checks it.
NAMED_RULES: Final = {
    "jid": "jid",
    "class": "search.class",
    "tag": "tag",
    "group": "failure_group",
    "worker": "worker",
    "queue": "queue",
}
#: Every input of a search, as the CLI's options and the search form name them.
INPUTS: Final = (*NAMED_RULES, "state", "where", "result")


def limits(limit: str | None, shown: str | None = None) -> tuple[int, int]:
    """The ``limit`` (jobs examined) and ``shown`` (jobs listed) typed, each checked by its
    rule (InvalidValueError naming it); an empty text is the default."""
    limit_text = (limit or "").strip() or str(LIMIT_DEFAULT)
    shown_text = (shown or "").strip() or str(SHOWN_DEFAULT)
    examined: int = rules.RULES["search_limit"].parse(limit_text, "limit", COMMAND)
    listed: int = rules.parse("search.shown", shown_text, COMMAND)
    return examined, listed


@dataclass(frozen=True, slots=True)
class Filters:
    """What a found job must be: each filter given must hold (None: any)."""

    jid: str | None = None
    klass: str | None = None
    tag: str | None = None
    group: str | None = None
    worker: str | None = None
    queue: str | None = None
    states: tuple[str, ...] = ()  # none: every state
    where: Condition | None = None
    result: Condition | None = None

    @classmethod
    def parse(cls, given: Mapping[str, Sequence[str]], command: str = COMMAND) -> Filters:
        """The filters typed at the CLI or in the search form (each input's texts, by the
        names of `NAMED_RULES`, ``state``, ``where`` and ``result``), each checked by its
        rule: InvalidValueError naming the first one outside it. Empty texts are not given."""

        def one(name: str) -> str | None:
            texts = [text.strip() for text in given.get(name, ()) if text.strip()]
            return texts[0] if texts else None

        named: dict[str, str | None] = {}
        for name, rule in NAMED_RULES.items():
            text = one(name)
            named[name] = None if text is None else rules.parse(rule, text, command)
        states = [
            rules.parse("search.state", part.strip(), command)
            for text in given.get("state", ())
            for part in text.split(",")
            if part.strip()
        ]
        where, result = one("where"), one("result")
        return cls(
            jid=named["jid"],
            klass=named["class"],
            tag=named["tag"],
            group=named["group"],
            worker=named["worker"],
            queue=named["queue"],
            states=tuple(state for state in STATES if state in states),
            where=None if where is None else Condition.parse("search.where", where, command),
            result=None if result is None else Condition.parse("search.result", result, command),
        )

    @property
    def any(self) -> bool:
        """Whether any filter is given (a search with none finds every job)."""
        return any(
            (self.jid, self.klass, self.tag, self.group, self.worker, self.queue, self.states)
        ) or bool(self.where or self.result)

    def document(self) -> dict[str, Any]:
        return {
            "jid": self.jid,
            "class": self.klass,
            "tag": self.tag,
            "group": self.group,
            "worker": self.worker,
            "queue": self.queue,
            "states": list(self.states),
            "where": None if self.where is None else str(self.where),
            "result": None if self.result is None else str(self.result),
        }

    def wants_state(self, state: str) -> bool:
        return not self.states or state in self.states


@dataclass
class Found:
    """What a search found (`jids`, every match among the jobs examined) and what it cost."""

    filters: Filters
    limit: int
    jids: list[str] = field(default_factory=list)
    examined: int = 0
    listed: int = 0  # jobs the indexes read hold in all
    round_trips: int = 0
    data_bytes: int = 0
    undecodable: int = 0
    seconds: float = 0.0
    unread_shards: int = 0  # shards the limit left unread

    @property
    def complete(self) -> bool:
        """Whether every job the search could find was examined."""
        return self.examined >= self.listed and not self.unread_shards

    def cost(self) -> dict[str, Any]:
        return {
            "jobs_read": self.examined,
            "round_trips": self.round_trips,
            "data_bytes": self.data_bytes,
            "milliseconds": round(self.seconds * 1000, 1),
        }

    def document(self, shown: int) -> dict[str, Any]:
        return {
            "filters": self.filters.document(),
            "limit": self.limit,
            "matched": len(self.jids),
            "jids": self.jids[:shown],
            "examined": self.examined,
            "listed": self.listed,
            "complete": self.complete,
            "undecodable": self.undecodable,
            "cost": self.cost(),
        }


@dataclass(frozen=True, slots=True)
class Index:
    """A key listing jids: a sorted set (newest first when `reverse`) or a list."""

    key: str
    kind: str  # "zset" or "list"
    reverse: bool = False

    def size(self) -> tuple[str, str]:
        return ("ZCARD" if self.kind == "zset" else "LLEN", self.key)

    def first(self, count: int) -> tuple[str | int, ...]:
        if self.kind == "list":
            return ("LRANGE", self.key, 0, count - 1)
        return ("ZREVRANGE" if self.reverse else "ZRANGE", self.key, 0, count - 1)


async def indexes(shard: Client, filters: Filters) -> tuple[list[Index], int]:
    """The keys whose jids may match `filters`: the most specific index given, else every
    chosen state of every queue (or of the one queue given); and the round trips it took
    to learn them (the queues' names, the failure groups')."""
    prefix = shard.prefix
    if filters.tag is not None:
        return [Index(f"{prefix}t:{filters.tag}", "zset", reverse=True)], 0
    if filters.group is not None:
        return [Index(f"{prefix}f:{filters.group}", "list")], 0
    held = {"running", "stalled"}
    if filters.worker is not None and filters.states and held.issuperset(filters.states):
        return [Index(f"{prefix}w:{filters.worker}:jobs", "zset")], 0
    trips = 0
    if filters.queue is not None:
        queues = [filters.queue]
    else:
        trips += 1
        listed = await shard.protocol.plain("search", "ZRANGE", f"{prefix}queues", 0, -1)
        queues = [str(queue) for queue in listed]
    found: list[Index] = []
    for queue in queues:
        suffixes = {QUEUE_SETS[state]: None for state in QUEUE_SETS if filters.wants_state(state)}
        found += [Index(f"{prefix}q:{queue}-{s}", "zset", reverse=r) for s, r in suffixes]
    if filters.wants_state("failed"):
        trips += 1
        groups = await shard.protocol.plain("search", "SMEMBERS", f"{prefix}failures")
        found += [Index(f"{prefix}f:{group}", "list") for group in sorted(map(str, groups))]
    if filters.wants_state("complete") and filters.queue is None:  # a completed job has none
        found.append(Index(f"{prefix}completed", "zset", reverse=True))
    return found, trips


def shares(sizes: Sequence[int], budget: int) -> list[int]:
    """`budget` shared between indexes of `sizes`: each its equal part, the part a small one
    leaves going to the others (`sum` of the shares is at most `budget`)."""
    given = [0] * len(sizes)
    left = budget
    open_ = [i for i, size in enumerate(sizes) if size > 0]
    while left > 0 and open_:
        part = max(1, left // len(open_))
        for i in list(open_):
            take = min(part, sizes[i] - given[i], left)
            given[i] += take
            left -= take
            if given[i] >= sizes[i]:
                open_.remove(i)
            if left == 0:
                break
    return given


def job_state(fields: Mapping[str, str], now: float) -> str:
    state = fields.get("state") or ""
    if state == "running" and _number(fields.get("expires")) < now:
        return "stalled"  # its lock expired and no worker took it back yet
    return state


def _number(text: str | None) -> float:
    try:
        return float(text or 0)
    except ValueError:
        return 0.0


def _tags(text: str | None) -> list[str]:
    try:
        tags = json.loads(text or "[]")
    except ValueError:
        return []
    return [str(tag) for tag in tags] if isinstance(tags, list) else []


def _failure_group(text: str | None) -> str | None:
    try:
        failure = json.loads(text or "{}")
    except ValueError:
        return None
    return str(failure.get("group")) if isinstance(failure, dict) and failure.get("group") else None


def matches_fields(filters: Filters, fields: Mapping[str, str], now: float) -> bool:
    """Whether a job's fields (all but its data and result) meet `filters`."""
    if filters.jid is not None and fields.get("jid") != filters.jid:
        return False
    if filters.klass is not None and fields.get("klass") != filters.klass:
        return False
    if filters.queue is not None and fields.get("queue") != filters.queue:
        return False
    if filters.worker is not None and fields.get("worker") != filters.worker:
        return False
    if filters.tag is not None and filters.tag not in _tags(fields.get("tags")):
        return False
    if filters.group is not None and _failure_group(fields.get("failure")) != filters.group:
        return False
    return filters.wants_state(job_state(fields, now))


class _Undecodable(Exception):
    pass


def _decoded(shard: Client, text: str) -> Any:
    try:
        value = decoded_text(shard.codec, text)
    except PayloadError:
        raise _Undecodable from None
    if isinstance(value, Sealed):
        raise _Undecodable
    return value


async def _examine(shard: Client, jids: Sequence[str], found: Found) -> None:
    """Read the jobs `jids` (a round trip per `BATCH`) and keep those meeting the filters."""
    filters = found.filters
    names = [*FIELDS]
    if filters.where is not None:
        names.append("data")
    if filters.result is not None:
        names.append("result")
    for start in range(0, len(jids), BATCH):
        batch = jids[start : start + BATCH]
        replies = await shard.protocol.plain_many(
            "search", [("HMGET", f"{shard.prefix}j:{jid}", *names) for jid in batch]
        )
        found.round_trips += 1
        now = time.time()
        for reply in replies:
            fields = {
                name: None if v is None else str(v) for name, v in zip(names, reply, strict=True)
            }
            if fields.get("jid") is None:  # gone since the listing
                continue
            found.examined += 1
            if _meets(shard, filters, fields, now, found):
                found.jids.append(str(fields["jid"]))


def _meets(
    shard: Client, filters: Filters, fields: Mapping[str, str | None], now: float, found: Found
) -> bool:
    present = {name: value for name, value in fields.items() if value is not None}
    if not matches_fields(filters, present, now):
        return False
    for condition, name in ((filters.where, "data"), (filters.result, "result")):
        if condition is None:
            continue
        text = present.get(name)
        if text is None:
            return False
        found.data_bytes += len(text.encode())
        try:
            value = _decoded(shard, text)
        except _Undecodable:
            found.undecodable += 1
            return False
        if not condition.holds(value):
            return False
    return True


async def _search_shard(shard: Client, found: Found) -> None:
    budget = found.limit - found.examined
    if budget <= 0:
        found.unread_shards += 1
        return
    if found.filters.jid is not None:
        found.listed += 1
        await _examine(shard, [found.filters.jid], found)
        return
    keys, trips = await indexes(shard, found.filters)
    found.round_trips += trips
    if not keys:
        return
    sizes = [int(n) for n in await shard.protocol.plain_many("search", [k.size() for k in keys])]
    found.round_trips += 1
    found.listed += sum(sizes)
    taken = shares(sizes, budget)
    calls = [key.first(n) for key, n in zip(keys, taken, strict=True) if n > 0]
    listings = await shard.protocol.plain_many("search", calls)
    found.round_trips += 1
    jids = list(dict.fromkeys(str(jid) for listing in listings for jid in listing))
    await _examine(shard, jids, found)


async def require_known(client: AnyClient, filters: Filters) -> None:
    """UnknownNameError, naming the closest, for a queue or failure group never seen."""
    if filters.queue is not None:
        await known.require(client, "queue", filters.queue)
    if filters.group is not None:
        await known.require(client, "failure group", filters.group)


async def find(client: AnyClient, filters: Filters, *, limit: int = LIMIT_DEFAULT) -> Found:
    """Every job meeting `filters` among at most `limit` jobs examined (each shard's in
    turn), with what the search cost. InvalidValueError for a `limit` outside its rule.

    Examples:
        ```python
        filters = Filters.parse({"class": ["app.Send"], "state": ["failed"]})
        found = await find(client, filters, limit=5000)
        print(len(found.jids), found.cost())
        ```
    """
    limit = rules.check("search_limit", limit, COMMAND)
    started = time.perf_counter()
    found = Found(filters, limit)
    for shard in client.servers:
        await _search_shard(shard, found)
    found.jids = list(dict.fromkeys(found.jids))
    found.seconds = time.perf_counter() - started
    return found
