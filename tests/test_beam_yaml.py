"""Beam YAML (``pipelines/beam_yaml.py``, ``configs/beam_yaml/``, ``docs/beam_yaml.md``): the shipped example run by
Beam's own YAML runner equals the CLI's releases, record for record; the Rows' path is exact; what a YAML run
refuses."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.yaml.yaml_transform import expand_pipeline

from pipelines.beam_yaml import (
    DpDynamicCollectReports,
    DpDynamicRelease,
    dead_letter_row,
    estimate_rows,
    release_rows,
    yaml_config,
)
from pipelines.beam_yaml_rows import query_answer_row
from pipelines.cli import main as cli_main
from pipelines.config import ConfigError

ROOT = Path(__file__).resolve().parent.parent
KEY = "5a" * 32
PROVIDERS = ROOT / "configs" / "beam_yaml" / "providers.yaml"


def _lines(folder: Path, name: str) -> list[dict]:
    return [json.loads(x) for f in sorted(folder.glob(f"{name}-*")) for x in f.read_text().splitlines() if x.strip()]


def _cli(tmp_path: Path, monkeypatch, raw: dict, release_id: str) -> Path:
    """Run ``python -m pipelines.release`` (in this process) on ``raw`` with sinks under tmp_path; the folder."""
    out = tmp_path / "cli"
    cfg = dict(raw, sinks=[{"type": "file", "path": str(out) + "/"}])
    path = tmp_path / "cli.yaml"
    path.write_text(yaml.safe_dump(cfg))
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    assert cli_main(["--config", str(path), "--release-id", release_id]) == 0
    return out


def _same(a, b) -> bool:
    """Equal, doubles to the 10 decimals Beam's WriteToJson writes (pandas' default double_precision)."""
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-10)
    return a == b


def _key(row: dict) -> tuple:
    return tuple(str(row[k]) for k in ("stream", "tick", "query", "cell"))


def test_shipped_example_equals_the_cli(tmp_path, monkeypatch):
    """configs/beam_yaml/demo_release.yaml, run by ``python -m apache_beam.yaml.main`` on the DirectRunner (Beam's
    ReadFromText and WriteToJson around DpDynamicRelease), releases what the CLI releases on the same input,
    configuration, key and release id: every record, every field (the YAML Rows are the CLI records flattened per
    cell, ``release_rows``), and the same dead letters."""
    rid = "yaml-vs-cli"
    raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    cli = _cli(tmp_path, monkeypatch, raw, rid)
    expected = [r._asdict() for rec in _lines(cli, "releases") for r in release_rows(rec)]
    expected_dead = [dead_letter_row(d)._asdict() for d in _lines(tmp_path / "cli-confidential", "dead_letters")]
    out = tmp_path / "yaml"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "apache_beam.yaml.main",
            "--yaml_pipeline_file=configs/beam_yaml/demo_release.yaml",
            "--jinja_variables="
            + json.dumps({"release_id": rid, "output": str(out), "confidential": str(out) + "-confidential"}),
        ],
        cwd=ROOT,
        env={**os.environ, "DP_NOISE_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = _lines(out, "releases")
    assert len(got) == len(expected) == 11520  # 1152 ticks x 2 regions x (1 count + 3 cells + 1 sum)
    got.sort(key=_key)
    expected.sort(key=_key)
    for g, e in zip(got, expected):
        assert set(g) == set(e)
        bad = [k for k in e if not _same(g[k], e[k])]
        assert not bad, (bad, g, e)
    dead = _lines(Path(str(out) + "-confidential"), "dead_letters")
    assert sorted(map(json.dumps, dead)) == sorted(map(json.dumps, expected_dead))
    assert len(dead) == 5


SMALL = {
    "privacy": {"epsilon": 1.0, "delta": 0.0},
    "time": {"field": "time", "tick_seconds": 60, "origin": 0, "end": 600},
    "streams": {"field": "region", "keys": ["eu", "us"]},
    "mechanism": {"kind": "auto"},
    "queries": [
        {"name": "active", "type": "count"},
        {"name": "by_carrier", "type": "histogram", "field": "carrier", "domain": ["AA", "DL"]},
        {"name": "amount", "type": "sum", "field": "amount", "lower": 0, "upper": 100},
    ],
}
UPDATES = [
    {"time": 5.5, "op": "insert", "id": "a", "item": {"carrier": "AA", "amount": 12.25}, "region": "eu", "seq": 0},
    {"time": 70.0, "op": "insert", "id": "b", "item": {"carrier": "DL", "amount": 99.5}, "region": "us", "seq": 1},
    {"time": 130.0, "op": "upsert", "id": "a", "item": {"carrier": "DL", "amount": 1.5}, "region": "eu", "seq": 2},
    {"time": 200.0, "op": "delete", "id": "b", "region": "us", "seq": 3},
    {"time": 210.0, "op": "truncate", "id": "c", "region": "eu", "seq": 4},
]


def test_rows_of_update_fields_are_the_cli_releases_exactly(tmp_path, monkeypatch):
    """Rows with our update's fields (as ReadFromJson or Create give them; the item a nested Row) and an inline
    configuration: the Rows equal the CLI's releases of the same updates as JSON lines, exactly (no file format
    in between), and the dead letter is the CLI's."""
    rid = "rows-vs-cli"
    data = tmp_path / "updates.jsonl"
    data.write_text("".join(json.dumps(u) + "\n" for u in UPDATES))
    cli = _cli(tmp_path, monkeypatch, {**SMALL, "source": {"type": "file", "path": str(data)}}, rid)
    expected = [r for rec in _lines(cli, "releases") for r in release_rows(rec)]
    expected_dead = [dead_letter_row(d) for d in _lines(tmp_path / "cli-confidential", "dead_letters")]
    assert len(expected) == 10 * 2 * 4 and len(expected_dead) == 1
    spec = {
        "providers": [{"include": str(PROVIDERS)}],
        "pipeline": {
            "type": "composite",
            "transforms": [
                {"type": "Create", "name": "Updates", "config": {"elements": UPDATES[:4]}},
                {"type": "Create", "name": "Bad", "config": {"elements": [{"line": json.dumps(UPDATES[4])}]}},
                {
                    "type": "DpDynamicRelease",
                    "name": "Release",
                    "input": "Updates",
                    "config": {"config": SMALL, "release_id": rid, "error_handling": {"output": "dead"}},
                },
                {
                    "type": "DpDynamicRelease",
                    "name": "ReleaseBad",
                    "input": "Bad",
                    "config": {"config": SMALL, "release_id": rid, "error_handling": {"output": "dead"}},
                },
            ],
            "output": {"releases": "Release.releases", "none": "Release.dead", "dead": "ReleaseBad.dead"},
        },
    }
    with beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"])) as p:
        out = expand_pipeline(p, yaml.safe_dump(spec), validate_schema="none")  # a pipeline has no outputs
        assert_that(out["releases"] | "R" >> beam.Map(tuple), equal_to([tuple(r) for r in expected]), label="Releases")
        assert_that(out["dead"] | "D" >> beam.Map(tuple), equal_to([tuple(d) for d in expected_dead]), label="Dead")
        assert_that(out["none"], equal_to([]), label="NoDead")


def test_a_dead_letter_without_error_handling_fails_the_pipeline(monkeypatch):
    """Beam YAML's convention: without error_handling a rejected input fails the run, naming the reason only."""
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    with pytest.raises(Exception, match="dead letter \\(unknown_op") as e:
        with beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"])) as p:
            _ = p | beam.Create([beam.Row(line=json.dumps(UPDATES[4]))]) | DpDynamicRelease(config=SMALL)
    assert "truncate" not in str(e.value)  # the record itself is never in the message


def test_release_rows_flatten_the_cells():
    rec = {
        "stream": "eu",
        "tick": 3,
        "segment": 1,
        "query": "h",
        "estimate": {"AA": 4.0, "DL": -1.0},
        "error_bound": 2.5,
        "beta": 0.05,
        "epsilon_spent": 0.5,
        "update_level_spent": {"epsilon": 0.5},
        "as_of": "1970-01-01T00:03:00Z",
        "release_id": "r",
    }
    rows = release_rows(rec)
    assert [(r.cell, r.estimate, r.lower, r.upper) for r in rows] == [("AA", 4.0, 1.5, 6.5), ("DL", -1.0, -3.5, 1.5)]
    assert rows[0].rho_spent is None and rows[0].update_level_spent == '{"epsilon": 0.5}'
    one = release_rows({**rec, "estimate": 7.0, "error_bound": None, "update_level_spent": None})
    assert [(r.cell, r.estimate, r.lower, r.upper, r.update_level_spent) for r in one] == [
        (None, 7.0, None, None, None)
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "config_path / config: give exactly one"),
        ({"config_path": "configs/demo.yaml", "config": SMALL}, "config_path / config: give exactly one"),
        ({"config": SMALL, "noise_key": "ab" * 32}, "noise_key: name where the workers read the key"),
        ({"config": {**SMALL, "privacy": {"epsilon": 1.0, "ledger": {"url": "sqlite:///x.db"}}}}, "privacy.ledger"),
        ({"config": {**SMALL, "privacy": {"epsilon": -1}}}, "privacy.epsilon"),
        ({"config_path": "configs/local_dp.yaml"}, "DpDynamicCollectReports"),
        ({"config": SMALL, "error_handling": {"output": "releases"}}, "error_handling.output"),
    ],
)
def test_bad_configuration_is_refused_when_the_pipeline_is_built(kwargs, message, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ConfigError, match=message.replace("(", "\\(")):
        DpDynamicRelease(**kwargs)


def test_no_noise_key_on_a_remote_runner_is_refused(monkeypatch):
    """As the CLI (``noise_key_for``): remote workers cannot get a one-off key; an explicit variable that is unset
    is refused even locally."""
    monkeypatch.delenv("DP_NOISE_KEY", raising=False)
    p = beam.Pipeline(options=PipelineOptions(["--runner=FlinkRunner", "--flink_master=flink.example:8081"]))
    with pytest.raises(ConfigError, match="privacy.noise_key: the variable DP_NOISE_KEY is not set"):
        _ = p | beam.Create([beam.Row(line="{}")]) | DpDynamicRelease(config=SMALL)
    local = beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"]))
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ConfigError, match="MY_KEY"):
        _ = local | beam.Create([beam.Row(line="{}")]) | DpDynamicRelease(config=SMALL, noise_key={"env": "MY_KEY"})


def test_yaml_config_fills_the_source_and_sinks_and_keeps_the_digest():
    """A configuration without source / sinks gets placeholders; the release digest (which keys the noise) is
    the one of the same configuration with any source and sinks."""
    bare = yaml_config(None, SMALL)
    full = yaml_config(None, {**SMALL, "source": {"type": "file", "path": "x.jsonl"}, "sinks": [{"path": "o/"}]})
    assert bare.release_digest() == full.release_digest()
    assert yaml_config(None, SMALL, release_id="release-1").release_id == "release-1"


def test_the_collector_in_yaml_equals_the_cli_collector(tmp_path, monkeypatch):
    """DpDynamicCollectReports (the local-DP collector: no noise, no key) on Beam's ReadFromText gives the CLI
    collector's estimates, cell for cell, exactly, and its dead letters."""
    rid = "rr-yaml-vs-cli"
    lines = (ROOT / "data" / "rr_reports.jsonl").read_text().splitlines()[:3000] + ['{"time": "soon"}']
    data = tmp_path / "reports.jsonl"
    data.write_text("\n".join(lines) + "\n")
    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["source"]["path"] = str(data)
    cli = _cli(tmp_path, monkeypatch, raw, rid)
    expected = [r for rec in _lines(cli, "releases") for r in estimate_rows(rec)]
    expected_dead = [dead_letter_row(d) for d in _lines(tmp_path / "cli-confidential", "dead_letters")]
    assert len(expected) == 24 * 3 and len(expected_dead) == 1
    (tmp_path / "rr.yaml").write_text(yaml.safe_dump({k: v for k, v in raw.items() if k not in ("source", "sinks")}))
    spec = {
        "providers": [{"include": str(PROVIDERS)}],
        "pipeline": {
            "type": "composite",
            "transforms": [
                {"type": "ReadFromText", "name": "Read", "config": {"path": str(data)}},
                {
                    "type": "DpDynamicCollectReports",
                    "name": "Collect",
                    "input": "Read",
                    "config": {
                        "config_path": str(tmp_path / "rr.yaml"),
                        "release_id": rid,
                        "error_handling": {"output": "dead"},
                    },
                },
            ],
            "output": {"estimates": "Collect.estimates", "dead": "Collect.dead"},
        },
    }
    with beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"])) as p:
        out = expand_pipeline(p, yaml.safe_dump(spec), validate_schema="none")
        assert_that(out["estimates"] | "E" >> beam.Map(tuple), equal_to([tuple(r) for r in expected]), label="Est")
        assert_that(out["dead"] | "D" >> beam.Map(tuple), equal_to([tuple(d) for d in expected_dead]), label="Dead")


def test_streamed_queries_in_yaml_equal_the_cli(tmp_path, monkeypatch):
    """DpDynamicRelease with two named inputs, ``updates`` and ``queries`` (mechanism pmwg, configs/growing.yaml):
    the query answers and the standing releases equal the CLI's (queries_source), exactly."""
    rid = "growing-yaml-vs-cli"
    raw = yaml.safe_load((ROOT / "configs" / "growing.yaml").read_text())
    raw["source"]["path"] = str(ROOT / "data" / "growing.jsonl")
    raw["queries_source"]["path"] = str(ROOT / "data" / "growing_queries.jsonl")
    cli = _cli(tmp_path, monkeypatch, raw, rid)
    expected = [r for rec in _lines(cli, "releases") for r in release_rows(rec)]
    answers = [query_answer_row(a) for a in _lines(cli, "query_answers")]
    dead = [dead_letter_row(d) for d in _lines(tmp_path / "cli-confidential", "dead_letters")]
    assert expected and len(answers) == 300
    spec = {
        "providers": [{"include": str(PROVIDERS)}],
        "pipeline": {
            "type": "composite",
            "transforms": [
                {"type": "ReadFromText", "name": "U", "config": {"path": raw["source"]["path"]}},
                {"type": "ReadFromText", "name": "Q", "config": {"path": raw["queries_source"]["path"]}},
                {
                    "type": "DpDynamicRelease",
                    "name": "Release",
                    "input": {"updates": "U", "queries": "Q"},
                    "config": {"config": raw, "release_id": rid, "error_handling": {"output": "dead"}},
                },
            ],
            "output": {"r": "Release.releases", "a": "Release.query_answers", "d": "Release.dead"},
        },
    }
    with beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"])) as p:
        out = expand_pipeline(p, yaml.safe_dump(spec), validate_schema="none")
        assert_that(out["r"] | "R" >> beam.Map(tuple), equal_to([tuple(r) for r in expected]), label="Releases")
        assert_that(out["a"] | "A" >> beam.Map(tuple), equal_to([tuple(a) for a in answers]), label="Answers")
        assert_that(out["d"] | "D" >> beam.Map(tuple), equal_to([tuple(d) for d in dead]), label="Dead")


def test_streamed_queries_need_pmwg_and_a_queries_input(monkeypatch):
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    monkeypatch.chdir(ROOT)
    p = beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"]))
    rows = p | "U" >> beam.Create([beam.Row(line="{}")])
    with pytest.raises(ConfigError, match="input.queries: streamed queries are answered by mechanism.kind pmwg"):
        _ = {"updates": rows, "queries": rows} | "A" >> DpDynamicRelease(config=SMALL)
    with pytest.raises(ConfigError, match="queries_source: in Beam YAML the queries are the transform's input"):
        _ = rows | "B" >> DpDynamicRelease(config_path="configs/growing.yaml")
    with pytest.raises(ConfigError, match="input: name the inputs updates"):
        _ = {"records": rows} | "C" >> DpDynamicRelease(config=SMALL)


def test_the_collector_refuses_a_release_configuration(monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ConfigError, match="use the transform DpDynamicRelease"):
        DpDynamicCollectReports(config_path="configs/demo.yaml")


def test_both_provider_files_name_every_transform():
    """providers.yaml (type python, tested above) and providers_package.yaml (pythonPackage: needs Docker to run,
    docs/beam_yaml.md) list exactly the transforms of ``pipelines.beam_yaml.TRANSFORMS``, each importable."""
    from apache_beam.utils.python_callable import PythonCallableWithSource

    from pipelines.beam_yaml import TRANSFORMS

    for name, kind in (("providers.yaml", "python"), ("providers_package.yaml", "pythonPackage")):
        (provider,) = yaml.safe_load((ROOT / "configs" / "beam_yaml" / name).read_text())
        assert provider["type"] == kind and provider["transforms"] == TRANSFORMS, name
    for path in TRANSFORMS.values():
        assert isinstance(PythonCallableWithSource.load_from_source(path), type)


def test_disabled_noise_is_said(capsys):
    """As the CLI: exact (not private) releases are announced on stderr when the pipeline is built."""
    p = beam.Pipeline(options=PipelineOptions(["--runner=DirectRunner"]))
    cfg = {**SMALL, "privacy": {"epsilon": 1.0, "disable_noise": True}}
    _ = p | beam.Create([beam.Row(line="{}")]) | DpDynamicRelease(config=cfg)
    assert "NOT differentially private" in capsys.readouterr().err
