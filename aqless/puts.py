"""The put model, written once for every queue (plain, sharded, blocking): what a put asks
for (`PutRequest`, `PutOptions`, a class's default options, `at=`, `Dedup`, `Durability`)
and what it did (`PutResult`).

Deduplication: a put that names a dedup id makes a job only when no job holds that id. The
script keeps the id in ``ql:dedup:<id>`` (the jid that holds it) and in the job's ``dedup``
field. Three modes, as BullMQ has them:

- until the job ends (``Dedup("id")``): later puts are dropped while the job waits, is
  scheduled, depends, runs...; completing, failing or cancelling it frees the id;
- for a TTL (``Dedup("id", ttl=60)``): later puts are dropped for `ttl` seconds, whatever
  becomes of the job;
- debounce (``Dedup("id", ttl=2, debounce=True)``): a put within `ttl` seconds of the last
  one replaces the pending job's data and delay (the last data wins) and starts the TTL
  again; once the job has started, the put makes a new job, which then holds the id.

Durable puts: the put's script call is followed, in the same round trip and on the same
connection, by ``WAITAOF numlocal numreplicas timeout``, which waits until the connection's
writes so far are fsynced to the server's own append-only file (``local``) and to the
append-only files of `replicas` replicas. Redis 7.2+ and Valkey 8+ have WAITAOF.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeAlias, TypedDict, TypeVar, cast

from aqless import rules
from aqless._connection.data_text import encode_data, written_alike
from aqless._connection.protocol import Clock, encode_json
from aqless.codecs import PayloadCodec, Sealed
from aqless.errors import (
    ConfigurationError,
    InvalidArgumentError,
    NotDurableError,
    ScriptError,
)
from aqless.scripts.loader import Argument
from aqless.scripts.staging import PUT_START
from aqless.typed import put_payload

# What a caller names: the rest (prepare_put, class_name...) serves the queues' own code.
__all__ = [
    "Dedup",
    "DedupOption",
    "Durability",
    "Durable",
    "JobClass",
    "PutOptions",
    "PutRequest",
    "PutResult",
    "RunAt",
]

JobClass = type | Callable[..., Any] | str
"""What `put` and `Job.build` accept as the job's class: a class, a function, or its dotted
name. `put` stores `module.qualname` (`class_name`)."""


def class_name(klass: JobClass) -> str:
    """`module.qualname` of a class or function (a job's `klass`); a string is taken as it is."""
    if isinstance(klass, str):
        if not klass:
            raise InvalidArgumentError("queue.put", "a job class name must not be empty")
        return klass
    return f"{klass.__module__}.{klass.__qualname__}"


#: The script's command for a put with a dedup id.
DEDUP_COMMAND = "queue.putDeduplicated"
#: The script's command for a put that never replaces a job (``replace=False``).
NEW_COMMAND = "queue.putNew"

Outcome: TypeAlias = Literal["put", "deduplicated", "debounced", "existed"]
"""What a put did: made a job, was dropped (deduplicated), replaced a pending job's data
(debounced), or was dropped because a job of its jid existed (``replace=False``)."""


@dataclass(frozen=True, slots=True)
class Dedup:
    """A put's deduplication: its `id`, and `ttl` seconds for the TTL and debounce modes
    (none: until the job ends). Ids share one namespace per key prefix: put the queue's
    name in the id to keep queues apart.

    Attributes:
        id: the dedup id, non-empty.
        ttl: seconds the id is held (default None: until the job ends).
        debounce: within `ttl`, a later put replaces the waiting job's data and delay
            (default False: it is dropped).

    Raises:
        ConfigurationError: an empty `id`, a `ttl` that is not a positive number, or
            `debounce` without a `ttl`.

    Examples:
        ```python
        queue = client.queues["emails"]
        await queue.put(SendDigest, {"user": 42}, dedup=aqless.Dedup("digest:42", ttl=3600))
        await queue.put(Reindex, {"doc": 7}, dedup=aqless.Dedup("reindex:7", ttl=5, debounce=True))
        ```
    """

    id: str
    ttl: float | None = None
    debounce: bool = False

    def __post_init__(self) -> None:
        if not self.id:
            raise ConfigurationError("a dedup id must be a non-empty string")
        if self.ttl is not None and not (math.isfinite(self.ttl) and self.ttl > 0):
            raise ConfigurationError(f"a dedup ttl must be a positive number, not {self.ttl!r}")
        if self.debounce and self.ttl is None:
            raise ConfigurationError("a debounced put needs a ttl (the debounce window)")

    @property
    def mode(self) -> Literal["job", "ttl", "debounce"]:
        if self.debounce:
            return "debounce"
        return "job" if self.ttl is None else "ttl"

    def arguments(self) -> list[str | float]:
        """What goes before put's arguments in the script's call.

        Examples:
            ```python
            assert aqless.Dedup("digest:42", ttl=60).arguments() == ["digest:42", "ttl", 60]
            ```
        """
        return [self.id, self.mode, 0 if self.ttl is None else self.ttl]


DedupOption: TypeAlias = Dedup | str | None
"""`put`'s `dedup`: a Dedup, or an id alone (held until the job ends)."""


def dedup_of(option: DedupOption) -> Dedup | None:
    """The Dedup a `dedup=` option names."""
    return Dedup(option) if isinstance(option, str) else option


@dataclass(frozen=True, slots=True)
class PutResult:
    """What a put did: `jid` is the job that now holds the put (the existing one when the
    put was deduplicated); `deduplicated` when no new job was made (then `debounced` when
    the existing job took the put's data and delay): a job held its dedup id, or, for a
    put with ``replace=False``, a job of its jid existed (and was left as it was).

    Examples:
        ```python
        result = await queue.put_result(SendDigest, {"user": 42}, dedup="digest:42")
        if result.deduplicated:
            print("already queued as", result.jid)
        ```
    """

    jid: str
    deduplicated: bool = False
    debounced: bool = False

    @classmethod
    def from_reply(cls, command: str, reply: Any) -> PutResult:
        """The result of a put: a jid (plain put) or the script's ``[jid, outcome]``.

        Raises:
            ScriptError: a reply of another shape.

        Examples:
            ```python
            assert aqless.PutResult.from_reply("queue.put", ["j1", "deduplicated"]).deduplicated
            ```
        """
        if isinstance(reply, str):
            return cls(reply)
        if isinstance(reply, list) and len(reply) == 2 and all(isinstance(r, str) for r in reply):
            jid, outcome = reply
            if outcome in ("put", "deduplicated", "debounced", "existed"):
                return cls(jid, outcome != "put", outcome == "debounced")
        raise ScriptError(command, f"expected a jid, got {reply!r}")


RunAt: TypeAlias = datetime.datetime | float
"""When a job may run (`at=`): a timezone-aware datetime, or a Unix time in seconds."""


def checked_at(delay: float | None, at: RunAt | None) -> float | None:
    """`at` as a Unix time (None without one), refused with a `delay` beside it
    (ConfigurationError), as a naive datetime (ConfigurationError) or as no finite time
    (InvalidArgumentError)."""
    if at is None:
        return None
    if delay is not None:
        raise ConfigurationError("give delay= (seconds from now) or at= (a time), not both")
    if isinstance(at, datetime.datetime):
        if at.utcoffset() is None:
            raise ConfigurationError(
                f"at={at.isoformat()} is a naive datetime: its time zone is unknown, so its"
                " moment is too; give one (datetime.now(datetime.UTC), tzinfo=...)"
            )
        return at.timestamp()
    given: object = at  # whatever an untyped caller passed
    if isinstance(given, bool) or not isinstance(given, int | float) or not math.isfinite(given):
        raise InvalidArgumentError("at", f"a datetime or a finite Unix time, not {at!r}")
    return float(given)


def delay_until(delay: float | None, at: RunAt | None, clock: Callable[[], float]) -> float | None:
    """The delay of a put: `delay`, or the seconds from `clock`'s now to `at` (0 for a time
    already past: the job runs now)."""
    moment = checked_at(delay, at)
    return delay if moment is None else max(0.0, moment - clock())


@dataclass(frozen=True, slots=True)
class Durability:
    """What a durable put waits for.

    Attributes:
        local: the server's own append-only file fsynced (it needs ``appendonly yes``).
        replicas: how many replicas must have fsynced it to their append-only files.
        timeout: seconds to wait for them; fewer copies by then is a NotDurableError
            (keep it under a `socket_timeout` given to the client). Default 1.0.

    Raises:
        ConfigurationError: negative `replicas`, neither `local` nor `replicas`, or a
            `timeout` that is not positive.

    Examples:
        ```python
        jid = await queue.put(Charge, {"order": 7}, durable=aqless.Durability(replicas=1))
        ```
    """

    local: bool = True
    replicas: int = 0
    timeout: float = 1.0

    def __post_init__(self) -> None:
        if self.replicas < 0:
            raise ConfigurationError(f"durable replicas must be 0 or more, got {self.replicas}")
        if not self.local and not self.replicas:
            raise ConfigurationError("a Durability asks for the local AOF, replicas, or both")
        if not self.timeout > 0:  # WAITAOF's 0 would wait for ever
            raise ConfigurationError(f"durable timeout must be positive, got {self.timeout}")

    def command(self) -> tuple[str | int, ...]:
        """The WAITAOF that confirms the connection's writes so far.

        Examples:
            ```python
            assert aqless.Durability(replicas=1).command() == ("WAITAOF", 1, 1, 1000)
            ```
        """
        milliseconds = max(1, round(self.timeout * 1000))
        return ("WAITAOF", int(self.local), self.replicas, milliseconds)

    def confirm(self, reply: Any, jids: list[str]) -> None:
        """Raise NotDurableError unless WAITAOF's `reply` counts the copies asked for.

        Raises:
            NotDurableError: fewer copies, or the server refused WAITAOF.

        Examples:
            ```python
            aqless.Durability().confirm([1, 0], ["j1"])  # one local fsync: confirmed
            ```
        """
        if isinstance(reply, BaseException):  # e.g. the AOF is off, or an ACL refusal
            raise NotDurableError(jids, str(reply)) from reply
        local, replicas = reply
        if local < int(self.local) or replicas < self.replicas:
            raise NotDurableError(
                jids,
                f"{local} local and {replicas} replica fsyncs within {self.timeout} s, "
                f"asked for {int(self.local)} and {self.replicas}",
            )


Durable: TypeAlias = bool | Durability | None
"""`put`'s `durable`: ``durable=True`` is ``Durability()``, fsynced to the server's own
append-only file."""


def durability(durable: Durable) -> Durability | None:
    """The Durability a `durable` argument asks for; None for none."""
    if isinstance(durable, Durability):
        return durable
    return Durability() if durable else None


def default_options(klass: JobClass, data: Any) -> Mapping[str, Any]:
    """The options a job class asks for (its `default_job_options(data)`), if any."""
    method = getattr(klass, "default_job_options", None)
    if method is None or isinstance(klass, str):
        return {}
    options = method(data)
    if not isinstance(options, Mapping):
        raise TypeError(f"{class_name(klass)}.default_job_options must return a mapping")
    return options


def never_replaces(options: PutOptions, requeue: bool) -> bool:
    """Whether a put never replaces an existing job (``replace=False``). Refused
    (ConfigurationError) with a requeue, which replaces an existing job only, and with a
    dedup id, which decides by the id instead; (InvalidArgumentError) unless a bool."""
    replace = options.get("replace")
    if replace is None:
        return False
    if not isinstance(replace, bool):
        raise InvalidArgumentError("queue.put", f"replace must be True or False, not {replace!r}")
    if not replace and requeue:
        raise ConfigurationError("a requeue moves an existing job: it takes no replace=False")
    if not replace and options.get("dedup") is not None:
        raise ConfigurationError("give dedup= or replace=False, not both")
    return not replace


def refuse_dedup_on_requeue(requeue: bool, dedup: object) -> None:
    """A requeue moves an existing job: a dedup id with it is a ConfigurationError."""
    if requeue and dedup is not None:
        raise ConfigurationError("a requeue moves an existing job: it takes no dedup")


#: The put options each kept to its rule (aqless.rules), in the order they are checked.
RULED_OPTIONS = ("jid", "priority", "delay", "retries", "tags", "depends", "throttles",
                 "rate_limits", "group")  # fmt: skip


_RULED = frozenset(RULED_OPTIONS)


def checked_options(options: Mapping[str, Any], command: str = "queue.put") -> dict[str, Any]:
    """`options` with each ruled one given (not None) checked against its rule
    (aqless.rules: InvalidValueError naming it, before anything is sent) and made the rule's
    type (tags given as a tuple come back a list, retries of 3.0 come back 3)."""
    checked = dict(options)
    for name, value in options.items():  # (a put gives few of its options)
        if value is not None and name in _RULED:
            checked[name] = rules.check(name, value, command)
    return checked


def checked_group(group: object, command: str = "queue.put") -> str:
    """A fairness group's name, kept to the rule `group` (InvalidValueError)."""
    return cast(str, rules.check("group", group, command))


#: Queue names found good, so that a put checks its queue's name once (bounded).
_GOOD_QUEUES: set[str] = set()


def checked_queue(name: object, command: str = "queue.put") -> str:
    """The name of a queue a verb puts a job into, kept to the rule `queue`
    (InvalidValueError naming it, before anything is sent)."""
    if type(name) is str and name in _GOOD_QUEUES:
        return name
    good: str = rules.check("queue", name, command)
    if len(_GOOD_QUEUES) < 4096:
        _GOOD_QUEUES.add(good)
    return good


# uuid.uuid4().hex without making a UUID: random bits with the version and variant set
_UUID4_KEEP = ~((0xF000 << 64) | (0xC000 << 48)) & ((1 << 128) - 1)
_UUID4_SET = (4 << 76) | (0x8000 << 48)


def stored_data(data: Any, queue: str, jid: str, codec: PayloadCodec | None) -> str | bytes:
    """Job data (of job or template `jid` in `queue`) as stored: its JSON text, through
    `codec`'s chain for `queue` when given (aqless.codecs); PayloadError for data that is
    not JSON. Every write of a job's data in a put's shape goes through it."""
    if codec is None:
        return encode_data(data, "job data")
    return codec.for_queue(queue).encode_to_send(encode_data(data, "job data"), jid)


def new_jid() -> str:
    """A new random jid: the hex of a version 4 UUID, as ``uuid.uuid4().hex``."""
    return "%032x" % (int.from_bytes(os.urandom(16), "big") & _UUID4_KEEP | _UUID4_SET)


#: Sends put requests; returns their jids.
PutSender: TypeAlias = Callable[[list["PutRequest"]], Awaitable[list[str]]]


class PutOptions(TypedDict, total=False):
    """A put's options, by name: ``queue.put(klass, data, **options)``, and the fields of a
    `PutRequest` beside its class and data. Each is optional; a class's
    ``default_job_options(data)`` supplies those not given.

    - jid: the job's id (a new random one by default). Putting an existing jid replaces
      that job, whatever its state (unless `replace` is False): explicit jids make jobs
      unique.
    - replace: False: a job of the jid that exists already is left as it is (waiting,
      running, complete or failed) and nothing is put; the put returns its jid, and
      `put_result` says `deduplicated`. This is the put to retry after a put whose reply
      was lost (a timeout, a dropped connection, a NotDurableError): if the first landed,
      the retry cannot run its job a second time. Default (None, True): replace it.
      ConfigurationError with `dedup` or a requeue.
    - priority: higher runs earlier (default 0, or the existing job's).
    - delay: seconds before the job may run (default 0, or the class's default).
    - at: the time it may run from instead: a timezone-aware datetime or a Unix time, made a
      delay on the client's clock (a time past runs now). ConfigurationError with `delay`
      too, or for a naive datetime.
    - tags: tags to find the job by.
    - retries: how many lost locks or retries it may spend (default 5).
    - depends: jids that must complete before this job runs.
    - throttles: throttles it must hold to run (besides its queue's own).
    - dedup: a dedup id, or an `aqless.Dedup` (id, ttl, debounce): while a job holds the id,
      the put makes no new job and returns that job's jid (`put_result` says whether it
      did).
    - rate_limits: named rate limits its start counts on (``client.rate_limits``); while
      one is full, the job waits scheduled until it has a free start.
    - group: the fairness group it belongs to in its queue (a tenant, a customer: a
      name): aqless's pops take the queue's groups in turn, so one group's
      backlog does not hold the others' jobs back (see ``Queue.groups``). A job put
      again keeps its group unless given one.

    Each keeps its rule (``aqless.rules``, docs/reference/inputs.md): a value outside it
    (``tags="vip"``, a lone string, rather than ``["vip"]``; a negative delay...) is an
    InvalidValueError naming it, before anything is sent.

    Examples:
        ```python
        options: aqless.PutOptions = {"priority": 5, "tags": ["vip"], "retries": 3}
        jid = await client.queues["emails"].put(SendEmail, {"to": to}, **options)
        ```
    """

    jid: str | None
    priority: float | None
    delay: float | None
    tags: Sequence[str] | None
    retries: int | None
    depends: Sequence[str] | None
    throttles: Sequence[str] | None
    dedup: DedupOption
    rate_limits: Sequence[str] | None
    at: RunAt | None
    group: str | None
    replace: bool | None


#: The names a put's options go by (`PutOptions`); any other is refused.
PUT_OPTIONS: frozenset[str] = frozenset(PutOptions.__annotations__)


@dataclass(frozen=True, slots=True)
class PutRequest:
    """One put, for `Queue.put_many` and the put hooks: a job's class, its data and the
    options of `PutOptions` (the same names, the same meaning).

    Raises:
        InvalidValueError: an option outside its rule, when the request is made.
        ConfigurationError: both `delay` and `at`, or a naive datetime for `at`.

    Examples:
        ```python
        jids = await client.queues["emails"].put_many(
            [aqless.PutRequest(SendEmail, {"to": to}, priority=5) for to in addresses]
        )
        ```
    """

    klass: JobClass
    data: Any = None
    jid: str | None = None
    priority: float | None = None
    delay: float | None = None
    tags: Sequence[str] | None = None
    retries: int | None = None
    depends: Sequence[str] | None = None
    throttles: Sequence[str] | None = None
    dedup: DedupOption = None
    rate_limits: Sequence[str] | None = None
    at: RunAt | None = None
    group: str | None = None
    replace: bool | None = None

    def __post_init__(self) -> None:
        # refused here, before anything is sent (a sharded put before it is placed)
        checked_at(self.delay, self.at)
        checked_options({name: getattr(self, name) for name in RULED_OPTIONS})

    def options(self) -> PutOptions:
        """The options given (those not None), as ``queue.put(..., **options)`` takes them.

        Examples:
            ```python
            request = aqless.PutRequest(SendEmail, {}, priority=5)
            assert request.options() == {"priority": 5}
            ```
        """
        given = {name: getattr(self, name) for name in PUT_OPTIONS}
        return cast(PutOptions, {name: value for name, value in given.items() if value is not None})


#: A prepared put's `unencoded` when its data is among its arguments, encoded.
ENCODED: Any = object()


class PreparedPut(NamedTuple):
    """A put as the script takes it."""

    command: str  # queue.put, job.requeue, or queue.putDeduplicated
    jid: str
    arguments: list[Argument]  # after the command: the dedup id's first, when given
    order: float | None  # the priority it waits at among the client's puts; None when delayed
    #: the data `prepare_put` left for `encode_later` (its argument empty till then)
    unencoded: Any = ENCODED


def encode_later(put: PreparedPut, codec: PayloadCodec | None) -> None:
    """The data `prepare_put(..., later=True)` left unencoded, encoded (through `codec`)
    into its argument, in place; nothing for a put whose data is encoded."""
    if put.unencoded is not ENCODED:
        start = PUT_START[put.command]  # then worker, queue, jid, klass, data...
        queue = str(put.arguments[start + 1])
        put.arguments[start + 4] = stored_data(put.unencoded, queue, put.jid, codec)


#: The most bytes of arguments one round trip of `put_many` carries (whatever its `batch`):
#: a thousand 100 KB payloads in one pipeline cost more in buffers, on both sides, than in
#: round trips.
ROUND_TRIP_BYTES = 4 * 1024 * 1024


def put_bytes(put: PreparedPut) -> int:
    """The length of a prepared put's text arguments (its data's, most often)."""
    return sum(len(arg) for arg in put.arguments if isinstance(arg, str | bytes))


def trip_end(
    prepared: Sequence[PreparedPut],
    start: int,
    stop: int,
    most: int,
    most_bytes: int = ROUND_TRIP_BYTES,
) -> int:
    """Where the round trip of `prepared` that begins at `start` ends, among the puts before
    `stop`: it carries at most `most` puts and, past its first, at most `most_bytes` bytes
    of arguments."""
    size = 0
    for index in range(start, stop):
        weight = put_bytes(prepared[index])
        if index > start and (index - start >= most or size + weight > most_bytes):
            return index
        size += weight
    return stop


#: The options sent as JSON lists, in the order the script reads them.
_LISTED = ("tags", "depends", "throttles", "rate_limits")
#: The options sent beside put's six arguments.
_ENCODED = ("priority", "retries", "group", *_LISTED)


def option_fields(arguments: Sequence[Argument]) -> dict[str, Any]:
    """A prepared put's options (its arguments after the first six, name then value) by
    name, the lists decoded: what a flow's document says of each of its jobs."""
    fields: dict[str, Any] = {}
    for name, value in zip(arguments[::2], arguments[1::2], strict=True):
        text = name.decode() if isinstance(name, bytes) else str(name)
        fields[text] = (
            json.loads(value) if text in _LISTED and isinstance(value, str | bytes) else value
        )
    return fields


def prepare_put(
    klass: JobClass,
    data: Any,
    options: PutOptions,
    *,
    worker: str,
    queue: str,
    clock: Clock,
    requeue: bool = False,
    make_jid: Callable[[], str] = new_jid,
    codec: PayloadCodec | None = None,
    later: bool = False,
) -> PreparedPut:
    """The script's command and arguments for a put into `queue` by `worker`: the options
    given, else the class's defaults; the data checked against a typed handler's type and
    encoded (through `codec` when given: aqless.codecs; a claim-check store that fails
    raises here, before anything is sent; data read as `Sealed` raises its CodecError);
    `at` made a delay on `clock`; a jid by `make_jid` when neither the options nor the
    class's defaults give one. With `later`, data that cannot fail to encode (msgspec
    writes it: `written_alike`) is left for `encode_later`, its argument empty. Refused
    (TypeError) for an option of another name, (ConfigurationError) for a requeue with a
    dedup id."""
    if options and not options.keys() <= PUT_OPTIONS:
        unknown = ", ".join(sorted(options.keys() - PUT_OPTIONS))
        raise TypeError(f"put() got unexpected keyword arguments: {unknown}")
    command = "job.requeue" if requeue else "queue.put"
    checked_queue(queue, command)
    if options:  # the common put gives none
        options = cast(PutOptions, checked_options(options, command))
    delay = options.get("delay")
    at = options.get("at")
    if at is not None:
        delay = delay_until(delay, at, clock)
    jid = options.get("jid")
    priority = options.get("priority")
    # the common case, a class name, has no default options to ask for
    chosen: dict[str, Any] = {} if isinstance(klass, str) else dict(default_options(klass, data))
    wait: float = 0 if delay is None else delay
    if chosen:
        chosen = checked_options(chosen, command)  # a class's defaults keep the rules too
        # an explicit delay, even 0, wins over the class's default
        default_delay = chosen.pop("delay", 0)
        default_jid = chosen.pop("jid", None)
        if delay is None:
            wait = default_delay
        jid = jid or default_jid
    if options:
        for option in _ENCODED:
            value = options.get(option)
            if value is not None:
                chosen[option] = value
    jid = jid or make_jid()
    if isinstance(data, Sealed):  # data this client could not open: never put as its text
        raise data.error
    value = put_payload(klass, queue, data)
    unencoded = value if later and written_alike(value) else ENCODED
    stored = "" if unencoded is not ENCODED else stored_data(value, queue, jid, codec)
    arguments: list[Argument] = [worker, queue, jid, class_name(klass), stored, wait]
    if chosen:
        for option in ("priority", "retries"):
            if option in chosen:
                arguments += [option, chosen[option]]
        if "group" in chosen:
            arguments += ["group", chosen["group"]]
        for option in _LISTED:
            if option in chosen:
                arguments += [option, encode_json(list(chosen[option]), option)]
    dedup = dedup_of(options.get("dedup"))
    if dedup is not None:
        refuse_dedup_on_requeue(requeue, dedup)
        command, arguments = DEDUP_COMMAND, [*dedup.arguments(), *arguments]
    if never_replaces(options, requeue):
        command = NEW_COMMAND
    order = None if delay else (priority or 0.0)
    return PreparedPut(command, jid, arguments, order, unencoded)


Target = TypeVar("Target")


def inside_hooks(
    hooks: Sequence[Callable[[Target, list[PutRequest], PutSender], Awaitable[list[str]]]],
    queue: Target,
    send: PutSender,
) -> PutSender:
    """`send` wrapped in `hooks` (the first outermost), each given `queue`."""
    for hook in reversed(hooks):
        send = _bound_hook(hook, queue, send)
    return send


def _bound_hook(
    hook: Callable[[Target, list[PutRequest], PutSender], Awaitable[list[str]]],
    queue: Target,
    send: PutSender,
) -> PutSender:
    async def call(requests: list[PutRequest]) -> list[str]:
        return await hook(queue, requests, send)

    return call
