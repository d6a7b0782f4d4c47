"""The reference teaches: each public callable (a class, a function, a class's public
method) says what it raises, where it raises, and shows a short example.

"Where it raises": its own code has a ``raise`` of a named exception or checks an input by
its rule (``rules.check``/``rules.parse``, which raise ``InvalidValueError``); a class's
``__init__``/``__post_init__`` count as the class's. An example is a Google-style
``Examples:`` section (or a fenced code block) in its docstring. An exception class needs
none: it is caught, not called; its docstring says when it is raised, and the errors page
shows catching.

A plain class's verb derived from its contract as one script command (inherited from
aqless/contracts/derived.py: ``length = scripted(contracts.Queue.length)``) is the contract's
function: its docstring is the verb's, and it raises where the command's arguments have a rule
(the derived verb checks them). The sharded and blocking variants' derived verbs (``routed``,
``blocking``) take the same docstring and are judged once, as the contract's and the plain
class's.

``PENDING`` lists, by name, what does not say so yet. A name leaves it when its docstring is
written (the test fails while a documented name stays listed), and nothing joins it: a new
public callable comes with its Raises and its example.
"""

from __future__ import annotations

import ast
import importlib
import textwrap
from collections.abc import Iterator

import pytest

pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra")
import griffe  # after the skip: it comes with the docs extra

from aqless import contracts, rules
from aqless._connection.scripted import script_of
from tests.docs.test_site import expected, module, package

#: Not yet documented with Raises and an example: none now. Nothing joins it: a new public
#: callable comes with its Raises and its example.
PENDING: frozenset[str] = frozenset()


def _raises_here(function: griffe.Function) -> bool:
    """Whether `function`'s own body raises a named exception or checks an input's rule."""
    source = function.source if function.lineno else ""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "rules"
            and node.func.attr in {"check", "parse", "check_optional"}
        ):
            return True
    return False


def _scripted_verb(
    member: griffe.Object | griffe.Alias, root: griffe.Module
) -> griffe.Function | None:
    """The contract's function a derived script verb (``scripted(contracts.Queue.length)``)
    is, or None for any other member."""
    target = member.final_target if isinstance(member, griffe.Alias) else member
    value = target.value if isinstance(target, griffe.Attribute) else None
    if not (
        isinstance(value, griffe.ExprCall)
        and str(value.function) == "scripted"
        and len(value.arguments) == 1
        and isinstance(value.arguments[0], griffe.ExprAttribute)
    ):
        return None
    contract, _, verb = str(value.arguments[0]).removeprefix("contracts.").partition(".")
    found = root["contracts"][contract].members.get(verb)
    return found if isinstance(found, griffe.Function) else None


def _script_checks(function: griffe.Function) -> bool:
    """Whether the script verb derived from the contract's `function` checks an argument by
    its rule, as aqless._connection.scripted does (then it raises InvalidValueError)."""
    contract = getattr(contracts, function.path.split(".")[-2])
    declared = script_of(getattr(contract, function.name))
    return declared is not None and any(a in rules.RULES for a in declared.arguments)


def _part(cls: griffe.Class, member: griffe.Object | griffe.Alias) -> bool:
    """Whether inherited `member` comes from a part of `cls` kept in a module named after its
    own (WorkflowContext's steps in aqless._worker.workflow_steps): the reference shows it as
    the class's (docs/extensions/public_signatures.py)."""
    target = member.final_target if isinstance(member, griffe.Alias) else member
    return target.module.path.startswith(f"{cls.module.path}_")


def _docstring(obj: griffe.Object) -> str:
    return obj.docstring.value if obj.docstring else ""


def _has_example(text: str) -> bool:
    return "Examples:" in text or "Example:" in text or "```" in text


def _has_raises(text: str) -> bool:
    return "Raises:" in text


def callables() -> Iterator[tuple[str, griffe.Object, bool]]:
    """Each public callable of the reference: its public path, itself, and whether it
    raises."""
    root = package()
    seen: set[str] = set()
    for path, name in expected():
        member = module(root, path)[name]
        target = member.final_target if member.is_alias else member
        if target.path in seen or not isinstance(target, (griffe.Class, griffe.Function)):
            continue
        seen.add(target.path)
        public = f"{path}.{name}"
        if isinstance(target, griffe.Function):
            yield public, target, _raises_here(target)
            continue
        own = [target.members[n] for n in ("__init__", "__post_init__") if n in target.members]
        raises = any(isinstance(m, griffe.Function) and _raises_here(m) for m in own)
        yield public, target, raises
        for method_name, method in target.members.items():
            if method_name.startswith("_") or method.is_alias:
                continue
            if isinstance(method, griffe.Function) and "property" not in method.labels:
                yield f"{public}.{method_name}", method, _raises_here(method)
            elif verb := _scripted_verb(method, root):
                yield f"{public}.{method_name}", verb, _script_checks(verb)
        for method_name, method in target.inherited_members.items():
            if method_name.startswith("_"):
                continue
            if verb := _scripted_verb(method, root):
                yield f"{public}.{method_name}", verb, _script_checks(verb)
            elif _part(target, method) and isinstance(method.final_target, griffe.Function):
                inherited = method.final_target
                if "property" not in inherited.labels:
                    yield f"{public}.{method_name}", inherited, _raises_here(inherited)


def _is_exception(public: str) -> bool:
    module_name, _, name = public.rpartition(".")
    try:
        value = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        return False  # a method (its class is the module part), or a module not installed
    return isinstance(value, type) and issubclass(value, BaseException)


def undocumented() -> set[str]:
    found = set()
    for public, obj, raises in callables():
        text = _docstring(obj)
        if not _has_example(text) and not _is_exception(public):
            found.add(f"{public}: example")
        if raises and not _has_raises(text):
            found.add(f"{public}: raises")
    return found


def test_every_public_callable_has_its_raises_and_an_example() -> None:
    missing = undocumented() - PENDING
    assert not missing, (
        "public callables without an example or a Raises section (write them; do not add "
        f"them to PENDING): {sorted(missing)}"
    )


def test_the_pending_list_only_shrinks() -> None:
    done = PENDING - undocumented()
    assert not done, f"documented now: remove from PENDING in {__file__}: {sorted(done)}"
