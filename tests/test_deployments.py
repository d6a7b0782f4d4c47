"""The choice of deployment kinds for a test (tests/support/deployments.py): no server."""

from __future__ import annotations

import pytest

from tests.support import deployments


def ids(params: list[object]) -> list[str]:
    return [str(param.id) for param in params]  # type: ignore[attr-defined]


def test_a_test_runs_on_the_unix_kinds_unless_its_module_asks_for_every_kind() -> None:
    assert ids(deployments.kinds_for("test_x", every=False, limit=None)) == ["valkey9", "redis7"]
    assert ids(deployments.kinds_for("test_x", every=True, limit=None)) == list(deployments.KINDS)


def test_a_limit_keeps_the_kinds_it_names_unix_naming_both() -> None:
    limit = pytest.mark.deployments("unix", "tls", reason="why").mark
    assert ids(deployments.kinds_for("test_x", every=True, limit=limit)) == [
        "valkey9",
        "redis7",
        "tls",
    ]
    assert ids(deployments.kinds_for("test_x", every=False, limit=limit)) == ["valkey9", "redis7"]


@pytest.mark.parametrize(
    "limit",
    [
        pytest.mark.deployments("unix").mark,  # no reason
        pytest.mark.deployments("tcp", "tsl", reason="a typo").mark,
    ],
)
def test_a_limit_without_a_reason_or_with_an_unknown_kind_is_refused(limit: pytest.Mark) -> None:
    with pytest.raises(pytest.UsageError):
        deployments.kinds_for("test_x", every=True, limit=limit)
