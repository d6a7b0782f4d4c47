"""A workflow's waits: durable sleeps (``ctx.sleep``, ``ctx.sleep_until``), the job parked as
scheduled until then; and waits for signals (``ctx.wait_for``), taking one sent before or
after, else parked until one comes or the timeout passes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aqless import rules
from aqless._worker.workflow_replay import FOREVER, Replay
from aqless.codecs import Sealed, decoded_value
from aqless.errors import SignalTimeoutError

__all__ = ["Waits"]


class Waits(Replay):
    """A workflow context's sleeps and waits for signals (`WorkflowContext`)."""

    # -- time -----------------------------------------------------------------------------

    async def sleep(self, seconds: float) -> None:
        """Park the job for `seconds` (a durable sleep: no retry spent, no slot held); it
        resumes at the next step after them. The run ends here while the job is parked (a
        later run replays the sleep as done).

        Args:
            seconds: how long, in seconds (from 0 to 10**9; 0 returns at once).

        Raises:
            InvalidValueError: `seconds` is negative, over 10**9 or not a number.

        Examples:
            ```python
            await ctx.step("welcome", send, "welcome", user)
            await ctx.sleep(3 * 86400)  # three days, parked as a scheduled job
            await ctx.step("tip", send, "tip", user)
            ```
        """
        seconds = rules.check("workflow.seconds", seconds, "workflow.sleep")
        await self._sleep(lambda: self._clock() + seconds)

    async def sleep_until(self, when: float) -> None:
        """`sleep` until the epoch time `when` (at once if it has passed).

        Args:
            when: epoch seconds (the server's clock decides when it has come).

        Raises:
            InvalidValueError: `when` is negative or not a number.

        Examples:
            ```python
            await ctx.sleep_until(ctx.data["renews_at"])
            await ctx.step("renew", renew, ctx.data["account"])
            ```
        """
        when = rules.check("workflow.until", when, "workflow.sleep_until")
        await self._sleep(lambda: when)

    async def _sleep(self, until_of: Callable[[], float]) -> None:
        self._sleeps += 1
        key = str(self._sleeps)
        sleeps: dict[str, Any] = self._record.setdefault("sleeps", {})
        if key not in sleeps:
            self._forward()
            sleeps[key] = until_of()
        self._occur(f"sleep:{key}")
        until = float(sleeps[key])
        if self._clock() >= until:
            return
        await self._park_asleep(until, {"kind": "sleep", "until": until})

    # -- signals ----------------------------------------------------------------------------

    async def wait_for(self, signal: str, *, timeout: float | None = None) -> Any:
        """The payload of a signal `signal` sent to this job: one sent earlier and not yet
        taken by another wait, else the job parks (no slot held) until one comes.

        Args:
            signal: the signal's name (as `Client.signal` sends it).
            timeout: seconds from the wait's first reach (default None: wait for ever).

        Raises:
            SignalTimeoutError: none came within `timeout` seconds of the wait's first reach.
            CodecError: the payload was sealed by the sender's codec and the job's cannot
                open it (aqless.codecs).
            InvalidValueError: `signal` is not a valid signal name, or `timeout` is negative
                or over 10**9 seconds.

        Examples:
            ```python
            try:
                approval = await ctx.wait_for("approval", timeout=3600)
            except aqless.SignalTimeoutError:
                approval = {"by": "nobody"}
            ```
        """
        command = "workflow.wait_for"
        rules.check("signal", signal, command)
        timeout = rules.check_optional("workflow.timeout", timeout, command)
        n = self._waits[signal] = self._waits.get(signal, 0) + 1
        key = f"{signal}#{n}"
        waits: dict[str, Any] = self._record.setdefault("waits", {})
        wait = waits.get(key)
        if not isinstance(wait, dict):
            self._forward()
            until = None if timeout is None else self._clock() + timeout
            wait = waits[key] = {"signal": signal, "until": until}
        self._occur(f"wait:{key}")
        if "taken" in wait:
            return wait["taken"].get("payload")
        if wait.get("timed_out"):
            raise SignalTimeoutError(signal, timeout or 0)
        until = wait["until"]
        marker = {"kind": "signal", "until": until, "signal": signal}
        reply = await self._awaiting(
            "job.awaitSignal", marker, key, signal, FOREVER if until is None else until
        )
        if reply == "timeout":
            wait["timed_out"] = True
            raise SignalTimeoutError(signal, timeout or 0)
        taken = json.loads(reply)
        # sealed by the sender's chain (it knows no queue): opened by the client's, which
        # tries its queues' chains too
        payload = decoded_value(self.job.client.codec, taken["payload"])
        if isinstance(payload, Sealed):
            raise payload.error
        wait["taken"] = {"id": taken["id"], "at": taken["at"], "payload": payload}
        return payload
