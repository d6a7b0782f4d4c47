"""What operators' tools share beyond the client: the audit log of the dashboard and the CLI,
and command-line values checked by their rule (aqless-run's and the CLI's)."""
