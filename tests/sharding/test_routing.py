"""Sharded verbs derived from the plain or the contract's ones (aqless._concurrency.routing):
each keeps its verb's parameters and the plain verb's documentation, and a declaration under
another name is refused."""

from __future__ import annotations

import inspect

import pytest

import aqless
from aqless._concurrency.routing import Routed, every, latest_first, merged, page, routed
from aqless.models import Durations, Page, QueueCounts, QueueStats, WorkerCounts, WorkerJobs

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
    """Each class's routed verbs: its own and those it derives from its contract."""
    found: dict[tuple[type, str], Routed[..., object]] = {}
    for cls in ROUTED_CLASSES:
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Routed):
                    found[cls, name] = value
    return [(cls, name, value) for (cls, name), value in found.items()]


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
    assert bound.__doc__ == verb.doc(cls)


def test_a_routed_verb_reads_as_its_plain_verb() -> None:
    """The plain class's verb documents its parameters and errors; the contract's says
    where to read them: a routed verb shows the plain one's."""
    shown = 0
    for cls, name, verb in routed_verbs():
        plain = getattr(getattr(cls, "documented_by", None), name, None)
        if plain is not None and plain.__doc__:
            assert verb.doc(cls) == plain.__doc__, f"{cls.__name__}.{name}"
            shown += 1
    assert shown >= 20


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
        type("Misnamed", (), {"unpause": routed(aqless.Queue.pause, every)})
    refusal = raised.value.__cause__ or raised.value
    assert isinstance(refusal, TypeError)
    assert "Misnamed.unpause is the sharded pause: name it so" in str(refusal)


# -- the merges: one answer from the shards' answers ---------------------------------------


def _asked(offset: int, count: int) -> inspect.BoundArguments:
    return inspect.signature(aqless.Queue.jobs).bind(None, "waiting", offset=offset, count=count)


def test_records_merge_field_by_field() -> None:
    parts = [
        QueueCounts("q", 1, 2, 3, 4, 5, 6, 7, paused=False),
        QueueCounts("q", 10, 20, 30, 40, 50, 60, 70, paused=True),
    ]
    assert merged(parts) == QueueCounts("q", 11, 22, 33, 44, 55, 66, 77, paused=True)
    assert merged([WorkerJobs(("a", "b"), ()), WorkerJobs(("b", "c"), ("d",))]) == WorkerJobs(
        ("a", "b", "c"), ("d",)
    )


def test_a_record_with_a_merge_of_its_own_uses_it() -> None:
    parts = [QueueStats(Durations(1, 2.0, 0.0, (1,)), Durations(0, 0.0, 0.0, ()), 1, 2, 3)] * 2
    stats = merged(parts)
    assert stats.wait == Durations.merged([parts[0].wait] * 2)
    assert (stats.failed, stats.failures, stats.retries) == (2, 4, 6)


def test_named_records_merge_one_per_name_in_order() -> None:
    first = [
        QueueCounts("a", 1, 0, 0, 0, 0, 0, 0, False),
        QueueCounts("b", 1, 0, 0, 0, 0, 0, 0, False),
    ]
    second = [
        QueueCounts("c", 1, 0, 0, 0, 0, 0, 0, False),
        QueueCounts("a", 2, 0, 0, 0, 0, 0, 0, False),
    ]
    assert [(counts.name, counts.waiting) for counts in merged([first, second])] == [
        ("a", 3),
        ("b", 1),
        ("c", 1),
    ]
    workers = [
        [WorkerCounts("x", 1, 0), WorkerCounts("y", 1, 1)],
        [WorkerCounts("z", 2, 0), WorkerCounts("x", 1, 0)],
    ]
    assert latest_first(workers, _asked(0, 1)) == [
        WorkerCounts("x", 2, 0),
        WorkerCounts("z", 2, 0),
        WorkerCounts("y", 1, 1),
    ]


def test_mappings_names_and_pairs_of_lists_merge() -> None:
    assert merged([{"e": 1, "f": 2}, {"f": 3}]) == {"e": 1, "f": 5}
    assert merged([["q1", "q2"], ["q2", "q3"]]) == ["q1", "q2", "q3"]
    assert merged([([1], ["gone"]), ([2], ["gone", "lost"])]) == ([1, 2], ["gone", "lost"])
    assert merged([None, None]) is None
    assert merged([3, 4]) == 7


def test_a_page_interleaves_the_shards_first_entries() -> None:
    parts = [Page(3, ("a1", "a2", "a3")), Page(1, ("b1",))]
    assert page(parts, _asked(1, 2)) == Page(4, ("b1", "a2"))
    assert page([["a1", "a2"], ["b1"]], _asked(0, 2)) == ["a1", "b1"]
    assert page([["a1", "a2"]], _asked(1, 5)) == ["a2"]  # one shard still sliced
