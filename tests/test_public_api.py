"""The public API: `aqless.__all__` names exactly what the package exports, and all of it
exists."""

from __future__ import annotations

import ast
import inspect
import types
from pathlib import Path

import pytest

import aqless
from aqless import client, errors, job, limits, models, patterns, puts, queue
from aqless._worker import observers, policies, reservers
from aqless.sharding import client as sharded
from aqless.sharding import map as shard_map
from aqless.sharding import queue as sharded_queue

# the modules whose public classes make up the API (each of them is exported)
API_MODULES = (
    client,
    errors,
    job,
    limits,
    models,
    patterns,
    puts,
    queue,
    observers,
    policies,
    reservers,
    shard_map,
    sharded,
    sharded_queue,
)


def exported() -> set[str]:
    """The public names the package offers (each imported on first use), submodules aside."""
    return {
        name
        for name in dir(aqless)
        if not name.startswith("_") and not isinstance(getattr(aqless, name), types.ModuleType)
    }


def test_a_name_is_the_object_its_module_defines() -> None:
    assert aqless.Client is client.Client
    assert aqless.JobNotFoundError is errors.JobNotFoundError
    assert aqless.errors is errors  # a submodule, as `import aqless` once loaded it
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = aqless.Nothing


def test_all_has_no_duplicates() -> None:
    assert len(aqless.__all__) == len(set(aqless.__all__))


@pytest.mark.parametrize("name", aqless.__all__)
def test_every_name_in_all_exists(name: str) -> None:
    assert getattr(aqless, name, None) is not None, name


def test_all_matches_what_the_package_exports() -> None:
    assert exported() == set(aqless.__all__) - {"__version__"}


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from aqless import *", namespace)  # noqa: S102 -- a fixed, trusted statement
    assert set(namespace) - {"__builtins__"} == set(aqless.__all__)


#: Public classes of the API modules that users never meet, and why.
NOT_EXPORTED = {
    "ShardedTags": "a ShardedClient's tags (client.tags): reached, never named",
    "ShardedWorkers": "a ShardedClient's workers (client.workers): reached, never named",
    "PreparedPut": "what aqless.puts.prepare_put hands the queues: the script's arguments",
}


@pytest.mark.parametrize("module", API_MODULES, ids=lambda module: module.__name__)
def test_every_public_class_of_the_api_modules_is_exported(module: types.ModuleType) -> None:
    classes = {
        name
        for name, value in vars(module).items()
        if inspect.isclass(value) and value.__module__ == module.__name__
        if not name.startswith("_") and name not in NOT_EXPORTED
    }
    assert classes
    assert classes <= set(aqless.__all__), classes - set(aqless.__all__)
    for name in classes:
        assert getattr(aqless, name) is getattr(module, name)


def test_the_exception_tree() -> None:
    assert issubclass(aqless.AqlessError, Exception)
    for name in (
        "ConnectionLostError",
        "ScriptError",
        "PayloadError",
        "UnknownJobClassError",
    ):
        assert getattr(aqless, name).__bases__ == (aqless.AqlessError,), name
    for name in ("JobNotFoundError", "LockLostError", "PermissionDeniedError"):
        assert getattr(aqless, name).__bases__ == (aqless.ScriptError,), name
    # a server that refuses to run a call for now: retried wherever a lost connection is
    assert aqless.ServerUnavailableError.__bases__ == (aqless.ConnectionLostError,)
    assert aqless.ServerFullError.__bases__ == (aqless.ServerUnavailableError,)
    # a bad option is a ValueError too, as it was before it had a type of its own
    assert aqless.ConfigurationError.__bases__ == (aqless.AqlessError, ValueError)
    # a bad argument is a ValueError too, whether the script or the client refused it
    assert aqless.InvalidArgumentError.__bases__ == (aqless.ScriptError, ValueError)
    assert aqless.JobDataError.__bases__ == (aqless.InvalidArgumentError,)
    assert aqless.CrossShardError.__bases__ == (aqless.InvalidArgumentError,)
    # a flow refused before anything of it was written
    assert aqless.FlowError.__bases__ == (aqless.InvalidArgumentError,)
    for name in ("FlowCycleError", "FlowJidTakenError", "FlowTooLargeError"):
        assert getattr(aqless, name).__bases__ == (aqless.FlowError,), name
    assert aqless.FlowPlacementError.__bases__ == (aqless.CrossShardError,)
    # jobs popped before a shard refused: not a ConnectionLostError, so no retry drops them
    assert aqless.PartialPopError.__bases__ == (aqless.AqlessError,)
    # what an awaited result raises; a timeout is a TimeoutError too
    assert aqless.ResultError.__bases__ == (aqless.AqlessError,)
    for name in ("JobFailedError", "JobGoneError", "ResultDroppedError"):
        assert getattr(aqless, name).__bases__ == (aqless.ResultError,), name
    assert aqless.ResultTimeoutError.__bases__ == (aqless.ResultError, TimeoutError)
    assert errors.__doc__ is not None
    for name in vars(errors):
        value = getattr(errors, name)
        if inspect.isclass(value) and issubclass(value, aqless.AqlessError):
            assert name in errors.__doc__, f"{name} is missing from the tree in errors.py"
            assert value.__doc__, f"{name} does not say when it is raised"


def test_version() -> None:
    assert isinstance(aqless.__version__, str)
    assert aqless.__version__[0].isdigit()


def test_each_lazy_name_is_imported_for_the_type_checker_from_the_same_module() -> None:
    source = Path(aqless.__file__).read_text(encoding="utf-8")
    checked = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    imported = {
        alias.name: node.module
        for node in checked.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == aqless._HOMES
