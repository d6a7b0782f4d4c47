"""The connection layer: how script calls and subscriptions reach the server.

Private: nothing here is public API. ``protocol.ScriptCaller`` is the one caller of the script
(the layer above calls only it); ``lean`` holds the pipelined connections, ``subscriber``
the pubsub one, ``endpoint`` where both go (every kind of deployment) and how they greet,
``urls`` the Sentinel and Cluster URLs, ``batching`` automatic pipelining, ``cluster`` a
Cluster's hash-tag rule.
"""
