"""Flows: a parent job that runs after its children and reads their results (BullMQ's
FlowProducer, Celery's chords), and chains of jobs, each put in one atomic script call.

A flow is plain qless jobs: each parent waits in ``depends`` on its children, so every qless
client sees valid jobs; the script (``flows.lua``) keeps the tree in three hash fields and
applies each child's failure policy when it fails for good. See docs/guides/flows.md.
"""

from aqless.flows.client import Flow, Flows, chained
from aqless.flows.results import ChildrenResults, ChildResult
from aqless.flows.spec import MAX_CHILDREN, MAX_DEPTH, MAX_JOBS, FailurePolicy, FlowNode
from aqless.flows.tree import FlowTree, draw

__all__ = [
    "MAX_CHILDREN",
    "MAX_DEPTH",
    "MAX_JOBS",
    "ChildResult",
    "ChildrenResults",
    "FailurePolicy",
    "Flow",
    "FlowNode",
    "FlowTree",
    "Flows",
    "chained",
    "draw",
]
