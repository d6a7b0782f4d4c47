"""The workload of test_differential.py: a fixed sequence of protocol calls at fixed `now`s.

Each step is ``(command, now, arguments...)``. The sequence goes through both vocabularies
and most of what the script does (see the test's docstring); its replies, publications and
final keys are the golden capture. Append new steps at the end (and record again): a step
inserted in the middle shifts every later reply in the diff.
"""

from __future__ import annotations

import json

from aqless.scripts.loader import Argument

Step = tuple[str, float, tuple[Argument, ...]]

DAY = 86400.0


def _j(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class _Steps:
    def __init__(self) -> None:
        self.steps: list[Step] = []

    def __call__(self, command: str, now: float, *args: Argument) -> None:
        self.steps.append((command, now, args))


def _setup_and_puts(s: _Steps) -> None:
    s("config.set", 900, "max-job-history", 6)
    s("config.set", 900, "jobs-history-count", 6)
    s("config.set", 900, "q1-heartbeat", 30)
    s("config.get", 900, "heartbeat")
    s("config.getAll", 900)
    s("throttle.set", 900, "th1", 1)
    s("queue.throttle.set", 900, "q5", 2)
    s("rateLimit.set", 900, "rl1", 2, 60)
    # puts: priorities, tags, delays, dependencies, throttles, retries, rate limits
    s(
        "put",
        1000,
        "w1",
        "q1",
        "j1",
        "K.One",
        _j({"a": 1}),
        0,
        "priority",
        5,
        "tags",
        _j(["t1", "t2"]),
        "retries",
        2,
    )
    s(
        "queue.put",
        1001,
        "w1",
        "q1",
        "j2",
        "K.Two",
        "{}",
        0,
        "throttles",
        _j(["th1"]),
        "tags",
        _j(["t2"]),
    )
    s("queue.put", 1002, "w1", "q1", "j3", "K.Two", "{}", 0, "throttles", _j(["th1"]))
    s("put", 1003, "w1", "q1", "j4", "K", _j({"x": "y/z"}), 50)
    s("put", 1004, "w1", "q1", "j5", "K", "{}", 0, "depends", _j(["j1", "nope"]))
    s("put", 1005, "w1", "q1", "j6", "K", "{}", 0, "retries", 0)
    s("track", 1006, "track", "j6")
    s("job.track", 1006, "j1")
    s("queue.put", 1007, "w1", "q1", "j7", "K", "{}", 0, "rate_limits", _j(["rl1"]))
    s("queue.put", 1008, "w1", "q1", "j8", "K", "{}", 0, "rate_limits", _j(["rl1"]), "priority", -1)
    s("queue.put", 1008, "w1", "q1", "j9", "K", "{}", 0, "rate_limits", _j(["rl1"]), "priority", -2)
    s("put", 1009, "w1", "q1", "j10", "K", '{"unicode":"\u00e9\\u0001"}', 0, "priority", 1)
    s("put", 1009, "w1", "q1", "bad", "K", "not json", 0)
    s("put", 1009, "w1", "q1", "bad", "K", "{}", "soon")
    s("put", 1009, "w1", "q1", "bad", "K", "{}", 0, "tags")
    s("queue.put", 1010, "w1", "q5", "t5a", "K", "{}", 0)
    s("queue.put", 1010, "w1", "q5", "t5b", "K", "{}", 0)
    s("queue.put", 1010, "w1", "q5", "t5c", "K", "{}", 0)
    s("queues", 1011)
    s("queue.counts", 1011, "q1")
    s("queues.counts", 1011)
    s("get", 1011, "j5")
    s("job.get", 1011, "j2")
    s("multiget", 1011, "j1", "j4", "missing")


def _pops_and_outcomes(s: _Steps) -> None:
    s("pop", 1100, "q1", "w1", 1)
    s("heartbeat", 1110, "j1", "w1")
    s("job.heartbeat", 1111, "j1", "w1", _j({"beat": 1}))
    s("heartbeat", 1112, "j1", "w2")
    s("queue.pop", 1120, "q1", "w2", 50)
    s("peek", 1121, "q1", 10)
    s("queue.peek", 1121, "q1", 0, 10)
    s("rateLimit.pop", 1122, "q1", "w2", 5)
    s("rateLimit.get", 1122, "rl1")
    s("rateLimit.all", 1122)
    s("pop", 1125, "q5", "w1", 3)
    s("throttle.get", 1125, "ql:q:q5")
    s("throttle.locks", 1125, "ql:q:q5")
    s("throttle.pending", 1125, "ql:q:q5")
    s("job.complete", 1126, "t5c", "w1", "q5", "{}")
    s("queue.pop", 1127, "q5", "w1", 3)
    s("complete", 1130, "j1", "w1", "q1", _j({"done": True}))
    s("get", 1131, "j5")
    s("job.progress", 1132, "j2", "w2", 0.5, "half way")
    s("job.progress", 1132, "j2", "w1", 0.5, "not mine")
    s("jobs.progress", 1133, "j2", "j3")
    s("job.complete", 1134, "j2", "w2", "q1", "{}", "result", _j({"answer": 42}))
    s("job.result", 1135, "j2")
    s("throttle.locks", 1135, "th1")
    s("throttle.pending", 1135, "th1")
    s("queue.pop", 1136, "q1", "w2", 50)
    s("fail", 1140, "j10", "w2", "boom", "it broke", _j({"why": "x"}))
    s("job.fail", 1141, "j10", "w2", "boom", "again")
    s("failed", 1142)
    s("failed", 1142, "boom")
    s("jobs.failedByGroup", 1142, "boom", 0, 10)
    s("failureGroups.counts", 1142)
    s("retry", 1143, "j3", "q1", "w2", 5, "oops", "try later")
    s("job.retry", 1144, "j5", "q1", "w2", 0)
    s("complete", 1150, "j7", "w2", "q1", "{}", "next", "q2", "delay", 30)
    s("job.completeAndRequeue", 1151, "j5", "w2", "q1", "{}", "q2", "depends", _j(["j3"]))
    s("queue.put", 1151, "w1", "q8", "c1", "K", "{}", 0)
    s("queue.pop", 1151, "q8", "w2", 1)
    s("job.completeAndRequeue", 1151, "c1", "w2", "q8", "{}", "q2", "depends", _j(["j3"]))
    s("requeue", 1152, "w2", "q2", "j8", "K.Re", "{}", 0, "priority", 3)
    s("job.requeue", 1152, "w2", "q2", "missing", "K", "{}", 0)
    s("unfail", 1160, "q2", "boom", 10)
    s("queue.unfail", 1160, "q2", "none", 0)
    s("cancel", 1161, "j3")
    s("job.cancel", 1162, "j5", "j3", "c1")
    s("priority", 1163, "j8", 7)
    s("job.setPriority", 1163, "missing", 7)
    s("tag", 1164, "add", "j8", "t3", "t1")
    s("job.addTag", 1164, "j8", "t4")
    s("tag", 1165, "remove", "j8", "t1")
    s("job.removeTag", 1165, "j8", "t4")
    s("tag", 1166, "get", "t2")
    s("jobs.tagged", 1166, "t3", 0, 10)
    s("tag", 1166, "top")
    s("tags.top", 1166, 0, 10)
    s("log", 1167, "j8", "note", _j({"k": "v"}))
    s("job.log", 1167, "j8", "plain")
    s("put", 1168, "w1", "q2", "d1", "K", "{}", 0, "depends", _j(["j8"]))
    s("depends", 1169, "d1", "on", "j10")
    s("depends", 1169, "d1", "off", "j10")
    s("job.addDependency", 1169, "d1", "j8")
    s("job.removeDependency", 1170, "d1", "j8")


def _expiry_and_recurring(s: _Steps) -> None:
    # j6 (no retries) and j9 are running under w2 in q1 with a 30 s heartbeat
    s("jobs", 1200, "running", "q1")
    s("jobs", 1200, "stalled", "q1")
    s("queue.jobsByState", 1200, "scheduled", "q1")
    s("pop", 1300, "q1", "w3", 1)  # lock expiry: the courtesy warning
    s("pop", 1320, "q1", "w3", 5)  # past the grace period: reclaimed or failed
    s("queue.pop", 1321, "q2", "w3", 50)
    s("timeout", 1330, "j8")
    s("job.timeout", 1331, "j8")
    s(
        "recur",
        1400,
        "q3",
        "r1",
        "K.Recur",
        "{}",
        "interval",
        60,
        0,
        "tags",
        _j(["rt"]),
        "priority",
        2,
        "retries",
        1,
    )
    s("queue.recurAtInterval", 1400, "q3", "r2", "K.Recur", "{}", 90, 10, "backlog", 2)
    s("recur.get", 1401, "r1")
    s("recurringJob.get", 1401, "r2")
    s("recur.update", 1402, "r1", "priority", 4)
    s("recur.tag", 1402, "r1", "rt2")
    s("recurringJob.removeTag", 1402, "r1", "rt")
    s("pop", 1403, "q3", "w1", 10)
    s("queue.pop", 1700, "q3", "w1", 10)
    s("jobs", 1701, "recurring", "q3")
    s("unrecur", 1702, "r2")
    s("workers", 1710)
    s("workers", 1710, "w1")
    s("worker.jobs", 1710, "w2")
    s("workers.counts", 1710)
    s("queue.pause", 1711, "q3")
    s("pop", 1712, "q3", "w1", 1)
    s("queue.unpause", 1713, "q3")
    s("length", 1714, "q1")


def _batch_and_days(s: _Steps) -> None:
    for i in range(60):
        s(
            "put" if i % 2 else "queue.put",
            2000 + i,
            "w1",
            "q4",
            f"b{i:02}",
            "K.Batch",
            _j({"i": i}),
            0,
            "priority",
            i % 3 + (3 if i < 50 else 0),
        )
    s("pop", 2100, "q4", "w4", 50)
    for i in range(0, 50, 7):
        s("heartbeat", 2110, f"b{i:02}", "w4")
    for i in range(50):
        command = "complete" if i % 2 else "job.complete"
        s(command, 2200 + i, f"b{i:02}", "w4", "q4", "{}")
    s("jobs", 2300, "complete")
    s("jobs.completed", 2300, 0, 10)
    # the next day
    s("queue.pop", DAY + 100, "q4", "w5", 50)
    for i in range(50, 60):
        s("job.fail" if i % 2 else "fail", DAY + 200 + i, f"b{i:02}", "w5", "late", "msg")
    s("stats", DAY + 300, "q4", 2000)
    s("queue.stats", DAY + 300, "q4", DAY + 300)
    s("stats", DAY + 300, "q1", 1000)


def _aqless_own(s: _Steps) -> None:
    s("queue.putDeduplicated", 3000, "u1", "job", 0, "w1", "q6", "p1", "K", "{}", 0)
    s("queue.putDeduplicated", 3001, "u1", "job", 0, "w1", "q6", "p2", "K", "{}", 0)
    s("queue.putDeduplicated", 3002, "u2", "debounce", 60, "w1", "q6", "p3", "K", "{}", 5)
    s("queue.putDeduplicated", 3003, "u2", "debounce", 60, "w1", "q6", "p4", "K", '{"v":2}', 5)
    s("queue.putDeduplicated", 3003, "u3", "ttl", 60, "w1", "q6", "p5", "K", "{}", 0)
    s("job.dedup", 3004, "p1")
    s("queue.pop", 3005, "q6", "w6", 2)
    s("queue.popAfter", 3010, "q6", "w6", 1, "job.complete", 3009, "p1", "w6", "q6", "{}")
    s("queue.popAfter", 3011, "q6", "w6", 1, "job.fail", 3010, "p5", "w6", "g", "m")
    s("queue.popAfter", 3012, "q6", "w6", 1, "job.complete", 3012, "nope", "w6", "q6", "{}")
    s("worker.offer", 3020, "w7", 2, 60, "q7")
    s("queue.put", 3021, "w1", "q7", "o1", "K", "{}", 0)
    s("worker.withdraw", 3022, "w7", "q7")
    s("queue.put", 3023, "w1", "q7", "o2", "K", "{}", 0)
    s("config.set", 3030, "max-job-history", 1)
    s("queue.pop", 3031, "q7", "w7", 1)
    s("job.log", 3032, "o2", "a")
    s("job.log", 3033, "o2", "b")
    s("config.unset", 3034, "max-job-history")
    s("config.set", 3035, "grace-period", 0)
    s("config.set", 3035, "q7-heartbeat", 5)
    s("queue.pop", 3040, "q7", "w8", 1)
    s("jobs.tracked", 3041)
    s("track", 3041)
    s("job.untrack", 3042, "j1")
    s("queueIdentifierPatterns.setAll", 3043, "ids", _j(["q*"]))
    s("queueIdentifierPatterns.getAll", 3043)
    s("queuePriorityPatterns.setAll", 3043, _j({"pattern": ["q1"], "fairly": False}))
    s("queuePriorityPatterns.getAll", 3043)
    s("throttle.release", 3044, "th1", "j3")
    s("throttle.delete", 3045, "th1")
    s("rateLimit.delete", 3046, "rl1")
    s("worker.forget", 3047, "w1")
    s("queue.forget", 3048, "q3")
    s("queues.names", 3049)
    s("no.such.command", 3050)


def _fractional_times(s: _Steps) -> None:
    """Times and numbers with fractions: the server writes a number the script gives it with
    more digits than Lua's own text of it, so a number must not become text on the way."""
    s("config.set", 4000.5, "q9-heartbeat", 7.25)
    for i in range(4):
        s(
            "queue.put" if i % 2 else "put",
            4000.123456789 + i / 7,
            "w1",
            "q9",
            f"f{i}",
            "K",
            "{}",
            0.75 * (i == 3),
            "priority",
            1.5 - i / 3,
        )
    s("pop", 4001 + 1 / 3, "q9", "w9", 1)
    s("queue.pop", 4002 + 2 / 7, "q9", "w9", 50)
    s("heartbeat", 4003 + 1 / 9, "f0", "w9")
    s("job.heartbeat", 4003 + 5 / 7, "f1", "w9")
    s("complete", 4005 + 1 / 11, "f0", "w9", "q9", "{}")
    s("job.complete", 4006 + 10 / 11, "f1", "w9", "q9", "{}", "result", "[1.5]")
    s("job.retry", 4007 + 1 / 13, "f2", "q9", "w9", 0.3)
    s("queue.pop", 4010 + 1 / 17, "q9", "w9", 50)
    s("job.fail", 4011 + 1 / 19, "f2", "w9", "frac", "m")
    s("queue.stats", 4012, "q9", 4012)
    s("job.getMulti", 4012, "f0", "f1", "f2", "f3")


def _payload_options(s: _Steps) -> None:
    """aqless's own options for payloads: pops with each job's data apart from the reply
    (data_apart), completes that keep the stored data (keep_data)."""
    escapes = _j({"q": 'a"b', "n": "a\nb", "u": "\u00e9", "s": "a/b"})
    for i, (jid, data) in enumerate((("pl1", escapes), ("pl2", '"text"'), ("pl3", "[1.5]"))):
        s("queue.put", 5000 + i, "w10", "q10", jid, "K", data, 0)
    s("job.track", 5003, "pl1")
    s("rateLimit.pop", 5004, "q10", "w10", 2, "data_apart")
    s("job.complete", 5005, "pl1", "w10", "q10", "", "keep_data", "1")
    s(
        "queue.popAfter",
        5007,
        "q10",
        "w10",
        1,
        "data_apart",
        "job.completeAndRequeue",
        5006,
        "pl2",
        "w10",
        "q10",
        "",
        "q11",
        "keep_data",
        "1",
    )
    s("rateLimit.pop", 5008, "q10", "w10", 1, "data_apart")  # nothing left
    s("job.complete", 5009, "pl3", "w10", "q10", "not json", "keep_data", "1")
    s("job.getMulti", 5010, "pl1", "pl2", "pl3")


def workload() -> list[Step]:
    s = _Steps()
    _setup_and_puts(s)
    _pops_and_outcomes(s)
    _expiry_and_recurring(s)
    _batch_and_days(s)
    _aqless_own(s)
    _fractional_times(s)
    _payload_options(s)
    return s.steps
