"""Setting a fairness group's weight, concurrency cap and rate limit: what ``aqless groups
set`` and the dashboard's groups form share once each door has checked its values by their
rules (each door reads them its own way: flags, form fields)."""

from __future__ import annotations

from dataclasses import dataclass

from aqless.sharding.client import AnyClient

#: What lifts a cap or a limit, as the CLI and the dashboard take it.
NONE = "none"


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate limit as given: at most `limit` starts in any `per` seconds; None lifts it."""

    limit: int | None
    per: float = 1.0

    def __str__(self) -> str:  # how the audit log keeps it
        return NONE if self.limit is None else f"{self.limit}/{self.per:g}"


@dataclass(frozen=True, slots=True)
class GroupSettings:
    """The settings given for a group (None: left as it is); concurrency 0 lifts the cap."""

    weight: float | None = None
    concurrency: int | None = None
    rate: Rate | None = None

    def given(self) -> list[str]:
        """The names of the settings given, in the order `apply` writes them."""
        named = {"weight": self.weight, "concurrency": self.concurrency, "rate": self.rate}
        return [name for name, value in named.items() if value is not None]

    async def apply(self, client: AnyClient, queue: str, group: str | None) -> None:
        """Write the settings given to `group` of `queue` (None: the jobs put without one),
        each through its verb (which checks it again by the same rule)."""
        target = client.queues[queue]
        if self.weight is not None:
            await target.set_group_weight(group, self.weight)
        if self.concurrency is not None:
            await target.set_group_concurrency(group, self.concurrency)
        if self.rate is not None:
            await target.set_group_rate_limit(group, self.rate.limit, per=self.rate.per)
