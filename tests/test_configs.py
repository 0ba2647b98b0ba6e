"""The configuration as models: its JSON Schema, every bundled configuration through the README's own command,
command-line overrides through every check, misspelt names answered with the nearest one, and the release
digest (which keys the noise) pinned for every bundled file.

The Pub/Sub configurations run against the emulator in ``tests/test_pubsub.py``, ``configs/kafka_local.yaml``
against a local broker in ``tests/test_kafka_local.py``.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.config import ConfigError, load_config, parse_config
from pipelines.release import main

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
KEY_HEX = bytes(range(32)).hex()
#: run here; the others need a service (their tests say where they run)
FILE_CONFIGS = ("changelog.yaml", "demo.yaml", "demo_person.yaml", "growing.yaml", "local_dp.yaml")
SERVICE_CONFIGS = ("kafka_local.yaml", "pubsub.yaml", "pubsub_local.yaml")
#: PipelineConfig.release_digest() of each bundled file, as the code before the models computed it (it keys
#: the noise: a change here changes every release)
DIGESTS = {
    "changelog.yaml": "fd91a76475f4f49795f2b235655f8260",
    "demo.yaml": "bc8285157ec603ea23bdbb0f25c75928",
    "demo_person.yaml": "c723d03a01a626350fe4a4580278ffdc",  # new with the person unit (issue 28)
    "growing.yaml": "25fc41a453645f42c7f16a7b38f0c97c",
    "kafka_local.yaml": "6527efc6e443eda002e197050eae75a3",  # new with the models
    "local_dp.yaml": "ec349fb767521c16153045e961c34c41",
    "pubsub.yaml": "2cc4ef47ae60b54e9c3a300f56296765",
    "pubsub_local.yaml": "6ec625f029efda0e263e1159801085a0",
}


def _json(raw):
    """A YAML mapping as JSON sees it (an unquoted YAML date-time is text to an editor's schema check)."""
    return json.loads(json.dumps(raw, default=lambda v: v.isoformat() if isinstance(v, datetime.datetime) else v))


def test_every_bundled_config_is_covered_by_a_run():
    assert set(CONFIGS) == set(FILE_CONFIGS) | set(SERVICE_CONFIGS)


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_release_digest_of_each_bundled_config_is_pinned(name):
    assert load_config(ROOT / "configs" / name).release_digest() == DIGESTS[name]


def test_the_published_schema_validates_every_bundled_config_and_refuses_unknown_keys():
    jsonschema = pytest.importorskip("jsonschema")
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.config", "--schema"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    schema = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in CONFIGS:
        raw = _json(yaml.safe_load((ROOT / "configs" / name).read_text()))
        errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(raw)]
        assert not errors, (name, errors)
    for mutate in (
        lambda c: c["privacy"].update(epsilonn=1),
        lambda c: c["source"].update(type="bigquery"),
        lambda c: c["sinks"][0].update(pth="out/"),
        lambda c: c["mechanism"].update(kind="auto", window=3),  # an option of another kind
        lambda c: c["queries"][0].update(type="median"),
        lambda c: c.pop("queries"),
    ):
        raw = copy.deepcopy(DEMO)
        mutate(raw)
        assert list(validator.iter_errors(_json(raw))), raw


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda c: c["privacy"].update(epsilonn=1), "privacy: unknown key(s) epsilonn; allowed: "),
        (lambda c: c["privacy"].update(epsilonn=1), "(did you mean epsilon?)"),
        (lambda c: c["sinks"][0].update(pth="x"), "sinks[0]: unknown key(s) pth; allowed: "),
        (lambda c: c["sinks"][0].update(pth="x"), "(did you mean path?)"),
        (lambda c: c["mechanism"].update(kind="fully_dynamc"), "(did you mean fully_dynamic?)"),
        (lambda c: c["source"].update(type="kafak"), "source.type: must be one of file, pubsub, follow, kafka"),
        (lambda c: c["source"].update(type="kafak"), "(did you mean kafka?)"),
        (lambda c: c["time"].update(late_policy="dead_leter"), "(did you mean dead_letter?)"),
        (lambda c: c["mechanism"].update(horizn=3), "(did you mean horizon?)"),
        (lambda c: c.update(querys=[]), "config: unknown key(s) querys"),
        (lambda c: c.update(sinks=[5]), "sinks[0]: must be a mapping"),
    ],
)
def test_misspelt_names_get_the_nearest_one(mutate, message):
    raw = copy.deepcopy(DEMO)
    mutate(raw)
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    assert message in str(e.value) and "\n" not in str(e.value)


def _write(tmp_path, raw, name="cfg.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw))
    return str(path)


@pytest.mark.parametrize(
    "args,message",
    [
        # the range of a time: refused naming the flag and the key it sets
        (["--origin", "1e12"], "--origin (time.origin): must be a time between 0001-01-01 and 9999-12-31"),
        # time.end must still come after the overridden origin
        (["--origin", "700000"], "time.end: must be after time.origin (700000.0); got 691200.0"),
        # the horizon check of the mechanism runs on the overridden configuration: one more tick than it has
        (["--origin", "-600"], "mechanism.horizon: 1152 runs out before time.end (the release has 1153 periods"),
        (["--release-id", "a b"], "--release-id (privacy.release_id): must be 8 to 128 letters"),
    ],
)
def test_command_line_overrides_go_through_every_check(tmp_path, capsys, args, message):
    """``--origin`` and ``--release-id`` set keys of the raw configuration before it is validated: every check
    of the file applies to them (``--origin`` used to be applied after validation, skipping the range, end and
    horizon checks)."""
    raw = copy.deepcopy(DEMO)
    raw["mechanism"] = {"kind": "net_change", "horizon": 1152}  # exactly the 1152 ticks to time.end
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out")}]
    config = _write(tmp_path, raw)
    load_config(config)  # valid as written
    assert main(["--config", config, *args, "--runner=DirectRunner"]) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_overrides_are_the_values_the_release_uses():
    from pipelines.config import Override

    overrides = [Override("--origin", "time.origin", 600.0), Override("--release-id", "privacy.release_id", "r-123456")]
    cfg = load_config(ROOT / "configs" / "demo.yaml", overrides)
    assert (cfg.origin, cfg.release_id) == (600.0, "r-123456")
    same = copy.deepcopy(DEMO)
    same["time"]["origin"], same["privacy"]["release_id"] = 600.0, "r-123456"
    assert cfg.release_digest() == parse_config(same).release_digest() != DIGESTS["demo.yaml"]


def _readme_command(tmp_path: Path, name: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """``python -m pipelines.release --config configs/NAME.yaml`` in a folder that has the project's configs/
    and data/ (the configurations' relative paths), so that its output/ folders land there."""
    for folder in ("configs", "data"):
        if not (tmp_path / folder).exists():
            (tmp_path / folder).symlink_to(ROOT / folder)
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX, MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-m", "pipelines.release", "--config", f"configs/{name}", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def releases_under(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.rglob("releases*.jsonl")) for line in f.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("name", FILE_CONFIGS)
def test_bundled_config_runs_through_the_readme_command(tmp_path, name):
    """Each file configuration, exactly as the README runs it (``local_dp.yaml`` included: run as ``-m``, the
    CLI module was imported a second time and declared its Flink options twice)."""
    proc = _readme_command(tmp_path, name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    releases = releases_under(tmp_path / "output")
    assert releases, proc.stdout[-2000:]
    assert "releases written:" in proc.stdout


def test_cli_flags_are_pipeline_options_and_unknown_or_abbreviated_flags_are_refused():
    """The CLI's own flags are declared as a Beam ``PipelineOptions`` subclass (so Beam knows them); every other
    argument must be a Beam option, given in full: found through Beam's public options API, not its private
    argument parser."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.release import ReleaseOptions, check_cli_args

    opts = PipelineOptions(["--config=c.yaml", "--release-id=r-12345678", "--origin=5"]).view_as(ReleaseOptions)
    assert (opts.config, opts.release_id, opts.origin) == ("c.yaml", "r-12345678", 5.0)
    check_cli_args(["--runner=FlinkRunner", "--flink_master=[local]", "--parallelism=2", "--streaming"])
    for bad, hint in (("--runn=DirectRunner", "--runner"), ("--confg=x.yaml", "--config"), ("--paralelism=2", None)):
        with pytest.raises(ConfigError) as e:
            check_cli_args([bad])
        assert str(e.value).startswith(f"unknown argument {bad.split('=')[0]}")
        assert hint is None or f"(did you mean {hint}?)" in str(e.value)
    with pytest.raises(ConfigError, match="unexpected argument 'configs/demo.yaml'"):
        check_cli_args(["configs/demo.yaml"])
