"""Scaling signals: per queue, what waits, how long waits are, how fast jobs complete, and
how many worker slots would keep the p95 wait under a target (an M/M/c model)."""

from aqless.scaling.erlang import erlang_c, slots_for, wait_quantile
from aqless.scaling.estimate import BACKLOG_DRAIN, QueueScaling, histogram_quantile, read_scaling
from aqless.scaling.window import ScalingWindow

__all__ = [
    "BACKLOG_DRAIN",
    "QueueScaling",
    "ScalingWindow",
    "erlang_c",
    "histogram_quantile",
    "read_scaling",
    "slots_for",
    "wait_quantile",
]
