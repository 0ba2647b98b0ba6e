"""The configuration as models: its JSON Schema, every bundled configuration through the README's own command,
command-line overrides through every check, misspelt names answered with the nearest one, and the release
digest (which keys the noise) pinned for every bundled file.

The Pub/Sub configurations run against the emulator in ``tests/test_pubsub.py``, ``configs/kafka_local.yaml``
against a local broker in ``tests/test_kafka.py``.
"""

from __future__ import annotations

import copy
import datetime
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.config import ConfigError, check_mechanism, load_config, parse_config
from pipelines.io.files import check_source_file
from pipelines.release import main

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
PERSON = yaml.safe_load((ROOT / "configs" / "demo_person.yaml").read_text())
KEY_HEX = bytes(range(32)).hex()
#: run here; the others need a service (their tests say where they run)
FILE_CONFIGS = (
    "changelog.yaml",
    "demo.yaml",
    "demo_person.yaml",
    "growing.yaml",
    "local_dp.yaml",
    "open_histogram.yaml",
    "open_keys.yaml",
)
SERVICE_CONFIGS = ("kafka_local.yaml", "pubsub.yaml", "pubsub_local.yaml")
#: PipelineConfig.release_digest() of each bundled file, as the code before the models computed it (it keys
#: the noise: a change here changes every release)
DIGESTS = {
    "changelog.yaml": "fd91a76475f4f49795f2b235655f8260",
    "demo.yaml": "bc8285157ec603ea23bdbb0f25c75928",
    # new with the person unit (issue 28); changed with its privacy.max_streams_per_person (stop 59)
    "demo_person.yaml": "ee3d0823eca03a69ec7cf0b8bb52e0e3",
    "growing.yaml": "25fc41a453645f42c7f16a7b38f0c97c",
    "kafka_local.yaml": "6527efc6e443eda002e197050eae75a3",  # new with the models
    "local_dp.yaml": "ec349fb767521c16153045e961c34c41",
    "open_histogram.yaml": "5c3d25ff28438d44441d109d84f4ed6d",  # new with open histogram cells (issue 33)
    "open_keys.yaml": "a4604d8e79b0b2820752245ef13e2184",  # new with open keys (issue 33)
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


# -- the person unit (issue 28): configuration errors refused before the run, one line naming the key ----------


def _no_end(c):
    c["privacy"]["max_entries_window"] = 86400
    c["time"].pop("end")


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda c: c["privacy"].pop("person_field"), "privacy.person_field: required when privacy.unit is person"),
        (lambda c: c["privacy"].pop("max_entries_per_person"), "privacy.max_entries_per_person: required when"),
        (lambda c: c["privacy"].pop("max_mutations_per_entry"), "privacy.max_mutations_per_entry: required when"),
        (lambda c: c["privacy"].update(max_entries_per_person=0), "privacy.max_entries_per_person: must be an integer"),
        (
            lambda c: c["privacy"].update(max_entries_per_person=-3),
            "privacy.max_entries_per_person: must be an integer",
        ),
        (
            lambda c: c["privacy"].update(max_entries_per_person=2.5),
            "privacy.max_entries_per_person: must be an integer",
        ),
        (
            lambda c: c["privacy"].update(max_entries_per_person=None),
            "privacy.max_entries_per_person: must be an intege",
        ),
        (
            lambda c: c["privacy"].update(max_mutations_per_entry=0),
            "privacy.max_mutations_per_entry: must be an integer",
        ),
        (
            lambda c: c["privacy"].update(max_mutations_per_entry=None),
            "privacy.max_mutations_per_entry: must be an int",
        ),
        (lambda c: c["privacy"].update(max_insertions_per_entry=0), "privacy.max_insertions_per_entry: must be an int"),
        (
            lambda c: c["privacy"].update(max_insertions_per_entry=None),
            "privacy.max_insertions_per_entry: must be an in",
        ),
        (lambda c: c["privacy"].update(max_entries_window=0), "privacy.max_entries_window: must be > 0"),
        (lambda c: c["privacy"].update(max_entries_window=-60), "privacy.max_entries_window: must be > 0"),
        (_no_end, "privacy.max_entries_window: needs time.end"),
        (lambda c: c["privacy"].update(person_field=""), "privacy.person_field: must be"),
        (lambda c: c["privacy"].update(person_field=7), "privacy.person_field: must be"),
        (lambda c: c["privacy"].update(person_field="id"), "privacy.person_field: must name a field of its own"),
        (lambda c: c["privacy"].update(person_field="region"), "privacy.person_field: must differ from streams.field"),
        (lambda c: c["privacy"].update(person_field="time"), "privacy.person_field: must differ from time.field"),
        (lambda c: c["privacy"].update(person_field="carrier"), "privacy.person_field: queries[1] (by_carrier) reads"),
        (lambda c: c["privacy"].update(unit="entry"), "does not apply when privacy.unit is entry (set unit: person)"),
        (
            lambda c: (c["privacy"].update(unit="update"), c["privacy"].pop("max_mutations_per_entry")),
            "does not apply when privacy.unit is update (set unit: person)",
        ),
        (
            lambda c: c["privacy"].update(unit="persn"),
            "privacy.unit: must be one of update, entry, person; got 'persn'",
        ),
        (lambda c: c["privacy"].update(unit="persn"), "(did you mean person?)"),
        (lambda c: c["privacy"].update(person_feild="x"), "(did you mean person_field?)"),
        (lambda c: c["privacy"].update(max_entries_per_persn=2), "(did you mean max_entries_per_person?)"),
        (lambda c: c["privacy"].update(max_entry_window=2), "(did you mean max_entries_window?)"),
        # a mechanism that cannot serve the unit (MechanismSpec.units), the local-DP collector
        (lambda c: c["mechanism"].update(kind="dcr"), "privacy.unit: person is not served by mechanism.kind dcr"),
        (lambda c: c["mechanism"].update(kind="swcr", window=3), "privacy.unit: person is not served by mechanism.k"),
        (lambda c: c["mechanism"].update(kind="randomized_response"), "randomized_response (local DP"),
    ],
)
def test_person_unit_configuration_errors_name_the_key_in_one_line(mutate, message):
    """Every person-unit setting that cannot run is refused by the loader's checks (``load_config``: the models,
    then ``check_mechanism``), before a pipeline is built, in one line naming the key; no message shows a value
    of the person field (there is none to show: the configuration holds none)."""
    raw = copy.deepcopy(PERSON)
    mutate(raw)
    with pytest.raises(ConfigError) as e:
        check_mechanism(parse_config(raw))
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_the_mechanisms_that_serve_each_unit_are_the_registry_s():
    """``refusal`` follows ``MechanismSpec.units`` for every registry entry and unit (the registry is the one
    source), and refuses the person unit for the local-DP collector; the update unit is served by all."""
    from pipelines.config.mechanism import refusal
    from transforms.core.mechanisms import MECHANISMS

    for name, spec in MECHANISMS.items():
        assert refusal(spec, "update") is None, name
        for unit in ("entry", "person"):
            assert (refusal(spec, unit) is None) == (unit in spec.units), (name, unit)
        if spec.trust == "local":
            assert refusal(spec, "person") is not None, name


def test_the_schema_knows_the_person_keys_and_refuses_what_the_loader_refuses():
    jsonschema = pytest.importorskip("jsonschema")
    from pipelines.config.schema import json_schema

    validator = jsonschema.Draft202012Validator(json_schema())
    assert not list(validator.iter_errors(_json(PERSON)))
    for n in ("per_stream", 2):  # a person's streams: a limit, or each stream's budget for its part
        raw = copy.deepcopy(PERSON)
        raw["privacy"]["max_streams_per_person"] = n
        assert not list(validator.iter_errors(_json(raw))), raw
    for mutate in (
        lambda c: c["privacy"].update(max_streams_per_person="each"),
        lambda c: c["privacy"].update(max_streams_per_person=0),
        lambda c: c["privacy"].update(unit="people"),
        lambda c: c["privacy"].update(person_feild="customer"),
        lambda c: c["privacy"].update(max_entries_per_person=0),
        lambda c: c["privacy"].update(max_insertions_per_entry=0),
        lambda c: c["privacy"].update(max_insertions_per_entry=None),
        lambda c: c["privacy"].update(max_entries_window=0),
        lambda c: c["privacy"].update(person_field="id"),
        lambda c: c["privacy"].update(person_field=""),
        # null: the loader refuses it for each person key (a key left out is "not written"), so must the schema
        lambda c: c["privacy"].update(max_streams_per_person=None),
        lambda c: c["privacy"].update(max_entries_per_person=None),
        lambda c: c["privacy"].update(max_entries_window=None),
        lambda c: c["privacy"].update(person_field=None),
    ):
        raw = copy.deepcopy(PERSON)
        mutate(raw)
        assert list(validator.iter_errors(_json(raw))), raw
        with pytest.raises(ConfigError):  # and the loader refuses it too
            parse_config(raw)


def test_the_launch_check_refuses_a_csv_or_avro_source_without_the_person_field(tmp_path):
    """``privacy.person_field`` must be a column of a CSV source's header and a field of an Avro source's schema:
    refused at launch (before the pipeline), naming the key and the file, never showing a record."""
    import fastavro

    required = ("time", "op", "id")
    csv_path = tmp_path / "in.csv"
    csv_path.write_text("time,op,id,region,carrier,amount\n1.0,insert,a,eu,AA,5\n")
    with pytest.raises(ConfigError) as e:
        check_source_file(str(csv_path), "csv", required, person_field="customer")
    assert str(e.value).startswith("privacy.person_field: ") and "the CSV header has no column 'customer'" in str(
        e.value
    )
    assert "\n" not in str(e.value) and "AA" not in str(e.value)
    check_source_file(str(csv_path), "csv", required)  # fine without the person unit
    csv_path.write_text("time,op,id,region,customer,carrier\n1.0,insert,a,eu,100017,AA\n")
    check_source_file(str(csv_path), "csv", required, person_field="customer")

    base = json.loads((ROOT / "pipelines" / "schemas" / "update.avsc").read_text())
    for fields, ok in ((base["fields"], False), (base["fields"] + [{"name": "customer", "type": "string"}], True)):
        path = tmp_path / f"in{ok}.avro"
        record = {"time": 1.0, "op": "insert", "id": "a", "item": None, "stream": "eu", "seq": 0, "customer": "100017"}
        with path.open("wb") as fh:
            fastavro.writer(fh, fastavro.parse_schema({**base, "fields": fields}), [record])
        if ok:
            check_source_file(str(path), "avro", required, person_field="customer")
        else:
            with pytest.raises(ConfigError) as e:
                check_source_file(str(path), "avro", required, person_field="customer")
            assert str(e.value).startswith("privacy.person_field: ") and "no field 'customer'" in str(e.value)
            assert "100017" not in str(e.value)


def _customers() -> dict[str, set]:
    """Booking ids of every customer of ``data/demo_person.jsonl`` (the clean lines), by the customer's id text."""
    out = {}
    for line in (ROOT / "data" / "demo_person.jsonl").read_text().splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(d, dict) and isinstance(d.get("customer"), int) and d["customer"] >= 100_000:
            out.setdefault(str(d["customer"]), set()).add(d["id"])
    return out


def _shown_values(value) -> set:
    """Every text and integer a JSON value shows (keys included), as text."""
    if isinstance(value, dict):
        return set().union(set(map(str, value)), *(_shown_values(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_shown_values(v) for v in value))
    return {str(value)} if isinstance(value, (str, int)) and not isinstance(value, bool) else set()


@pytest.mark.slow
def test_the_person_level_demo_runs_from_the_readme_bounds_contributions_and_never_shows_a_person(tmp_path):
    """``python -m pipelines.release --config configs/demo_person.yaml``, as the README runs it: the summary states
    in one line that the unit is a person, identified by the field ``customer``, with its limits; the bookings
    of a customer beyond the limit are dead letters ``contribution_bounded``, whole (never half an entry), and
    only customers with more bookings than the limit lose any; the summary counts them; no customer id appears in
    the releases, nodes, manifest, summary or logs (the dead letters, confidential, hold the records as read).
    Needs the person step (transforms/person.py) and PrivacyUnit.describe (issue 28, core and Beam)."""
    proc = _readme_command(tmp_path, "demo_person.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    guarantee = [line for line in proc.stdout.splitlines() if line.startswith("guarantee:")]
    assert len(guarantee) == 1, proc.stdout[-3000:]
    assert "privacy unit person" in guarantee[0] and "'customer'" in guarantee[0], guarantee
    assert "at most 4 entries" in guarantee[0] and "at most 3 mutations" in guarantee[0], guarantee

    out, confidential = tmp_path / "output" / "person", tmp_path / "output" / "person-confidential"
    dead = [json.loads(x) for f in confidential.glob("dead_letters*.jsonl") for x in f.read_text().splitlines()]
    bounded = [json.loads(d["record"]) for d in dead if d["reason"] == "contribution_bounded"]
    assert bounded, sorted({d["reason"] for d in dead})
    assert f"'contribution_bounded': {len(bounded)}" in proc.stdout  # the summary's dead-letter counts
    customers = _customers()
    lines_of = {}
    for line in (ROOT / "data" / "demo_person.jsonl").read_text().splitlines():
        if line.startswith("{") and '"customer": ' in line:
            d = json.loads(line)
            lines_of[d["id"]] = lines_of.get(d["id"], 0) + 1
    cut = {}
    for d in bounded:
        cut.setdefault(str(d["customer"]), set()).add(d["id"])
    for customer, ids in cut.items():
        assert len(customers[customer]) > 4, customer  # a customer within the limit keeps every booking
        assert len(customers[customer] - ids) == 4, customer  # the limit, exactly: 4 bookings admitted
        for bid in ids:  # a bounded booking loses every update, never half of them
            assert sum(1 for d in bounded if d["id"] == bid) == lines_of[bid], bid
    assert all(len(ids) <= 4 for c, ids in customers.items() if c not in cut)
    refused = sum(len(ids) for ids in cut.values())
    bounds = [line for line in proc.stdout.splitlines() if line.startswith("contribution bounds:")]
    assert len(bounds) == 1 and f"entries admitted, {refused} refused" in bounds[0], bounds

    shown = set()
    for f in [*out.glob("releases*.jsonl"), *out.glob("nodes*.jsonl")]:
        for x in f.read_text().splitlines():
            shown |= _shown_values(json.loads(x))
    manifests = list(confidential.glob("*manifest*.json"))
    assert manifests
    for f in manifests:
        shown |= _shown_values(json.loads(f.read_text()))
    shown |= set(re.findall(r"(?<![\w.])\d+(?![\w.])", proc.stdout + proc.stderr))
    assert not shown & set(customers), sorted(shown & set(customers))[:5]


def test_the_privacy_unit_of_every_existing_configuration_keeps_its_repr():
    """The repr of ``PipelineConfig.privacy_unit`` keys the noise (through ``DynamicConfig``): the keys added for
    issue 28 show in it only when set, so every entry-unit configuration written before them releases the same
    bytes (``max_insertions_per_entry`` left out means the unit's default, not an explicit 1)."""
    changelog = load_config(ROOT / "configs" / "changelog.yaml")
    assert repr(changelog.privacy_unit) == "PrivacyUnit(kind='entry', max_mutations=4, mutation_window=30)"
    entry = copy.deepcopy(DEMO)
    entry["privacy"].update(unit="entry", max_mutations_per_entry=3)
    assert repr(parse_config(entry).privacy_unit) == "PrivacyUnit(kind='entry', max_mutations=3)"
    entry["privacy"]["max_insertions_per_entry"] = 2
    assert repr(parse_config(entry).privacy_unit) == "PrivacyUnit(kind='entry', max_mutations=3, max_insertions=2)"
    assert (
        repr(load_config(ROOT / "configs" / "demo.yaml").privacy_unit) == "PrivacyUnit(kind='update', max_mutations=1)"
    )
    person = parse_config(copy.deepcopy(PERSON)).privacy_unit
    assert (person.kind, person.max_entries, person.max_mutations, person.max_insertions) == ("person", 4, 3, 1)


class _Counter:
    def __init__(self, name, value):
        self.key = type("K", (), {"metric": type("M", (), {"name": name})()})()
        self.committed = value


class _Result:
    def __init__(self, counts):
        self.counts = counts

    def metrics(self):
        return self

    def query(self, _filter):
        return {"counters": [_Counter(k, v) for k, v in self.counts.items()]}


def test_contribution_bounding_is_not_a_dead_letter_failure():
    """Entries refused by contribution bounding are the person unit working, not bad input: a run whose dead
    letters are mostly ``contribution_bounded`` passes ``source.max_dead_letter_fraction``; the same share of
    ``unparseable`` fails it (the twin)."""
    from pipelines.config import parse_config
    from pipelines.summary import dead_letter_failure

    raw = copy.deepcopy(PERSON)
    raw["source"]["max_dead_letter_fraction"] = 0.1
    cfg = parse_config(raw)
    base = {"records_read": 100, "updates_accepted": 60, "dead_letter_unparseable": 5}
    assert dead_letter_failure(_Result({**base, "dead_letter_contribution_bounded": 40}), cfg) is None
    failed = dead_letter_failure(_Result({**base, "dead_letter_unparseable": 45}), cfg)
    assert failed is not None and "45.0% of the records" in failed and "unparseable 45" in failed
