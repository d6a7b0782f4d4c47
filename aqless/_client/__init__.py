"""The Client's parts (private: users import them from aqless or aqless.client): how it
connects, and the namespaces of verbs it hands out (``client.queues``, ``client.jobs``...),
plain and sharded."""
