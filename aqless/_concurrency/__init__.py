"""Private helpers for concurrent code: ``backoff`` (the wait between tries) and
``task_groups`` (task groups that raise the failing task's own error)."""
