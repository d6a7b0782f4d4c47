"""No code in aqless/ can turn stored data into code: no pickle, marshal or shelve, no eval,
exec, compile or __import__, no shell=True; and the Lua protocol loads no code either. Read
from the syntax trees, so comments and docstrings do not count and aliases do not hide."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import aqless

PACKAGE = Path(aqless.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle"}
UNSAFE_CALLS = {"eval", "exec", "compile", "__import__"}


def problems(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "") in UNSAFE_MODULES:
            found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call):
            function = node.func
            name = function.id if isinstance(function, ast.Name) else None
            if isinstance(function, ast.Attribute) and _named(function.value, "builtins"):
                name = function.attr  # builtins.eval(...); re.compile is fine
            if name in UNSAFE_CALLS:
                found.append(f"{name}(...) at line {node.lineno}")
            if isinstance(function, ast.Attribute) and _named(function.value, "yaml"):
                found.append(f"yaml.load(...) at line {node.lineno}")
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg == "shell" and not (
                    isinstance(value, ast.Constant) and value.value is False
                ):
                    found.append(f"shell=... at line {node.lineno}")
    return found


def _named(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def test_the_checker_finds_what_it_looks_for() -> None:
    tree = ast.parse(
        "import pickle\nfrom marshal import loads\nimport builtins\n"
        "eval('1')\nbuiltins.exec('x')\n__import__('os')\n"
        "import subprocess\nsubprocess.run('x', shell=True)\nimport re\nre.compile('x')\n"
    )
    assert len(problems(tree)) == 6


def test_the_package_has_sources() -> None:
    assert len(SOURCES) > 20
    assert PACKAGE / "handlers.py" in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_unsafe_code(path: Path) -> None:
    assert problems(ast.parse(path.read_text(), str(path))) == []


def test_the_lua_protocol_loads_no_code() -> None:
    scripts = sorted((PACKAGE / "scripts" / "lua").rglob("*.lua"))
    assert len(scripts) > 10
    for script in scripts:
        code = "\n".join(line.split("--", 1)[0] for line in script.read_text().splitlines())
        assert not re.search(r"\b(loadstring|load|dofile|loadfile|setfenv)\s*\(", code), script
