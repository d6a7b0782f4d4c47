"""Queue: put (and its options, job classes, defaults, payloads), put_many, pop, peek,
recur, pause, length, counts, stats, listings, heartbeat, throttle, unfail, forget."""

from __future__ import annotations

import datetime
import math
import os
import uuid
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio
import pytest

import aqless
from aqless import (
    Durations,
    InvalidArgumentError,
    InvalidValueError,
    JobNotFoundError,
    JobState,
    LockLostError,
    PayloadError,
    PutRequest,
    QueueCounts,
    QueueStats,
    ThrottleInfo,
)
from aqless.puts import JobClass, new_jid
from tests.support.clients import (
    START,
    START_DAY,
    WORKER,
    Counted,
    ManualClock,
    get_job,
    get_recurring,
    pop_one,
)

pytest_plugins = ["tests.support.client_fixtures"]


class SendEmail:
    class Nested:
        pass


async def resize_image(job: aqless.Job) -> None:
    pass


class WithDefaults:
    """A job class whose options depend on its data."""

    @staticmethod
    def default_job_options(data: Any) -> dict[str, Any]:
        return {
            "jid": f"defaults-{data['n']}",
            "priority": data["n"],
            "tags": ["defaults"],
            "retries": 2,
            "delay": 30,
            "throttles": ["mail"],
        }


class WithClassDefaults:
    @classmethod
    def default_job_options(cls, data: Any) -> Mapping[str, object]:
        return {"priority": 4, "tags": [cls.__name__]}


class WithBadDefaults:
    @staticmethod
    def default_job_options(data: Any) -> list[str]:
        return ["priority"]


# -- put ---------------------------------------------------------------------------------------


async def test_put_returns_the_jid_and_stores_the_job(
    timed_client: aqless.Client,
) -> None:
    queue = timed_client.queues["q"]
    jid = await queue.put("app.jobs.Welcome", {"user": 42})
    assert isinstance(jid, str)
    assert len(jid) == 32
    assert uuid.UUID(hex=jid).version == 4  # as uuid.uuid4().hex
    job = await get_job(timed_client, jid)
    assert (job.jid, job.klass_name, job.queue_name, job.data) == (
        jid,
        "app.jobs.Welcome",
        "q",
        {"user": 42},
    )
    assert (job.state, job.priority, job.tags, job.original_retries, job.retries_left) == (
        JobState.WAITING,
        0.0,
        (),
        5,
        5,
    )
    assert (job.dependencies, job.throttles, job.worker_name) == ((), ("ql:q:q",), "")
    # another put gets another jid
    assert await queue.put("app.jobs.Welcome") != jid


@pytest.mark.parametrize(
    ("data", "stored"),
    [
        (None, "{}"),
        ({"a": [1, 2.5, None, True], "é": "ü"}, '{"a":[1,2.5,null,true],"\\u00e9":"\\u00fc"}'),
        ([1, "x"], '[1,"x"]'),
        ("text", '"text"'),
        # what msgspec encodes (aqless._connection.data_text), then what it leaves to json
        (
            {"n": 1, "f": [0.5, 1e-4, 1e15], "s": "x" * 5000},
            '{"n":1,"f":[0.5,0.0001,1000000000000000.0],"s":"' + "x" * 5000 + '"}',
        ),
        ({"f": [1e16, 1e-5], "del": "\x7f"}, '{"f":[1e+16,1e-05],"del":"\\u007f"}'),
    ],
)
async def test_put_data_is_stored_as_json(client: aqless.Client, data: Any, stored: str) -> None:
    jid = await client.queues["q"].put("app.Job", data)
    assert await client.redis.hget(f"ql:j:{jid}", "data") == stored
    assert (await get_job(client, jid)).data == ({} if data is None else data)


async def test_put_priority(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    low = await queue.put("app.Job", priority=-1)
    high = await queue.put("app.Job", priority=10.5)
    middle = await queue.put("app.Job")
    assert (await get_job(timed_client, high)).priority == 10.5
    assert [job.jid for job in await queue.pop_many(3)] == [high, middle, low]


async def test_put_delay(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    jid = await queue.put("app.Job", delay=30)
    assert (await get_job(timed_client, jid)).state == JobState.SCHEDULED
    assert await queue.jobs(JobState.SCHEDULED) == [jid]
    clock.advance(29)
    assert await queue.pop() is None
    clock.advance(1)
    assert (await pop_one(queue)).jid == jid


async def test_put_at_a_time_schedules_it_for_that_time_on_the_clients_clock(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    paris_summer = datetime.timezone(datetime.timedelta(hours=2))
    at = datetime.datetime.fromtimestamp(START + 90, tz=paris_summer)
    jid = await queue.put("app.Job", at=at)
    by_number = (await queue.put_result("app.Job", at=START + 120)).jid
    (in_many,) = await queue.put_many([PutRequest("app.Job", at=START + 150)])
    assert await queue.jobs(JobState.SCHEDULED) == [jid, by_number, in_many]
    for elapsed, due in ((89, None), (1, jid), (29, None), (1, by_number), (30, in_many)):
        clock.advance(elapsed)
        popped = await queue.pop()
        assert (popped and popped.jid) == due


async def test_put_at_a_time_past_runs_now_and_wins_over_the_class_delay(
    timed_client: aqless.Client,
) -> None:
    queue = timed_client.queues["q"]
    past = await queue.put("app.Job", at=datetime.datetime.fromtimestamp(START - 60, datetime.UTC))
    own = await queue.put(WithDefaults, {"n": 1}, at=START)  # the class says 30 s
    assert [(await get_job(timed_client, jid)).state for jid in (past, own)] == [
        JobState.WAITING,
        JobState.WAITING,
    ]


async def test_put_at_refuses_a_delay_beside_it_and_naive_datetimes(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    naive = datetime.datetime(2030, 1, 1, 9, 0)
    with pytest.raises(aqless.ConfigurationError, match="not both"):
        await queue.put("app.Job", delay=10, at=naive.replace(tzinfo=datetime.UTC))
    with pytest.raises(aqless.ConfigurationError, match="naive datetime: its time zone"):
        await queue.put("app.Job", at=naive)
    with pytest.raises(aqless.ConfigurationError, match="naive"):
        PutRequest("app.Job", at=naive)
    with pytest.raises(aqless.ConfigurationError, match="not both"):
        await queue.put_result("app.Job", delay=1, at=1.0)
    with pytest.raises(InvalidArgumentError, match="finite Unix time, not nan"):
        await queue.put("app.Job", at=math.nan)
    assert await queue.length() == 0


async def test_put_tags(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("app.Job", tags=["red", "big"])
    assert (await get_job(client, jid)).tags == ("red", "big")
    assert (await client.jobs.tagged("big")).jids == (jid,)


async def test_put_retries(client: aqless.Client) -> None:
    jid = await client.queues["q"].put("app.Job", retries=2)
    job = await get_job(client, jid)
    assert (job.original_retries, job.retries_left) == (2, 2)


async def test_put_depends(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    first = await queue.put("app.Job")
    second = await queue.put("app.Job", depends=[first, "no-such-job"])
    job = await get_job(timed_client, second)
    assert (job.state, job.dependencies) == (JobState.DEPENDS, (first,))
    assert (await get_job(timed_client, first)).dependents == (second,)
    assert await queue.jobs(JobState.DEPENDS) == [second]
    assert [job.jid for job in await queue.pop_many(5)] == [first]
    await (await get_job(timed_client, first)).complete()
    assert (await get_job(timed_client, second)).state == JobState.WAITING
    # a dependency that is complete (or missing) is no dependency
    third = await queue.put("app.Job", depends=[first])
    assert (await get_job(timed_client, third)).state == JobState.WAITING


async def test_put_throttles(timed_client: aqless.Client) -> None:
    await timed_client.throttles["mail"].set(1)
    queue = timed_client.queues["q"]
    first = await queue.put("app.Job", throttles=["mail"], priority=1)
    second = await queue.put("app.Job", throttles=["mail"])
    assert (await get_job(timed_client, first)).throttles == ("mail", "ql:q:q")
    assert [job.jid for job in await queue.pop_many(2)] == [first]
    assert (await get_job(timed_client, second)).state == JobState.THROTTLED


async def test_put_stores_classes_and_functions_as_module_and_qualname(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    cases: list[tuple[JobClass, str]] = [
        (SendEmail, "tests.test_queue.SendEmail"),
        (SendEmail.Nested, "tests.test_queue.SendEmail.Nested"),
        (resize_image, "tests.test_queue.resize_image"),
        ("app.jobs.Welcome", "app.jobs.Welcome"),
    ]
    for klass, name in cases:
        jid = await queue.put(klass)
        assert (await get_job(client, jid)).klass_name == name
    with pytest.raises(ValueError, match="must not be empty"):
        await queue.put("")


def test_new_jids_are_uuid4_hex(monkeypatch: pytest.MonkeyPatch) -> None:
    for random in (os.urandom(16) for _ in range(200)):
        monkeypatch.setattr(os, "urandom", lambda size, random=random: random)
        assert new_jid() == uuid.uuid4().hex
        monkeypatch.undo()
    assert len({new_jid() for _ in range(1000)}) == 1000


async def test_put_uses_the_class_default_options(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    jid = await queue.put(WithDefaults, {"n": 7})
    assert jid == "defaults-7"
    job = await get_job(timed_client, jid)
    assert (job.priority, job.tags, job.original_retries) == (7.0, ("defaults",), 2)
    assert (job.state, job.throttles) == (JobState.SCHEDULED, ("mail", "ql:q:q"))
    clock.advance(30)
    assert (await pop_one(queue)).jid == jid

    jid = await queue.put(WithClassDefaults)
    job = await get_job(timed_client, jid)
    assert (job.priority, job.tags) == (4.0, ("WithClassDefaults",))


async def test_put_options_override_the_class_defaults(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    jid = await queue.put(
        WithDefaults,
        {"n": 7},
        jid="mine",
        priority=1,
        tags=["own"],
        retries=9,
        delay=0,  # explicit: runs now, not after the class's 30 seconds
        throttles=[],
    )
    assert jid == "mine"
    job = await get_job(timed_client, jid)
    assert (job.priority, job.tags, job.original_retries) == (1.0, ("own",), 9)
    assert (job.state, job.throttles) == (JobState.WAITING, ("ql:q:q",))
    assert await timed_client.jobs.get("defaults-7") is None


async def test_put_refuses_default_options_that_are_not_a_mapping(
    client: aqless.Client,
) -> None:
    with pytest.raises(TypeError, match="default_job_options must return a mapping"):
        await client.queues["q"].put(WithBadDefaults)
    assert await client.redis.dbsize() == 0


async def test_put_with_an_existing_jid_replaces_the_job(timed_client: aqless.Client) -> None:
    client = timed_client
    first, second = client.queues["first"], client.queues["second"]
    await first.put("app.Old", {"v": 1}, jid="unique", priority=5, tags=["a"])
    assert await second.put("app.New", {"v": 2}, jid="unique") == "unique"
    job = await get_job(client, "unique")
    assert (job.klass_name, job.queue_name, job.data) == ("app.New", "second", {"v": 2})
    # what the second put did not say is kept from the job it replaced
    assert (job.priority, job.tags) == (5.0, ("a",))
    assert (await first.length(), await second.length()) == (0, 1)
    assert [entry.what for entry in job.history] == ["put", "put"]


async def test_put_refuses_data_that_is_not_json_before_sending_anything(
    counted: Counted,
) -> None:
    queue = counted.client.queues["q"]
    for data in ({"when": datetime.date(2024, 1, 1)}, {1, 2}, {"x": math.nan}, b"bytes"):
        with pytest.raises(PayloadError, match="job data is not JSON-serializable"):
            await queue.put("app.Job", data)
    assert counted.round_trips.count == 0
    assert await counted.client.redis.dbsize() == 0


async def test_put_numbers_out_of_range_are_refused_before_sending(counted: Counted) -> None:
    queue = counted.client.queues["q"]
    with pytest.raises(InvalidArgumentError, match="priority must be a number") as raised:
        await queue.put("app.Job", priority=math.nan)
    assert raised.value.command == "queue.put"
    with pytest.raises(InvalidArgumentError, match="delay must be a number of seconds from 0"):
        await queue.put("app.Job", delay=math.inf)
    with pytest.raises(InvalidArgumentError, match="delay must be a number of seconds from 0"):
        await queue.put("app.Job", delay=-5)
    with pytest.raises(InvalidArgumentError, match="retries must be a whole number from 0"):
        await queue.put("app.Job", retries=-1)
    assert counted.round_trips.count == 0
    assert await counted.client.redis.dbsize() == 0


async def test_put_requeue_needs_an_existing_job(client: aqless.Client) -> None:
    queue = client.queues["q"]
    with pytest.raises(JobNotFoundError, match="Requeue\\(\\): Job gone does not exist"):
        await queue.put("app.Job", jid="gone", requeue=True)
    await queue.put("app.Job", {"v": 1}, jid="here")
    await client.queues["other"].put("app.Job", {"v": 2}, jid="here", requeue=True)
    assert (await get_job(client, "here")).queue_name == "other"


# -- put_many ----------------------------------------------------------------------------------


async def test_put_many_10000_jobs_in_10_round_trips(counted: Counted) -> None:
    client, round_trips = counted.client, counted.round_trips
    queue = client.queues["bulk"]
    requests = [PutRequest("app.Job", {"n": n}, jid=f"job-{n}") for n in range(10_000)]
    jids = await queue.put_many(requests)
    # one pipeline of 1000 puts per round trip, up to 100 puts a script call (jobs.puts)
    assert round_trips.count == 10, f"{round_trips.count} round trips for 10,000 jobs"
    assert jids == [f"job-{n}" for n in range(10_000)]
    assert await queue.length() == 10_000
    assert (await get_job(client, "job-9999")).data == {"n": 9999}
    info = await client.redis.info("commandstats")
    assert info["cmdstat_fcall"]["calls"] >= 100  # the puts, in calls of 100


async def test_put_many_reloads_a_lost_protocol_and_puts_every_job(counted: Counted) -> None:
    client, round_trips = counted.client, counted.round_trips
    await client.redis.function_flush()
    await client.redis.script_flush()
    round_trips.count = 0
    requests = [PutRequest("app.Job", {"n": n}) for n in range(10_000)]
    assert len(await client.queues["bulk"].put_many(requests)) == 10_000
    # the first two batches go together: each is refused whole, loads the library, and is
    # sent again; the eight others go once
    assert round_trips.count == 14, f"{round_trips.count} round trips for 10,000 jobs"
    assert await client.queues["bulk"].length() == 10_000


async def test_put_many_sends_the_next_round_trip_before_reading_this_ones(
    counted: Counted,
) -> None:
    """The client packs and sends a put_many's next round trip while the server runs the
    puts of the one before: one round trip ahead, never more."""
    wire = counted.client.protocol.wire
    send = wire._send
    events: list[str] = []

    async def noting(packed: list[bytes], expected: int, blocks: float = 0.0) -> Any:
        events.append(f"sent {expected}")
        try:
            return await send(packed, expected, blocks)
        finally:
            events.append(f"read {expected}")

    wire._send = noting  # type: ignore[method-assign]
    requests = [PutRequest("app.Job", {"n": n}, jid=f"ahead-{n}") for n in range(5)]
    jids = await counted.client.queues["bulk"].put_many(requests, batch=2)
    assert jids == [f"ahead-{n}" for n in range(5)]
    # the second before the first's replies (each round trip's puts go as one jobs.puts call)
    assert [event.split()[0] for event in events[:3]] == ["sent", "sent", "read"]
    in_flight, most = 0, 0
    for event in events:
        in_flight += 1 if event.startswith("sent") else -1
        most = max(most, in_flight)
    assert most == 2
    assert [event.split()[0] for event in events].count("sent") == 3  # 2, 2 and 1 jobs
    queued = await counted.client.queues["bulk"].peek(5)
    assert [job.jid for job in queued] == jids  # put in their order


async def test_put_many_batch_size(counted: Counted) -> None:
    queue = counted.client.queues["bulk"]
    requests = [PutRequest("app.Job", {"n": n}) for n in range(250)]
    assert len(await queue.put_many(requests, batch=100)) == 250
    assert counted.round_trips.count == 3
    assert await queue.length() == 250


async def test_put_many_round_trips_carry_at_most_their_bytes(counted: Counted) -> None:
    """Big payloads go fewer to a round trip than `batch`: 40 jobs of 400 KB in four round
    trips of 4 MiB at most (ten each), in order; a payload over the cap goes alone."""
    queue = counted.client.queues["bulk"]
    big = "x" * 400_000
    requests = [PutRequest("app.Job", {"n": n, "pad": big}) for n in range(40)]
    jids = await queue.put_many(requests)
    assert counted.round_trips.count == 4
    assert [(await get_job(counted.client, jid)).data["n"] for jid in jids] == list(range(40))
    counted.round_trips.count = 0
    huge = [PutRequest("app.Job", {"pad": "y" * 5_000_000}), PutRequest("app.Job", {"n": 1})]
    assert len(await queue.put_many(huge)) == 2
    assert counted.round_trips.count == 2  # the huge one alone, then the small one


async def test_put_many_options_and_defaults(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    jids = await queue.put_many(
        [
            PutRequest(WithDefaults, {"n": 1}),
            PutRequest(SendEmail, None, jid="mail", priority=3, tags=["t"], retries=1),
            PutRequest("app.Job", {"v": 1}, delay=10, depends=["mail"], throttles=["x"]),
        ]
    )
    assert jids[:2] == ["defaults-1", "mail"]
    defaults, mail, last = await timed_client.jobs.get_many(jids)
    assert (defaults.state, defaults.priority, defaults.tags) == (
        JobState.SCHEDULED,
        1.0,
        ("defaults",),
    )
    assert (mail.klass_name, mail.priority, mail.tags, mail.original_retries) == (
        "tests.test_queue.SendEmail",
        3.0,
        ("t",),
        1,
    )
    assert (last.state, last.dependencies, last.throttles) == (
        JobState.DEPENDS,
        ("mail",),
        ("x", "ql:q:q"),
    )


class Late:
    @staticmethod
    def default_job_options(data: object) -> dict[str, object]:
        return {"delay": math.inf}


async def test_put_many_refuses_a_bad_number_before_sending_anything(counted: Counted) -> None:
    queue = counted.client.queues["q"]
    requests = [PutRequest("app.Job", {"n": n}, jid=f"job-{n}") for n in range(6)]
    requests[4] = PutRequest(Late, {"n": 4}, jid="job-4")  # its class's delay: never
    with pytest.raises(InvalidArgumentError, match="delay must be") as raised:
        await queue.put_many(requests, batch=2)
    assert raised.value.command == "queue.put"
    assert counted.round_trips.count == 0
    assert await counted.client.redis.dbsize() == 0


async def test_put_many_refuses_bad_data_before_sending_anything(counted: Counted) -> None:
    queue = counted.client.queues["q"]
    requests = [PutRequest("app.Job", {"n": 1}), PutRequest("app.Job", {"n": {1, 2}})]
    with pytest.raises(PayloadError):
        await queue.put_many(requests)
    assert counted.round_trips.count == 0
    assert await counted.client.redis.dbsize() == 0


async def test_put_many_of_nothing_sends_nothing(counted: Counted) -> None:
    assert await counted.client.queues["q"].put_many([]) == []
    assert counted.round_trips.count == 0


# -- pop, pop_many, peek -----------------------------------------------------------------------


async def test_pop(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    assert await queue.pop() is None
    jid = await queue.put("app.Job", {"n": 1})
    clock.advance(5)
    job = await pop_one(queue)
    assert (job.jid, job.data, job.state, job.worker_name) == (
        jid,
        {"n": 1},
        JobState.RUNNING,
        WORKER,
    )
    assert job.expires_at == START + 5 + 60
    assert job.history[-1].what == "popped"
    assert job.history[-1].details == {"worker": WORKER}
    assert await queue.pop() is None  # it is ours now


async def test_pop_for_another_worker(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    await queue.put("app.Job")
    job = await pop_one(queue, worker="worker-2")
    assert job.worker_name == "worker-2"
    assert (await timed_client.workers.jobs("worker-2")).jobs == (job.jid,)


async def test_pop_many(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    assert await queue.pop_many(3) == []
    jids = []
    for _ in range(5):
        jids.append(await queue.put("app.Job"))
        clock.advance(1)
    popped = await queue.pop_many(3)
    assert [job.jid for job in popped] == jids[:3]  # same priority: oldest first
    assert {job.state for job in popped} == {JobState.RUNNING}
    for count in (0, -1, 1.5, True):  # refused by the rule `pop.count`, nothing popped
        with pytest.raises(InvalidValueError, match="count"):
            await queue.pop_many(count)  # type: ignore[arg-type]
    assert [job.jid for job in await queue.pop_many(10)] == jids[3:]


async def test_peek(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    assert await queue.peek() == []
    jids = []
    for _ in range(3):
        jids.append(await queue.put("app.Job"))
        clock.advance(1)
    assert [job.jid for job in await queue.peek()] == jids[:1]
    assert [job.jid for job in await queue.peek(2)] == jids[:2]
    assert [job.jid for job in await queue.peek(2, offset=1)] == jids[1:]
    peeked = await queue.peek(5)
    assert {job.state for job in peeked} == {JobState.WAITING}  # not taken
    assert (await queue.counts()).waiting == 3
    assert [job.jid for job in await queue.pop_many(5)] == jids


@pytest.mark.parametrize(
    ("count", "offset", "refused"),
    [(math.nan, 0, "count"), (0, 0, "count"), (-1, 0, "count"), (1, -1, "offset")],
)
async def test_listings_refuse_a_bad_count_or_offset(
    client: aqless.Client, count: int, offset: int, refused: str
) -> None:
    queue = client.queues["q"]
    await queue.put("app.Job", jid="a")
    listings = [
        queue.peek(count, offset=offset),
        queue.jobs("waiting", offset=offset, count=count),
        queue.jobs("scheduled", offset=offset, count=count),
        queue.jobs("failed", offset=offset, count=count),
        client.jobs.tagged("t", offset=offset, count=count),
        client.jobs.completed(offset=offset, count=count),
        client.jobs.failed("g", offset=offset, count=count),
        client.tags.top(offset=offset, count=count),
        client.batches.recent(offset=offset, count=count),
    ]
    for listing in listings:
        with pytest.raises(InvalidValueError, match=f"{refused} must be a whole number") as error:
            await listing
        assert error.value.option == refused


# -- pause, unpause ----------------------------------------------------------------------------


async def test_pause_and_unpause(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    jid = await queue.put("app.Job")
    clock.advance(1)
    await queue.pause()
    assert (await queue.counts()).paused is True
    assert await queue.pop() is None
    assert await queue.pop_many(5) == []
    assert [job.jid for job in await queue.peek()] == [jid]  # peek and put still work
    await queue.put("app.Job")
    await timed_client.queues["other"].put("app.Job")
    assert (await pop_one(timed_client.queues["other"])).state == JobState.RUNNING  # not paused
    await queue.unpause()
    assert (await queue.counts()).paused is False
    assert (await pop_one(queue)).jid == jid
    await queue.unpause()  # unpausing a running queue changes nothing


async def test_pause_with_stopjobs_times_out_the_running_jobs(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    for jid in ("a", "b", "c", "d"):
        await queue.put("app.Job", jid=jid)
        clock.advance(1)  # popped in this order
    first, second, third = await queue.pop_many(3)
    await third.complete()
    clock.advance(30)
    (fourth,) = await queue.pop_many(1, worker="worker-2")
    assert fourth.jid == "d"
    clock.advance(31)  # a's and b's locks have expired (stalled, until a pop reclaims them)
    assert await queue.jobs(JobState.STALLED) == ["a", "b"]

    assert await queue.pause(stopjobs=True) == ["d", "a", "b"]  # running, then stalled ones
    assert (await queue.counts()).paused is True
    for job in (first, second, fourth):
        assert (await job.refresh()).state == JobState.STALLED
        with pytest.raises(LockLostError):
            await job.complete()
    assert await queue.jobs(JobState.RUNNING) == await queue.jobs(JobState.STALLED) == []
    assert await queue.pop() is None
    await queue.unpause()
    assert {job.jid for job in await queue.pop_many(5)} == {"a", "b", "d"}
    assert await queue.pause() == []  # without stopjobs, running jobs go on
    assert await queue.jobs(JobState.RUNNING) != []


async def test_jobs_lists_waiting_ones_in_pop_order_without_taking_them(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    for jid, priority in (("a", 0), ("b", 5), ("c", 0), ("d", 1)):
        await queue.put("app.Job", jid=jid, priority=priority)
        clock.advance(1)
    assert (await pop_one(queue)).jid == "b"
    clock.advance(61)  # b's lock expired: stalled, listed by a peek before the work set
    assert await queue.jobs(JobState.WAITING) == ["d", "a", "c"]
    assert await queue.jobs("waiting", offset=1, count=1) == ["a"]
    assert await queue.jobs(JobState.STALLED) == ["b"]
    assert (await queue.counts()).waiting == 3  # listing took nothing


async def test_jobs_lists_the_failed_jobs_of_this_queue_only(timed_client: aqless.Client) -> None:
    for name, jid, group in (("q", "a", "g1"), ("other", "b", "g1"), ("q", "c", "g2")):
        await timed_client.queues[name].put("app.Job", jid=jid)
        await (await pop_one(timed_client.queues[name])).fail(group, "boom")
    queue = timed_client.queues["q"]
    assert await queue.jobs(JobState.FAILED) == ["a", "c"]  # group by group, by name
    assert await queue.jobs("failed", offset=1) == ["c"]
    assert await timed_client.queues["other"].jobs("failed") == ["b"]


async def test_jobs_accepts_every_job_state(timed_client: aqless.Client) -> None:
    for state in JobState:
        assert await timed_client.queues["q"].jobs(state) == []


# -- recur -------------------------------------------------------------------------------------


async def test_recur_stores_a_template(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    rjid = await queue.recur(
        SendEmail,
        {"to": "x"},
        60,
        jid="every-minute",
        offset=30,
        priority=2,
        tags=["cron"],
        retries=3,
        backlog=4,
        throttles=["mail"],
    )
    assert rjid == "every-minute"
    template = await get_recurring(timed_client, rjid)
    assert (template.klass_name, template.queue_name, template.data) == (
        "tests.test_queue.SendEmail",
        "q",
        {"to": "x"},
    )
    assert (template.interval, template.priority, template.retries, template.backlog) == (
        60.0,
        2.0,
        3,
        4,
    )
    assert (template.tags, template.throttles, template.count) == (
        ("cron",),
        ("mail", "ql:q:q"),
        0,
    )
    assert await queue.jobs("recurring") == [rjid]
    assert (await queue.counts()).recurring == 1
    # a random id by default
    other = await queue.recur("app.Job")
    assert len(other) == 32
    assert (await get_recurring(timed_client, other)).interval == 60.0


async def test_recur_spawns_jobs_on_schedule(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    rjid = await queue.recur("app.Tick", {"n": 1}, 60, offset=30, priority=2, tags=["cron"])
    assert await queue.pop() is None
    clock.advance(30)
    job = await pop_one(queue)
    assert (job.jid, job.spawned_from_jid, job.klass_name, job.data) == (
        f"{rjid}-1",
        rjid,
        "app.Tick",
        {"n": 1},
    )
    assert (job.priority, job.tags, job.queue_name) == (2.0, ("cron",), "q")
    assert await queue.pop() is None
    clock.advance(60)
    assert (await pop_one(queue)).jid == f"{rjid}-2"
    assert (await get_recurring(timed_client, rjid)).count == 2


async def test_recur_backlog_caps_the_catch_up(
    timed_client: aqless.Client, clock: ManualClock
) -> None:
    queue = timed_client.queues["q"]
    capped = await queue.recur("app.Tick", {}, 60, backlog=2)
    unlimited = await queue.recur("app.Tock", {}, 60)
    clock.advance(600)  # ten intervals missed
    spawned = [job.spawned_from_jid for job in await queue.pop_many(100)]
    assert spawned.count(unlimited) == 11
    assert spawned.count(capped) == 3  # the last two missed, and the one due now


async def test_recur_refusals(client: aqless.Client) -> None:
    queue = client.queues["q"]
    bad: tuple[dict[str, Any], ...] = (
        {"interval": 0},
        {"interval": -10},
        {"offset": -5},
        {"backlog": -1},
        {"retries": -1},
        {"priority": math.nan},
        {"tags": "vip"},
        {"throttles": "abc"},
    )
    for options in bad:
        ((name, value),) = options.items()
        interval = options.pop("interval", 60)
        with pytest.raises(InvalidValueError, match=f"{name} must be") as refused:
            await queue.recur("app.Job", {}, interval, **options)
        assert (refused.value.option, refused.value.value) == (name, value)
    with pytest.raises(PayloadError):
        await queue.recur("app.Job", {"x": object()}, 60)
    assert await client.redis.dbsize() == 0


# -- length, counts, stats ---------------------------------------------------------------------


async def test_length(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    assert await queue.length() == 0
    first = await queue.put("app.Job")
    await queue.put("app.Job", priority=-1)
    await queue.put("app.Job", delay=60)
    await queue.put("app.Job", depends=[first])
    await queue.pop()
    # running, waiting and scheduled; not those waiting for a dependency
    assert await queue.length() == 3


async def test_counts(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    assert await queue.counts() == QueueCounts("q", 0, 0, 0, 0, 0, 0, 0, paused=False)
    await timed_client.throttles["api"].set(1)
    first = await queue.put("app.Job", priority=3)
    await queue.put("app.Job", priority=2, throttles=["api"])
    await queue.put("app.Job", priority=1)
    await queue.put("app.Job", delay=600)
    await queue.put("app.Job", depends=[first])
    await queue.recur("app.Job", {}, 3600, offset=3600)
    await queue.pop(worker="early")
    clock.advance(30)
    await queue.pop(worker="late")  # holds the throttle
    await queue.put("app.Job", throttles=["api"])  # parked: the throttle is full
    clock.advance(31)  # the first lock has expired
    await queue.pause()
    assert await queue.counts() == QueueCounts(
        name="q",
        waiting=1,
        running=1,
        stalled=1,
        scheduled=1,
        depends=1,
        throttled=1,
        recurring=1,
        paused=True,
    )


async def test_stats(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    await client.config.set("grace-period", 0)
    queue = client.queues["q"]
    await queue.put("app.Job")
    clock.advance(5)
    job = await pop_one(queue)  # waited 5 s
    clock.advance(3)
    await job.complete()  # ran 3 s
    await queue.put("app.Job")
    clock.advance(1)
    await (await pop_one(queue)).fail("boom", "it broke")  # waited 1 s
    await queue.put("app.Job")
    await pop_one(queue)  # waited 0 s
    clock.advance(61)
    await pop_one(queue)  # its lock lapsed: reclaimed (a retry), waited 61 s

    stats = await queue.stats()
    assert (stats.failed, stats.failures, stats.retries) == (1, 1, 1)
    assert (stats.wait.count, stats.wait.mean) == (4, (5 + 1 + 0 + 61) / 4)
    mean = stats.wait.mean
    variance = sum((x - mean) ** 2 for x in (5, 1, 0, 61)) / 3
    assert stats.wait.std == pytest.approx(math.sqrt(variance))
    assert len(stats.wait.histogram) == 148
    histogram = [0] * 148
    histogram[0] = histogram[1] = histogram[5] = 1
    histogram[60] = 1  # 61 s: the 1-minute bucket
    assert stats.wait.histogram == tuple(histogram)
    run_histogram = [0] * 148
    run_histogram[3] = 1
    assert stats.run == Durations(count=1, mean=3.0, std=0.0, histogram=tuple(run_histogram))

    # the same day, named by a date or by a time in it
    assert await queue.stats(datetime.date(2023, 11, 14)) == stats
    assert await queue.stats(START_DAY + 60) == stats
    assert await queue.stats(datetime.datetime(2023, 11, 14, 1, tzinfo=datetime.UTC)) == stats
    # another day: nothing
    empty = Durations(count=0, mean=0.0, std=0.0, histogram=(0,) * 148)
    assert await queue.stats(datetime.date(2023, 11, 15)) == QueueStats(
        wait=empty, run=empty, failed=0, failures=0, retries=0
    )
    assert await client.queues["other"].stats() == QueueStats(empty, empty, 0, 0, 0)


# -- jobs by state -----------------------------------------------------------------------------


async def test_jobs_by_state(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    for state in (*JobState, "recurring"):
        if state not in (JobState.WAITING, JobState.FAILED):
            assert await queue.jobs(state) == []
    await client.throttles["api"].set(1)
    stalled = await queue.put("app.Job", priority=3)
    running = await queue.put("app.Job", priority=2, throttles=["api"])
    scheduled = await queue.put("app.Job", delay=600)
    depends = await queue.put("app.Job", depends=[stalled])
    rjid = await queue.recur("app.Job", {}, 3600, offset=3600)
    done = await client.queues["elsewhere"].put("app.Job")
    await (await pop_one(client.queues["elsewhere"])).complete()
    await queue.pop()
    clock.advance(30)
    await queue.pop()  # holds the throttle
    throttled = await queue.put("app.Job", throttles=["api"])
    clock.advance(31)

    assert await queue.jobs(JobState.RUNNING) == [running]
    assert await queue.jobs("running") == [running]
    assert await queue.jobs(JobState.STALLED) == [stalled]
    assert await queue.jobs(JobState.SCHEDULED) == [scheduled]
    assert await queue.jobs(JobState.DEPENDS) == [depends]
    assert await queue.jobs(JobState.THROTTLED) == [throttled]
    assert await queue.jobs("recurring") == [rjid]
    # completed jobs are every queue's
    assert await queue.jobs(JobState.COMPLETE) == [done]
    assert await client.queues["nowhere"].jobs(JobState.COMPLETE) == [done]


async def test_jobs_by_state_pages(timed_client: aqless.Client, clock: ManualClock) -> None:
    queue = timed_client.queues["q"]
    jids = []
    for _ in range(4):
        jids.append(await queue.put("app.Job", delay=60))
        clock.advance(1)
    assert await queue.jobs(JobState.SCHEDULED, offset=1, count=2) == jids[1:3]
    for _ in jids:
        await queue.put("app.Job", jid=_, requeue=True)  # waiting now
        await (await pop_one(queue)).complete()
        clock.advance(1)
    assert await queue.jobs(JobState.COMPLETE, offset=1, count=2) == jids[::-1][1:3]


async def test_jobs_by_an_unknown_state(client: aqless.Client) -> None:
    with pytest.raises(InvalidArgumentError, match='Jobs\\(\\): Unknown type "sleeping"'):
        await client.queues["q"].jobs("sleeping")


# -- heartbeat, throttle -----------------------------------------------------------------------


async def test_heartbeat_get_and_set(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    assert await queue.heartbeat() == 60.0
    await client.config.set("heartbeat", 45)
    assert await queue.heartbeat() == 45.0
    await queue.set_heartbeat(30)
    assert await queue.heartbeat() == 30.0
    assert await client.queues["other"].heartbeat() == 45.0
    assert await client.config.get("q-heartbeat") == "30"
    await queue.put("app.Job")
    assert (await pop_one(queue)).expires_at == START + 30
    await queue.set_heartbeat(None)  # back to the global setting
    assert await queue.heartbeat() == 45.0
    assert await client.config.get("q-heartbeat") is None


async def test_throttle_get_and_set(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    assert await queue.throttle() == ThrottleInfo(id="ql:q:q", maximum=0, ttl=-2)
    await queue.set_throttle(1)
    assert await queue.throttle() == ThrottleInfo(id="ql:q:q", maximum=1, ttl=-1)
    first = await queue.put("app.Job", priority=1)
    second = await queue.put("app.Job")
    [job] = await queue.pop_many(2)
    assert job.jid == first
    assert (await get_job(timed_client, second)).state == JobState.THROTTLED
    await job.complete()  # frees the slot
    assert (await pop_one(queue)).jid == second
    await queue.set_throttle(0)  # unlimited
    await queue.put("app.Job")
    await queue.put("app.Job")
    assert len(await queue.pop_many(2)) == 2


async def test_qless_max_concurrency_caps_aqless_pops(timed_client: aqless.Client) -> None:
    # qless's `queue.max_concurrency = 2` (the config key `q-max-concurrency`, which a Ruby
    # client sets): aqless's pops honour it, as classic pops do
    queue = timed_client.queues["q"]
    await timed_client.config.set("q-max-concurrency", 2)
    jids = [await queue.put("app.Job", jid=f"j{n}", priority=9 - n) for n in range(4)]
    running = await queue.pop_many(4)
    assert [job.jid for job in running] == jids[:2]
    assert await queue.pop_many(4) == []
    await running[0].complete()
    assert [job.jid for job in await queue.pop_many(4)] == ["j2"]


async def test_set_throttle_caps_a_queue(timed_client: aqless.Client) -> None:
    # reqless's replacement of max-concurrency: the queue's own throttle
    queue = timed_client.queues["q"]
    await queue.set_throttle(2)
    assert (await queue.throttle()).maximum == 2
    jids = [await queue.put("app.Job", jid=f"j{n}", priority=9 - n) for n in range(4)]
    running = await queue.pop_many(4)
    assert [job.jid for job in running] == jids[:2]
    assert await queue.pop_many(4) == []  # both slots held; j2, j3 wait for one
    await running[0].complete()
    assert [job.jid for job in await queue.pop_many(4)] == ["j2"]


# -- unfail, forget ----------------------------------------------------------------------------


async def test_unfail(timed_client: aqless.Client, clock: ManualClock) -> None:
    client = timed_client
    queue = client.queues["q"]
    jids = []
    for _ in range(3):
        jids.append(await queue.put("app.Job", retries=2))
        job = await pop_one(queue)
        await job.retry()  # spends a retry
        await (await pop_one(queue)).fail("boom", "it broke")
        clock.advance(1)
    target = client.queues["again"]
    assert await target.unfail("boom", 2) == 2
    # the oldest failures first
    for jid in jids[:2]:
        job = await get_job(client, jid)
        assert (job.state, job.queue_name, job.retries_left) == (JobState.WAITING, "again", 2)
    assert await client.jobs.failure_groups() == {"boom": 1}
    assert await target.unfail("boom") == 1
    assert await client.jobs.failure_groups() == {}
    assert await target.length() == 3
    assert await target.unfail("no-such-group") == 0


async def test_unfail_refuses_a_count_below_one(client: aqless.Client) -> None:
    for count in (0, -1, 1.5):
        with pytest.raises(InvalidValueError, match="count must be a whole number from 1"):
            await client.queues["q"].unfail("boom", count)  # type: ignore[arg-type]


async def test_forget(timed_client: aqless.Client) -> None:
    client = timed_client
    queue = client.queues["q"]
    jid = await queue.put("app.Job")
    await client.queues["other"].put("app.Job")
    await queue.forget()
    assert await client.queues.names() == ["other"]
    assert (await get_job(client, jid)).queue_name == "q"  # its jobs stay
    assert (await pop_one(queue)).jid == jid
    await queue.put("app.Job")  # using it again lists it again
    assert sorted(await client.queues.names()) == ["other", "q"]


async def test_a_queue_needs_a_name(client: aqless.Client) -> None:
    with pytest.raises(aqless.InvalidValueError, match="queue must be a name"):
        aqless.Queue(client, "")


# -- FIFO within a priority ("Jobs with the same priority get popped in the order they were
# inserted"): a client's puts of one moment still pop in the order they were made ----------


@pytest.mark.parametrize("priority", [0, 5, -3, 1000])
async def test_put_many_of_one_moment_pops_in_insertion_order(
    timed_client: aqless.Client, priority: int
) -> None:
    queue = timed_client.queues["q"]  # its clock stands still: every put has one `now`
    jids = await queue.put_many(
        aqless.PutRequest("Job", {"n": n}, priority=priority) for n in range(10)
    )
    await queue.put("Urgent", {}, priority=priority + 1)
    popped = await queue.pop_many(11)
    assert [job.klass_name for job in popped[:1]] == ["Urgent"]
    assert [job.jid for job in popped[1:]] == jids


async def test_one_by_one_puts_of_one_moment_pop_in_order(timed_client: aqless.Client) -> None:
    queue = timed_client.queues["q"]
    jids = [await queue.put("Job", {}, priority=2) for _ in range(10)]
    assert [job.jid for job in await queue.pop_many(10)] == jids


async def test_concurrent_puts_on_a_batching_client_pop_in_the_order_they_were_made(
    client: aqless.Client,
) -> None:
    queue = client.queues["q"]
    jids = [f"job-{n}" for n in range(20)]
    async with client.protocol.batching(), anyio.create_task_group() as group:
        for jid in jids:  # started in this order, sent together in one round trip
            group.start_soon(partial(queue.put, "Job", {}, jid=jid))
    assert [job.jid for job in await queue.pop_many(20)] == jids
