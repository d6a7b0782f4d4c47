"""Runs the docs' code blocks fast: one Python process imports what the blocks import, once,
then forks a child per block, which runs the block as ``python -c`` would (its own
``__main__``, ``sys.argv == ["-c"]``, exit handlers run). A fresh interpreter per block cost
most of the docs test's time; a fork costs milliseconds.

``BlockRunner`` is the tests' side; run as a script, this file is the forking side: it
reads one JSON request a line on stdin and answers one JSON line on stdout.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from types import TracebackType

CHILD_STDIN = os.devnull


def imported_modules(sources: Iterable[str]) -> list[str]:
    """The modules the sources import at their top level, each once, in order met."""
    found: dict[str, None] = {}
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys(alias.name for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
    return list(found)


class BlockRunner:
    """The forking process, started with the modules to import first; `run` one block."""

    def __init__(self, preload: Iterable[str], path: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, __file__, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )

    def run(self, name: str, code: str, env: Mapping[str, str], timeout: float) -> tuple[int, str]:
        """Run `code` (tracebacks call it `name`) in a child with `env` added to the
        environment; its exit status (the negative signal when killed, e.g. after `timeout`
        seconds) and its output."""
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        request = {"name": name, "code": code, "env": dict(env), "timeout": timeout}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the block runner died (exit {self._process.wait()})")
        reply = json.loads(line)
        return reply["returncode"], reply["output"]

    def __enter__(self) -> BlockRunner:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=30)
        if self._process.stdout is not None:
            self._process.stdout.close()


def _child(name: str, code: str, env: Mapping[str, str], timeout: float, output: int) -> None:
    """In the forked child: run the block as ``python -c`` would, then exit."""
    import atexit
    import builtins
    import linecache
    import signal
    import traceback
    import types

    signal.alarm(max(1, round(timeout)))  # its default action ends the child
    stdin = os.open(CHILD_STDIN, os.O_RDONLY)
    os.dup2(stdin, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.environ.update(env)
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = ["-c"]
    filename = f"<{name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    status = 0
    try:
        exec(compile(code, filename, "exec"), main.__dict__)  # noqa: S102 (the docs' own code)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            sys.stderr.write(f"{stop.code}\n")
    except BaseException as error:
        # the block's own frames and its error: not this runner's, nor asyncio's
        frames = [
            frame
            for frame in traceback.extract_tb(error.__traceback__)
            if frame.filename == filename
        ]
        sys.stderr.write("".join(traceback.format_list(frames)))
        sys.stderr.write("".join(traceback.format_exception_only(error)))
        status = 1
    try:
        atexit._run_exitfuncs()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _serve() -> None:
    """The forking side: import the modules named on the command line, then serve."""
    import importlib

    sys.path[0] = ""  # as for ``python -c``: the working directory, not this file's folder
    for name in sys.argv[1:]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: S112 (a block that needs it reports the error itself)
            continue
    requests = os.fdopen(os.dup(0), "r")
    replies = os.fdopen(os.dup(1), "w")
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    for line in requests:
        request = json.loads(line)
        with tempfile.TemporaryFile() as captured:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                requests.close()
                replies.close()
                _child(
                    request["name"],
                    request["code"],
                    request["env"],
                    request["timeout"],
                    captured.fileno(),
                )
            _, status = os.waitpid(pid, 0)
            captured.seek(0)
            output = captured.read().decode(errors="replace")
        reply = {"returncode": os.waitstatus_to_exitcode(status), "output": output}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    _serve()
