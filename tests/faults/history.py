"""A history checker for the fault suite: what the producer and the job code recorded, held
against what the server says at the end.

The job module (``-i historyjobs``) records each run of a job's code as it starts (its jid,
``job.attempt`` and process) in ``history:runs``, then makes its effect: a *fenced* job
claims its row with its attempt (``history:owner``, raised only, as
``examples/fenced_writes.py`` does with SQL) and applies the effect only while that attempt
owns the row and no attempt applied it yet; an *unfenced* job (the negative control) applies
it whatever. Every effect applied is an entry ``jid:attempt`` of ``history:effects``. A job
whose data says ``"plan": "fail"`` raises ``Planned`` after its effect; the others return.

``check`` finds: an acknowledged put whose job is missing (lost); an effect applied more
than once, or never for a job that completed; a run without an attempt; a job whose end is
not its plan (complete, or failed), or which has no end yet (stuck).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import aqless
from tests.faults.harness import QUEUE, states

RUNS = "history:runs"
_ENDS = {"complete": "complete", "fail": "failed"}  # a plan, the state it ends in
EFFECTS = "history:effects"

#: The job module of the history scenarios' workers.
HISTORY_JOBS = '''
import json
import os

import anyio

_FENCED = """
local owner = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local attempt = tonumber(ARGV[2])
if ARGV[3] == 'claim' then
    if attempt > owner then redis.call('HSET', KEYS[1], ARGV[1], attempt) end
    return attempt >= owner and 1 or 0
end
if owner ~= attempt then return 0 end
if redis.call('HSETNX', KEYS[2], ARGV[1], attempt) == 0 then return 0 end
redis.call('RPUSH', KEYS[3], ARGV[1] .. ':' .. ARGV[2])
return 1
"""
_KEYS = ("history:owner", "history:applied", "history:effects")


class Planned(Exception):
    """The failure a job's plan asks for."""


async def run(job):
    redis = job.client.redis
    attempt = job.attempt
    await redis.rpush("history:runs", json.dumps([job.jid, attempt, os.getpid()]))
    data = job.data
    if data.get("fenced", True):
        await redis.eval(_FENCED, 3, *_KEYS, job.jid, attempt or 0, "claim")
    await anyio.sleep(float(data.get("sleep", 0)))
    if data.get("fenced", True):
        await redis.eval(_FENCED, 3, *_KEYS, job.jid, attempt or 0, "apply")
    else:  # the negative control: written whoever holds the job now
        await redis.rpush("history:effects", f"{job.jid}:{attempt}")
    if data.get("plan") == "fail":
        raise Planned("the plan says fail")
'''


@dataclass
class Findings:
    """What ``check`` found; ``problems()`` lists every broken promise. A job completed
    without its effect after a run without an attempt (which could not fence its write) is
    counted in ``unfenceable``, apart from the other missing effects."""

    jobs: int
    lost: list[str] = field(default_factory=list)
    doubled: dict[str, int] = field(default_factory=dict)  # jid: effects applied
    missing: list[str] = field(default_factory=list)  # completed, no effect
    unattempted: list[str] = field(default_factory=list)  # jids run without an attempt
    #: completed without its effect, having run without an attempt: such a run cannot
    #: claim its row, its write is refused, and yet its outcome is taken
    unfenceable: list[str] = field(default_factory=list)
    unplanned: dict[str, str] = field(default_factory=dict)  # jid: its end, not the plan's
    stuck: dict[str, str] = field(default_factory=dict)  # jid: its state, not an end
    runs: int = 0
    uncertain: int = 0  # puts whose reply was lost: they may or may not exist

    def problems(self) -> list[str]:
        found = [
            f"{name}: {len(items)} {sorted(items)[:5]}"
            for name, items in (
                ("lost", self.lost),
                ("effects applied more than once", self.doubled),
                ("completed without its effect", self.missing),
                ("run without an attempt", self.unattempted),
                ("completed without its effect after such a run", self.unfenceable),
                ("ended against the plan", self.unplanned),
                ("stuck", self.stuck),
            )
            if items
        ]
        return found

    def __str__(self) -> str:
        return (
            f"{self.jobs} jobs ({self.uncertain} puts uncertain), {self.runs} runs: lost "
            f"{len(self.lost)}, doubled effects {len(self.doubled)}, missing effects "
            f"{len(self.missing)}, runs without an attempt {len(self.unattempted)} (effects "
            f"missing for them {len(self.unfenceable)}), against "
            f"the plan {len(self.unplanned)}, stuck {len(self.stuck)}"
        )


@dataclass
class Puts:
    """What the producer saw: each put acknowledged (its jid and plan), or not."""

    plans: dict[str, str] = field(default_factory=dict)  # jid: "complete" or "fail"
    uncertain: int = 0

    async def put(
        self,
        queue: aqless.Queue,
        count: int,
        *,
        sleep: float = 0.0,
        fail_every: int = 0,
        fenced: bool = True,
    ) -> list[str]:
        """Put `count` jobs at once (every `fail_every`-th planned to fail)."""
        plans = [
            "fail" if fail_every and n % fail_every == fail_every - 1 else "complete"
            for n in range(count)
        ]
        requests = [
            aqless.PutRequest(
                "historyjobs.run",
                {"sleep": sleep, "plan": plan, "fenced": fenced},
                retries=0 if plan == "fail" else 50,
            )
            for plan in plans
        ]
        jids = [str(jid) for jid in await queue.put_many(requests)]
        self.plans.update(zip(jids, plans, strict=True))
        return jids

    async def put_one(self, queue: aqless.Queue, *, sleep: float = 0.0) -> str | None:
        """One put; None (counted uncertain) when its reply was lost."""
        try:
            jid = str(await queue.put("historyjobs.run", {"sleep": sleep}, retries=50))
        except aqless.ConnectionLostError:
            self.uncertain += 1
            return None
        self.plans[jid] = "complete"
        return jid


async def check(client: aqless.Client, puts: Puts) -> Findings:
    """Hold the records against the server's states (call once nothing runs any more)."""
    plans = puts.plans
    jids = list(plans)
    state = await states(client, jids)
    runs = [json.loads(entry) for entry in await client.redis.lrange(RUNS, 0, -1)]
    effects = Counter(
        str(entry).rpartition(":")[0] for entry in await client.redis.lrange(EFFECTS, 0, -1)
    )
    findings = Findings(jobs=len(jids), runs=len(runs), uncertain=puts.uncertain)
    findings.lost = [jid for jid in jids if jid not in state]
    findings.doubled = {jid: n for jid, n in effects.items() if n > 1}
    findings.unattempted = sorted({jid for jid, attempt, _ in runs if attempt is None})
    for jid, plan in plans.items():
        end = state.get(jid)
        if end is None:
            continue
        if end == "complete" and not effects[jid]:
            if jid in findings.unattempted:
                findings.unfenceable.append(jid)
            else:
                findings.missing.append(jid)
        if end not in ("complete", "failed"):
            findings.stuck[jid] = end
        elif end != _ENDS[plan]:
            findings.unplanned[jid] = end
    return findings


async def settled(client: aqless.Client, jids: Iterable[str]) -> bool:
    """Whether every job has ended (complete or failed)."""
    ends = set((await states(client, list(jids))).values())
    return ends <= {"complete", "failed"}


__all__ = ["EFFECTS", "HISTORY_JOBS", "QUEUE", "RUNS", "Findings", "Puts", "check", "settled"]
