"""Text bar charts of the protocol's time histograms (148 buckets: seconds 0-59, minutes
1-59, hours 1-23, days 1-6)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from aqless import Durations
from aqless.cli.render import duration

BAR_WIDTH = 40
_UNITS = (("s", 0, 60), ("m", 1, 59), ("h", 1, 23), ("d", 1, 6))


def bucket_labels() -> list[str]:
    """``0s``... ``59s``, ``1m``... ``59m``, ``1h``... ``23h``, ``1d``... ``6d``."""
    return [f"{n}{unit}" for unit, first, count in _UNITS for n in range(first, first + count)]


LABELS = bucket_labels()


def bar(count: int, largest: int, width: int = BAR_WIDTH) -> str:
    """A bar of `count` against `largest`; any non-zero count shows at least a sliver."""
    if count <= 0 or largest <= 0:
        return ""
    eighths = max(1, round(count / largest * width * 8))
    full, rest = divmod(eighths, 8)
    return "█" * full + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[rest]


def histogram_chart(title: str, durations: Durations) -> Group:
    """A heading with the count, mean and deviation, and one bar per non-empty bucket; a
    dotted row marks empty buckets between two."""
    heading = Text(f"{title}: {durations.count} jobs", style="bold")
    if durations.count:
        heading.append(f", mean {duration(durations.mean)}, std {duration(durations.std)}")
    return Group(heading, _bars(durations.histogram))


def _bars(counts: Sequence[int]) -> Table:
    view = Table.grid(padding=(0, 1))
    view.add_column(justify="right", style="bold")
    view.add_column(style="cyan")
    view.add_column(justify="right")
    used = [index for index, count in enumerate(counts) if count]
    if not used:
        view.add_row("", Text("no samples", style="dim"), "")
        return view
    largest = max(counts)
    for previous, index in zip([used[0], *used[:-1]], used, strict=True):
        if index - previous > 1:
            view.add_row("⋮", "", "")
        view.add_row(LABELS[index], bar(counts[index], largest), str(counts[index]))
    return view
