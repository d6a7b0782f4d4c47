"""The doors a job's inputs come in by, each given the same bad value: the async client, the
sharded one, both blocking ones, the CLI (click's CliRunner), the dashboard's forms (its
ASGI app over httpx), `flows.put` and `batches.put`. A door that cannot say a value (the CLI
has no lone-string list, the dashboard no put form) answers None; otherwise it answers how
it refused (`Refusal`), for the test to hold each to the same rule."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, cast

import httpx
import redis
import redis.asyncio as aioredis
from click.testing import CliRunner

import aqless
import aqless.sync
from aqless import rules
from aqless.cli import cli
from aqless.cli.params import names
from aqless.errors import InvalidValueError
from aqless.flows import FlowNode
from aqless.web import create_app
from tests.scripts.expect import snapshot

WORK = "app.Work"
#: Queue names the rule `queue` refuses: empty, whitespace inside, too long.
BAD_QUEUES = ["", "a b", "a\tb", "a\nb", "x" * 10_000]
#: The inputs of a put each door is given.
PUT_INPUTS = ("queue", "tags", "depends", "delay", "priority", "retries")


async def keys_of(connection: object) -> dict[str, tuple[str, object, int]]:
    """Every key of the server (a client's `redis`), with its content
    (tests.scripts.expect.snapshot)."""
    return await snapshot(cast(aioredis.Redis, connection))


def dumped(connections: list[redis.Redis]) -> dict[tuple[int, object], object]:
    """Every key of the servers (one connection each), with its DUMP: what a door must not
    change."""
    found: dict[tuple[int, object], object] = {}
    for index, connection in enumerate(connections):
        for key in connection.keys("*"):
            found[index, key] = connection.dump(key)
    return found


async def running(client: aqless.Client, queue: str = "q") -> aqless.Job:
    """A job put into `queue` and popped: running, held by the client's worker."""
    await client.queues[queue].put(WORK, {})
    job = await client.queues[queue].pop()
    assert job is not None
    return job


@dataclass(frozen=True)
class Refusal:
    """How a door refused: `named` the input in its answer, `typed` as the rule's error (an
    InvalidValueError, the CLI's usage exit code 2, the dashboard's 400)."""

    typed: bool
    named: bool
    text: str

    @property
    def as_the_rule_says(self) -> bool:
        return self.typed and self.named


def refusal_of(option: str, call: Callable[[], object]) -> Refusal:
    """How `call` (a door of the Python API) refused a bad `option`."""
    try:
        call()
    except InvalidValueError as error:
        return Refusal(True, error.option == option and option in str(error), str(error))
    except Exception as error:  # the wrong refusal: the test shows it
        return Refusal(False, False, f"{type(error).__name__}: {error}")
    return Refusal(False, False, "accepted")


def bad(option: str, value: object) -> bool:
    """Whether `value` breaks `option`'s rule."""
    try:
        rules.check(option, value, "test")
    except InvalidValueError:
        return True
    return False


# -- the doors of a put ------------------------------------------------------------------------


def put_options(option: str, value: object) -> tuple[str, dict[str, Any]]:
    """The queue and options of a put giving `value` as `option`."""
    return (value, {}) if option == "queue" else ("q", {option: value})  # type: ignore[return-value]


class PutDoors:
    """Each door's put of a job with one bad input: ``doors.put(door, option, value)``."""

    DOORS = ("async", "blocking", "sharded", "sharded blocking", "cli", "flows", "batches")

    def __init__(
        self, url: str, plain: aqless.sync.Client, sharded: aqless.sync.ShardedClient
    ) -> None:
        self.url, self.plain, self.sharded = url, plain, sharded

    def put(self, door: str, option: str, value: object) -> Refusal | None:
        queue, options = put_options(option, value)
        if door == "cli":
            return self._cli(option, value)
        if door == "flows" and option == "depends":
            return None  # a flow's dependencies are its children
        calls: dict[str, Callable[[], object]] = {
            "async": lambda: self._on(self.plain, lambda c: c.queues[queue].put(WORK, **options)),
            "blocking": lambda: self.plain.queues[queue].put(WORK, **options),
            "sharded": lambda: self._on(
                self.sharded, lambda c: c.queues[queue].put(WORK, **options)
            ),
            "sharded blocking": lambda: self.sharded.queues[queue].put(WORK, **options),
            "flows": lambda: self._on(
                self.plain, lambda c: c.flows.put(FlowNode(WORK, queue=queue, **options))
            ),
            "batches": lambda: self._on(
                self.plain,
                lambda c: c.batches.put([(queue, aqless.PutRequest(WORK, **options))]),
            ),
        }
        return refusal_of(option, calls[door])

    @staticmethod
    def _on(client: Any, verb: Callable[[Any], Coroutine[Any, Any, object]]) -> object:
        return client.call(verb)

    def _cli(self, option: str, value: object) -> Refusal | None:
        args = cli_put_args(option, value)
        return None if args is None else run_cli(self.url, args, option)


def cli_put_args(option: str, value: object) -> list[str] | None:
    """`aqless put`'s arguments giving `value` as `option`; None when the command line
    cannot say it (a lone string for a list, a list whose bad names it would drop)."""
    if option == "queue":
        return ["put", str(value), WORK, "{}"]
    if option in ("tags", "depends"):
        if isinstance(value, str) or not isinstance(value, list):
            return None
        parsed = names(tuple(value))
        if parsed is None or not bad(option, parsed):
            return None  # the command line drops empty names and trims the others
        return ["put", "q", WORK, "{}", *(arg for name in value for arg in (f"--{option}", name))]
    if isinstance(value, bool):
        return None
    return ["put", "q", WORK, "{}", f"--{option}", str(value)]


def run_cli(url: str, args: list[str], option: str) -> Refusal:
    """The CLI's answer: a refusal is exit code 2 naming the option."""
    result = CliRunner().invoke(cli, ["--url", url, *args])
    said = result.stdout + result.stderr
    return Refusal(result.exit_code == 2, option in said, f"exit {result.exit_code}: {said}")


# -- the doors of a running job's verbs --------------------------------------------------------

#: A verb given a bad input: its name, the input's rule, how the async client calls it.
VERBS: dict[str, tuple[str, Callable[[Any, Any], Coroutine[Any, Any, object]]]] = {
    "complete": ("queue", lambda job, value: job.complete(value)),
    "move": ("queue", lambda job, value: job.move(value)),
    "tag": ("tag", lambda job, value: job.tag(value)),
    "fail": ("failure_group", lambda job, value: job.fail(value, "boom")),
    "retry": ("delay", lambda job, value: job.retry(value)),
    "hand_back": ("reason", lambda job, value: job.hand_back(value)),
    "set_priority": ("priority", lambda job, value: job.set_priority(value)),
}


class VerbDoors:
    """Each door's verb on a running job (`jid` on the plain server, `sharded_jid` on the
    sharded deployment) with one bad input: ``doors.act(door, verb, value)``."""

    DOORS = ("async", "blocking", "sharded", "cli", "dashboard")

    def __init__(
        self,
        url: str,
        plain: aqless.sync.Client,
        sharded: aqless.sync.ShardedClient,
        jid: str,
        sharded_jid: str,
    ) -> None:
        self.url, self.plain, self.sharded = url, plain, sharded
        self.jid, self.sharded_jid = jid, sharded_jid

    def act(self, door: str, verb: str, value: object) -> Refusal | None:
        option, call = VERBS[verb]
        if door == "cli":
            return self._cli(verb, option, value)
        if door == "dashboard":
            return self._dashboard(verb, option, value)
        if door == "blocking":
            job = self.plain.jobs.get(self.jid)
            return refusal_of(option, lambda: getattr(job, verb)(*_arguments(verb, value)))
        client = self.sharded if door == "sharded" else self.plain
        jid = self.sharded_jid if door == "sharded" else self.jid

        async def act(async_client: Any) -> object:
            return await call(await async_client.jobs.get(jid), value)

        return refusal_of(option, lambda: client.call(act))

    def _cli(self, verb: str, option: str, value: object) -> Refusal | None:
        if verb == "tag" and isinstance(value, str):
            return run_cli(self.url, ["tag", self.jid, value], option)
        if verb == "set_priority" and not isinstance(value, bool):
            return run_cli(self.url, ["priority", self.jid, str(value)], option)
        return None

    def _dashboard(self, verb: str, option: str, value: object) -> Refusal | None:
        forms = {"move": "queue", "tag": "tags", "set_priority": "priority"}
        if verb not in forms or isinstance(value, bool):
            return None
        text = str(value)
        if verb == "move" and not text.strip():
            return None  # the form refuses an empty field as missing
        if verb == "tag" and not re.fullmatch(r"[^,\s]+", text):
            return None  # the form splits tags at commas and whitespace
        action = {"move": "job_move", "tag": "job_tag", "set_priority": "job_priority"}[verb]
        answer = self.plain.call(lambda c: post(c, action, {"jid": self.jid, forms[verb]: text}))
        status, message = answer
        return Refusal(status == 400, option in message, f"{status}: {message}")


def _arguments(verb: str, value: object) -> tuple[object, ...]:
    return (value, "boom") if verb == "fail" else (value,)


async def post(client: aqless.Client, action: str, form: dict[str, str]) -> tuple[int, str]:
    """The dashboard's answer to a form posted to `action`: its status and message."""
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        page = await http.get(f"/jobs/{form['jid']}")
        found = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert found, "the job's page has no form"
        headers = {"accept": "application/json", "x-aqless-csrf": found.group(1)}
        answer = await http.post(f"/actions/{action}", data=form, headers=headers)
    return answer.status_code, str(answer.json().get("message") or answer.json())
