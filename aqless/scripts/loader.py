"""Registers the protocol on a server and calls it, reloading it whenever the server lost it.

On Redis 7+ and Valkey the protocol is loaded as a function library (FUNCTION LOAD) and
called with FCALL: its functions are defined once, not on every call. Elsewhere, or when
asked to, it is the script, called with EVALSHA. Either way a server that forgot it (a
restart, SCRIPT FLUSH, FUNCTION FLUSH) gets it again, transparently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError, ResponseError

from aqless.errors import ConfigurationError
from aqless.scripts import build, build_library, function_name, sha1
from aqless.scripts.staging import Staged, staged

__all__ = ["NO_PERMISSION", "AnyRedis", "Argument", "Call", "Reply", "Script", "Wire", "refusal"]

#: How servers word an ACL's refusal, lower case: of a command (redis-py's NoPermissionError,
#: "NOPERM ..." on the wire), or of one a script runs (Valkey: "ACL failure in script: ...",
#: Redis 7: "The user executing the script can't run ...").
NO_PERMISSION = ("acl failure", "noperm", "no permissions to", "user executing the script can't")

#: One argument of a command as it goes on the wire.
Argument = str | bytes | int | float
Call = tuple[str, Sequence[Argument]]  # a command and its arguments
Reply = object
#: A server (or Sentinel's primary), or a Redis Cluster.
AnyRedis = aioredis.Redis | RedisCluster


class Wire(Protocol):
    """A connection the calls can go through instead of redis-py's (the client's is
    aqless._connection.lean.LeanConnection): one command, or several sent together (a
    refusal is its redis-py ResponseError, raised by `call`, in place in `pipeline`)."""

    async def call(self, argv: Sequence[Argument]) -> Any: ...
    async def pipeline(self, argvs: Sequence[Sequence[Argument]]) -> list[Any]: ...


def refusal(text: str) -> ResponseError:
    """The exception for an error reply: NoScriptError for ``NOSCRIPT``, else a
    ResponseError with the text, less a generic ``ERR``; other codes (``LOADING``,
    ``READONLY``, ``OOM``...) stay in the text for aqless._connection.protocol to read."""
    code, _, rest = text.partition(" ")
    if code == "NOSCRIPT":
        return NoScriptError(rest)
    return ResponseError(rest if code == "ERR" else text)


def answered(status: Reply, reply: Reply) -> Reply:
    """One call's reply from a script that ran several (``jobs.outcomes``, ``jobs.puts``),
    given as ``ok`` and the reply, or ``refused`` and the refusal's text: as it came, or
    that refusal (as the server's)."""
    return reply if _text(status) == "ok" else refusal(_text(reply))


def _missing_function(error: ResponseError) -> bool:
    return str(error).startswith("Function not found")


def _no_functions(error: ResponseError) -> bool:
    # servers before Redis 7 know neither FCALL nor FUNCTION
    return str(error).lower().startswith("unknown command")


class Script:
    """The qless protocol bound to one ``redis.asyncio.Redis`` (or ``RedisCluster``) client.

    Calls go over the client's lean connection (aqless._connection.lean), which reaches every
    kind of deployment, and the library or script is loaded where they go. Without one (a
    client's ``script_connection="redis-py"`` diagnostic, or a Script made on its own) they go
    through redis-py's connections: on a Cluster every call then names the node that holds the
    prefix's slot (so redis-py does not ask the server where FCALL's keys are, a round trip
    per call), and the library or script is loaded on every primary.

    Args:
        redis: the client to call through.
        prefix: a key prefix ending in ':' to use instead of ``ql:`` (required on a Cluster,
            hash-tagged so that all of a deployment's keys are in its slot).
        functions: call the function library with FCALL where the server has functions
            (the default); False always uses EVALSHA.
        wire: a lean connection to the same server to send the calls through (see
            aqless._connection.lean); its owner closes it. Without one, redis-py's connections
            carry them.
    """

    def __init__(
        self,
        redis: AnyRedis,
        *,
        prefix: str | None = None,
        functions: bool = True,
        wire: Wire | None = None,
    ) -> None:
        if prefix is not None and not prefix.endswith(":"):
            raise ConfigurationError(f"a key prefix must end with ':', got {prefix!r}")
        self._redis = redis
        self._cluster = redis if isinstance(redis, RedisCluster) else None
        self._wire = wire
        if self._cluster is not None and prefix is None:
            raise ConfigurationError(
                "on a Redis Cluster the script needs a (hash-tagged) key prefix"
            )
        self._keys: Sequence[str] = () if prefix is None else (prefix,)
        self._prefix = prefix or "ql:"
        self._stages = wire is not None  # until an ACL refuses it (see _lean_pipeline)
        self._functions = functions
        self.source = build()
        self.sha = sha1()
        self.function = function_name()
        # what comes before a call's own arguments, built once
        self._fcall: tuple[Argument, ...] = ("FCALL", self.function, len(self._keys), *self._keys)
        self._evalsha: tuple[Argument, ...] = ("EVALSHA", self.sha, len(self._keys), *self._keys)

    @property
    def uses_functions(self) -> bool:
        """Whether calls go through the function library (FCALL): until a server is found
        to have no functions, when they go by EVALSHA."""
        return self._functions

    @property
    def uses_lean_connection(self) -> bool:
        """Whether calls go over the lean connection (else through redis-py's)."""
        return self._wire is not None

    async def load(self) -> str:
        """Register the script with SCRIPT LOAD (on the server the calls go to); return its
        SHA1."""
        if self._wire is not None:
            loaded = await self._wire.call(("SCRIPT", "LOAD", self.source))
            return loaded.decode() if isinstance(loaded, bytes) else str(loaded)
        if self._cluster is not None:
            await self._cluster.script_load(self.source)  # goes to every primary
            return self.sha
        sha: str | bytes = await self._redis.script_load(self.source)
        return sha.decode() if isinstance(sha, bytes) else sha

    async def load_library(self) -> None:
        """Register the function library with FUNCTION LOAD (replacing a library of the same
        name, which is the same code: the name carries the script's digest). Over the lean
        connection, on the server (or Cluster node) the calls go to; through a Cluster
        client's own connections, on every primary."""
        if self._wire is not None:
            await self._wire.call(("FUNCTION", "LOAD", "REPLACE", build_library()))
            return
        if self._cluster is not None:
            await self._cluster.execute_command(
                "FUNCTION LOAD", "REPLACE", build_library(), target_nodes=RedisCluster.PRIMARIES
            )
            return
        await self._redis.function_load(build_library(), replace=True)

    async def _route(self) -> dict[str, Any]:
        """The keywords that send a call to the node holding the prefix's slot on a Cluster
        (none elsewhere). A named node also turns off redis-py's resending of a call after
        a dropped connection; MOVED and ASK redirections are still followed."""
        if self._cluster is None:
            return {}
        await self._cluster.initialize()  # reads the slots once; then returns at once
        return {"target_nodes": self._cluster.get_node_from_key(self._keys[0])}

    async def __call__(self, command: str, now: float, *args: Argument) -> Reply:
        return await self.send(command, (repr(now), *args))

    async def send(self, command: str, args: Sequence[Argument]) -> Reply:
        """One call whose arguments begin with its `now` (as text)."""
        if self._stages and staged(command, args, self._prefix) is not None:
            (reply,) = await self.send_many([(command, args)])
            if isinstance(reply, BaseException):
                raise reply
            return reply
        argv = (command, *args)
        if self._functions:
            try:
                try:
                    return await self._send(self._fcall + argv)
                except ResponseError as error:
                    if not _missing_function(error):
                        raise
                await self.load_library()
                return await self._send(self._fcall + argv)
            except ResponseError as error:
                if not _no_functions(error):
                    raise
                self._functions = False
        try:
            return await self._send(self._evalsha + argv)
        except NoScriptError:
            await self.load()
            return await self._send(self._evalsha + argv)

    async def send_many(
        self, calls: Sequence[Call], *, then: Sequence[Argument] = ()
    ) -> list[Reply]:
        """Calls whose arguments begin with their own `now` (as text), pipelined in one
        round trip (not a transaction: each call is atomic on its own). A refused call's
        reply is its ResponseError, in place. `then`, a plain command (e.g. WAITAOF), goes
        right behind them on the same connection; its reply comes last. Over the lean
        connection a big put's data goes beside its call (aqless.scripts.staging); the other
        puts go by runs in one call each (`_join_puts`)."""
        sent, sizes = _join_puts(calls, lambda call: staged(*call, self._prefix) is not None)
        replies = await self._pipeline(sent, then)
        if replies and isinstance(replies[0], ResponseError):
            first = replies[0]
            if self._functions and _no_functions(first):
                self._functions = False
                replies = await self._pipeline(sent, then)
            elif _missing_function(first) or isinstance(first, NoScriptError):
                # the server lost the code: nothing ran, so the whole batch can go again
                await (self.load_library() if self._functions else self.load())
                replies = await self._pipeline(sent, then)
        return _split_puts(replies, sizes)

    async def _pipeline(self, calls: Sequence[Call], then: Sequence[Argument]) -> list[Reply]:
        head = self._fcall if self._functions else self._evalsha
        if self._wire is not None:
            return await self._lean_pipeline(self._wire, head, calls, then)
        argvs = [(*head, command, *args) for command, args in calls]
        if then:
            argvs.append(tuple(then))
        route = await self._route()  # one slot: a Cluster's pipeline goes to one node
        pipeline = self._redis.pipeline(transaction=False)
        for argv in argvs:
            pipeline.execute_command(*argv, **route)
        replies: list[Reply] = await pipeline.execute(raise_on_error=False)
        return replies

    def _send(self, argv: tuple[Argument, ...]) -> Awaitable[Reply]:
        """One call: `argv` is the verb, its name, the keys and the arguments. Not a
        coroutine of its own: the LeanConnection's, or off a Cluster redis-py's."""
        if self._wire is not None:
            return self._wire.call(argv)
        if self._cluster is None:
            return self._redis.execute_command(*argv)
        return self._send_routed(argv)

    async def _send_routed(self, argv: tuple[Argument, ...]) -> Reply:
        return await self._redis.execute_command(*argv, **await self._route())

    async def _lean_pipeline(
        self,
        wire: Wire,
        head: tuple[Argument, ...],
        calls: Sequence[Call],
        then: Sequence[Argument],
    ) -> list[Reply]:
        """`_pipeline` over the lean connection: a big put goes as its staged transaction
        (see aqless.scripts.staging), its reply taken from EXEC's."""
        argvs: list[Sequence[Argument]] = []
        places: list[tuple[int, int | None]] = []  # each call's reply, and its EXEC's
        for command, args in calls:
            beside = staged(command, args, self._prefix) if self._stages else None
            if beside is None:
                places.append((len(argvs), None))
                argvs.append((*head, command, *args))
            else:
                places.append((len(argvs) + 2, len(argvs) + 4))
                argvs += _transaction(head, command, beside)
        if then:
            places.append((len(argvs), None))
            argvs.append(tuple(then))
        replies = await wire.pipeline(argvs)
        if len(replies) == len(places):  # nothing staged
            return replies
        answers = [
            replies[own] if done is None else _transaction_reply(replies[own], replies[done])
            for own, done in places
        ]
        # ACL rules older than staging (no MULTI, EXEC or RENAME): every put from now on
        # goes with its data; a put refused wrote nothing and goes again (one whose MULTI
        # alone was refused ran all the same, outside a transaction)
        if any(done and _no_permission(replies[own - 2]) for own, done in places):
            self._stages = False
        refused = [n for n, (_, done) in enumerate(places) if done and _no_permission(answers[n])]
        if refused:
            self._stages = False
            again = await self._lean_pipeline(wire, head, [calls[n] for n in refused], then)
            for n, reply in zip(refused, again, strict=False):
                answers[n] = reply
            if then:
                answers[-1] = again[-1]
        return answers


# Many puts in one call (``jobs.puts``, popafter.lua's Queue.puts). A script call has a fixed
# cost of its own (~35k server instructions for an FCALL, a sixth of a put's), which puts
# sent together (``Queue.put_many``'s round trips) paid once each. Each run of plain puts
# among the calls of a round trip goes as one ``jobs.puts``, each put framed as its now, the
# count of its arguments and its arguments; the script runs each as its own ``queue.put``
# call would, in order, and answers each on its own: a refused put is its own refusal and
# stops none after it. A put whose data goes beside its call (staging) goes alone.
JOINED_PUTS = "jobs.puts"
#: Puts a call carries at most: the server runs nothing else while a call runs (~50 µs a put).
MOST_PUTS = 100


def _join_puts(
    calls: Sequence[Call], alone: Callable[[Call], bool]
) -> tuple[list[Call], list[int]]:
    """The calls to send, each run of two or more ``queue.put`` calls (none `alone`) as one
    ``jobs.puts`` (its now the first put's), and how many puts each call sent carries (0: a
    call as it was)."""
    sent: list[Call] = []
    sizes: list[int] = []
    run: list[Call] = []

    def end_run() -> None:
        if len(run) == 1:
            sent.append(run[0])
            sizes.append(0)
        elif run:
            framed: list[Argument] = [run[0][1][0]]
            for _, (now, *args) in run:
                framed += (now, len(args), *args)
            sent.append((JOINED_PUTS, tuple(framed)))
            sizes.append(len(run))
        run.clear()

    for call in calls:
        if call[0] != "queue.put" or alone(call):
            end_run()
            sent.append(call)
            sizes.append(0)
            continue
        run.append(call)
        if len(run) == MOST_PUTS:
            end_run()
    end_run()
    return sent, sizes


def _split_puts(replies: list[Reply], sizes: Sequence[int]) -> list[Reply]:
    """The reply of each call `_join_puts` was given (a put's: its jid, or its refusal as
    the server's error), from the replies of the calls it sent; replies past those (a plain
    command sent behind them) follow as they are."""
    answers: list[Reply] = []
    for reply, size in zip(replies, sizes, strict=False):
        if size == 0:
            answers.append(reply)
        elif isinstance(reply, BaseException):
            answers += [reply] * size  # nothing ran (e.g. the server refused the call)
        elif not isinstance(reply, list) or len(reply) != 2 * size:
            answers += [ResponseError(f"joined puts: unexpected reply {reply!r}")] * size
        else:
            answers += [answered(reply[i], reply[i + 1]) for i in range(0, 2 * size, 2)]
    return answers + list(replies[len(sizes) :])


def _text(part: Reply) -> str:
    return part.decode() if isinstance(part, bytes) else str(part)


def _no_permission(reply: Reply) -> bool:
    """Whether `reply` is an ACL's refusal."""
    text = str(reply).lower()
    return isinstance(reply, ResponseError) and any(mark in text for mark in NO_PERMISSION)


def _transaction(
    head: tuple[Argument, ...], command: str, beside: Staged
) -> tuple[tuple[Argument, ...], ...]:
    """A staged call's five commands: MULTI, its data's HSET, the call, DEL, EXEC."""
    return (
        ("MULTI",),
        ("HSET", beside.key, "data", beside.data),
        (*head, command, *beside.arguments),
        ("DEL", beside.key),
        ("EXEC",),
    )


def _transaction_reply(queued: Reply, done: Reply) -> Reply:
    """A staged call's reply: its own in EXEC's list (HSET's, the call's, DEL's), or, where
    the transaction was refused (EXECABORT), the call's own refusal when it was refused as
    it was queued (or sent once more, on a Cluster's MOVED), else EXEC's."""
    if isinstance(done, list):
        reply = done[1]  # (a refusal inside EXEC's reply comes as hiredis made it)
        return refusal(str(reply)) if isinstance(reply, Exception) else reply
    if queued in ("QUEUED", b"QUEUED"):
        return done
    return queued
