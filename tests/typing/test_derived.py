"""The verbs the variants derive from the contracts' declarations (aqless.contracts.derive):
the generated modules are current, no variant writes again a verb it derives, a derived verb
checks its inputs by their rules, and mypy reads each variant's derived verbs with the types
users had when they were written by hand (the `assert_type` functions below are checked by
mypy, not run)."""

from __future__ import annotations

import inspect
from typing import Protocol, assert_type

import pytest

import aqless
import aqless.sync
from aqless import contracts
from aqless._connection.scripted import script, scripted
from aqless.client import (
    Config,
    Jobs,
    Queues,
    ShardedConfig,
    ShardedJobs,
    ShardedWorkers,
    Tags,
    Throttle,
)
from aqless.contracts import derived
from aqless.contracts.__main__ import main
from aqless.contracts.derive import ROUTED, SCRIPTED, derived_sources
from aqless.errors import InvalidValueError
from aqless.models import QueueCounts, ThrottleInfo
from aqless.sharding.queue import ShardedQueue, ShardedQueues
from aqless.sync import derived as sync_derived
from aqless.sync import parts
from aqless.sync.facades import SyncJob


def test_the_generated_modules_are_current() -> None:
    stale = [str(path) for path, text in derived_sources().items() if path.read_text() != text]
    assert not stale, f"not current (python -m aqless.contracts --write): {stale}"


#: Each variant class and the generated base it derives verbs from.
DERIVING = [
    (aqless.Queue, derived.QueueScripted),
    (Queues, derived.QueuesScripted),
    (Jobs, derived.JobsScripted),
    (Tags, derived.TagsScripted),
    (Config, derived.ConfigScripted),
    (Throttle, derived.ThrottleScripted),
    (aqless.ShardedClient, derived.ShardedClientRouted),
    (aqless.ShardedQueuePatterns, derived.ShardedQueuePatternsRouted),
    (ShardedQueue, derived.ShardedQueueRouted),
    (ShardedQueues, derived.ShardedQueuesRouted),
    (ShardedJobs, derived.ShardedJobsRouted),
    (ShardedConfig, derived.ShardedConfigRouted),
    (ShardedWorkers, derived.ShardedWorkersRouted),
    (parts.QueueFacade, sync_derived.QueueVerbs),
    (parts.SyncQueue, sync_derived.QueueVerbs),
    (parts.SyncShardedQueue, sync_derived.QueueVerbs),
    (parts.SyncJobs, sync_derived.JobsVerbs),
    (parts.SyncConfig, sync_derived.ConfigVerbs),
    (parts.SyncThrottle, sync_derived.ThrottleVerbs),
]


@pytest.mark.parametrize(("variant", "base"), DERIVING, ids=lambda cls: cls.__qualname__)
def test_a_variant_inherits_its_derived_verbs_and_writes_none_again(
    variant: type, base: type
) -> None:
    assert issubclass(variant, base)
    derived_names = {name for name in vars(base) if not name.startswith("_")}
    assert derived_names
    written_again = {
        name for cls in variant.__mro__[: variant.__mro__.index(base)] for name in vars(cls)
    }
    assert not derived_names & written_again


def test_every_declared_route_and_script_command_is_derived() -> None:
    for name in sorted({*SCRIPTED, *ROUTED}):
        contract = getattr(contracts, name)
        for marker, base in [("script", f"{name}Scripted"), ("sharding", f"Sharded{name}Routed")]:
            declared = {verb for verb, value in vars(contract).items() if hasattr(value, marker)}
            derived_here = vars(getattr(derived, base, object))
            assert declared == {verb for verb in derived_here if not verb.startswith("_")}


async def test_a_scripted_verb_checks_its_inputs_by_their_rules_before_sending() -> None:
    client = aqless.Client("redis://127.0.0.1:1/0")  # never opened: nothing may be sent
    with pytest.raises(InvalidValueError, match="maximum"):
        await client.queues["emails"].set_throttle(-1)
    with pytest.raises(InvalidValueError, match="expiration"):
        await client.throttles["smtp"].set(3, expiration=-5)


def test_a_derived_verb_keeps_the_contract_s_signature_and_docstring() -> None:
    plain = aqless.Client("redis://127.0.0.1:1/0")
    sharded = aqless.ShardedClient([("127.0.0.1", 1)], deployment="derived")
    length = plain.queues["emails"].length
    assert str(inspect.signature(length)) == "()"
    assert "running" in (length.__doc__ or "")
    set_weight = sharded.queues["emails"].set_group_weight
    assert str(inspect.signature(set_weight)) == "(group: 'str | None', weight: 'float')"
    assert str(inspect.signature(plain.throttles["smtp"].release)) == "(*jids: 'str')"
    assert parts.SyncQueue.counts.__doc__ == contracts.Queue.counts.__doc__


async def types_of_derived_verbs(
    queue: aqless.Queue,
    sharded: ShardedQueue,
    blocking: aqless.sync.SyncQueue,
    blocking_sharded: aqless.sync.SyncShardedQueue,
    throttle: Throttle,
    jobs: ShardedJobs,
) -> None:
    assert_type(await queue.length(), int)
    assert_type(await sharded.length(), int)
    assert_type(blocking.length(), int)
    assert_type(blocking_sharded.length(), int)
    assert_type(await queue.counts(), QueueCounts)
    assert_type(await sharded.throttle(), ThrottleInfo)
    assert_type(await throttle.locks(), list[str])
    assert_type(await throttle.get(), ThrottleInfo)
    assert_type(await sharded.peek(), list[aqless.Job])
    assert_type(await jobs.get_many(["a"]), list[aqless.Job])
    assert_type(blocking.peek(), list[SyncJob])
    assert_type(blocking.pop(), SyncJob | None)
    await queue.set_throttle("3")  # type: ignore[arg-type]
    await sharded.set_group_weight(None, "2")  # type: ignore[arg-type]
    await throttle.release(1)  # type: ignore[arg-type]
    blocking.set_heartbeat("60")  # type: ignore[arg-type]


def test_the_command_says_whether_the_generated_modules_are_current(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    assert capsys.readouterr().out == ""


def test_a_script_declaration_sending_what_the_verb_does_not_take_is_refused() -> None:
    class Contract(Protocol):
        @script("queue.length", "self.name", "count")
        async def length(self) -> int: ...

    with pytest.raises(TypeError, match="has no parameter 'count' to send"):
        scripted(Contract.length)
