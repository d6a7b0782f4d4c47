"""The config page says what each option the script reads means, and its unit; options
nobody set are listed with theirs, and unknown ones (escaped) are said to be unknown."""

from __future__ import annotations

import httpx

import aqless
from aqless.scripts.options import OPTIONS, describe

PAYLOAD = "<script>window.__pwned=1</script>"


async def test_each_known_option_shows_its_meaning_and_unit(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    await client.config.set("emails-heartbeat", 120)
    await client.config.set(PAYLOAD, "x", force=True)
    api = (await app_client.get("/api/config")).json()
    assert api["docs"]["heartbeat"]["unit"] == "seconds"
    assert api["docs"]["emails-heartbeat"] == {
        "description": "This queue's lock duration (instead of heartbeat).",
        "unit": "seconds",
        "expected": "a positive number of seconds",
    }
    assert PAYLOAD not in api["docs"]
    assert api["unset"]["result-max-bytes"]["unit"] == "bytes"
    assert "heartbeat" not in api["unset"]

    page = (await app_client.get("/config")).text
    assert (
        '<tr data-option="jobs-history"><td><code>jobs-history</code></td><td><code>604800</code>'
        '</td><td class="unit">seconds</td><td class="meaning">'
        "How long completed jobs are kept (0: not at all). "
        '<span class="muted">(a number of seconds from 0)</span>'
    ) in page
    assert '<table class="grid" id="config-unset">' in page
    assert '<tr data-option="max-worker-age">' in page
    assert "not an option aqless knows" in page
    assert PAYLOAD not in page


def test_per_queue_options_are_described_by_their_suffix() -> None:
    assert describe("max-pop-retry") is OPTIONS["max-pop-retry"]
    found = describe("emails-max-concurrency")
    assert found is not None
    assert found.unit == "jobs"
    assert describe("-heartbeat") is None
    assert describe("nothing-known") is None
