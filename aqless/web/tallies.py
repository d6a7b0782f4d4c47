"""How far each long action of the dashboard has got (an action on every job a search found):
the page names a fresh id with the action and asks ``/api/search/progress?id=`` while it runs.

Kept in this process only, the newest `KEPT` actions; an id is the page's random one, so
nobody reads another's by guessing."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Final

KEPT: Final = 64
ID_LONGEST: Final = 64


@dataclass
class Tally:
    """An action's `total` jobs, how many are `done`, and whether it has `finished`."""

    total: int
    done: int = 0
    finished: bool = False
    outcome: str = ""
    started: float = field(default_factory=time.time)

    def advance(self, count: int) -> None:
        self.done = min(self.total, self.done + count)

    def finish(self, outcome: str) -> None:
        self.finished, self.outcome = True, outcome

    def document(self) -> dict[str, object]:
        return {
            "total": self.total,
            "done": self.done,
            "finished": self.finished,
            "outcome": self.outcome,
        }


_TALLIES: dict[str, Tally] = {}


def start(tally_id: str | None, total: int) -> Tally:
    """A new tally of `total` jobs, kept under `tally_id` when one is given (a page's)."""
    tally = Tally(total)
    if tally_id and len(tally_id) <= ID_LONGEST:
        _TALLIES.pop(tally_id, None)
        _TALLIES[tally_id] = tally
        while len(_TALLIES) > KEPT:
            del _TALLIES[next(iter(_TALLIES))]
    return tally


def get(tally_id: str) -> Tally | None:
    return _TALLIES.get(tally_id)
