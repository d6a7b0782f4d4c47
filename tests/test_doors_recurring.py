"""One rule per input of a recurring job, at every door: the same bad value, given to `recur`
(the async client, the sharded one, both blocking ones) or to a template's `update` (those
four, `aqless recurring update`, the dashboard's recurring form), is refused the same way
(InvalidValueError naming the input; the CLI's usage exit code 2; the dashboard's 400),
and nothing is written to any server. The doors are tests/support/job_doors.py's."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

import aqless
import aqless.sync
from tests.support.job_doors import WORK, Refusal, post, refusal_of, run_cli

pytestmark = pytest.mark.timeout(300)
pytest_plugins = ["tests.support.sharding_fixtures", "tests.support.door_fixtures"]

#: A bad value of each input `recur` takes, and the name its refusal gives.
RECUR_INPUTS: list[tuple[str, object, str]] = [
    ("interval", 0, "interval"),
    ("interval", -5, "interval"),
    ("interval", math.nan, "interval"),
    ("interval", True, "interval"),
    ("offset", -1, "offset"),
    ("priority", math.inf, "priority"),
    ("retries", -1, "retries"),
    ("retries", 1.5, "retries"),
    ("backlog", -1, "backlog"),
    ("backlog", 2.5, "backlog"),
    ("tags", "lone", "tags"),
    ("tags", ["ok", "a\nb"], "tags"),
    ("throttles", "lone", "throttles"),
    ("throttles", ["a b"], "throttles"),
    ("name", "a\nb", "name"),
    ("overlap", "sometimes", "overlap"),
    ("overlap", 1, "overlap"),
    ("catchup", -1, "catchup"),
    ("catchup", math.inf, "catchup"),
    ("pause_after", -1, "pause_after"),
    ("pause_after", 2.5, "pause_after"),
    ("jitter", -0.5, "jitter"),
    ("jitter", math.nan, "jitter"),
]

#: A template's policy inputs (schedules): `aqless recurring update` and the dashboard's
#: recurring form take each.
POLICY = ("overlap", "catchup", "pause_after", "jitter")

#: A bad value of each input a template's `update` takes.
UPDATE_INPUTS: list[tuple[str, object, str]] = [
    (option, value, shown)
    for option, value, shown in RECUR_INPUTS
    if option not in ("offset", "tags", "name")
] + [("queue", "a b", "queue"), ("queue", "", "queue")]


def _recur_doors(
    plain: aqless.sync.Client, sharded: aqless.sync.ShardedClient, options: dict[str, Any]
) -> dict[str, Callable[[], object]]:
    return {
        "async": lambda: plain.call(lambda c: c.queues["q"].recur(WORK, **options)),
        "blocking": lambda: plain.queues["q"].recur(WORK, **options),
        "sharded": lambda: sharded.call(lambda c: c.queues["q"].recur(WORK, **options)),
        "sharded blocking": lambda: sharded.queues["q"].recur(WORK, **options),
    }


@pytest.mark.parametrize(("option", "value", "shown"), RECUR_INPUTS)
def test_a_bad_recur_input_is_refused_alike_at_every_door(
    option: str,
    value: object,
    shown: str,
    plain: aqless.sync.Client,
    sharded: aqless.sync.ShardedClient,
    servers: Callable[[], object],
) -> None:
    before = servers()
    for door, recur in _recur_doors(plain, sharded, {option: value}).items():
        refusal = refusal_of(shown, recur)
        assert refusal.as_the_rule_says, (door, refusal.text)
    assert servers() == before, "a refusal wrote something"


@pytest.mark.parametrize(("option", "value", "shown"), UPDATE_INPUTS)
def test_a_bad_update_of_a_template_is_refused_alike_at_every_door(
    option: str,
    value: object,
    shown: str,
    server_url: str,
    plain: aqless.sync.Client,
    sharded: aqless.sync.ShardedClient,
    servers: Callable[[], object],
) -> None:
    rjid = plain.queues["q"].recur(WORK, interval=60, name="daily")
    sharded_rjid = sharded.queues["q"].recur(WORK, interval=60, name="daily")
    changes = {option: value}
    before = servers()
    doors: dict[str, Callable[[], object]] = {
        "async": lambda: plain.call(lambda c: _update(c, rjid, changes)),
        "blocking": lambda: _sync_update(plain, rjid, changes),
        "sharded": lambda: sharded.call(lambda c: _update(c, sharded_rjid, changes)),
        "sharded blocking": lambda: _sync_update(sharded, sharded_rjid, changes),
    }
    for door, update in doors.items():
        refusal = refusal_of(shown, update)
        assert refusal.as_the_rule_says, (door, refusal.text)
    for door, typed in (
        ("cli", _cli(server_url, rjid, option, value)),
        ("dashboard", _dashboard(plain, rjid, option, value)),
    ):
        if typed is not None:
            assert typed.as_the_rule_says, (door, typed.text)
    assert servers() == before, "a refusal wrote something"


async def _update(client: Any, rjid: str, changes: dict[str, Any]) -> None:
    template = await client.jobs.get(rjid)
    assert isinstance(template, aqless.RecurringJob)
    await template.update(**changes)


def _sync_update(client: Any, rjid: str, changes: dict[str, Any]) -> None:
    template = client.jobs.get(rjid)
    assert isinstance(template, aqless.sync.SyncRecurringJob)
    template.update(**changes)


def _cli(url: str, rjid: str, option: str, value: object) -> Refusal | None:
    """`aqless recurring update`'s refusal; None for what a command line cannot say."""
    if option not in ("interval", "priority", "retries", "backlog", "queue", *POLICY):
        return None
    if isinstance(value, bool) or value == "":
        return None
    flag = "--" + option.replace("_", "-")
    return run_cli(url, ["recurring", "update", rjid, flag, str(value)], option)


def _dashboard(plain: aqless.sync.Client, rjid: str, option: str, value: object) -> Refusal | None:
    """The recurring form's refusal; None for what it has no field for."""
    if option not in ("interval", "priority", "retries", "backlog", *POLICY):
        return None
    if isinstance(value, bool):
        return None
    form = {"jid": rjid, "priority": "0", "retries": "5", option: str(value)}
    status, message = plain.call(lambda c: post(c, "recurring_update", form))
    return Refusal(status == 400, option in message, f"{status}: {message}")


def test_backfill_pause_and_resume_at_every_door(
    plain: aqless.sync.Client, sharded: aqless.sync.ShardedClient
) -> None:
    """The blocking clients (plain and sharded) backfill a template on the server (or
    shard) holding it, and pause and resume it."""
    for client in (plain, sharded):
        now = client.call(lambda c: _now(c))
        client.queues["bf"].recur(WORK, interval=60, name="backfilled", offset=60)
        template = client.jobs.get("backfilled")
        assert isinstance(template, aqless.sync.SyncRecurringJob)
        assert template.backfill(now - 600, now) == 10
        assert template.backfill(now - 600, now) == 0
        template.pause()
        assert template.paused
        template.resume()
        assert not client.jobs.get("backfilled").paused  # type: ignore[union-attr]
        assert client.queues["bf"].length() == 10


async def _now(client: Any) -> float:
    return float(client.clock())
