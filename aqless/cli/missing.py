"""Admin operations the client does not offer (yet), each one call of the script.

Each function here is a candidate for a client method; nothing else in the CLI calls
``client.protocol`` directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import aqless


async def cancel_jobs(client: aqless.Client, jids: Sequence[str]) -> None:
    """Cancel several jobs in one call (``job.cancel`` takes many jids): jobs that depend
    on each other can only be cancelled together. Candidate: ``client.jobs.cancel(*jids)``."""
    if jids:
        await client.protocol.call("job.cancel", *jids)
