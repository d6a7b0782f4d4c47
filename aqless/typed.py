"""Typed job data: a handler that declares its data's type gets it validated and converted.

A handler's data parameter is the one after the job, without a default:
``async def charge(job: Job, order: Order)``. Its annotation is the data's type: a dataclass,
a pydantic model (``model_validate``/``model_dump``), a msgspec Struct, or any type these are
built from (``int``, ``list[str]``, ``X | None``, ``Literal``, an Enum, a TypedDict...). No
annotation passes the stored data as it is. ``put`` checks the data against the type before
anything is sent (`put_payload`); the worker converts the stored JSON (`load`) and passes it.
The job's stored data stays plain JSON, so every other qless client still reads it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aqless.errors import ConfigurationError, JobDataError

__all__ = ["DataParameter", "data_parameter", "is_job_method", "put_payload", "with_data"]

_SEQUENCES = (list, Sequence, typing.Sequence)
_MAPPINGS = (dict, Mapping, typing.Mapping)


class _Mismatch(Exception):
    """Where and how a value does not fit its type."""


@dataclass(frozen=True, slots=True)
class DataParameter:
    """A handler's data parameter: its name and declared type (Any when not annotated)."""

    name: str
    type: Any

    def load(self, data: Any, klass: str) -> Any:
        """The stored `data` as the declared type; JobDataError if it does not fit."""
        try:
            return _convert(self.type, data, "data")
        except _Mismatch as error:
            raise JobDataError(
                klass, f"the data does not fit {_name(self.type)}: {error}"
            ) from None

    def dump(self, data: Any, klass: str) -> Any:
        """`data` (an instance of the type, or its JSON form) as JSON-able values, checked."""
        value = {} if data is None else data
        kind = self.type
        made = isinstance(kind, type) and not typing.is_typeddict(kind) and isinstance(value, kind)
        if not made or (isinstance(value, bool) and kind is int):
            value = self.load(value, klass)
        return _builtins(value)


def is_job_method(cls: type, name: str) -> bool:
    """Whether `name` is one of `cls`'s public methods (one a job may run)."""
    return not name.startswith("_") and callable(getattr(cls, name, None))


def data_parameter(function: Callable[..., Any]) -> DataParameter | None:
    """The data parameter of a function the worker calls with a job, if it has one."""
    if inspect.ismethod(function):
        return _parameter(function.__func__, 2)
    if inspect.isfunction(function):
        return _parameter(function, 1)
    call = getattr(type(function), "__call__", None)  # noqa: B004  # callable objects too
    return None if call is None else _parameter(call, 2)


def with_data(function: Callable[..., Any], data: Any, klass: str) -> Callable[..., Any]:
    """`function`, given the stored `data` as its declared type if it has a data parameter
    (JobDataError if the data does not fit)."""
    parameter = data_parameter(function)
    if parameter is None:
        return function
    return functools.partial(function, **{parameter.name: parameter.load(data, klass)})


def put_payload(klass: Any, queue: str, data: Any) -> Any:
    """The data `put` stores for a job of `klass` in `queue`: checked against the type the
    handler declares (JobDataError if it does not fit), as it is otherwise."""
    if not isinstance(klass, str) and isinstance(klass, Hashable):
        parameter = _put_parameter(klass, queue)
        if parameter is not None:
            return parameter.dump(data, "queue.put")
    return {} if data is None else data


@functools.lru_cache(maxsize=1024)
def _put_parameter(klass: Any, queue: str) -> DataParameter | None:
    if not inspect.isclass(klass):
        return data_parameter(klass)
    name = queue if is_job_method(klass, queue) else "process"
    static = inspect.getattr_static(klass, name, None)
    if static is None:
        return None
    if isinstance(static, staticmethod | classmethod):
        return data_parameter(getattr(klass, name))
    return _parameter(getattr(klass, name), 2)  # an instance method, seen on its class


@functools.lru_cache(maxsize=1024)
def _parameter(function: Callable[..., Any], position: int) -> DataParameter | None:
    """The parameter at `position` (1-based) that has no default, if it is there."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    if len(parameters) < position + 1:
        return None
    parameter = parameters[position]
    kinds = (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
    if parameter.kind not in kinds or parameter.default is not parameter.empty:
        return None
    if parameter.annotation is parameter.empty:
        return DataParameter(parameter.name, Any)
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as error:
        raise ConfigurationError(
            f"cannot resolve the type of {function.__qualname__}'s {parameter.name!r}: {error}"
        ) from error
    return DataParameter(parameter.name, hints.get(parameter.name, Any))


def _convert(kind: Any, value: Any, path: str) -> Any:
    """`value` (JSON) as `kind`, or _Mismatch saying where it does not fit."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any or kind is object:
        return value
    if origin is typing.Annotated:
        return _convert(args[0], value, path)
    if origin in (typing.Union, types.UnionType):
        return _union(kind, args, value, path)
    if origin is typing.Literal:
        if any(value == arg and type(value) is type(arg) for arg in args):
            return value
        raise _Mismatch(f"{path}: expected one of {list(args)!r}, got {value!r}")
    if origin in _SEQUENCES or origin is tuple:
        return _sequence(origin, args, value, path)
    if origin in _MAPPINGS:
        _expect(isinstance(value, dict), "an object", value, path)
        item = args[1] if args else Any
        return {key: _convert(item, entry, f"{path}.{key}") for key, entry in value.items()}
    if origin is not None:
        return _convert(origin, value, path)
    return _convert_class(kind, value, path)


def _convert_class(kind: Any, value: Any, path: str) -> Any:
    if kind is None or kind is type(None):
        _expect(value is None, "null", value, path)
        return None
    if typing.is_typeddict(kind):
        return _typed_dict(kind, value, path)
    if not isinstance(kind, type):
        return value  # a TypeVar, a NewType...: not checked
    if dataclasses.is_dataclass(kind):
        return _dataclass(kind, value, path)
    if _is_pydantic(kind):
        try:
            return kind.model_validate(value)  # type: ignore[attr-defined]
        except ValueError as error:
            raise _Mismatch(f"{path}: {error}") from None
    msgspec = sys.modules.get("msgspec")  # a Struct means msgspec is imported already
    if msgspec is not None and issubclass(kind, msgspec.Struct):
        try:
            return msgspec.convert(value, kind)
        except msgspec.ValidationError as error:
            raise _Mismatch(f"{path}: {error}") from None
    if issubclass(kind, enum.Enum):
        try:
            return kind(value)
        except ValueError:
            raise _Mismatch(f"{path}: {value!r} is not a {kind.__qualname__}") from None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is float:
        _expect(number, "a number", value, path)
        return float(value)
    if kind is int:
        _expect(number and isinstance(value, int), "an integer", value, path)
        return value
    _expect(isinstance(value, kind), _name(kind), value, path)
    return value


def _union(kind: Any, args: tuple[Any, ...], value: Any, path: str) -> Any:
    for arg in args:
        try:
            return _convert(arg, value, path)
        except _Mismatch:
            continue
    raise _Mismatch(f"{path}: expected {_name(kind)}, got {_json_type(value)}")


def _sequence(origin: Any, args: tuple[Any, ...], value: Any, path: str) -> Any:
    _expect(isinstance(value, list), "an array", value, path)
    if origin is tuple and args and args[-1] is not Ellipsis:
        if len(args) != len(value):
            raise _Mismatch(f"{path}: expected {len(args)} items, got {len(value)}")
        return tuple(
            _convert(a, v, f"{path}[{i}]") for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    item = args[0] if args else Any
    items = [_convert(item, entry, f"{path}[{i}]") for i, entry in enumerate(value)]
    return tuple(items) if origin is tuple else items


def _dataclass(kind: type, value: Any, path: str) -> Any:
    fields = {field.name: field for field in dataclasses.fields(kind) if field.init}
    return kind(**_fields(kind, fields, value, path, required=_required(fields)))


def _required(fields: Mapping[str, dataclasses.Field[Any]]) -> set[str]:
    missing = dataclasses.MISSING
    return {
        name
        for name, field in fields.items()
        if field.default is missing and field.default_factory is missing
    }


def _typed_dict(kind: Any, value: Any, path: str) -> dict[str, Any]:
    return _fields(kind, kind.__annotations__, value, path, required=set(kind.__required_keys__))


def _fields(
    kind: Any, names: Mapping[str, Any], value: Any, path: str, *, required: set[str]
) -> dict[str, Any]:
    """The fields of an object for `kind` (a dataclass or TypedDict), each converted."""
    _expect(isinstance(value, dict), f"an object for {kind.__qualname__}", value, path)
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise _Mismatch(f"{path}: unknown field {', '.join(map(repr, unknown))}")
    missing = sorted(required - set(value))
    if missing:
        raise _Mismatch(f"{path}: missing field {', '.join(map(repr, missing))}")
    hints = typing.get_type_hints(kind, include_extras=True)
    return {name: _convert(hints.get(name, Any), v, f"{path}.{name}") for name, v in value.items()}


def _expect(fits: bool, expected: str, value: Any, path: str) -> None:
    if not fits:
        raise _Mismatch(f"{path}: expected {expected}, got {_json_type(value)}")


def _is_pydantic(kind: type) -> bool:
    return hasattr(kind, "model_validate") and hasattr(kind, "model_dump")


def _builtins(value: Any) -> Any:
    """`value` as what JSON encodes: models, dataclasses, enums and tuples taken apart."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _builtins(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if _is_pydantic(type(value)):
        return value.model_dump(mode="json")
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if isinstance(value, enum.Enum):
        return _builtins(value.value)
    if isinstance(value, list | tuple):
        return [_builtins(item) for item in value]
    if isinstance(value, dict):
        return {key: _builtins(item) for key, item in value.items()}
    return value


def _name(kind: Any) -> str:
    return kind.__qualname__ if isinstance(kind, type) else str(kind).replace("typing.", "")


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    names |= {list: "an array", dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__) + (
        f" ({value!r})" if isinstance(value, bool | int | float | str) else ""
    )
