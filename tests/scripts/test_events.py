"""Pubsub publications: channels, exact payload bytes and their order, in both vocabularies.

CORE 7 (7.1 channels, 7.2 payload bytes, 7.3 publication order) and REQLESS 10 / 11.1 (the
byte strings the tests expect, and the reqless differences: no ``ql:failed`` for an exhausted
``job.retry``; ``job.timeout`` names the previous worker; throttles publish nothing).
"""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.conftest import Lua
from tests.scripts._relations_helpers import VOCABULARIES, EventsFactory, Vocab, make_vocab

LOG = "ql:log"

PUT = '{"jid":"jid","event":"put","queue":"queue"}'
LOCK_LOST = '{"jid":"jid","event":"lock_lost","worker":"worker"}'
COMPLETED = '{"jid":"jid","event":"completed","queue":"queue"}'
FAILED = '{"message":"mess","jid":"jid","group":"grp","event":"failed","worker":"worker"}'
EXHAUSTED = (
    '{"message":"Job exhausted retries in queue \\"queue\\"","jid":"jid",'
    '"group":"failed-retries-queue","event":"failed","worker":"worker"}'
)
CANCELED = '{"jid":"jid","queue":"queue","event":"canceled","worker":""}'


@pytest.fixture(params=VOCABULARIES)
def vocab(request: pytest.FixtureRequest, lua: Lua) -> Vocab:
    return make_vocab(lua, request.param)


async def running(
    vocab: Vocab,
    jid: str = "jid",
    queue: str = "queue",
    worker: str = "worker",
    now: float = 0,
    **options: Any,
) -> None:
    await vocab.put(now, jid, queue, **options)
    popped = await vocab.pop(now, queue, worker)
    assert [job["jid"] for job in popped] == [jid]


# ---- track / untrack -------------------------------------------------------------------------


async def test_track_and_untrack(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid")
    for expected in ("1", "0"):  # published even when the set does not change
        async with events() as captured:
            assert await vocab.track(1, "jid") == expected
        assert captured.messages == [("ql:track", "jid")]
    for expected in ("1", "0"):
        async with events() as captured:
            assert await vocab.untrack(2, "jid") == expected
        assert captured.messages == [("ql:untrack", "jid")]


# ---- put -------------------------------------------------------------------------------------


async def test_put(vocab: Vocab, events: EventsFactory) -> None:
    async with events() as captured:
        await vocab.put(0, "jid")
    assert captured.messages == [(LOG, PUT)]


async def test_put_names_the_destination_queue(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid", "first")
    async with events() as captured:
        await vocab.put(1, "jid", "second", delay=10)
    assert captured.messages == [(LOG, '{"jid":"jid","event":"put","queue":"second"}')]


async def test_tracked_reput(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid")
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.put(1, "jid")
    assert captured.messages == [(LOG, PUT), ("ql:put", "jid")]


async def test_reput_by_another_worker(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        await vocab.put(1, "jid", worker="another")
    assert captured.messages == [(LOG, PUT), ("ql:w:worker", LOCK_LOST), (LOG, LOCK_LOST)]


async def test_tracked_reput_by_another_worker(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.put(1, "jid", worker="another")
    assert captured.messages == [
        (LOG, PUT),
        ("ql:w:worker", LOCK_LOST),
        (LOG, LOCK_LOST),
        ("ql:put", "jid"),
    ]


async def test_reput_by_the_owning_worker(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        await vocab.put(1, "jid", worker="worker")
    assert captured.messages == [(LOG, PUT)]


async def test_reqless_parked_put_publishes_only_the_put(lua: Lua, events: EventsFactory) -> None:
    vocab = make_vocab(lua, "reqless")
    await lua("queue.throttle.set", 0, "queue", 1)
    await running(vocab, "holder")
    async with events() as captured:
        await vocab.put(1, "jid")
        assert await vocab.pop(2, count=5) == []
    assert captured.messages == [(LOG, PUT)]
    assert (await vocab.get(2, "jid"))["state"] == "throttled"


# ---- pop -------------------------------------------------------------------------------------


async def test_pop(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "a", priority=2)
    await vocab.put(0, "b", priority=1)
    await vocab.put(0, "c")
    await vocab.track(0, "a")
    await vocab.track(0, "c")
    async with events() as captured:
        popped = await vocab.pop(1, count=3)
    assert [job["jid"] for job in popped] == ["a", "b", "c"]
    assert captured.messages == [("ql:popped", "a"), ("ql:popped", "c")]


async def test_untracked_pop_publishes_nothing(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid")
    async with events() as captured:
        await vocab.pop(1)
    assert captured.messages == []


async def test_tracked_stall_with_default_grace(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        assert await vocab.pop(61, worker="another") == vocab.empty
    assert captured.messages == [
        ("ql:stalled", "jid"),
        ("ql:w:worker", LOCK_LOST),
        (LOG, LOCK_LOST),
    ]
    # the reclaim at the end of the grace period only hands the job out
    async with events() as captured:
        popped = await vocab.pop(71, worker="another")
    assert [(job["jid"], job["worker"]) for job in popped] == [("jid", "another")]
    assert captured.messages == [("ql:popped", "jid")]


async def test_untracked_stall_with_default_grace(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        await vocab.pop(61, worker="another")
    assert captured.messages == [("ql:w:worker", LOCK_LOST), (LOG, LOCK_LOST)]
    async with events() as captured:
        await vocab.pop(71, worker="another")
    assert captured.messages == []


async def test_lock_loss_with_exhausted_retries(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.config_set(0, "grace-period", 0)
    await running(vocab, retries=0)
    async with events() as captured:
        assert await vocab.pop(61, worker="another") == vocab.empty
    assert captured.messages == [("ql:w:worker", LOCK_LOST), (LOG, LOCK_LOST), (LOG, EXHAUSTED)]


async def test_tracked_lock_loss_with_exhausted_retries(
    vocab: Vocab, events: EventsFactory
) -> None:
    await vocab.config_set(0, "grace-period", 0)
    await running(vocab, retries=0)
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.pop(61, worker="another")
    assert captured.messages == [
        ("ql:stalled", "jid"),
        ("ql:w:worker", LOCK_LOST),
        (LOG, LOCK_LOST),
        ("ql:failed", "jid"),
        (LOG, EXHAUSTED),
    ]


# ---- complete --------------------------------------------------------------------------------


async def test_complete(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        await vocab.complete(1, "jid")
    assert captured.messages == [(LOG, COMPLETED)]


async def test_tracked_complete(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.complete(1, "jid")
    assert captured.messages == [("ql:completed", "jid"), (LOG, COMPLETED)]


async def test_advance(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        assert await vocab.advance(1, "jid", "queue") == "waiting"
    assert captured.messages == [
        (LOG, '{"jid":"jid","to":"queue","event":"advanced","queue":"queue"}')
    ]


async def test_tracked_advance_with_options(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "dep", "elsewhere")
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        assert await vocab.advance(1, "jid", "other", "depends", '["dep"]') == "depends"
    assert captured.messages == [
        ("ql:completed", "jid"),
        (LOG, '{"jid":"jid","to":"other","event":"advanced","queue":"queue"}'),
    ]


async def test_release_of_dependents_publishes_nothing_more(
    vocab: Vocab, events: EventsFactory
) -> None:
    await running(vocab)
    await vocab.put(0, "child", "other", depends=["jid"])
    await vocab.track(0, "child")
    async with events() as captured:
        await vocab.complete(1, "jid")
    assert captured.messages == [(LOG, COMPLETED)]


# ---- fail / retry / timeout ------------------------------------------------------------------


async def test_fail(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    async with events() as captured:
        await vocab.fail(1, "jid", "worker", "grp", "mess")
    assert captured.messages == [(LOG, FAILED)]


async def test_tracked_fail(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.fail(1, "jid", "worker", "grp", "mess")
    assert captured.messages == [(LOG, FAILED), ("ql:failed", "jid")]


async def test_tracked_retry_with_exhausted_retries(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, retries=0)
    await vocab.track(0, "jid")
    async with events() as captured:
        assert await vocab.retry(1, "jid") == -1
    # CORE 6.7: only ql:failed; REQLESS 10: nothing at all
    assert captured.messages == ([] if vocab.reqless else [("ql:failed", "jid")])
    assert (await vocab.get(1, "jid"))["state"] == "failed"


async def test_retry_that_keeps_retries_publishes_nothing(
    vocab: Vocab, events: EventsFactory
) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        assert await vocab.retry(1, "jid") == 4
    assert captured.messages == []


async def test_timeout(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.track(0, "jid")
    async with events() as captured:
        assert await vocab.timeout(1, "jid") is None
    assert captured.messages == [("ql:w:worker", LOCK_LOST), (LOG, LOCK_LOST)]
    # REQLESS 8.8 clears the worker field, the payload still names the previous worker
    assert (await vocab.get(1, "jid"))["worker"] == ("" if vocab.reqless else "worker")


async def test_timeout_of_several_jobs(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, "a", worker="w1")
    await running(vocab, "b", worker="w2")
    async with events() as captured:
        await vocab.timeout(1, "b", "a")
    b_lost = '{"jid":"b","event":"lock_lost","worker":"w2"}'
    a_lost = '{"jid":"a","event":"lock_lost","worker":"w1"}'
    assert captured.messages == [
        ("ql:w:w2", b_lost),
        (LOG, b_lost),
        ("ql:w:w1", a_lost),
        (LOG, a_lost),
    ]


# ---- cancel ----------------------------------------------------------------------------------


async def test_cancel_waiting(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid")
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, CANCELED)]


async def test_tracked_cancel(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid")
    await vocab.track(0, "jid")
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, CANCELED), ("ql:canceled", "jid")]


async def test_cancel_running(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, queue="q", worker="wrk")
    payload = '{"jid":"jid","queue":"q","event":"canceled","worker":"wrk"}'
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, payload), ("ql:w:wrk", payload)]


async def test_tracked_cancel_running(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, queue="q", worker="wrk")
    await vocab.track(0, "jid")
    payload = '{"jid":"jid","queue":"q","event":"canceled","worker":"wrk"}'
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, payload), ("ql:w:wrk", payload), ("ql:canceled", "jid")]


async def test_cancel_depends(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "dep", "other")
    await vocab.put(0, "jid", depends=["dep"])
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, CANCELED)]


async def test_cancel_scheduled(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "jid", delay=10)
    async with events() as captured:
        await vocab.cancel(1, "jid")
    assert captured.messages == [(LOG, CANCELED)]


async def test_cancel_failed(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.fail(1, "jid", "worker", "grp", "mess")
    async with events() as captured:
        await vocab.cancel(2, "jid")
    assert captured.messages == [(LOG, CANCELED)]


async def test_cancel_nonexistent(vocab: Vocab, events: EventsFactory) -> None:
    async with events() as captured:
        assert await vocab.cancel(1, "jid") == ["jid"]
    assert captured.messages == [
        (LOG, '{"jid":"jid","queue":false,"event":"canceled","worker":false}')
    ]


async def test_cancel_complete_publishes_nothing(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab)
    await vocab.complete(1, "jid")
    await vocab.track(1, "jid")
    async with events() as captured:
        assert await vocab.cancel(2, "jid") == ["jid"]
    assert captured.messages == []


async def test_cancel_several_in_argument_order(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.put(0, "a")
    await vocab.put(0, "b", depends=["a"])
    await vocab.track(0, "a")
    async with events() as captured:
        await vocab.cancel(1, "b", "nope", "a")
    assert captured.messages == [
        (LOG, '{"jid":"b","queue":"queue","event":"canceled","worker":""}'),
        (LOG, '{"jid":"nope","queue":false,"event":"canceled","worker":false}'),
        (LOG, '{"jid":"a","queue":"queue","event":"canceled","worker":""}'),
        ("ql:canceled", "a"),
    ]


# ---- config ----------------------------------------------------------------------------------


async def test_config_set_and_unset(vocab: Vocab, events: EventsFactory) -> None:
    async with events() as captured:
        await vocab.lua("config.set", 0, "foo", "bar")
        await vocab.lua("config.unset", 0, "foo")
    assert captured.messages == [
        (LOG, '{"option":"foo","event":"config_set","value":"bar"}'),
        (LOG, '{"event":"config_unset","option":"foo"}'),
    ]


# ---- JSON escaping of values (CORE 1.4 rule 4, 7.2) ------------------------------------------


async def test_put_payload_escapes_slash_and_quote(vocab: Vocab, events: EventsFactory) -> None:
    async with events() as captured:
        await vocab.put(0, "a/b", 'q"1')
    assert captured.messages == [(LOG, '{"jid":"a\\/b","event":"put","queue":"q\\"1"}')]


async def test_failed_payload_escapes_every_value(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, "j/1", "q/1", worker='w"1')
    message = 'said "hi" \\ / \n\t\x01 é'
    async with events() as captured:
        await vocab.fail(1, "j/1", 'w"1', "g/1", message)
    assert captured.messages == [
        (
            LOG,
            '{"message":"said \\"hi\\" \\\\ \\/ \\n\\t\\u0001 é","jid":"j\\/1",'
            '"group":"g\\/1","event":"failed","worker":"w\\"1"}',
        )
    ]


async def test_worker_channel_is_the_raw_name(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, "j/1", "q/1", worker="w/1")
    payload = '{"jid":"j\\/1","queue":"q\\/1","event":"canceled","worker":"w\\/1"}'
    async with events() as captured:
        await vocab.cancel(1, "j/1")
    assert captured.messages == [(LOG, payload), ("ql:w:w/1", payload)]


async def test_lock_lost_payload_escapes(vocab: Vocab, events: EventsFactory) -> None:
    await running(vocab, "j/1", worker='w"/1')
    payload = '{"jid":"j\\/1","event":"lock_lost","worker":"w\\"\\/1"}'
    async with events() as captured:
        await vocab.put(1, "j/1", worker="other")
    assert captured.messages == [
        (LOG, '{"jid":"j\\/1","event":"put","queue":"queue"}'),
        ('ql:w:w"/1', payload),
        (LOG, payload),
    ]


async def test_advance_and_exhaustion_payloads_escape(vocab: Vocab, events: EventsFactory) -> None:
    await vocab.config_set(0, "grace-period", 0)
    await running(vocab, "a", 'q"1')
    await running(vocab, "b", 'q"1', retries=0)
    async with events() as captured:
        await vocab.advance(1, "a", "n/2", queue='q"1')
        await vocab.pop(61, 'q"1', "another")
    lost = '{"jid":"b","event":"lock_lost","worker":"worker"}'
    assert captured.messages == [
        (LOG, '{"jid":"a","to":"n\\/2","event":"advanced","queue":"q\\"1"}'),
        ("ql:w:worker", lost),
        (LOG, lost),
        (
            LOG,
            '{"message":"Job exhausted retries in queue \\"q\\"1\\"","jid":"b",'
            '"group":"failed-retries-q\\"1","event":"failed","worker":"worker"}',
        ),
    ]


async def test_config_payload_escapes(vocab: Vocab, events: EventsFactory) -> None:
    async with events() as captured:
        await vocab.lua("config.set", 0, "a/b", 'c"d\\e')
        await vocab.lua("config.unset", 0, "a/b")
    assert captured.messages == [
        (LOG, '{"option":"a\\/b","event":"config_set","value":"c\\"d\\\\e"}'),
        (LOG, '{"event":"config_unset","option":"a\\/b"}'),
    ]


# ---- commands that publish nothing (CORE 7.3 "all others") -----------------------------------


async def test_silent_commands(vocab: Vocab, redis: aioredis.Redis, events: EventsFactory) -> None:
    await vocab.put(0, "a", "other")
    await vocab.put(0, "b", depends=["a"], tags=["t"])
    await running(vocab, "r", "rq")
    await running(vocab, "f", "fq")
    await vocab.fail(0, "f", "worker", "group", "message")
    for jid in ("a", "b", "r", "f"):
        await vocab.track(0, jid)
    async with events() as captured:
        await vocab.depends(1, "b", "on", "r")
        await vocab.depends(1, "b", "off", "r")
        await vocab.priority(1, "a", 5)
        await vocab.log(1, "a", "message", '{"x": 1}')
        await vocab.tag_add(1, "a", "t", "u")
        await vocab.tag_remove(1, "a", "u")
        await vocab.tagged(1, "t")
        await vocab.tags_top(1)
        await vocab.tracked(1)
        await vocab.get(1, "a")
        await vocab.peek(1, "other")
        await vocab.heartbeat(1, "r")
        await vocab.failed_counts(1)
        await vocab.failed_group(1, "group")
        assert await vocab.unfail(1, "fq", "group") == 1
        await vocab.depends(2, "b", "off", "all")
    assert captured.messages == []
    assert await redis.zcard("ql:q:fq-work") == 1
