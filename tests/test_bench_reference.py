"""The benchmark's non-private reference (``benchmarks/reference.py``) computes what the default release
computes: on a small demo-like input its answers equal the release's with the noise switched off, record for
record (every stream, every period, every query)."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pytest

from benchmarks.reference import Demo, demo_yaml, reference_pipeline
from pipelines.cli import main as release_main
from pipelines.demo_data import generate


def _records(folder: Path, pattern: str) -> dict:
    out = {}
    for path in sorted(folder.glob(pattern)):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            out[(r["stream"], r["tick"], r["query"])] = r["estimate"]
    return out


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return abs(a - b) <= 1e-6 * max(1.0, abs(a))


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench_reference")
    lines = generate(2500)  # ~10 hours of the demo, its bad lines included
    src = tmp / "updates.jsonl"
    src.write_text("\n".join(lines) + "\n")
    demo = Demo(end=43_200.0)  # 12 hours: periods after the last update carry the totals on
    cfg = tmp / "dp.yaml"
    cfg.write_text(demo_yaml(demo, str(src), str(tmp / "dp") + "/", disable_noise=True))
    assert release_main(["--config", str(cfg)]) in (0, None)
    with beam.Pipeline(runner="apache_beam.runners.portability.fn_api_runner.FnApiRunner") as p:
        reference_pipeline(p | beam.Create(lines), demo, str(tmp / "ref" / "answers"))
    return demo, _records(tmp / "dp", "releases-*.jsonl"), _records(tmp / "ref", "answers*.jsonl")


def test_reference_equals_noise_off_release(both):
    demo, dp, ref = both
    assert len(ref) == len(demo.streams) * demo.end_tick * 3
    assert dp.keys() == ref.keys()
    wrong = [k for k in ref if not _close(ref[k], dp[k])]
    assert not wrong, f"{len(wrong)} answers differ, first {wrong[0]}: {ref[wrong[0]]} != {dp[wrong[0]]}"
    # the input moves every answer (a reference that computed zeros would not pass)
    assert max(v for (_, _, q), v in ref.items() if q == "active") > 50
