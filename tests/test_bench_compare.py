"""benchmarks/compare.py's plumbing: the payload-size and features runs, their tables, and the
servers it starts (Valkey 9 and Redis 7). The runs here are tiny: they prove the wiring, they
measure nothing."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import pytest

from benchmarks import compare
from benchmarks.compare import FeatureRun, Library, Run, SizedRun
from benchmarks.peers._common import Resp


def arguments(**overrides: Any) -> argparse.Namespace:
    values: dict[str, Any] = {
        "jobs": 20000,
        "scale_jobs": 1000,
        "rate": 200.0,
        "seconds": 1.0,
        "timeout": 60.0,
        "budget": 30.0,
        "verbose": True,
        "payload_mb": 10.0,
        "payload_jobs": 5000,
        "payload_sizes": list(compare.PAYLOAD_SIZES),
        "payload_text": "x",
    }
    return argparse.Namespace(**{**values, **overrides})


def result(**figures: float) -> dict[str, Any]:
    return {"extra": {}, **figures}


def fill(library: Library, size: int, *figures: dict[str, Any]) -> None:
    """The same `figures` (one result each) for each of the payload workload's runs."""
    for key in ("enqueue_one_by_one", "enqueue_fastest", "drain c=50"):
        library.results[compare.sized_key(key, size)] = list(figures)


def stored_data(url: str) -> str:
    """The data field of one of the jobs on the server."""
    resp = Resp(url)
    try:
        jobs = [key for key in resp.call("KEYS", "ql:j:*") if "-" not in key]
        data: str = resp.call("HGET", jobs[0], "data")
    finally:
        resp.close()
    return data


def test_the_payload_workload_runs_put_put_many_and_drain_at_each_size() -> None:
    runs = compare.runs_for(["payload"], [100, 10_000])
    assert [run.key for run in runs] == [
        "enqueue_one_by_one 100 B",
        "enqueue_fastest 100 B",
        "drain c=50 100 B",
        "enqueue_one_by_one 10 KB",
        "enqueue_fastest 10 KB",
        "drain c=50 10 KB",
    ]
    assert runs[-1].flags() == ["--payload-bytes", "10000", "--payload-text", "x"]
    assert all(run.applies("bullmq") for run in runs)
    realistic = compare.runs_for(["payload"], [100], "realistic")
    assert realistic[0].flags() == ["--payload-bytes", "100", "--payload-text", "realistic"]


def test_the_realistic_text_is_the_same_bytes_everywhere_cut_to_the_size() -> None:
    from benchmarks import codecs, realistic
    from benchmarks.peers._common import pad_text

    assert vars(codecs)["payload"] is realistic.payload  # one generator, both benchmarks
    for size in (100, 1000, 10_000, 100_000):
        text = pad_text(size, "realistic")
        assert len(text) == size
        assert text == pad_text(size, "realistic")
        assert json.dumps(text) == f'"{text}"'  # nothing a JSON encoder escapes
    assert pad_text(1000, "realistic").startswith("{'page':1,'orders':[{'id':'")
    assert pad_text(10_000, "realistic").startswith(pad_text(1000, "realistic"))
    assert pad_text(5) == "xxxxx"
    ratio = compare.zstd_ratio(pad_text(100_000, "realistic"))
    assert ratio is not None
    assert 3 < ratio < 5  # realistic: "x" * 100_000 shrinks thousands of times
    notes = "\n".join(compare.payload_notes(arguments(payload_text="realistic"), [100_000]))
    assert "realistic_text[:size]" in notes
    assert f"Zstandard level 1 shrinks the field {ratio:,.2f}x at 100 KB." in notes


def test_larger_payloads_run_fewer_jobs_within_the_bounds() -> None:
    options = arguments()
    counts = [SizedRun("drain", 50, size).job_count(options) for size in compare.PAYLOAD_SIZES]
    assert counts == [5000, 5000, 1000, 300]  # 300: the floor, 30 MB at 100 KB
    assert SizedRun("drain", 50, 100_000).job_count(arguments(payload_jobs=40)) == 40
    assert Run("drain", 50).job_count(options) == 20000  # the other runs keep --jobs


def test_the_features_workload_runs_only_aqless_off_and_on() -> None:
    runs = compare.runs_for(["features"])
    assert [run.key for run in runs] == [
        "drain c=50 [off]",
        "drain c=50 [metrics]",
        "drain c=50 [tracing]",
        "drain c=50 [metrics,tracing]",
        "latency [off]",
        "latency [metrics]",
        "latency [tracing]",
        "latency [metrics,tracing]",
    ]
    assert runs[3].flags() == ["--features", "metrics,tracing"]
    assert runs[0].applies("aqless")
    assert not runs[0].applies("taskiq")


def test_the_slope_is_the_least_squares_fit() -> None:
    assert compare.slope([(0.1, 10.0), (1.0, 19.0), (10.0, 109.0)]) == pytest.approx(10.0)
    assert compare.slope([(1.0, 5.0)]) is None


def test_the_payload_tables_give_aqless_ratio_to_each_peer_and_its_cost_per_kb() -> None:
    aqless, peer = Library("aqless", version="1"), Library("taskiq", version="2")
    for size, server_us in ((1000, 50.0), (10_000, 140.0)):
        fill(
            aqless,
            size,
            result(rate=4000.0, server_cpu_us=server_us, client_cpu_us=server_us / 2),
            result(rate=6000.0, server_cpu_us=server_us, client_cpu_us=server_us / 2),
        )
        fill(peer, size, result(rate=2500.0, server_cpu_us=1.0, client_cpu_us=1.0))
    text = "\n".join(
        compare.payload_tables([aqless, peer], arguments(payload_sizes=[1000, 10_000]))
    )
    assert "#### 1 KB (5,000 jobs)" in text
    assert "#### 10 KB (1,000 jobs)" in text
    assert "| aqless 1 | 5,000 (4,000\u20136,000) |" in text
    assert "| taskiq 2 | 2,500 | 2,500 | 2,500 | 2.00x | 2.00x | 2.00x |" in text
    # (140 - 50) us over 9 KB: 10 us of server CPU and 5 of client CPU per KB
    assert "| drain c=50 | 50 | 140 | 25 | 70 | 10.00 | 5.00 |" in text
    assert "drain c=50 10.00 us server, 5.00 us client" in text


def test_aqless_with_zstd_is_a_row_of_its_own_against_the_best_peer() -> None:
    zstd = Library("aqless+zstd", version="1")
    assert (zstd.runner, zstd.features, zstd.ours) == ("aqless", "zstd", True)
    assert (Library("arq").runner, Library("arq").features, Library("arq").ours) == (
        "arq",
        "",
        False,
    )
    aqless, arq, saq = Library("aqless", version="1"), Library("arq"), Library("saq")
    for library, rate in ((aqless, 900.0), (zstd, 1500.0), (arq, 1000.0), (saq, 1200.0)):
        fill(library, 100_000, result(rate=rate, server_cpu_us=1.0, client_cpu_us=1.0))
    options = arguments(payload_sizes=[100_000], payload_text="realistic")
    text = "\n".join(compare.payload_tables([aqless, zstd, arq, saq], options))
    assert "| aqless+zstd 1 | 1,500 | 1,500 | 1,500 | - | - | - |" in text
    assert "| arq ? | 1,000 | 1,000 | 1,000 | 0.90x | 0.90x | 0.90x |" in text
    assert "| size | workload | best peer | aqless / best | aqless+zstd / best |" in text
    assert "| 100 KB | enqueue fastest | saq 1,200 | 0.75x | 1.25x |" in text
    assert "aqless+zstd: the client made with `codec=PayloadCodec(compression=Zstd())`" in text
    assert "#### aqless+zstd's cost per KB of payload" in text


def test_the_features_table_says_how_much_slower_each_feature_is() -> None:
    aqless = Library("aqless", version="1")
    for features, rate, p50 in (("", 5000.0, 0.5), ("metrics", 4000.0, 0.55)):
        aqless.results[compare.feature_key("drain c=50", features)] = [
            result(rate=rate, client_cpu_us=1e6 / rate)
        ]
        aqless.results[compare.feature_key("latency", features)] = [
            result(p50_ms=p50, p99_ms=2 * p50)
        ]
    rows = {
        line.split(" | ")[0]: line
        for line in "\n".join(compare.feature_table([aqless, Library("arq")])).splitlines()
        if line.startswith("| ")
    }
    assert rows["| off"].count("+0.0%") == 4
    assert "| 4,000 | +25.0% | 250 | +25.0% | 0.55 | +10.0% | 1.10 | +10.0% |" in rows["| metrics"]
    assert "| - | - | - | - |" in rows["| tracing"]


def test_url_and_server_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        compare.main(["--url", "redis://127.0.0.1:1/0", "--server", "redis7"])
    assert "exclude each other" in capsys.readouterr().err


def test_redis7_alone_without_redis_server_is_refused_and_skipped_in_both(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(compare, "redis7_binary", lambda: None)
    with pytest.raises(SystemExit):
        compare.main(["--server", "redis7"])
    assert "redis-server is not installed" in capsys.readouterr().err
    options = arguments(url=None, server="both", workloads=[], repeat=1)
    sections = compare.run_servers(options, [Library("aqless", python=sys.executable)])
    assert [section.title.split(" ")[0] for section in sections] == ["Valkey", "Redis"]
    assert sections[0].skipped is None
    assert sections[1].skipped is not None
    assert "not installed" in sections[1].skipped


def test_a_report_says_why_a_server_did_not_run() -> None:
    options = arguments(repeat=1, budget=60.0)
    skipped = compare.Section("Redis 7", [], [], skipped="redis-server is not installed")
    text = compare.report(
        [compare.Section("Valkey 9", ["- server: Valkey 9"], []), skipped], options, []
    )
    assert "## Valkey 9\n" in text
    assert "## Redis 7\n\nNot run: redis-server is not installed." in text


@pytest.mark.parametrize("kind", ["valkey", "redis7"])
def test_sized_and_featured_aqless_runs_on_each_server(kind: str) -> None:
    if kind == "redis7" and compare.redis7_binary() is None:
        pytest.skip("redis-server (Redis 7) is not installed")
    aqless = Library("aqless", python=sys.executable)
    options = arguments(jobs=200, payload_jobs=20)
    with compare.server(None, kind) as url:
        assert compare.server_version(url).startswith("Valkey" if kind == "valkey" else "Redis 7")
        drained = compare.run_one(aqless, FeatureRun("drain", 5, "metrics,tracing"), url, options)
        assert "error" not in drained, drained
        assert drained["jobs"] == 200
        assert "partial_of" not in drained["extra"]
        put = compare.run_one(aqless, SizedRun("enqueue_fastest", 50, 2000), url, options)
        assert "error" not in put, put
        assert put["jobs"] == 20
        data = json.loads(stored_data(url))
    assert len(data["pad"]) == 2000


def test_aqless_with_zstd_stores_its_realistic_payload_compressed_and_drains_it() -> None:
    zstd = Library("aqless+zstd", python=sys.executable)
    options = arguments(jobs=200, payload_jobs=20, payload_text="realistic")
    with compare.server(None, "valkey") as url:
        put = compare.run_one(
            zstd, SizedRun("enqueue_fastest", 50, 10_000, "realistic"), url, options
        )
        assert "error" not in put, put
        stored = stored_data(url)
        drained = compare.run_one(zstd, SizedRun("drain", 50, 10_000, "realistic"), url, options)
        assert "error" not in drained, drained
    assert json.loads(stored)["codecs"] == ["zstd"]
    assert len(stored) < 10_000 / 2  # 10 KB of text, compressed (and base64)
    assert drained["jobs"] == 20
    assert "partial_of" not in drained["extra"]


def test_the_aqless_runner_knows_its_features() -> None:
    from benchmarks.peers._aqless_features import Features

    assert Features(()).middleware() == []
    assert Features(()).codec is None
    assert Features(("zstd",)).codec.compression.threshold == 1024
    both = Features(("metrics", "tracing"))
    assert len(both.middleware()) == 1
    assert both.metrics is not None
    with pytest.raises(ValueError, match="unknown features: tracng"):
        Features(("tracng",))
