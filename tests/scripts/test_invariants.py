"""Random command sequences in both vocabularies keep the data model consistent.

After every step the invariants hold (tests/scripts/invariants.py); a command that raises
changes nothing at all, and no error is a Lua runtime error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from aqless.scripts import build, build_library, function_name
from tests.scripts.invariants import snapshot, text_of, violations

JIDS = ["a", "b", "c", "d", "e"]
QUEUES = ["q1", "q2"]
WORKERS = ["w1", "w2"]
GROUPS = ["g1", "g2"]

jids = st.sampled_from(JIDS)
queues = st.sampled_from(QUEUES)
workers = st.sampled_from(WORKERS)
vocabularies = st.sampled_from(["classic", "reqless"])


class Protocol(RuleBasedStateMachine):
    """Drives the script with random commands against a real server."""

    url: str = ""
    library: bool = False  # FCALL the function library instead of EVALSHA the script

    def __init__(self) -> None:
        super().__init__()
        self.redis = redis.Redis.from_url(self.url)
        self.redis.flushall()
        script = self.redis.register_script(build())
        self.send: Callable[[list[Any]], Any] = lambda argv: script(args=argv)
        if self.library:
            self.redis.function_load(build_library(), replace=True)
            self.send = lambda argv: self.redis.fcall(function_name(), 0, *argv)
        self.now = 0.0
        self.errors = 0

    def teardown(self) -> None:
        self.redis.close()

    def call(self, *args: Any) -> Any:
        before = snapshot(self.redis)
        try:
            return self.send([args[0], self.now, *args[1:]])
        except redis.ResponseError as error:
            text = str(error)
            assert "attempt to" not in text, f"Lua runtime error for {args}: {text}"
            assert "Script attempted" not in text, f"{args}: {text}"
            after = snapshot(self.redis)
            assert after == before, f"{args} raised {text!r} but changed the database"
            self.errors += 1
            return None

    def job(self, jid: str) -> dict[str, str]:
        raw = self.redis.hgetall(f"ql:j:{jid}")
        return {text_of(k): text_of(v) for k, v in raw.items()}

    @initialize()
    def settle(self) -> None:
        self.call("config.set", "grace-period", "0")

    @rule(seconds=st.sampled_from([0, 1, 30, 61, 200]))
    def advance(self, seconds: int) -> None:
        self.now += seconds

    @rule(
        vocabulary=vocabularies,
        jid=jids,
        queue=queues,
        delay=st.sampled_from([0, 0, 5]),
        depends=st.lists(jids, max_size=2, unique=True),
        priority=st.integers(-2, 2),
        retries=st.integers(0, 2),
    )
    def put(
        self,
        vocabulary: str,
        jid: str,
        queue: str,
        delay: int,
        depends: list[str],
        priority: int,
        retries: int,
    ) -> None:
        command = "put" if vocabulary == "classic" else "queue.put"
        self.call(
            command,
            "w1",
            queue,
            jid,
            "Klass",
            "{}",
            delay,
            "depends",
            json.dumps([d for d in depends if d != jid]),
            "priority",
            priority,
            "retries",
            retries,
            "tags",
            json.dumps(["t"]),
        )

    @rule(vocabulary=vocabularies, queue=queues, worker=workers, count=st.integers(0, 3))
    def pop(self, vocabulary: str, queue: str, worker: str, count: int) -> None:
        self.call("pop" if vocabulary == "classic" else "queue.pop", queue, worker, count)

    @rule(
        vocabulary=vocabularies,
        queue=queues,
        worker=workers,
        outcome=st.sampled_from(["complete", "advance", "fail", "retry", "heartbeat"]),
    )
    def work(self, vocabulary: str, queue: str, worker: str, outcome: str) -> None:
        """Pop one job and finish it as its worker would (the common path)."""
        classic = vocabulary == "classic"
        reply = self.call("pop" if classic else "queue.pop", queue, worker, 1)
        popped = json.loads(reply) if reply else []
        if not popped:
            return
        jid = popped[0]["jid"]
        if outcome == "complete":
            self.call("complete" if classic else "job.complete", jid, worker, queue, "{}")
        elif outcome == "advance":
            if classic:
                self.call("complete", jid, worker, queue, "{}", "next", "q2")
            else:
                self.call("job.completeAndRequeue", jid, worker, queue, "{}", "q1")
        elif outcome == "fail":
            self.call("fail" if classic else "job.fail", jid, worker, "g1", "boom")
        elif outcome == "retry":
            self.call("retry" if classic else "job.retry", jid, queue, worker, 0)
        else:
            self.call("heartbeat" if classic else "job.heartbeat", jid, worker)

    @rule(vocabulary=vocabularies, queue=queues)
    def peek(self, vocabulary: str, queue: str) -> None:
        if vocabulary == "classic":
            self.call("peek", queue, 3)
        else:
            self.call("queue.peek", queue, 0, 3)

    @rule(
        vocabulary=vocabularies,
        jid=jids,
        honest=st.booleans(),
        advance_to=st.sampled_from([None, "q1", "q2"]),
        delay=st.sampled_from([0, 5]),
        depends=st.lists(jids, max_size=2, unique=True),
    )
    def complete(
        self,
        vocabulary: str,
        jid: str,
        honest: bool,
        advance_to: str | None,
        delay: int,
        depends: list[str],
    ) -> None:
        job = self.job(jid)
        worker = job.get("worker", "w1") if honest else "w2"
        queue = job.get("queue", "q1")
        if advance_to is None:
            command = "complete" if vocabulary == "classic" else "job.complete"
            self.call(command, jid, worker, queue, "{}")
            return
        deps = json.dumps([d for d in depends if d != jid])
        if vocabulary == "classic":
            self.call(
                "complete",
                jid,
                worker,
                queue,
                "{}",
                "next",
                advance_to,
                "delay",
                delay,
                "depends",
                deps,
            )
        else:
            self.call(
                "job.completeAndRequeue",
                jid,
                worker,
                queue,
                "{}",
                advance_to,
                "delay",
                delay,
                "depends",
                deps,
            )

    @rule(vocabulary=vocabularies, jid=jids, group=st.sampled_from(GROUPS))
    def fail(self, vocabulary: str, jid: str, group: str) -> None:
        worker = self.job(jid).get("worker", "w1")
        self.call("fail" if vocabulary == "classic" else "job.fail", jid, worker, group, "m")

    @rule(vocabulary=vocabularies, jid=jids, queue=queues, delay=st.sampled_from([0, 5]))
    def retry(self, vocabulary: str, jid: str, queue: str, delay: int) -> None:
        worker = self.job(jid).get("worker", "w1")
        self.call("retry" if vocabulary == "classic" else "job.retry", jid, queue, worker, delay)

    @rule(vocabulary=vocabularies, jid=jids)
    def heartbeat(self, vocabulary: str, jid: str) -> None:
        worker = self.job(jid).get("worker", "w1")
        self.call("heartbeat" if vocabulary == "classic" else "job.heartbeat", jid, worker)

    @rule(vocabulary=vocabularies, jid=jids)
    def timeout(self, vocabulary: str, jid: str) -> None:
        self.call("timeout" if vocabulary == "classic" else "job.timeout", jid)

    @rule(vocabulary=vocabularies, chosen=st.lists(jids, min_size=1, max_size=3, unique=True))
    def cancel(self, vocabulary: str, chosen: list[str]) -> None:
        self.call("cancel" if vocabulary == "classic" else "job.cancel", *chosen)

    @rule(jid=jids, on=st.booleans(), other=jids)
    def depends(self, jid: str, on: bool, other: str) -> None:
        self.call("depends", jid, "on" if on else "off", other)

    @rule(jid=jids)
    def undepend_all(self, jid: str) -> None:
        self.call("job.removeDependency", jid, "all")

    @rule(jid=jids, priority=st.integers(-3, 3))
    def priority(self, jid: str, priority: int) -> None:
        self.call("priority", jid, priority)

    @rule(vocabulary=vocabularies, queue=queues, group=st.sampled_from(GROUPS))
    def unfail(self, vocabulary: str, queue: str, group: str) -> None:
        self.call("unfail" if vocabulary == "classic" else "queue.unfail", queue, group, 2)

    @rule(queue=queues, maximum=st.integers(0, 2))
    def throttle(self, queue: str, maximum: int) -> None:
        self.call("queue.throttle.set", queue, maximum)

    @rule(queue=queues)
    def recur(self, queue: str) -> None:
        self.call("recur", queue, "r", "Klass", "{}", "interval", 60, 0)

    @rule(
        queue=queues,
        interval=st.sampled_from([30, 60]),
        schedule=st.sampled_from(
            [
                [],
                ["cron", "0 * * * *", "tz", "UTC", "refill", 1800, "times", "[3600, 7200]"],
                ["cron", "0 * * * *", "tz", "UTC", "refill", 1800, "times", "[]"],  # refused
                ["cron", "0 * * * *", "refill", 1800, "times", "[3600]"],  # refused: no tz
            ]
        ),
    )
    def upsert_recurring(self, queue: str, interval: int, schedule: list[Any]) -> None:
        self.call("queue.upsertRecurring", queue, "r", "Klass", "{}", interval, 0, *schedule)

    @rule(
        option=st.sampled_from(["heartbeat", "jobs-history-count"]),
        value=st.sampled_from(["-10", "60", "1"]),
    )
    def configure(self, option: str, value: str) -> None:
        self.call("config.set", option, value)

    @rule(queue=queues)
    def counts(self, queue: str) -> None:
        counts = json.loads(self.call("queue.counts", queue))
        assert counts["waiting"] == self.redis.zcard(f"ql:q:{queue}-work")
        assert counts["throttled"] == self.redis.zcard(f"ql:q:{queue}-throttled")
        assert counts["stalled"] + counts["running"] == self.redis.zcard(f"ql:q:{queue}-locks")

    @invariant()
    def consistent(self) -> None:
        problems = violations(self.redis, QUEUES)
        assert not problems, "\n".join(problems)


def run(url: str, examples: int | None = None, *, library: bool = False) -> None:
    """`examples` sequences of 40 commands; by default the Hypothesis profile's number (a few
    in the default suite, see tests/conftest.py; the slow test below runs many)."""
    Protocol.url = url
    Protocol.library = library
    test = Protocol.TestCase
    profile = settings()  # the loaded profile's values
    test.settings = settings(
        max_examples=profile.max_examples if examples is None else examples,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    test().runTest()


def test_random_command_sequences_keep_the_invariants(server_url: str) -> None:
    run(server_url)


def test_random_command_sequences_through_the_function_library(server_url: str) -> None:
    # the library keeps module state between calls: nothing may leak from one to the next
    run(server_url, library=True)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_many_random_command_sequences(server_url: str) -> None:
    run(server_url, examples=1000)
    run(server_url, examples=500, library=True)
