"""The Grafana dashboard shipped in docs/grafana/aqless.json: every query names only metrics
aqless exports (as Prometheus exposes them: a counter's ``_total``, a histogram's
``_bucket``/``_sum``/``_count``), and every panel queries something."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("prometheus_client")
from prometheus_client import CollectorRegistry

from aqless.metrics import Metrics

DASHBOARD = Path(__file__).resolve().parents[1] / "docs" / "grafana" / "aqless.json"
METRIC = re.compile(r"\baqless_[a-z0-9_]+")
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def exported() -> set[str]:
    """Every series name a Metrics (queue scaling signals and spools included) exposes."""
    registry = CollectorRegistry()
    Metrics(registry, scaling_target=2.0)
    return {
        family.name + suffix for family in registry.collect() for suffix in SUFFIXES[family.type]
    }


def queries(node: Any) -> Iterator[str]:
    """Every PromQL text in the dashboard: the panels' targets and the variables' queries."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "query") and isinstance(value, str):
                yield value
            else:
                yield from queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from queries(item)


def test_every_query_names_metrics_aqless_exports() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    names = exported()
    found = list(queries(dashboard))
    promql = [text for text in found if text != "prometheus"]  # the data source variable's
    assert len(promql) > 20
    named = set()
    for text in promql:
        metrics = METRIC.findall(text)
        assert metrics, f"a query that names no aqless metric: {text}"
        unknown = set(metrics) - names
        assert not unknown, f"{text}: not exported by aqless.metrics: {sorted(unknown)}"
        named.update(metrics)
    # the per-class figures the dashboard exists for
    assert {"aqless_job_duration_seconds_bucket", "aqless_jobs_total"} <= named


def test_every_panel_queries_and_fits_the_grid() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels)
    for panel in panels:
        position = panel["gridPos"]
        assert position["x"] + position["w"] <= 24, panel["title"]
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert all(target["expr"] for target in panel["targets"]), panel["title"]


def test_a_misspelt_metric_is_caught() -> None:
    assert METRIC.findall("rate(aqless_job_total[5m])") == ["aqless_job_total"]
    assert "aqless_job_total" not in exported()
