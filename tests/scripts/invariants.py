"""The invariants of the data model, checked against a live server (used by property tests).

Each job's `state` agrees with the one structure that holds its jid (a queue's work,
scheduled, depends, locks or throttled set, ql:completed, a failure list), and no jid is in
two of them.
"""

from __future__ import annotations

from collections import defaultdict

import redis

# state -> the structures a job in that state may be in (a quirk of the protocol included:
# a throttled job released back to the work set keeps its state `throttled` until popped).
ALLOWED = {
    "waiting": {"work"},
    "stalled": {"work"},
    "scheduled": {"scheduled"},
    "depends": {"depends"},
    "running": {"locks"},
    "throttled": {"throttled", "work"},
    "failed": {"failed"},
    "complete": {"completed"},
}
QUEUE_SETS = ("work", "scheduled", "depends", "locks", "throttled")


def text_of(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def structures(r: redis.Redis, queues: list[str], prefix: str = "ql:") -> dict[str, list[str]]:
    """jid -> the structures holding it, e.g. {'a': ['work:q']}."""
    held: dict[str, list[str]] = defaultdict(list)
    known = {text_of(q) for q in r.zrange(f"{prefix}queues", 0, -1)}
    for queue in sorted(known | set(queues)):
        for kind in QUEUE_SETS:
            for jid in r.zrange(f"{prefix}q:{queue}-{kind}", 0, -1):
                held[text_of(jid)].append(f"{kind}:{queue}")
    for jid in r.zrange(f"{prefix}completed", 0, -1):
        held[text_of(jid)].append("completed")
    for group in (text_of(g) for g in r.smembers(f"{prefix}failures")):
        for jid in r.lrange(f"{prefix}f:{group}", 0, -1):
            held[text_of(jid)].append(f"failed:{group}")
    return held


def job_states(r: redis.Redis, prefix: str = "ql:") -> dict[str, str]:
    states: dict[str, str] = {}
    for key in r.scan_iter(match=f"{prefix}j:*", _type="hash"):
        jid, state = r.hmget(key, "jid", "state")
        if jid is not None:
            states[text_of(jid)] = text_of(state or b"")
    return states


def violations(r: redis.Redis, queues: list[str], prefix: str = "ql:") -> list[str]:
    """Every broken invariant, described; empty when the data model is consistent."""
    problems: list[str] = []
    held = structures(r, queues, prefix)
    states = job_states(r, prefix)
    for jid, places in held.items():
        if len(places) > 1:
            problems.append(f"{jid} is in {len(places)} structures: {places}")
        if jid not in states:
            problems.append(f"{jid} is in {places} but has no job hash")
    for jid, state in states.items():
        places = held.get(jid, [])
        if state not in ALLOWED:
            problems.append(f"{jid} has unknown state {state!r}")
            continue
        kinds = {place.split(":", 1)[0] for place in places}
        if len(places) != 1 or not kinds <= ALLOWED[state]:
            problems.append(f"{jid} is {state} but held by {places}")
        if state == "depends" and r.scard(f"{prefix}j:{jid}-dependencies") == 0:
            problems.append(f"{jid} is depends without dependencies")
    for group in (text_of(g) for g in r.smembers(f"{prefix}failures")):
        if r.llen(f"{prefix}f:{group}") == 0:
            problems.append(f"failure group {group} is listed but empty")
    return problems


def snapshot(r: redis.Redis) -> dict[bytes, tuple[bytes, int]]:
    """Every key's serialized value and TTL presence: equal snapshots mean no change."""
    result: dict[bytes, tuple[bytes, int]] = {}
    for key in r.scan_iter():
        dumped = r.dump(key)
        if dumped is not None:
            result[key] = (dumped, 1 if r.ttl(key) >= 0 else 0)
    return result
