"""The doors an operator's setting comes in by, for tests/test_doors_admin.py: the async,
sharded and blocking clients, the `aqless` command (in-process, CliRunner), the dashboard's
forms (the ASGI app), `Worker()` and `aqless-run`. Each door is given one setting's value
and answers the refusal's text (failing the test if the value was taken); `bad_values`
draws values outside a rule, and `snapshot` every key of a server, to show nothing was
written."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx
import pytest
import redis
from click.testing import CliRunner
from hypothesis import strategies as st

import aqless
import aqless.sync
from aqless import rules
from aqless.cli import cli
from aqless.run import main as run_main
from aqless.web import create_app
from tests.support.cli import ENVIRONMENT
from tests.web.conftest import csrf_token

#: The recurring job every door changes, in the queue the doors list and group.
TEMPLATE, QUEUE, GROUP = "tick", "q", "g"
#: The config options the doors are tried with, by their rule.
CONFIG = {
    option: option for option in ("heartbeat", "grace-period", "jobs-history", "max-job-history")
} | {"<queue>-heartbeat": "emails-heartbeat"}


@dataclass(frozen=True, slots=True)
class Setting:
    """An operator's setting: its rule in `aqless.rules` and its name as refused."""

    rule: str
    shown: str

    @property
    def is_config(self) -> bool:
        return self.rule in rules.CONFIG

    def refusal(self, value: object) -> str:
        """The words every door refuses `value` with."""
        return f"{self.shown} must be {rules.RULES[self.rule].expected()}, not {value!r}"


def setting(rule: str) -> Setting:
    return Setting(rule, rules.shown(rule))


#: The settings the API, CLI and dashboard doors take (worker settings are apart).
ADMIN = (
    *(setting(name) for name in ("interval", "backlog", "retries", "recurring.offset")),
    *(Setting(rule, option) for rule, option in CONFIG.items()),
    *(setting(name) for name in ("maximum", "weight", "concurrency", "limit", "count", "offset")),
)
#: The settings `Worker()` and `aqless-run` share, by the Worker's name and the option's.
WORKER = {
    "concurrency": "--concurrency",
    "prefetch": "--prefetch",
    "interval": "--interval",
    "grace": "--grace",
    "job_timeout": "--timeout",
    "max_jobs": "--max-jobs",
}


def bad_values(rule: rules.Rule) -> st.SearchStrategy[int | float]:
    """Numbers outside `rule` (a number or whole-number rule with a minimum)."""
    assert rule.minimum is not None
    low = rule.minimum
    below: list[st.SearchStrategy[int | float]] = [
        st.integers(max_value=math.ceil(low) - 1, min_value=-(10**12)),
        st.floats(max_value=low, exclude_max=not rule.above, min_value=-1e12),
        st.sampled_from([math.nan, math.inf, -math.inf]),
    ]
    if rule.above:
        below.append(st.just(int(low)))
    if rule.kind == "whole":
        below.append(
            st.floats(min_value=low, max_value=1e6).filter(lambda number: not number.is_integer())
        )
    return st.one_of(below)


def text(value: int | float) -> str:
    """A value as typed at the CLI or in a form (what `repr` shows: the refusal quotes it)."""
    return repr(value)


def snapshot(url: str) -> dict[bytes, bytes | None]:
    """Every key of the server at `url` with its serialized value."""
    with redis.Redis.from_url(url) as connection:
        return {key: connection.dump(key) for key in connection.keys("*")}


def without_audit(keys: dict[bytes, bytes | None]) -> dict[bytes, bytes | None]:
    """`keys` but the audit log (the dashboard records a refused action too)."""
    return {key: value for key, value in keys.items() if not key.endswith(b"aqless:audit")}


# -- the API doors: one call per setting, the same for every client ----------------------------


async def through_api(client: Any, chosen: Setting, value: object) -> str:
    """`value` given to `client` (async, sharded, or a blocking one's facade called in a
    thread) by the call taking `chosen`; the InvalidValueError's text."""
    call = _api_call(client, chosen, value)
    with pytest.raises(aqless.InvalidValueError) as refused:
        await call()
    assert refused.value.option == chosen.shown
    assert refused.value.value is value or refused.value.value == value
    return str(refused.value)


def _api_call(client: Any, chosen: Setting, value: Any) -> Callable[[], Awaitable[object]]:
    blocking = isinstance(client, aqless.sync.Client)

    def run(work: Callable[[], Any]) -> Callable[[], Awaitable[object]]:
        async def call() -> object:
            if blocking:
                return await anyio.to_thread.run_sync(work)
            return await work()

        return call

    queue = client.queues[QUEUE]
    name = chosen.rule
    if name in ("interval", "backlog", "retries"):

        def update() -> Any:
            template = client.jobs.get(TEMPLATE)
            if blocking:
                return template.update(**{name: value})

            async def changed() -> object:
                return await (await template).update(**{name: value})

            return changed()

        return run(update)
    calls: dict[str, Callable[[], Any]] = {
        "recurring.offset": lambda: queue.recur("app.Tick", {}, 60, offset=value),
        "maximum": lambda: client.throttles["api"].set(value),
        "weight": lambda: queue.set_group_weight(GROUP, value),
        "concurrency": lambda: queue.set_group_concurrency(GROUP, value),
        "limit": lambda: client.rate_limits["api"].set(value),
        "count": lambda: queue.jobs("waiting", count=value),
        "offset": lambda: queue.jobs("waiting", offset=value),
    }
    if name in calls:
        return run(calls[name])
    assert chosen.is_config, chosen
    return run(lambda: client.config.set(chosen.shown, value))


# -- the CLI and the dashboard: the value as text ----------------------------------------------


def cli_arguments(chosen: Setting, typed: str) -> list[str] | None:
    """The `aqless` command line setting `chosen` to `typed`; None where none offers it."""
    name = chosen.rule
    if name in ("interval", "backlog", "retries"):
        return ["recurring", "update", TEMPLATE, f"--{name}", typed]
    commands = {
        "maximum": ["throttle", "set", "api", typed],
        "weight": ["groups", "set", QUEUE, GROUP, "--weight", typed],
        "concurrency": ["groups", "set", QUEUE, GROUP, "--concurrency", typed],
        "limit": ["rate-limit", "set", "api", typed],
        "count": ["jobs", QUEUE, "waiting", "-n", typed],
        "offset": ["jobs", QUEUE, "waiting", "--offset", typed],
    }
    if name == "recurring.offset":
        return None  # no command makes a recurring job
    return commands.get(name, ["config", "set", chosen.shown, typed])


async def through_cli(url: str, arguments: list[str]) -> str:
    """The command's error output (it must exit 2, a usage error)."""
    runner = CliRunner(env=ENVIRONMENT)
    result = await anyio.to_thread.run_sync(lambda: runner.invoke(cli, ["--url", url, *arguments]))
    assert result.exit_code == 2, (arguments, result.output, result.exception)
    return result.stderr


def form_of(chosen: Setting, typed: str) -> tuple[str, dict[str, str]] | None:
    """The dashboard's form (its action and fields) setting `chosen`; None where none does."""
    name = chosen.rule
    if name in ("interval", "backlog", "retries"):
        fields = {"jid": TEMPLATE, "interval": "60", "priority": "0", "retries": "0"}
        return "recurring_update", fields | {name: typed}
    if name == "maximum":
        return "throttle_set", {"name": "api", "maximum": typed}
    if chosen.is_config:
        return "config_set", {"option": chosen.shown, "value": typed}
    return None


async def through_dashboard(client: aqless.Client, action: str, fields: dict[str, str]) -> str:
    """The message of the refused form (posted as a browser does, with its CSRF token)."""
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        token = csrf_token((await http.get("/config")).text)
        answer = await http.post(
            f"/actions/{action}",
            data=fields | {"csrf": token},
            headers={"accept": "application/json"},
        )
    assert answer.status_code == 400, answer.text
    reply = answer.json()
    assert reply["ok"] is False
    return str(reply["message"])


# -- the worker's settings: Worker() and aqless-run ---------------------------------------------

UNREACHABLE = "redis://localhost:1"  # nothing below connects


def through_worker(name: str, value: Any) -> str:
    """`Worker(**{name: value})`'s refusal."""
    settings: dict[str, Any] = {name: value}
    with pytest.raises(aqless.InvalidValueError) as refused:
        aqless.Worker(aqless.Client(UNREACHABLE), [QUEUE], **settings)
    assert refused.value.option == name
    return str(refused.value)


def through_run(option: str, typed: str) -> str:
    """`aqless-run`'s refusal of `option` (a usage error, before anything starts)."""
    result = CliRunner(env=ENVIRONMENT).invoke(
        run_main, [QUEUE, "--url", UNREACHABLE, "--check", option, typed]
    )
    assert result.exit_code == 2, (option, typed, result.output)
    return result.stderr
