"""Durable workflows: a job's code as steps whose results are kept with the job, durable
sleeps and waits for signals that hold no worker (docs/guides/workflows.md).

- `aqless.workflows.record`: the workflow's record, kept in the job's data under
  ``"_workflow"`` where every qless client can read it;
- `aqless.workflows.signals`: sending a signal to a workflow (``client.signal``);
- `aqless.workflows.children`: a workflow's child jobs' jids (``ctx.child``);
The ``ctx`` a workflow's code is given, and the handler that runs it, are the worker's
(`aqless.WorkflowContext`, ``@handlers.workflow``). This package imports nothing of the
worker: the client sends signals, and every reader reads the record, from here.
"""
