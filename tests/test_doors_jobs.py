"""One rule per input of a job, at every door: the same bad value, given to the async client,
the sharded one, both blocking ones, the CLI, the dashboard's forms, `flows.put` and
`batches.put`, is refused the same way (InvalidValueError naming the input; the CLI's usage
exit code 2 naming it; the dashboard's 400 naming it), and nothing is written to any server.
The doors are tests/support/job_doors.py."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aqless
import aqless.sync
from aqless import rules
from tests.support.job_doors import (
    BAD_QUEUES,
    PUT_INPUTS,
    VERBS,
    WORK,
    PutDoors,
    Refusal,
    VerbDoors,
    bad,
    refusal_of,
)

pytestmark = pytest.mark.timeout(300)
pytest_plugins = ["tests.support.sharding_fixtures", "tests.support.door_fixtures"]

DOORS = settings(  # examples: the profile's (tests/conftest.py), at most 50 (each tries 7 doors)
    max_examples=min(settings().max_examples, 50),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

#: Characters no name may hold (tags and groups may hold a space).
CONTROLS = st.sampled_from(["\n", "\t", "\r", "\x00", "\x1b", "\u2028"])
words = st.text(st.characters(categories=("L", "N")), min_size=1, max_size=8)


@st.composite
def spoiled(draw: st.DrawFn, rule: str) -> str:
    """A name the rule `rule` refuses: empty, too long, or holding a control character (or a
    space, unless the rule allows spaces)."""
    allows = rules.RULES[rule]
    kinds = ["empty", "long", "control"] + ([] if allows.spaces else ["space"])
    kind = draw(st.sampled_from(kinds))
    if kind == "empty":
        return ""
    if kind == "long":
        return "x" * draw(st.integers(min_value=allows.longest + 1, max_value=10_000))
    inside = draw(CONTROLS) if kind == "control" else " "
    return draw(words) + inside + draw(words)


def bad_values(option: str) -> st.SearchStrategy[object]:
    if option == "queue":
        return st.one_of(st.sampled_from(BAD_QUEUES), spoiled("queue"))
    if option in ("tags", "depends"):
        lone = words  # a lone string, never a list of one
        listed = st.lists(words, max_size=2).flatmap(
            lambda good: spoiled("tag" if option == "tags" else "jid").map(lambda one: [*good, one])
        )
        return st.one_of(lone, listed)
    if option == "delay":
        return st.one_of(
            st.floats(max_value=-1e-6, allow_infinity=False), st.sampled_from([math.nan, math.inf])
        )
    if option == "priority":
        return st.sampled_from([math.nan, math.inf, -math.inf])
    if option == "retries":
        return st.one_of(
            st.integers(max_value=-1), st.floats(min_value=0.1, max_value=99).filter(_fraction)
        )
    if option in ("tag", "failure_group"):
        return spoiled(option)
    if option == "reason":
        return st.just("")
    raise AssertionError(option)


def _fraction(number: float) -> bool:
    return not number.is_integer()


@pytest.mark.parametrize("given_to", ["a put", "a running job's verb"])
@DOORS
@given(data=st.data())
def test_a_bad_input_is_refused_alike_at_every_door(
    given_to: str,
    data: st.DataObject,
    server_url: str,
    servers: Callable[[], object],
    plain: aqless.sync.Client,
    sharded: aqless.sync.ShardedClient,
) -> None:
    """The same bad value to a put's input (`PUT_INPUTS`) or to a verb's (`VERBS`), at
    each door that can say it."""
    if given_to == "a put":
        option = data.draw(st.sampled_from(PUT_INPUTS), "option")
        value = data.draw(bad_values(option), "value")
        assert bad(option, value)
        puts = PutDoors(server_url, plain, sharded)
        _refused_alike(servers, PutDoors.DOORS, lambda door: puts.put(door, option, value))
    else:
        verb = data.draw(st.sampled_from(sorted(VERBS)), "verb")
        value = data.draw(bad_values(VERBS[verb][0]), "value")
        verbs = VerbDoors(server_url, plain, sharded, _running(plain), _running(sharded))
        _refused_alike(servers, VerbDoors.DOORS, lambda door: verbs.act(door, verb, value))


def _refused_alike(
    servers: Callable[[], object],
    doors: Sequence[str],
    attempt: Callable[[str], Refusal | None],
) -> None:
    """Each door that can say the value refuses it as the rule says, writing nothing."""
    before = servers()
    for door in doors:
        refusal = attempt(door)
        if refusal is not None:
            assert refusal.as_the_rule_says, (door, refusal.text)
    assert servers() == before, "a refusal wrote something"


def _running(client: aqless.sync.Client | aqless.sync.ShardedClient) -> str:
    """The jid of a new job, put and popped: running, held by `client`'s worker. (A queue
    of its own: an earlier example's job, its lock expired, would be popped again.)"""
    queue = client.queues[f"q-{uuid.uuid4().hex[:8]}"]
    jid = queue.put(WORK, {})
    popped = queue.pop()
    assert popped is not None
    assert popped.jid == jid
    return jid


@pytest.mark.parametrize("count", [0, -1, 2.5, True, "3"])
def test_a_pop_count_outside_its_rule_is_refused_at_every_door(
    count: Any,
    plain: aqless.sync.Client,
    sharded: aqless.sync.ShardedClient,
    servers: Callable[[], object],
) -> None:
    """`pop_many`'s count keeps the rule `pop.count` at the async, sharded and both blocking
    doors: refused (it used to return [] for 0 or less), nothing popped."""
    plain.queues["q"].put(WORK, {})
    sharded.queues["q"].put(WORK, {})
    before = servers()
    doors: dict[str, Callable[[], object]] = {
        "async": lambda: plain.call(lambda c: c.queues["q"].pop_many(count)),
        "blocking": lambda: plain.queues["q"].pop_many(count),
        "sharded": lambda: sharded.call(lambda c: c.queues["q"].pop_many(count)),
        "blocking sharded": lambda: sharded.queues["q"].pop_many(count),
    }
    for door, pop in doors.items():
        refusal = refusal_of("count", pop)
        assert refusal.as_the_rule_says, (door, refusal.text)
    assert servers() == before, "a refusal popped something"
