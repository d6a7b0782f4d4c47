"""The script's last line for other qless clients: a job's empty names are refused with
nothing written (a put into queue '', a complete into next '', a failure group '', a
hand-back reason '', a tag ''). A negative delay stays accepted, as CORE 6.1 specifies
("0 or negative means immediately"): aqless's own doors refuse it (aqless.rules)."""

from __future__ import annotations

from tests.conftest import Lua
from tests.scripts.expect import refused

WORKER = "worker"


async def running(lua: Lua, jid: str = "jid") -> None:
    """A job `jid` in queue `q`, popped by WORKER."""
    await lua("queue.put", 0, WORKER, "q", jid, "klass", "{}", 0)
    await lua("queue.pop", 1, "q", WORKER, 1)


async def test_a_put_into_the_empty_queue_is_refused(lua: Lua) -> None:
    text = "Queue(): no queue name provided"
    await refused(lua, text, "queue.put", 0, WORKER, "", "jid", "klass", "{}", 0)
    await refused(lua, text, "put", 0, WORKER, "", "jid", "klass", "{}", 0)


async def test_a_put_with_a_negative_delay_still_runs_now(lua: Lua) -> None:
    await lua("queue.put", 0, WORKER, "q", "jid", "klass", "{}", -5)
    assert (await lua.json("job.get", 0, "jid"))["state"] == "waiting"


async def test_a_complete_into_the_empty_queue_is_refused(lua: Lua) -> None:
    await running(lua)
    text = 'Complete(): Arg "next" empty'
    await refused(lua, text, "job.completeAndRequeue", 2, "jid", WORKER, "q", "{}", "")
    await refused(lua, text, "complete", 2, "jid", WORKER, "q", "{}", "next", "")


async def test_a_failure_group_must_not_be_empty(lua: Lua) -> None:
    await running(lua)
    await refused(lua, 'Fail(): Arg "group" empty', "job.fail", 2, "jid", WORKER, "", "boom")
    await refused(lua, 'Retry(): Arg "group" empty', "job.retry", 2, "jid", "q", WORKER, 0, "")


async def test_a_hand_back_needs_a_reason(lua: Lua) -> None:
    await running(lua)
    await refused(lua, 'HandBack(): Arg "reason" empty', "job.handBack", 2, "jid", WORKER, "")


async def test_a_tag_must_not_be_empty(lua: Lua) -> None:
    await lua("queue.put", 0, WORKER, "q", "jid", "klass", "{}", 0)
    await refused(lua, 'Tag(): Arg "tag" empty', "job.addTag", 1, "jid", "vip", "")
    assert await lua.json("job.addTag", 1, "jid", "vip") == ["vip"]


async def test_a_lone_string_is_no_list(lua: Lua) -> None:
    """A JSON string where a list of names goes is refused, never split into letters."""
    base = ("queue.put", 0, WORKER, "q", "jid", "klass", "{}", 0)
    await refused(lua, 'Put(): Arg "tags" not JSON"vip"', *base, "tags", '"vip"')
    await refused(lua, 'Put(): Arg "depends" not JSON: "abc"', *base, "depends", '"abc"')
