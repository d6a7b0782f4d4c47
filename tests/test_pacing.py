"""aqless.ops.pacing: each chunk sized by what the last call cost, towards the target hold."""

from __future__ import annotations

from aqless.ops.pacing import Pacer


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_call_shrinks_the_next_chunk_and_a_fast_one_grows_it_at_most_twice() -> None:
    pacer = Pacer(first=100, least=2, most=400, target=0.005)
    pacer.took(100, 0.050)  # ten times the target
    assert pacer.size == 10
    pacer.took(10, 0.0001)  # fifty times faster than the target: doubles, no more
    assert pacer.size == 20
    pacer.took(20, 10.0)
    assert pacer.size == 2  # never below `least`
    for _ in range(20):
        pacer.took(pacer.size, 0.0)
    assert pacer.size == 400  # nor above `most`
    pacer.took(0, 1.0)  # nothing measured
    assert pacer.size == 400


async def test_each_chunk_follows_the_time_its_predecessor_took() -> None:
    clock = Clock()
    pacer = Pacer(first=8, target=0.004, clock=clock)
    sizes = []
    async for chunk in pacer.each(list(range(100))):
        sizes.append(len(chunk))
        clock.now += 0.001 * len(chunk)  # each item costs a millisecond
    assert sizes[:3] == [8, 4, 4]
    assert sum(sizes) == 100
