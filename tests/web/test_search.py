"""Search: a jid from the header's box goes to its job's page (or the page says there is no
such job), and a search of one queue's jobs in one state finds those whose data holds a value
at a field path, reading at most the jobs it is told and saying what it read and cost."""

from __future__ import annotations

import httpx
import pytest

import aqless
from aqless.ops.search import LIMIT_MAX as SCAN_MAX
from aqless.ops.search import Condition

PAYLOAD = '<script>window.__pwned=1</script><img src=x onerror="alert(1)">'
ESCAPED = "&lt;script&gt;window.__pwned=1&lt;/script&gt;"


async def test_an_existing_jid_goes_to_its_job_page(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    jid = await client.queues["q"].put("app.Job", {}, jid="a/b?c#d")
    found = await app_client.get("/search", params={"jid": f"  {jid} "})
    assert found.status_code == 303
    assert found.headers["location"] == "/jobs/a%2Fb%3Fc%23d"
    assert (await app_client.get("/api/search", params={"jid": jid})).json()["found"] is True


async def test_a_missing_jid_is_said_missing_escaped(app_client: httpx.AsyncClient) -> None:
    page = await app_client.get("/search", params={"jid": PAYLOAD})
    assert page.status_code == 404
    assert 'id="no-such-job"' in page.text
    assert ESCAPED in page.text
    assert PAYLOAD not in page.text
    missing = await app_client.get("/api/search", params={"jid": "nope"})
    assert missing.status_code == 404
    assert missing.json()["found"] is False


async def test_every_page_has_the_jid_box(app_client: httpx.AsyncClient) -> None:
    for path in ("/", "/config", "/completed"):
        assert 'role="search"' in (await app_client.get(path)).text, path


async def test_a_scan_finds_jobs_by_a_field_of_their_data(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["orders"]
    wanted = await queue.put("app.Order", {"user": {"id": 42}, "items": ["a", "b"]})
    await queue.put("app.Order", {"user": {"id": 7}})
    await queue.put("app.Order", {"user": {"id": "42x"}})
    text = await queue.put("app.Order", {"user": {"id": "42"}})
    await queue.put("app.Order", {"user": True})
    await queue.put("app.Order", {"user": {"id": 42}}, delay=3600)  # scheduled: not scanned

    def search(where: str, **more: str) -> dict[str, str]:
        return {"queue": "orders", "state": "waiting", "where": where, **more}

    found = (await app_client.get("/api/search", params=search("user.id = 42"))).json()
    assert {job["jid"] for job in found["jobs"]} == {wanted, text}  # unquoted: text too
    assert (found["matched"], found["scanned"], found["total"], found["complete"]) == (
        2, 5, 5, True,
    )  # fmt: skip
    assert found["cost"]["jobs_read"] == 5
    assert found["cost"]["round_trips"] == 3  # the sizes, the listing, one batch of reads
    assert found["cost"]["data_bytes"] > 0
    quoted = (await app_client.get("/api/search", params=search('user.id = "42"'))).json()
    assert [job["jid"] for job in quoted["jobs"]] == [text]
    number = (await app_client.get("/api/search", params=search("user.id = 42.0"))).json()
    assert [job["jid"] for job in number["jobs"]] == [wanted]
    indexed = (await app_client.get("/api/search", params=search("items.1 = b"))).json()
    assert [job["jid"] for job in indexed["jobs"]] == [wanted]
    scheduled = (
        await app_client.get("/api/search", params=search("user.id = 42", state="scheduled"))
    ).json()
    assert (scheduled["matched"], scheduled["scanned"]) == (1, 1)

    page = (await app_client.get("/search", params=search("user.id = 42"))).text
    assert "2 matches" in page
    assert "in 5 jobs examined of 5 listed" in page
    assert "Server cost: 5 job reads in 3 round trips" in page


async def test_a_scan_reads_no_more_than_its_limit_and_says_so(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    queue = client.queues["big"]
    for n in range(30):
        await queue.put("app.Job", {"n": n, "even": n % 2 == 0})
    params = {"queue": "big", "state": "waiting", "where": "even = true", "limit": "10"}
    found = (await app_client.get("/api/search", params=params)).json()
    assert (found["scanned"], found["total"], found["complete"]) == (10, 30, False)
    assert found["matched"] == 5
    page = (await app_client.get("/search", params=params)).text
    assert "Not every job was examined" in page
    for refused in (str(SCAN_MAX + 1), "-5", "0", "ten"):
        too_many = await app_client.get("/api/search", params={**params, "limit": refused})
        assert too_many.status_code == 400, refused
        assert f"limit must be a whole number from 1 up to {SCAN_MAX}" in too_many.json()["error"]


async def test_what_a_search_shows_is_escaped(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put(PAYLOAD, {"html": PAYLOAD})
    params = {"queue": "q", "state": "waiting", "where": f"html = {PAYLOAD}"}
    found = (await app_client.get("/api/search", params=params)).json()
    assert found["matched"] == 1
    page = (await app_client.get("/search", params=params)).text
    assert PAYLOAD not in page
    assert ESCAPED in page  # the class in the results, the condition in its box


async def test_a_malformed_search_says_what_is_wrong(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["q"].put("app.Job", {})
    bad = {"queue": "q", "state": "waiting", "where": "<script>x</script>"}
    response = await app_client.get("/search", params=bad)
    assert response.status_code == 400
    page = response.text
    assert 'id="search-error"' in page
    assert "where must be a condition written field.path = value" in page
    assert "<script>x" not in page
    assert "&lt;script&gt;x&lt;/script&gt;" in page
    state = {"queue": "q", "state": "bogus", "where": "a = 1"}
    refused = await app_client.get("/api/search", params=state)
    assert refused.status_code == 400
    assert "state must be one of waiting, running" in refused.json()["error"]
    assert refused.json()["ok"] is False


async def test_a_search_of_an_unknown_queue_is_a_404_naming_the_closest(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.queues["billing"].put("app.Job", {})
    params = {"queue": "biling", "state": "waiting", "where": "a = 1"}
    refused = await app_client.get("/api/search", params=params)
    assert refused.status_code == 404
    assert refused.json()["error"] == "no queue 'biling' (did you mean 'billing'?)"
    page = await app_client.get("/search", params=params)
    assert page.status_code == 404
    assert 'id="search-error"' in page.text


def test_a_condition_compares_as_json() -> None:
    def where(text: str) -> Condition:
        return Condition.parse("search.where", text)

    assert where("a.b = 1").holds({"a": {"b": 1.0}})
    assert not where("a = 1").holds({"a": True})
    assert not where("a = true").holds({"a": 1})
    assert where("a = null").holds({"a": None})
    assert not where("a = null").holds({})
    assert where("name = Ada Lovelace").holds({"name": "Ada Lovelace"})
    for bad in ("a", "= 1", "a..b = 1"):
        with pytest.raises(aqless.InvalidValueError, match="where must be a condition"):
            where(bad)
