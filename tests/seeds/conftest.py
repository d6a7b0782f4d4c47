"""Fixtures of the seed documents' acceptance tests: a client on a clean server (both servers),
the lock-expiry settings that let a test reclaim a dropped job at once, and the dashboard."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

import aqless
from aqless.web import create_app


@pytest.fixture
async def quick(client: aqless.Client) -> aqless.Client:
    """`client` with locks of 1 s and no grace period: a dropped job is taken back at once."""
    await client.config.set("heartbeat", 1)
    await client.config.set("grace-period", 0)
    return client


@pytest.fixture
async def dashboard(client: aqless.Client) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client bound in-process to the dashboard of `client`."""
    transport = httpx.ASGITransport(app=create_app(client))
    async with httpx.AsyncClient(transport=transport, base_url="http://dash") as http:
        yield http
