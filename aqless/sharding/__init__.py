"""Sharding: one deployment spread over several servers (shards), each a qless namespace of
its own: the map (``map``, ``store``, ``changes``), where a put goes (``placement``), adding and
removing shards (``resize``), the shards' notifications (``pubsub``), the ``ShardedClient``
(``client``) and its queues (``queue``). Each other concept's sharded part lives beside the
concept (``aqless.client.ShardedJobs``, ``aqless.batches.sharded``, ``aqless.worker``...),
its verbs routed by aqless._concurrency.routing.
"""
