"""A verb that is one script command, declared on its contract (aqless.contracts) and derived
for the plain class: which command, which arguments in what order, and what the reply becomes::

    class Throttle(Protocol):
        @script("throttle.set", "self.name", "maximum", "expiration")
        async def set(self, maximum: int, *, expiration: int = 0) -> None: ...

``set = scripted(contracts.Throttle.set)`` (written by ``python -m aqless.contracts --write``)
is then, on ``aqless.Throttle``, a coroutine that checks each argument that has a rule in
aqless.rules (by its parameter's name, for the command), calls ``throttle.set`` with the
throttle's name, `maximum` and `expiration` through the client's `ScriptCaller`, and returns
None. A verb with more logic than that is written by hand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

from aqless import rules
from aqless._concurrency.routing import DerivedVerb

__all__ = ["Script", "Scripted", "script", "script_of", "scripted"]

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])

#: An argument taken from the object rather than from the call: ``"self.name"``.
_OWN = "self."


@dataclass(frozen=True, slots=True)
class Script:
    """A verb as one script command: `arguments` are the verb's parameters by name (a
    ``*jids`` one spread), or ``self.<attribute>`` of the object; `reply` turns the
    command's JSON reply into the verb's value (None: the verb returns None; `int`: the
    reply is an integer)."""

    command: str
    arguments: tuple[str, ...]
    reply: Callable[[Any], Any] | None = None


def script(
    command: str, *arguments: str, reply: Callable[[Any], Any] | None = None
) -> Callable[[F], F]:
    """Declare on a contract's verb the script command it is (`Script`); the verb is
    unchanged."""

    def declare(verb: F) -> F:
        verb.script = Script(command, arguments, reply)  # type: ignore[attr-defined]
        return verb

    return declare


def script_of(verb: Callable[..., Any]) -> Script | None:
    """The script command declared on `verb` (`script`), if any."""
    declared: Script | None = getattr(verb, "script", None)
    return declared


class Scripted(DerivedVerb[P, R]):
    """A contract's verb declared as one script command, on a plain object that holds its
    client as ``_client`` (a `ScriptClient`)."""

    kind = "scripted"

    def __init__(self, verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> None:
        super().__init__(verb)
        # a verb declaring none is refused when called, not when imported, so that
        # ``python -m aqless.contracts --write`` can import the declarations it rewrites
        self.script = script_of(verb) or Script("", ())
        self._spread = {
            p.name
            for p in self.signature.parameters.values()
            if p.kind is inspect.Parameter.VAR_POSITIONAL
        }
        for argument in self.script.arguments:
            if not argument.startswith(_OWN) and argument not in self.signature.parameters:
                raise TypeError(f"{verb.__qualname__} has no parameter {argument!r} to send")

    def arguments(self, instance: object, args: Any, kwargs: Any) -> list[Any]:
        """The command's arguments for a call: each checked by its rule, if it has one."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        command = self.script.command
        sent: list[Any] = []
        for argument in self.script.arguments:
            if argument.startswith(_OWN):
                sent.append(getattr(instance, argument.removeprefix(_OWN)))
                continue
            value = bound.arguments[argument]
            if argument in rules.RULES:
                value = rules.check(argument, value, command)
            if argument in self._spread:
                sent.extend(value)
            else:
                sent.append(value)
        return sent

    async def call(self, instance: object, args: Any, kwargs: Any) -> R:
        if not self.script.command:
            raise TypeError(f"{self.name} declares no script command: declare one")
        client: Any = instance._client  # type: ignore[attr-defined]
        sent = self.arguments(instance, args, kwargs)
        command, reply = self.script.command, self.script.reply
        if reply is None:
            await client.protocol.call(command, *sent)
            return None  # type: ignore[return-value]
        if reply is int:
            answer: R = await client.protocol.integer(command, *sent)
            return answer
        converted: R = reply(await client.protocol.json(command, *sent))
        return converted


def scripted(verb: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> Scripted[P, R]:
    """The contract's `verb`, declared as one script command (`script`), on a plain class."""
    return Scripted(verb)
