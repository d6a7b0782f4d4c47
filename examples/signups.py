"""The jobs the Flask and Django examples put, and a worker for them.

    aqless-run --path examples --handlers signups:handlers -q signups

runs them (against AQLESS_URL, or the embedded Valkey the apps use too).
"""

from __future__ import annotations

import aqless

handlers = aqless.Handlers()


@handlers.register("signups.SendWelcome")
async def send_welcome(job: aqless.Job) -> None:
    """Welcome a new user (here: a line in the job's history)."""
    await job.log("sent", to=job.data["email"])
