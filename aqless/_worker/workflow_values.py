"""A workflow's deterministic values: the time, a UUID and a random number (``ctx.now``,
``ctx.uuid``, ``ctx.random``) made on the first run and replayed after, and the side of a
code change a workflow takes (``ctx.version``)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from aqless import rules
from aqless._worker.workflow_replay import Replay

__all__ = ["Values"]


class Values(Replay):
    """A workflow context's recorded values and versions (`WorkflowContext`)."""

    # -- deterministic values -------------------------------------------------------------

    def now(self) -> float:
        """The time (epoch seconds, the server's clock) as the first run read it here.

        Examples:
            ```python
            started = ctx.now()  # the same on every run of this workflow
            ```
        """
        return float(self._value("now", self._clock))

    def uuid(self) -> str:
        """A random UUID (32 hex digits), the same on every run.

        Examples:
            ```python
            key = ctx.uuid()  # an idempotency key for a step's call, stable over retries
            await ctx.step("charge", charge, ctx.data["amount"], key)
            ```
        """
        return str(self._value("uuid", lambda: uuid.uuid4().hex))

    def random(self) -> float:
        """A random number in [0, 1), the same on every run (not for secrets).

        Examples:
            ```python
            if ctx.random() < 0.1:  # one order in ten, decided once
                await ctx.step("audit", audit, ctx.data["order"])
            ```
        """
        return float(self._value("random", random.random))  # not for secrets

    def version(self, change_id: str, *, latest: int = 1) -> int:
        """Which side of a code change a workflow takes: `latest` for a workflow that reached
        this point under the new code (new ones), 0 for one whose earlier runs went past this
        point before the change (it goes on the old way). Recorded: stable over its runs.

        Args:
            change_id: the change's name, the same in every version of the code.
            latest: the newest version at this point (default 1, at least 1).

        Raises:
            InvalidValueError: `change_id` is not a valid name, or `latest` is not a whole
                number from 1.

        Examples:
            ```python
            if ctx.version("fraud-check") >= 1:  # workflows started under the new code
                await ctx.step("fraud", check_fraud, ctx.data["order"])
            ```
        """
        rules.check("change_id", change_id, "workflow.version")
        rules.check("workflow.latest", latest, "workflow.version")
        versions: dict[str, Any] = self._record.setdefault("versions", {})
        if change_id not in versions:
            versions[change_id] = 0 if self._position < self._recorded else latest
        return int(versions[change_id])

    def _value(self, kind: str, make: Callable[[], Any]) -> Any:
        values: list[Any] = self._record.setdefault("values", {}).setdefault(kind, [])
        index = self._used[kind] = self._used.get(kind, 0) + 1
        if index > len(values):
            values.append(make())  # stored with the next write, before anything it decides
        return values[index - 1]
