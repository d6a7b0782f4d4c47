"""A griffe extension for the reference: signatures a user can read without the private
modules.

- A default taken from a private module's constant (``concurrency: int = CONCURRENCY``,
  ``defaults.RESERVER``) shows its value (``10``, ``'ordered'``), in a function's parameters
  and in a dataclass field's ``field(default=...)`` (so in the dataclass's signature too).
- A class made of parts kept in modules named after its own keeps them as its bases: their
  members are its inherited members (its directive hides the bases and shows the members).
- A name in a signature or a default whose home is a private module (``aqless._worker...``)
  and which no public module exports (a type alias such as ``Middleware``) is shown as plain
  text: no link and no tooltip naming the private module. Names the package exports
  (``RetryPolicy``) keep their link to the public entry.
"""

from __future__ import annotations

from typing import Any

import griffe

#: The modules whose exports the reference documents (tests/docs/test_site.py's list).
_PUBLIC = (
    "",
    "puts",
    "errors",
    "contracts",
    "sync",
    "testing",
    "web",
    "metrics",
    "tracing",
    "sentry",
    "outbox",
    "flows",
)


def _private(path: str) -> bool:
    return path.startswith("aqless.") and any(part.startswith("_") for part in path.split("."))


class PublicSignatures(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.path != "aqless":
            return
        exported = _exported(pkg)
        for obj in _walk(pkg):
            if isinstance(obj, griffe.Class):
                obj.bases = [b if _part(obj, b) else _public(b, exported) for b in obj.bases]
            if isinstance(obj, griffe.Function):
                _signature(obj, pkg, exported)
                for overload in obj.overloads or ():
                    _signature(overload, pkg, exported)
            elif isinstance(obj, griffe.Attribute):
                obj.annotation = _public(obj.annotation, exported)
                obj.value = _public(_literal(obj.value, pkg), exported)


def _part(cls: griffe.Class, base: str | griffe.Expr) -> bool:
    """Whether `base` is a part of `cls` kept in a module named after its own (aqless._worker.
    workflow's WorkflowContext, its steps in workflow_steps): kept, so that its members are
    the class's inherited members, which its directive shows (``inherited_members``)."""
    path = base.canonical_path if isinstance(base, griffe.Expr) else base
    return path.startswith(f"{cls.module.path}_")


def _signature(function: griffe.Function, pkg: griffe.Module, exported: set[str]) -> None:
    for parameter in function.parameters:
        parameter.annotation = _public(parameter.annotation, exported)
        parameter.default = _public(_literal(parameter.default, pkg), exported)
    function.returns = _public(function.returns, exported)


def _exported(pkg: griffe.Module) -> set[str]:
    """The canonical paths of what the public modules export."""
    found: set[str] = set()
    for dotted in _PUBLIC:
        module = pkg if not dotted else pkg.get_member(dotted)
        for name in module.exports or ():
            try:
                member = module[str(name)]
                found.add(member.final_target.path if member.is_alias else member.path)
            except (griffe.AliasResolutionError, griffe.CyclicAliasError, KeyError):
                continue
    return found


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    found: list[griffe.Object] = [obj]
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, griffe.Object):
            found.extend(_walk(member))
    return found


def _literal(value: str | griffe.Expr | None, pkg: griffe.Module) -> str | griffe.Expr | None:
    """A default naming a private module's constant, as the constant's value; in a
    ``field(default=...)`` call, its ``default`` the same way."""
    if isinstance(value, griffe.ExprCall):
        for argument in value.arguments:
            if isinstance(argument, griffe.ExprKeyword) and argument.name == "default":
                argument.value = _literal(argument.value, pkg)  # type: ignore[assignment]
        return value
    if not isinstance(value, (griffe.ExprName, griffe.ExprAttribute)):
        return value
    try:
        path = value.canonical_path
        target = pkg.modules_collection[path]
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return value
    if _private(path) and isinstance(target, griffe.Attribute) and target.value is not None:
        return target.value
    return value


def _public(value: Any, exported: set[str]) -> Any:
    """`value` with each name of a private module no public module exports as plain text."""
    if isinstance(value, (griffe.ExprName, griffe.ExprAttribute)):
        try:
            path = value.canonical_path
        except Exception:  # a name griffe cannot follow stays as it is
            return value
        if _private(path) and path not in exported:
            return str(value)
        if isinstance(value, griffe.ExprName):
            return value
    if isinstance(value, griffe.Expr):
        for field_name in getattr(value, "__dataclass_fields__", {}):
            if field_name == "parent":
                continue
            inner = getattr(value, field_name)
            if isinstance(inner, list):
                setattr(value, field_name, [_public(each, exported) for each in inner])
            elif isinstance(inner, (griffe.Expr, str)):
                setattr(value, field_name, _public(inner, exported))
    return value
