"""Job code that fences its one write with its attempt, as examples/fenced_writes.py fences
an SQLite row, but in Redis so that a test (or a test's ``aqless-run`` process, which
imports this file as ``fenced_job``) counts exactly what ran and what landed.

Each run records ``"<attempt> <checkpointed as JSON>"`` on ``fence:<jid>:runs``, claims the
job's row for its attempt (refused once an equal or later attempt owns it: a run with no
attempt claims as attempt 0, and is always refused), stores a checkpoint when the job's data
asks for one and the run starts from none, sleeps its pause (``pauses``: seconds per run,
in order; 0 past the list), then writes: the write lands (its attempt is pushed on
``fence:<jid>:writes``) only while the run's attempt still owns the row.
"""

from __future__ import annotations

import json

import anyio
from redis.asyncio import Redis, RedisCluster

import aqless

CLAIM = """
local owner = tonumber(redis.call('HGET', KEYS[1], 'owner') or '0')
if tonumber(ARGV[1]) <= owner then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1])
return 1
"""

WRITE = """
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1
"""

KLASS = "fenced_job.fenced"


def key(jid: str, name: str) -> str:
    return f"fence:{jid}:{name}"


async def fenced(job: aqless.Job) -> None:
    await fenced_on(job.client.redis, job)


async def fenced_on(redis: Redis | RedisCluster, job: aqless.Job) -> None:
    """`fenced`, recording and writing over `redis` (a test's own connection, say, where
    the job's own client goes through a lossy link)."""
    attempt = str(job.attempt or 0)
    run = await redis.rpush(key(job.jid, "runs"), f"{job.attempt} {json.dumps(job.checkpointed)}")
    if not await redis.eval(CLAIM, 1, key(job.jid, "row"), attempt):
        return  # an equal or later attempt owns the row
    if job.data.get("checkpoint") and job.checkpointed is None:
        await job.checkpoint({"at": 1})
    pauses = job.data.get("pauses", [])
    await anyio.sleep(pauses[run - 1] if run <= len(pauses) else 0)
    await redis.eval(WRITE, 2, key(job.jid, "row"), key(job.jid, "writes"), attempt)


async def runs(client: aqless.Client, jid: str) -> list[str]:
    """What each run of the job started with: ``"<attempt> <checkpointed>"``."""
    return [str(run) for run in await client.redis.lrange(key(jid, "runs"), 0, -1)]


async def writes(client: aqless.Client, jid: str) -> list[str]:
    """The attempts whose write landed."""
    return [str(write) for write in await client.redis.lrange(key(jid, "writes"), 0, -1)]
