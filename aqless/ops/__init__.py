"""What operators' tools share beyond the client: the audit log of the dashboard and the CLI,
the names a deployment knows (and the closest to one it does not), how durations read, and
command-line values checked by their rule (aqless-run's and the CLI's)."""
