"""The Classes page: each job class's run time p50/p95/p99, failure rate and throughput per
queue over this hour and the last day (aqless.ops.classes), as a table and as charts."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request

from aqless.ops.classes import class_figures
from aqless.sharding.client import AnyClient
from aqless.web.charts import Chart, grouped_bars
from aqless.web.reads import JSON

CHARTED: Final = 12  # the busiest classes drawn (the table lists them all)


async def classes(client: AnyClient, request: Request) -> JSON:
    """Every class of every queue: its figures over the hour and over the day."""
    figures = await class_figures(client)
    return {"classes": [figure.document() for figure in figures]}


def _label(figure: dict[str, Any]) -> str:
    return f"{figure['klass']} ({figure['queue']})"


def class_charts(document: dict[str, Any], window: str) -> list[Chart]:
    """The busiest classes over `window`: run time quantiles (ms), throughput and
    failures."""
    shown = [f for f in document["classes"] if f["window"] == window][:CHARTED]
    labels = [_label(figure) for figure in shown]
    quantiles = [
        (name, [1000 * (figure[name] or 0.0) for figure in shown]) for name in ("p50", "p95", "p99")
    ]
    outcomes = [
        ("completed", [float(figure["completed"]) for figure in shown]),
        ("failed", [float(figure["failed"]) for figure in shown]),
    ]
    over = "this hour" if window == "hour" else "the last day"
    return [
        grouped_bars(f"Run time (ms, upper bounds), {over}", labels, quantiles, x_label=str),
        grouped_bars(f"Jobs completed and failed, {over}", labels, outcomes, x_label=str),
    ]
