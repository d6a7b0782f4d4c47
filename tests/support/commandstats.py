"""What a server was asked, from INFO commandstats: for tests that bound a read's work."""

from __future__ import annotations

from typing import Any

import aqless


async def calls(client: aqless.Client, command: str) -> int:
    """How many times the server ran `command` (lower case: ``scan``) since it started."""
    stats: dict[str, Any] = await client.redis.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))
