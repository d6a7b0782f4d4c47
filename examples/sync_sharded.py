"""Sync code on a sharded deployment: request threads put through one blocking client.

Eight threads (as a Django or Flask app's request threads would) put invoices through one
``aqless.sync.ShardedClient``, each customer's invoices with the customer as their routing
key, so they land on one shard; then the script pops and completes them as a worker would
and reads the merged counts. A dependency on another shard's job is refused before
anything is written.

    AQLESS_CLUSTER_URL=redis+cluster://host:port[,host:port] python examples/sync_sharded.py
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import aqless
import aqless.sync

CUSTOMERS = [f"customer-{n}" for n in range(8)]


def main(url: str) -> None:
    with aqless.sync.ShardedClient(url, deployment="example-billing", shards=3) as client:
        invoices = client.queues["invoices"]

        def bill(customer: str) -> list[str]:  # one request thread
            return [
                invoices.put("billing.Invoice", {"customer": customer, "n": n}, route=customer)
                for n in range(3)
            ]

        with ThreadPoolExecutor(8) as threads:
            jids = [jid for some in threads.map(bill, CUSTOMERS) for jid in some]
        spread = Counter(client.shard_of(customer) for customer in CUSTOMERS)
        print("customers per shard:", ", ".join(f"{k}: {spread[k]}" for k in sorted(spread)))
        print(f"waiting over every shard: {invoices.counts().waiting}")

        others = [c for c in CUSTOMERS if client.shard_of(c) != client.shard_of(CUSTOMERS[0])]
        try:
            invoices.put("billing.Mail", depends=[jids[0]], route=others[0])
        except aqless.CrossShardError:
            print("a dependency on another shard: refused, nothing put")

        done = 0
        while (job := invoices.pop()) is not None:
            job.complete()  # on the job's own shard
            done += 1
        print(f"completed {done}; waiting now: {invoices.counts().waiting}")


if __name__ == "__main__":
    url = os.environ.get("AQLESS_CLUSTER_URL")
    if not url:
        sys.exit("set AQLESS_CLUSTER_URL=redis+cluster://host:port to a Redis or Valkey Cluster")
    main(url)
