"""The config page says what each option the script reads means, and its unit; options
nobody set are listed with theirs, and unknown ones (escaped) are said to be unknown."""

from __future__ import annotations

import httpx

import aqless
from aqless.scripts.options import OPTIONS, describe
from tests.web.conftest import csrf_token

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


async def test_the_config_form_sets_an_unknown_option_only_when_forced(
    client: aqless.Client, app_client: httpx.AsyncClient
) -> None:
    page = (await app_client.get("/config")).text
    assert 'name="force"' in page
    headers = {"accept": "application/json", "x-aqless-csrf": csrf_token(page)}
    fields = {"option": "another-clients-option", "value": "on"}
    refused = await app_client.post("/actions/config_set", data=fields, headers=headers)
    assert refused.status_code == 400
    assert "option must be an option the scripts read" in refused.json()["message"]
    assert await client.config.get("another-clients-option") is None
    negative = {"option": "heartbeat", "value": "-5"}
    refused = await app_client.post("/actions/config_set", data=negative, headers=headers)
    assert "heartbeat must be a positive number of seconds, not -5" in refused.json()["message"]
    forced = fields | {"force": "1"}
    done = await app_client.post("/actions/config_set", data=forced, headers=headers)
    assert done.json()["ok"], done.text
    assert await client.config.get("another-clients-option") == "on"
    assert await client.config.get("heartbeat") == "60"
