"""One surface, four variants: every member of a contract (aqless.contracts) is offered by the
plain and the sharded async clients and by both blocking clients, and every public member of
a plain async class is either in its contract or named below with the reason it is not.

A verb added to ``aqless.Client``'s side without its contract fails here until the contract
names it; a verb added to a contract fails here until every variant offers it."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

import aqless
import aqless.sync
from aqless import contracts

#: What a blocking variant calls a member of the async contract.
BLOCKING_NAMES = {
    "aclose": "close",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
}

#: Dunder members that are part of a contract (the rest are Python's own).
CONTRACT_DUNDERS = {"__getitem__", *BLOCKING_NAMES}

#: Public members of a plain async class that its contract leaves out, and why.
PLAIN_ONLY: dict[str, dict[str, str]] = {
    "Client": {
        "from_sentinel": "a way to make a plain client (the sharded one is made from nodes)",
        "from_cluster": "a way to make a plain client (the sharded one is made from nodes)",
        "close": "the earlier name of aclose, kept as its alias",
        "protocol": "the one server's script caller: a sharded deployment has one per shard",
        "redis": "the one server's redis-py client: a sharded deployment has one per shard",
        "url": "the one server's URL",
        "namespace": "the one server's key namespace (a sharded deployment names one per shard)",
        "prefix": "the one server's key prefix",
        "clock": "a setting given when the client is made",
        "strict": "a setting given when the client is made",
        "codec": "payload codecs: the plain client's for now (a shard's client reads "
        "AQLESS_KEYS; the sharded client takes no codec yet)",
        "sharded_pubsub": "a setting of one Cluster connection",
        "script_connection": "a setting given when the client is made (a diagnostic)",
        "put_hooks": "hooks see the variant's own queue type (aqless.queue.PutHook)",
        "spool": "a producer's spool flushes through one server's script caller: the plain "
        "client's and its blocking twin's (aqless.sync.Client.spool), not yet a sharded one",
    },
    "Queue": {},
    "Jobs": {},
    "Batches": {},
    "Flows": {
        "put_tree": "put of a tree already whole, with the sharded client's jid maker",
        "send": "sends a checked flow document: the sharded client's way in to a shard",
    },
    "Job": {
        "client": "the async client a job belongs to; a blocking job calls through its own",
        "build": "makes a job without a server, for tests of job code",
        "ttl": "seconds left on the lock, from `expires_at` and the client's clock",
        "send_progress": "the worker's way to send a coalesced report (progress() queues it)",
        "sandbox": "set by the worker that runs the job",
        "progress_reports": "set by the worker that runs the job",
    },
    "RecurringJob": {},
    "Config": {},
    "Workers": {},
    "Tags": {},
    "Throttle": {},
    "Throttles": {},
    "RateLimit": {},
    "RateLimits": {},
    "QueuePatterns": {},
}


#: Members of a contract that the blocking variants leave out, and why.
BLOCKING_LEAVES_OUT: dict[str, dict[str, str]] = {
    "Client": {
        "servers": "async clients of the client's loop: of use only there, through `call`",
    },
}


def members(protocol: type) -> set[str]:
    """The members a contract names (its own and those of the contracts it extends)."""
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls is object or not getattr(cls, "_is_protocol", False):
            continue
        names |= {
            name
            for name in [*vars(cls), *getattr(cls, "__annotations__", {})]
            if (not name.startswith("_") or name in CONTRACT_DUNDERS)
            and name not in ("_is_protocol", "_is_runtime_protocol")
        }
    return names


def public(value: object) -> set[str]:
    """The public names of `value` (read with dir: a property is not evaluated)."""
    return {name for name in dir(value) if not name.startswith("_")}


@pytest.fixture(scope="module")
def variants() -> Iterator[dict[str, dict[str, Any]]]:
    """Each concept's objects, made without I/O: plain, sharded, blocking, blocking sharded."""
    plain = aqless.Client("redis://127.0.0.1:1/0")
    sharded = aqless.ShardedClient([("127.0.0.1", 1)], deployment="surface")
    blocking = aqless.sync.Client("redis://127.0.0.1:1/0")
    blocking_sharded = aqless.sync.ShardedClient([("127.0.0.1", 1)], deployment="surface")
    clients: dict[str, Any] = {
        "plain": plain,
        "sharded": sharded,
        "blocking": blocking,
        "blocking sharded": blocking_sharded,
    }
    job = aqless.Job.build("app.A")
    recurring = aqless.RecurringJob(plain, {"jid": "r", "klass": "app.A", "queue": "q"})
    yield {
        "Client": clients,
        "Queue": {name: client.queues["q"] for name, client in clients.items()},
        "Queues": {name: client.queues for name, client in clients.items()},
        "Jobs": {name: client.jobs for name, client in clients.items()},
        "Batches": {name: client.batches for name, client in clients.items()},
        "Flows": {name: client.flows for name, client in clients.items()},
        "Config": {name: client.config for name, client in clients.items()},
        "Workers": {name: client.workers for name, client in clients.items()},
        "Tags": {name: client.tags for name, client in clients.items()},
        "Throttles": {name: client.throttles for name, client in clients.items()},
        "RateLimits": {name: client.rate_limits for name, client in clients.items()},
        "QueuePatterns": {name: client.queue_patterns for name, client in clients.items()},
        "Throttle": {"plain": plain.throttles["t"], "blocking": blocking.throttles["t"]},
        "RateLimit": {"plain": plain.rate_limits["r"], "blocking": blocking.rate_limits["r"]},
        "Job": {"plain": job, "blocking": aqless.sync.SyncJob(blocking, job)},
        "RecurringJob": {
            "plain": recurring,
            "blocking": aqless.sync.SyncRecurringJob(blocking, recurring),
        },
    }
    blocking.close()
    blocking_sharded.close()


#: Contracts that are parts of others (JobFields, EventStream) or what a plain client's own
#: parts need of it (ScriptClient): no variant set of their own.
NOT_CONCEPTS = ("JobFields", "EventStream", "ScriptClient")
CONCEPTS = sorted(name for name in contracts.__all__ if name not in NOT_CONCEPTS)


@pytest.mark.parametrize("concept", CONCEPTS)
def test_every_variant_offers_every_member_of_the_contract(
    concept: str, variants: dict[str, dict[str, Any]]
) -> None:
    wanted = members(getattr(contracts, concept))
    assert wanted, f"contracts.{concept} names nothing"
    missing = {
        variant: sorted(
            name
            for name in wanted
            if not ("blocking" in variant and name in BLOCKING_LEAVES_OUT.get(concept, {}))
            and (BLOCKING_NAMES.get(name, name) if "blocking" in variant else name)
            not in dir(value)
        )
        for variant, value in variants[concept].items()
    }
    assert all(not names for names in missing.values()), missing


@pytest.mark.parametrize("concept", CONCEPTS)
def test_every_public_member_of_the_plain_class_is_in_its_contract(
    concept: str, variants: dict[str, dict[str, Any]]
) -> None:
    outside = public(variants[concept]["plain"]) - members(getattr(contracts, concept))
    unexplained = outside - set(PLAIN_ONLY.get(concept, {}))
    assert not unexplained, f"add to contracts.{concept}, or say why not: {sorted(unexplained)}"
    stale = set(PLAIN_ONLY.get(concept, {})) - outside
    assert not stale, f"PLAIN_ONLY[{concept!r}] names what is not (or no longer) outside: {stale}"


def test_a_blocking_client_s_events_are_a_blocking_iterator() -> None:
    with aqless.sync.Client("redis://127.0.0.1:1/0") as client:
        events = client.events("completed")
        assert isinstance(events, aqless.sync.SyncEvents)
        assert iter(events) is events
        with pytest.raises(RuntimeError, match="enter the event stream first"):
            next(events)


@pytest.mark.parametrize("concept", CONCEPTS)
def test_the_blocking_verbs_keep_the_contract_s_parameters(
    concept: str, variants: dict[str, dict[str, Any]]
) -> None:
    contract = getattr(contracts, concept)
    verbs = [
        name
        for name in members(contract)
        if inspect.iscoroutinefunction(getattr(contract, name, None))
    ]
    for variant, value in variants[concept].items():
        if "blocking" not in variant:
            continue
        for name in verbs:
            given = list(inspect.signature(getattr(contract, name)).parameters.values())[1:]
            blocking = getattr(value, BLOCKING_NAMES.get(name, name))
            if name in BLOCKING_NAMES:
                continue  # close(), __exit__...: the blocking protocol's own
            if variant == "blocking sharded" and name.startswith("put"):
                continue  # a sharded queue's puts take a route besides
            assert list(inspect.signature(blocking).parameters.values()) == given, (
                variant,
                name,
            )
