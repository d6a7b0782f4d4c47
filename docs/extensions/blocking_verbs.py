"""A griffe extension for the reference: the surface written once, documented once.

- A blocking façade's derived verb (``put = blocking(contracts.Queue.put)``) reads, to static
  analysis, as an attribute with no docstring. It becomes a method with the contract verb's
  parameters and the docstring the façade gives it at runtime (its async class's).
- A sharded object's routed verb (``length = routed(Queue.length, every, summed)``) and a plain
  object's scripted one (``length = scripted(contracts.Queue.length)``) become, the same way,
  async methods with the verb's parameters and docstring.
- The verbs a class derives in a generated base (aqless/contracts/derived.py,
  aqless/sync/derived.py) are shown as the class's own.
- A contract's verb (a Protocol member, ``...`` for a body) takes the docstring of the plain
  class that implements it (``contracts.Queue.put`` that of ``aqless.Queue.put``).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import griffe

_DERIVERS = (
    "blocking",
    "blocking_job",
    "blocking_refreshed",
    "blocking_jobs",
    "blocking_found",
    "routed",
    "scripted",
)

#: The modules whose classes derive verbs.
_DERIVING = (
    "sync.facades",
    "sync.parts",
    "queue",
    "client",
    "_client.queues",
    "_client.jobs",
    "_client.config",
    "_client.workers",
    "_client.throttles",
    "_client.tags",
    "_client.sharded",
    "limits",
    "patterns",
    "sharding.client",
    "sharding.queue",
    "batches.sharded",
    "flows.sharded",
)


class BlockingVerbs(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if pkg.path != "aqless":
            return
        _document_contracts(pkg.get_member("contracts"))
        for path in _DERIVING:
            module = pkg.get_member(path)
            runtime = importlib.import_module(module.path)
            for cls in module.classes.values():
                runtime_cls = getattr(runtime, cls.name, None)
                if runtime_cls is None:  # imported for typing only
                    continue
                for name, member in list(cls.members.items()):
                    if member.is_attribute and _derived(member):
                        method = _method(cls.module, member, loader, runtime_cls)
                        cls.set_member(name, method)
                for base in _generated_bases(cls):
                    for name, member in base.members.items():
                        if name not in cls.members and member.is_attribute and _derived(member):
                            method = _method(base.module, member, loader, runtime_cls)
                            cls.set_member(name, method)


def _generated_bases(cls: griffe.Class) -> list[griffe.Class]:
    """The bases of `cls`, and theirs, that a generated module holds (``*.derived``)."""
    found: list[griffe.Class] = []
    for base in cls.resolved_bases:
        if not isinstance(base, griffe.Class):
            continue
        if base.module.path.endswith(".derived"):
            found.append(base)
        found += _generated_bases(base)
    return found


#: The plain class that implements a contract, where its name differs.
_IMPLEMENTED_BY = {
    "JobFields": "aqless.Job",
    "EventStream": "aqless.events.EventStream",
    "Flows": "aqless.flows.Flows",
}


def _document_contracts(contracts: griffe.Module) -> None:
    """Each undocumented verb of each contract takes its plain implementation's docstring."""
    for cls in contracts.classes.values():
        path = _IMPLEMENTED_BY.get(cls.name, f"aqless.{cls.name}")
        module_path, _, name = path.rpartition(".")
        plain = getattr(importlib.import_module(module_path), name, None)
        if plain is None:
            continue
        for member in cls.members.values():
            if isinstance(member, griffe.Alias) or member.docstring or member.name[0] == "_":
                continue
            implemented = getattr(plain, member.name, None)
            if isinstance(implemented, property):
                implemented = implemented.fget
            doc = getattr(implemented, "__doc__", None)
            if doc:
                member.docstring = griffe.Docstring(inspect.cleandoc(doc), parent=member)


def _derived(attribute: griffe.Object | griffe.Alias) -> bool:
    value = str(getattr(attribute, "value", "") or "")
    return value.split("(", 1)[0] in _DERIVERS


def _method(
    module: griffe.Module, attribute: Any, loader: griffe.GriffeLoader, runtime_cls: type
) -> griffe.Function:
    """The method for `attribute` (`blocking(contracts.Queue.put)`, declared in `module`): the
    verb's parameters after self, what it awaits, and the docstring the class gives it."""
    deriver, _, arguments = str(attribute.value).partition("(")
    verb = _resolve(module, arguments.split(",")[0].strip().rstrip(")"), loader)
    parameters = griffe.Parameters(*[p for p in verb.parameters if p.name != "self"])
    declared = inspect.getattr_static(runtime_cls, attribute.name)
    doc_of = getattr(declared, "doc", None)  # a blocking verb's, from its class
    doc = (doc_of(runtime_cls) if callable(doc_of) else declared.__doc__) or ""
    if not doc and verb.docstring is not None:
        doc = verb.docstring.value
    method = griffe.Function(
        attribute.name,
        lineno=attribute.lineno,
        endlineno=attribute.endlineno,
        parameters=griffe.Parameters(
            griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword),
            *parameters,
        ),
        returns=verb.returns,
        docstring=griffe.Docstring(doc, parent=None) if doc else None,
    )
    if method.docstring is not None:
        method.docstring.parent = method
    if deriver in ("routed", "scripted"):
        method.labels.add("async")
    return method


def _resolve(module: griffe.Module, dotted: str, loader: griffe.GriffeLoader) -> griffe.Function:
    """`dotted` (``contracts.Queue.put``), as `module` names it, to the function it is."""
    head, _, rest = dotted.partition(".")
    imported = module.imports.get(head, f"{module.path}.{head}")
    found = loader.modules_collection.get_member(f"{imported}.{rest}")
    while isinstance(found, griffe.Alias):
        found = found.final_target
    if not isinstance(found, griffe.Function):
        raise TypeError(f"{dotted} in {module.path} is not a function")
    return found
