"""URLs naming several servers (aqless._connection.urls): Sentinels and Cluster nodes."""

from __future__ import annotations

import pytest

from aqless import ConfigurationError
from aqless._connection.urls import ManyHosts, parse


def test_a_sentinel_url_names_the_sentinels_the_service_and_the_primarys_user() -> None:
    assert parse("redis+sentinel://app:s%40cret@10.0.0.1:5000,[::1],sentinel/jobs") == (
        ManyHosts(
            "redis+sentinel",
            [("10.0.0.1", 5000), ("::1", 26379), ("sentinel", 26379)],
            "app",
            "s@cret",
            "jobs",
        )
    )


def test_a_cluster_url_names_nodes() -> None:
    assert parse("redis+cluster://a:7000,b") == ManyHosts(
        "redis+cluster", [("a", 7000), ("b", 6379)], None, None, ""
    )


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://h:1",  # no service
        "redis+cluster://h:1/x",
        "redis+cluster://h:port",
        "redis+cluster://h:1,,h:2",
        "redis+cluster://h:70000",
        "redis://h:1",
    ],
)
def test_a_malformed_url_is_refused(url: str) -> None:
    with pytest.raises(ConfigurationError):
        parse(url)
