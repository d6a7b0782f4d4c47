"""Charts as geometry for inline SVG (templates/charts.html draws them): no script, no
external library. Wait and run histograms of a day, and per-day trends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from aqless.ops.durations import duration

WIDTH: Final = 640
HEIGHT: Final = 180
LEFT: Final = 44  # room for the y labels
BOTTOM: Final = 22  # room for the x labels
TOP: Final = 8


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str
    title: str


@dataclass(frozen=True, slots=True)
class Line:
    series: str
    points: str  # an SVG polyline's points
    dots: Sequence[tuple[float, float, str]]


@dataclass(frozen=True, slots=True)
class Chart:
    """What an SVG chart needs: bars or lines, axis labels, a legend."""

    title: str
    bars: Sequence[Bar] = ()
    lines: Sequence[Line] = ()
    x_labels: Sequence[tuple[float, str]] = ()
    y_labels: Sequence[tuple[float, str]] = ()
    legend: Sequence[str] = ()
    empty: bool = False
    width: int = WIDTH
    height: int = HEIGHT
    baseline: float = field(default=HEIGHT - BOTTOM)


def bucket_label(index: int) -> str:
    """The qless histogram's buckets: seconds 0-59, minutes 1-59, hours 1-23, days 1-6."""
    if index < 60:
        return f"{index}s"
    if index < 119:
        return f"{index - 59}m"
    if index < 142:
        return f"{index - 118}h"
    return f"{index - 141}d"


def _y_scale(top: float, fmt: Any = str) -> tuple[float, list[tuple[float, str]]]:
    top = top or 1
    plot = HEIGHT - BOTTOM - TOP
    labels = [(HEIGHT - BOTTOM - plot * k / 2, fmt(top * k / 2)) for k in (0, 1, 2)]
    return plot / top, labels


def _count(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def histogram(title: str, counts: Sequence[int]) -> Chart:
    """The non-empty span of a day's histogram (at least 10 buckets), one bar per bucket."""
    used = [i for i, n in enumerate(counts) if n]
    if not used:
        return Chart(title=title, empty=True)
    first = used[0]
    last = max(used[-1], min(first + 9, len(counts) - 1))
    span = list(range(first, last + 1))
    scale, y_labels = _y_scale(max(counts[i] for i in span), _count)
    step = (WIDTH - LEFT) / len(span)
    bars = []
    x_labels = []
    every = max(1, len(span) // 8)
    for k, index in enumerate(span):
        x = LEFT + k * step
        height = counts[index] * scale
        title_text = f"{bucket_label(index)}: {counts[index]} jobs"
        bars.append(Bar(x + 1, HEIGHT - BOTTOM - height, max(step - 2, 1), height, "a", title_text))
        if k % every == 0:
            x_labels.append((x + step / 2, bucket_label(index)))
    return Chart(title=title, bars=bars, x_labels=x_labels, y_labels=y_labels)


Series = Sequence[tuple[str, Sequence[float]]]
Draw = Callable[[float, float], tuple[list[Bar], list[Line]]]


def _day_label(date: str) -> str:
    return date[5:]  # MM-DD of an ISO date


def _per_day(
    title: str,
    labels: Sequence[str],
    series: Series,
    fmt: Any,
    draw: Draw,
    x_label: Callable[[str], str] = _day_label,
) -> Chart:
    """A chart with one column per day (or per `labels`, each shown as `x_label` says):
    `draw(scale, step)` makes the bars or lines."""
    legend = [name for name, _ in series]
    top = max((v for _, values in series for v in values), default=0)
    if not top:
        return Chart(title=title, empty=True, legend=legend)
    scale, y_labels = _y_scale(top, fmt)
    step = (WIDTH - LEFT) / len(labels)
    bars, drawn = draw(scale, step)
    every = max(1, len(labels) // 7)
    x_labels = [
        (LEFT + k * step + step / 2, x_label(label))
        for k, label in enumerate(labels)
        if k % every == 0
    ]
    return Chart(
        title=title, bars=bars, lines=drawn, x_labels=x_labels, y_labels=y_labels, legend=legend
    )


def grouped_bars(
    title: str,
    labels: Sequence[str],
    series: Series,
    *,
    x_label: Callable[[str], str] = _day_label,
) -> Chart:
    """One group of bars per day (or per label), one bar per series in each group."""

    def draw(scale: float, group: float) -> tuple[list[Bar], list[Line]]:
        width = (group - 4) / len(series)
        bars = []
        for k, label in enumerate(labels):
            for s, (name, values) in enumerate(series):
                height = values[k] * scale
                x = LEFT + k * group + 2 + s * width
                title_text = f"{label}: {_count(values[k])} {name}"
                bars.append(Bar(x, HEIGHT - BOTTOM - height, width, height, name, title_text))
        return bars, []

    return _per_day(title, labels, series, _count, draw, x_label)


def lines(title: str, labels: Sequence[str], series: Series) -> Chart:
    """One polyline per series over the days; values are durations in seconds."""

    def draw(scale: float, step: float) -> tuple[list[Bar], list[Line]]:
        drawn = []
        for name, values in series:
            dots = [
                (
                    LEFT + k * step + step / 2,
                    HEIGHT - BOTTOM - value * scale,
                    f"{labels[k]}: {name} {duration(value)}",
                )
                for k, value in enumerate(values)
            ]
            points = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in dots)
            drawn.append(Line(series=name, points=points, dots=dots))
        return [], drawn

    return _per_day(title, labels, series, duration, draw)


def queue_charts(today: dict[str, Any], days: Sequence[dict[str, Any]]) -> list[Chart]:
    """The four charts of a queue's page, from `reads.queue`'s stats."""
    labels = [day["date"] for day in days]
    return [
        histogram("Wait time today", today["wait"]["histogram"]),
        histogram("Run time today", today["run"]["histogram"]),
        grouped_bars(
            "Jobs per day",
            labels,
            [
                ("popped", [day["wait"]["count"] for day in days]),
                ("completed", [day["run"]["count"] for day in days]),
                ("failed", [day["failed"] for day in days]),
            ],
        ),
        lines(
            "Mean wait and run time per day",
            labels,
            [
                ("wait", [day["wait"]["mean"] for day in days]),
                ("run", [day["run"]["mean"] for day in days]),
            ],
        ),
    ]


#: The states drawn for each shard on the Shards page, each a series of its chart.
SHARD_STATES = ("waiting", "running", "scheduled")


def shard_chart(shards: Sequence[dict[str, Any]]) -> Chart:
    """One group of bars per shard (`web.shards`' documents): its waiting, running and
    scheduled jobs."""
    labels = [f"shard {shard['id']}" for shard in shards]
    series = [(state, [float(shard[state]) for shard in shards]) for state in SHARD_STATES]
    return grouped_bars("Jobs on each shard", labels, series, x_label=str)
