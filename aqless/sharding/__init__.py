"""Sharding: one logical deployment spread over several servers (shards), each a qless
namespace of its own.

``map`` and ``store`` hold the shard map and where it is kept, ``resize`` adds and removes
shards, ``routing`` derives the verbs, ``client``/``queue``/``views``/``limits`` are the
async surface (``aqless.ShardedClient``...), ``pubsub`` the shards' notifications and
``worker`` the ``ShardedWorker``; the sharded parts of batches, flows and events live beside
them. The public names are re-exported by ``aqless``.
"""
