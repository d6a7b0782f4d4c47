"""What a parent reads of its children: `ChildrenResults`, from one ``flow.children`` call."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from aqless.codecs import PayloadCodec, Sealed
from aqless.codecs.envelope import opened_json
from aqless.errors import JobFailedError, JobGoneError, ResultDroppedError
from aqless.flows.spec import FailurePolicy
from aqless.models import Failure, JobState

__all__ = ["ChildResult", "ChildrenResults"]


@dataclass(frozen=True, slots=True)
class ChildResult:
    """One child of a flow parent as the server held it when read.

    Attributes:
        jid: the child's jid.
        name: the name its parent reads it by (None: none given).
        policy: its failure policy.
        state: its state (``complete`` once it ran; ``failed`` under ``ignore`` or
            ``continue``); None when it no longer exists (expired past ``jobs-history``).
        text: its kept return value as JSON text (None: none kept; `aqless.codecs.Sealed`
            when this client's codec cannot open it).
        dropped: why its return value was not kept, or None.
        failure: why it failed, when it did.

    Examples:
        ```python
        for child in await job.children_results():
            if child.failed:
                print(child.name, child.failure)
        ```
    """

    jid: str
    name: str | None
    policy: FailurePolicy
    state: JobState | str | None
    text: str | None
    dropped: str | None
    failure: Failure | None

    @property
    def failed(self) -> bool:
        """Whether it failed (its parent ran anyway: its policy is ignore or continue)."""
        return self.state == JobState.FAILED

    @property
    def ignored(self) -> bool:
        """Whether it failed under ``ignore``: its parent reads it as completed, value None."""
        return self.failed and self.policy == "ignore"

    def value(self) -> Any:
        """Its return value (None when it returned none, or failed under ``ignore``).

        Raises:
            JobFailedError: it failed under ``continue``.
            ResultDroppedError: it completed, but its value was not kept.
            JobGoneError: it no longer exists.
            CodecError: its value is sealed, and this client's codec cannot open it.

        Examples:
            ```python
            thumbnail = (await job.children_results()).child("small").value()
            ```
        """
        if self.state is None:
            raise JobGoneError(self.jid, "expired before its parent read it")
        if self.failed:
            if self.ignored:
                return None
            group, message = (
                (self.failure.group, self.failure.message) if self.failure else ("", "")
            )
            raise JobFailedError(self.jid, group, message)
        if self.dropped is not None:
            raise ResultDroppedError(self.jid, self.dropped)
        if isinstance(self.text, Sealed):
            raise self.text.error
        return None if self.text is None else json.loads(self.text)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any], codec: PayloadCodec | None = None) -> ChildResult:
        """Decode one child's entry of the script's reply (`Job.children_results` does it),
        its value opened by `codec`.

        Examples:
            ```python
            entry = {"jid": "j-1", "name": "small", "state": "complete", "result": "1"}
            child = ChildResult.from_json(entry)
            assert child.value() == 1
            ```
        """
        state = entry.get("state")
        text, dropped, name = entry.get("result"), entry.get("dropped"), entry.get("name")
        policy = entry.get("policy")
        return cls(
            jid=str(entry["jid"]),
            name=name if isinstance(name, str) and name else None,
            policy=cast(FailurePolicy, policy if policy in ("ignore", "continue") else "fail"),
            state=_state(state) if isinstance(state, str) else None,
            text=opened_json(codec, text) if isinstance(text, str) else None,
            dropped=dropped if isinstance(dropped, str) else None,
            failure=Failure.from_json(entry.get("failure")),
        )


def _state(text: str) -> JobState | str:
    try:
        return JobState(text)
    except ValueError:
        return text


class ChildrenResults:
    """A flow parent's children, read in one call: iterate for each `ChildResult` in the
    order given; ``results["resize"]`` (a name) or ``results[jid]`` is that child's value
    (`ChildResult.value`, which raises for a child that failed under ``continue``).

    Examples:
        ```python
        @handlers.register("app.jobs.report")
        async def report(job: aqless.Job) -> dict[str, str]:
            results = await job.children_results()
            return {"small": results["small"], "large": results["large"]}
        ```
    """

    def __init__(self, children: Sequence[ChildResult]) -> None:
        self.children: tuple[ChildResult, ...] = tuple(children)
        self.by_jid: Mapping[str, ChildResult] = {child.jid: child for child in children}
        self.by_name: Mapping[str, ChildResult] = {
            child.name: child for child in children if child.name is not None
        }

    @classmethod
    def from_json(cls, reply: Any, codec: PayloadCodec | None = None) -> ChildrenResults:
        """Decode the script's reply: a list of the children's entries, their values opened
        by `codec`.

        Examples:
            ```python
            entry = {"jid": "j-1", "name": "small", "state": "complete"}
            results = ChildrenResults.from_json([entry])
            assert "small" in results and len(results) == 1
            ```
        """
        entries = reply if isinstance(reply, list) else []
        return cls([ChildResult.from_json(entry, codec) for entry in entries])

    def __iter__(self) -> Iterator[ChildResult]:
        return iter(self.children)

    def __len__(self) -> int:
        return len(self.children)

    def __contains__(self, key: object) -> bool:
        return key in self.by_name or key in self.by_jid

    def child(self, key: str) -> ChildResult:
        """The child of that name (else of that jid).

        Raises:
            KeyError: no child has that name or jid.

        Examples:
            ```python
            small = results.child("small")
            ```
        """
        found = self.by_name.get(key) or self.by_jid.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __getitem__(self, key: str) -> Any:
        return self.child(key).value()

    def values(self) -> dict[str, Any]:
        """Each child's value by name (by jid for a child without one), leaving out those
        that failed under ``continue``.

        Raises:
            ResultDroppedError: a child's value was not kept.
            JobGoneError: a child no longer exists.

        Examples:
            ```python
            sizes = (await job.children_results()).values()  # {"small": ..., "large": ...}
            ```
        """
        return {
            child.name or child.jid: child.value()
            for child in self.children
            if not (child.failed and not child.ignored)
        }

    def only(self) -> Any:
        """The value of the one child (a chain's previous step).

        Raises:
            ValueError: the job has no child or more than one.
            JobFailedError, ResultDroppedError, JobGoneError: as `ChildResult.value`.

        Examples:
            ```python
            rows = (await job.children_results()).only()  # the extract step's result
            ```
        """
        if len(self.children) != 1:
            raise ValueError(f"expected one child, the job has {len(self.children)}")
        return self.children[0].value()

    @property
    def failed(self) -> list[ChildResult]:
        """The children that failed under ``continue``."""
        return [child for child in self.children if child.failed and not child.ignored]

    @property
    def ignored(self) -> list[ChildResult]:
        """The children that failed under ``ignore``."""
        return [child for child in self.children if child.ignored]

    def __repr__(self) -> str:
        shown = ", ".join(f"{child.name or child.jid}: {child.state}" for child in self.children)
        return f"<ChildrenResults {shown}>"
