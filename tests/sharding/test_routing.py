"""Sharded verbs derived from the plain ones (aqless.sharding.routing): each keeps its plain
verb's parameters and documentation, and a declaration under another name is refused."""

from __future__ import annotations

import inspect

import pytest

import aqless
from aqless.sharding.reads import nothing
from aqless.sharding.routing import Routed, every, routed

ROUTED_CLASSES = [
    aqless.ShardedClient,
    aqless.ShardedQueue,
    aqless.ShardedQueues,
    aqless.ShardedJobs,
    aqless.ShardedConfig,
    aqless.ShardedQueuePatterns,
    aqless.ShardedRateLimits,
]


def routed_verbs() -> list[tuple[type, str, Routed[..., object]]]:
    return [
        (cls, name, value)
        for cls in ROUTED_CLASSES
        for name, value in vars(cls).items()
        if isinstance(value, Routed)
    ]


def test_the_sharded_classes_declare_routed_verbs() -> None:
    assert len(routed_verbs()) >= 30


@pytest.mark.parametrize(
    ("cls", "name", "verb"),
    routed_verbs(),
    ids=[f"{cls.__name__}.{name}" for cls, name, _ in routed_verbs()],
)
def test_a_routed_verb_keeps_its_plain_verb_s_parameters(
    cls: type, name: str, verb: Routed[..., object]
) -> None:
    client = aqless.ShardedClient([("127.0.0.1", 1)], deployment="routing")
    instance = client if cls is aqless.ShardedClient else _part(client, cls)
    bound = getattr(instance, name)
    assert inspect.signature(bound) == verb.signature
    assert bound.__name__ == name
    assert bound.__doc__
    assert bound.__doc__ == verb.__doc__


def _part(client: aqless.ShardedClient, cls: type) -> object:
    parts = {
        aqless.ShardedQueue: client.queues["q"],
        aqless.ShardedQueues: client.queues,
        aqless.ShardedJobs: client.jobs,
        aqless.ShardedConfig: client.config,
        aqless.ShardedQueuePatterns: client.queue_patterns,
        aqless.ShardedRateLimits: client.rate_limits,
    }
    return parts[cls]


def test_a_verb_declared_under_another_name_is_refused() -> None:
    with pytest.raises((TypeError, RuntimeError)) as raised:  # 3.11 wraps it
        type("Misnamed", (), {"pause": routed(aqless.Queue.unpause, every, nothing)})
    refusal = raised.value.__cause__ or raised.value
    assert isinstance(refusal, TypeError)
    assert "Misnamed.pause is the sharded unpause: name it so" in str(refusal)
