"""The job object is concatenated as JSON text, with fast paths for what this script stores
(history entries, tag and throttle lists, numbers). Whatever another client stored must be
presented as before: as the stored JSON decoded and encoded again by cjson (CORE 4.1,
REQLESS 5.1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.conftest import Lua

BOTH = pytest.mark.parametrize("reqless", [False, True], ids=["classic", "reqless"])


async def get(lua: Lua, reqless: bool, jid: str = "jid") -> Any:
    return await lua.json("job.get" if reqless else "get", 0, jid)


async def put_with_history(redis: aioredis.Redis, lua: Lua, entries: list[str]) -> None:
    await lua("put", 0, "worker", "queue", "jid", "K", "{}", 0)
    await redis.delete("ql:j:jid-history")
    await redis.rpush("ql:j:jid-history", *entries)


def presented(entry: Any, reqless: bool) -> Any:
    """An entry as the protocol presents it: the item, with `when` and `what` added; a put
    entry's queue under the reader's key."""
    item = dict(entry[2]) if len(entry) > 2 and isinstance(entry[2], dict) else {}
    item["when"], item["what"] = entry[0], entry[1]
    if entry[1] == "put":
        queue = item.pop("q", None) or item.pop("queue", None)
        item.pop("queue", None)
        if queue is not None:
            item["queue" if reqless else "q"] = queue
    return item


FOREIGN_ENTRIES = [
    '[ 5, "put", {"queue": "q"} ]',  # spaced
    '[6,"put",{"q":"r"}]',
    '[7,"popped",{"x":"1","worker":"w"}]',  # two pairs, another order
    '[8,"popped",{"worker":"w\\/1"}]',  # an escaped character
    '[9,"log",{"when":1,"n":[1,2]}]',  # a `when` of the item is overridden
    '[10,"log",{"what":"x"}]',
    '[11.5,"timed-out"]',  # a fractional time
    '[012,"done"]',  # a leading zero: cjson reads 12
    '[12,"done"',  # not JSON
    '[123456789012345,"done"]',  # more digits than cjson writes
    '[13,"a b"]',
    '[14,"put",{"q":"a","queue":"b"}]',
    '[15,"failed",{"group":"g","worker":"w"}]',
    '[16,"x",{}]',
    '[17,"x",{"a":"1","a":"2"}]',
    '[18,"x",{"k":"caf\u00e9"}]',
]


@BOTH
async def test_history_written_by_other_clients(
    lua: Lua, redis: aioredis.Redis, reqless: bool
) -> None:
    await put_with_history(redis, lua, FOREIGN_ENTRIES)
    history = (await get(lua, reqless))["history"]
    assert len(history) == len(FOREIGN_ENTRIES)
    for text, shown in zip(FOREIGN_ENTRIES, history, strict=True):
        try:
            entry = json.loads(text.replace("[012,", "[12,"))
        except ValueError:
            assert shown == {}, text  # cjson cannot decode it: an empty item
            continue
        if text.startswith("[012,"):
            assert shown == {"when": 12, "what": "done"}
            continue
        if entry[0] == 123456789012345:
            assert shown == {"when": 1.2345678901234e14, "what": "done"}
            continue
        if text.startswith("[14,"):
            # both keys: the reference keeps `q`
            assert shown == {"when": 14, "what": "put", ("queue" if reqless else "q"): "a"}
            continue
        assert shown == presented(entry, reqless), text


@BOTH
async def test_history_written_by_this_script(
    lua: Lua, redis: aioredis.Redis, reqless: bool
) -> None:
    prefix = "queue." if reqless else ""
    await lua(f"{prefix}put", 1, "worker", "queue", "jid", "K", "{}", 0)
    await lua(f"{prefix}pop", 2, "queue", "w/1", 1)
    await lua("log", 3, "jid", "note", '{"a":"\\"x\\"","b":"c"}')
    await lua("job.fail" if reqless else "fail", 4, "jid", "w/1", "group", "message", "{}")
    stored = [json.loads(text) for text in await redis.lrange("ql:j:jid-history", 0, -1)]
    assert [entry[1] for entry in stored] == ["put", "popped", "note", "failed"]
    history = (await get(lua, reqless))["history"]
    assert history == [presented(entry, reqless) for entry in stored]


async def test_put_entries_in_one_second_name_each_put_s_queue_in_its_vocabulary(
    lua: Lua, redis: aioredis.Redis
) -> None:
    """A put's history entry is kept from the put before it in the same second and queue
    (history.lua): a put in the other vocabulary, into another queue or in another second
    writes its own."""
    puts = [
        ("put", 5.25, "q1", "a"),
        ("queue.put", 5.5, "q1", "b"),
        ("put", 5.75, "q1", "c"),
        ("put", 5.9, "q2", "d"),
        ("put", 6.1, "q2", "e"),
        ("queue.put", 6.2, 'q"3', "f"),
    ]
    for command, now, queue, jid in puts:
        await lua(command, now, "worker", queue, jid, "K", "{}", 0)
    entries = [await redis.lrange(f"ql:j:{jid}-history", 0, -1) for *_, jid in puts]
    assert entries == [
        ['[5,"put",{"q":"q1"}]'],
        ['[5,"put",{"queue":"q1"}]'],
        ['[5,"put",{"q":"q1"}]'],
        ['[5,"put",{"q":"q2"}]'],
        ['[6,"put",{"q":"q2"}]'],
        ['[6,"put",{"queue":"q\\"3"}]'],
    ]


@BOTH
@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("[]", {}),
        ("{}", {}),
        ("", {}),
        ('["a"]', ["a"]),
        ('["a","b c","caf\u00e9"]', ["a", "b c", "caf\u00e9"]),
        ('["a\\/b","q\\"t"]', ["a/b", 'q"t']),
        ('[ "a" ]', ["a"]),
        ('["a",]', {}),
        ('["a""b"]', {}),
        ('["a",1]', ["a", 1]),
        ('"text"', "text"),
        ("not json", {}),
        ('{"a":"b"}', {"a": "b"}),
        ("false", {}),
    ],
)
async def test_unusual_tags_and_throttles(
    lua: Lua, redis: aioredis.Redis, reqless: bool, stored: str, shown: Any
) -> None:
    await lua("put", 0, "worker", "queue", "jid", "K", "{}", 0)
    await redis.hset("ql:j:jid", mapping={"tags": stored, "throttles": stored})
    job = await get(lua, reqless)
    assert job["tags"] == shown
    if reqless:
        assert job["throttles"] == shown
    else:
        assert "throttles" not in job


@BOTH
async def test_numbers_and_texts(lua: Lua, redis: aioredis.Redis, reqless: bool) -> None:
    await lua("put", 0, "wor\\ker", "queue", "jid", "K\u00e9\t", '{"a":"/"}', 0)
    await redis.hset(
        "ql:j:jid",
        mapping={
            "priority": "1.5",
            "expires": "1700000000.123456",
            "retries": "007",
            "remaining": "2.7",
            "worker": 'a"b',
            "failure": '{"group":"g","when":3}',
            "spawned_from_jid": "r-1",
        },
    )
    job = await get(lua, reqless)
    assert job["priority"] == 1.5
    assert job["expires"] == 1700000000.1235  # 14 significant digits, as cjson writes
    assert job["retries"] == 7
    assert job["remaining"] == 2
    assert isinstance(job["remaining"], int)
    assert job["worker"] == 'a"b'
    assert job["klass"] == "K\u00e9\t"
    assert job["data"] == '{"a":"/"}'
    assert job["failure"] == {"group": "g", "when": 3}
    assert job["spawned_from_jid"] == "r-1"
    assert job["dependents"] == {}
    assert job["dependencies"] == {}


@BOTH
async def test_empty_lists_of_several_jobs(lua: Lua, reqless: bool) -> None:
    if reqless:
        assert await lua("job.getMulti", 0, "missing") == "[]"
        assert await lua("queue.pop", 0, "queue", "worker", 5) == "[]"
        assert await lua.json("jobs.tracked", 0) == {"jobs": {}, "expired": {}}
    else:
        assert await lua("multiget", 0, "missing") == "{}"
        assert await lua("pop", 0, "queue", "worker", 5) == "{}"
        assert await lua.json("track", 0) == {"jobs": {}, "expired": {}}
