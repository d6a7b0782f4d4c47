"""What operators' tools share beyond the client: the audit log of the dashboard and the CLI."""
