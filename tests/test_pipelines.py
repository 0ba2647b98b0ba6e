"""The main pipeline: config validation messages and the CLI end to end (files)."""

import copy
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from pipelines.config import SUM_BUCKETS, ConfigError, load_config, parse_config
from pipelines.demo_data import generate
from pipelines.release import main

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
_SUB = "projects/dp-dynamic-local/subscriptions/updates"
_TOPIC = "projects/dp-dynamic-local/topics/releases"


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "configs").glob("*.yaml")))
def test_bundled_configs_are_valid(name):
    cfg = load_config(ROOT / "configs" / name)
    assert cfg.streaming == name.startswith(("pubsub", "kafka"))


def test_demo_config_is_valid():
    cfg = load_config(ROOT / "configs" / "demo.yaml")
    assert cfg.streams == ("eu", "us") and [q.name for q in cfg.queries] == ["active", "by_carrier", "total_amount"]


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda c: c["privacy"].pop("epsilon"), "privacy.epsilon: missing"),
        (lambda c: c["privacy"].update(epsilon=-1), "privacy.epsilon: must be > 0"),
        (lambda c: c["privacy"].update(unit="people"), "privacy.unit: must be one of update, entry, person"),
        (lambda c: c["privacy"].update(unit="person"), "privacy.person_field: required when privacy.unit is person"),
        (lambda c: c["privacy"].update(unit="entry"), "privacy.max_mutations_per_entry: required"),
        (lambda c: c["privacy"].update(delta=2), "privacy.delta: must be < 1"),
        (lambda c: c["privacy"].update(epsilonn=1), "privacy: unknown key(s) epsilonn"),
        (lambda c: c["time"].update(tick_seconds=0), "time.tick_seconds: must be > 0"),
        (lambda c: c["time"].update(late_policy="drop"), "time.late_policy: must be one of current, dead_letter"),
        (lambda c: c["streams"].update(keys=[]), "streams.keys: declare the stream keys"),
        (lambda c: c["mechanism"].update(kind="magic"), "mechanism.kind: must be one of auto, fully_dynamic"),
        (lambda c: c["mechanism"].update(profile="fast"), "mechanism.profile: must be one of paper, tuned"),
        (
            lambda c: c["mechanism"].update(kind="fully_dynamic", counter="honaker"),
            "mechanism.counter: does not apply to kind fully_dynamic (it is an option of auto, net_change, "
            "continual_count)",
        ),
        (
            lambda c: c["mechanism"].update(kind="continual_count", counter="fenwick"),
            "mechanism.counter: must be one of",
        ),
        (
            lambda c: c["mechanism"].update(kind="continual_count", counter="honaker"),
            "mechanism: counter 'honaker' needs horizon=",
        ),
        (lambda c: c["mechanism"].update(horizon=0), "mechanism.horizon: must be an integer >= 1"),
        (lambda c: c["mechanism"].update(speed=3), "mechanism: unknown key(s) speed; allowed for kind auto"),
        (lambda c: c.update(release={"every_ticks": 0}), "release.every_ticks: must be an integer >= 1"),
        (lambda c: c.update(release={"clamp": "yes"}), "release.clamp: must be true or false"),
        (lambda c: c.update(release={"every": 2}), "release: unknown key(s) every"),
        (lambda c: c["mechanism"].update(kind="net_change", counter="nope"), "mechanism.counter: must be one of"),
        (lambda c: c.update(queries=[]), "queries: must be a non-empty list"),
        (lambda c: c["queries"][1].update(type="median"), "queries[1].type: must be one of count, histogram, sum"),
        (lambda c: c["queries"][1].pop("domain"), "queries[1].domain: must be a non-empty list"),
        (lambda c: c["queries"][2].update(upper=-5), "queries[2].upper: must be > 0"),
        (lambda c: c["queries"][2].update(lower=200), "queries[2].upper: must be > lower"),
        (lambda c: c["queries"].append({"name": "active", "type": "count"}), "queries: names must be unique"),
        (lambda c: c["source"].update(format="parquet"), "source.format: must be one of jsonl"),
        (lambda c: c["sinks"][0].update(type="bigquery"), "sinks[0].type: must be one of file"),
        (lambda c: c.update(extra=1), "config: unknown key(s) extra"),
        (lambda c: c["time"].update(origin="yesterday"), "time.origin: must be epoch seconds or an ISO-8601"),
        (lambda c: c.update(source={"type": "pubsub"}), "source.subscription: missing"),
        (
            lambda c: c.update(source={"type": "pubsub", "subscription": "updates"}),
            "source.subscription: must be projects/PROJECT/subscriptions/NAME",
        ),
        (
            lambda c: (c["time"].pop("origin"), c.update(source={"type": "pubsub", "subscription": _SUB})),
            "time.origin: required with a pubsub source",
        ),
        (lambda c: c["time"].pop("end"), "time.end: required for a file (bounded) source"),
        (lambda c: c["time"].pop("origin"), "time.origin: required for a file (bounded) source"),
        (lambda c: c["time"].update(end=-5), "time.end: must be after time.origin"),
        (
            lambda c: (c["time"].pop("tick_seconds"), c["time"].update(ticks=True, end=2.5)),
            "time.end: with time.ticks, the last tick",
        ),
        (lambda c: c["privacy"].update(release_id="a b"), "privacy.release_id: must be 8 to 128 letters"),
        (
            lambda c: c["sinks"][0].update(confidential_path="output"),
            "sinks[0].confidential_path: must differ from sinks[0].path",
        ),
        (
            lambda c: (c["time"].update(origin=0), c.update(source={"type": "pubsub", "subscription": _SUB, "x": 1})),
            "source: unknown key(s) x; allowed: dedup_seconds, format, id_attribute, max_dead_letter_fraction, "
            "max_future_seconds, subscription",
        ),
        (
            lambda c: (c["time"].update(origin=0), c.update(source={"type": "pubsub", "subscription": _SUB})),
            None,
        ),
        (
            lambda c: (
                c["time"].update(origin=0),
                c.update(source={"type": "pubsub", "subscription": _SUB}),
                c["sinks"][0].update(window_seconds=0),
            ),
            "sinks[0].window_seconds: must be > 0",
        ),
        (lambda c: c.update(sinks=[{"type": "pubsub", "topic": "out"}]), "sinks[0].topic: must be projects/"),
        (
            lambda c: c.update(sinks=[{"type": "pubsub", "topic": _TOPIC}]),
            "sinks: no sink takes the dead letters, which would be lost",
        ),
        (
            lambda c: (
                c["privacy"].update(disable_noise=True),
                c.update(sinks=[{"type": "pubsub", "topic": _TOPIC, "dead_letter_topic": _TOPIC}]),
            ),
            "sinks[0].type: privacy.disable_noise releases exact, non-private answers",
        ),
        # the models' messages for what the sections refuse (one line, the key, what is allowed)
        (lambda c: c["privacy"].update(rho=0.1), "privacy.epsilon: give either privacy.epsilon"),
        (lambda c: c["privacy"].update(noise_key={"vault": "x"}), "privacy.noise_key: must be one of env, file"),
        (lambda c: c["privacy"].update(noise_key={"env": ""}), "privacy.noise_key.env: must be a non-empty string"),
        (lambda c: c["time"].update(ticks="yes"), "time.ticks: must be true or false; got 'yes'"),
        (lambda c: c["streams"].update(keys="de"), "streams.keys: must be a list of stream keys such as [eu, us]"),
        (lambda c: c["queries"][0].update(lower=1), "queries[0].lower: does not apply to a count query"),
        (
            lambda c: c["mechanism"].update(window=3),
            "mechanism.window: does not apply to kind auto (it is an option of dcr, hdcr, swcr)",
        ),
        (lambda c: c["source"].update(dedup={"field": ""}), "source.dedup.field: must be a field name"),
        (lambda c: c["source"].update(dedup={"fields": "u"}), "source.dedup: unknown key(s) fields"),
        (lambda c: c.update(sinks=[None]), "sinks[0]: must be a mapping"),
        (lambda c: c.update(mechanism=5), "mechanism: must be a mapping"),
        (
            lambda c: c.update(queries_source={"type": "file", "path": "q.jsonl"}),
            "queries_source: streamed queries are answered by mechanism.kind pmwg; got auto",
        ),
        (
            lambda c: c.update(source={"type": "follow", "path": "gs://b/x.jsonl"}),
            "source.path: a followed source reads local files",
        ),
        (
            lambda c: c.update(source={"type": "pubsub", "subscription": _SUB, "max_future_seconds": 2e9}),
            "source.max_future_seconds: must be between 0 and 1e+09",
        ),
    ],
)
def test_invalid_settings_name_the_key(mutate, message):
    raw = copy.deepcopy(DEMO)
    mutate(raw)
    if message is None:  # the valid neighbour of the invalid settings around it
        parse_config(raw)
        return
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_time_origin_and_pubsub_settings():
    raw = copy.deepcopy(DEMO)
    raw["time"]["origin"] = "2026-11-22T00:00:00Z"
    raw["time"].pop("end")  # a streaming release may run until cancelled
    raw["source"] = {"type": "pubsub", "subscription": _SUB, "timestamp_attribute": "ts", "id_attribute": "uid"}
    raw["sinks"] = [{"type": "pubsub", "topic": _TOPIC, "nodes_topic": _TOPIC, "dead_letter_topic": _TOPIC}]
    cfg = parse_config(raw)
    assert cfg.origin == 1795305600.0 and cfg.streaming and cfg.subscription == _SUB
    assert (cfg.timestamp_attribute, cfg.id_attribute, cfg.dedup_seconds) == ("ts", "uid", 600.0)
    assert cfg.sinks[0].takes_dead_letters and not cfg.sinks[0].path
    raw["time"]["origin"] = 1795305600  # epoch seconds, same tick 1
    assert parse_config(raw).origin == 1795305600.0
    assert not load_config(ROOT / "configs" / "demo.yaml").streaming


def test_cli_reports_config_errors(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("privacy: {epsilon: 1}\nqueries: []\nsource: {path: x}\n")
    assert main(["--config", str(bad)]) == 2
    assert "configuration error: queries: must be a non-empty list" in capsys.readouterr().err


PERSON = yaml.safe_load((ROOT / "configs" / "demo_person.yaml").read_text())


def _person_csv(tmp_path, header):
    path = tmp_path / "in.csv"
    path.write_text(",".join(header) + "\n10.0,insert,b1,eu,100017,AA,5\n")
    return str(path)


@pytest.mark.parametrize(
    "change,message",
    [
        # a mechanism that cannot serve the unit: refused by the loader (runs before the merge of issue 28's core)
        (lambda c, tmp: c["mechanism"].update(kind="dcr"), "privacy.unit: person is not served by mechanism.kind dcr"),
        # the CSV header has no person column: refused at launch (needs a mechanism that serves the person unit:
        # after the merge of issue 28's core, auto)
        (
            lambda c, tmp: c["source"].update(
                format="csv", path=_person_csv(tmp, ("time", "op", "id", "region", "client", "carrier", "amount"))
            ),
            "privacy.person_field: ",
        ),
    ],
)
def test_cli_refuses_a_person_configuration_before_the_run(tmp_path, capsys, change, message):
    """Exit 2, one line naming the key, nothing written, no person id shown."""
    raw = copy.deepcopy(PERSON)
    raw["source"]["path"] = str(ROOT / "data" / "demo_person.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out")}]
    change(raw, tmp_path)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(path), "--runner=DirectRunner"]) == 2
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if x.startswith("configuration error: ")]
    assert len(line) == 1 and message in line[0], err[-2000:]
    assert "100017" not in err
    assert not (tmp_path / "out").exists()


def sorted_updates(lines, tick_seconds):
    """The parseable input updates in (tick, seq) order, for the independent replay."""
    updates = []
    for line in lines:
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        updates.append(d)
    updates.sort(key=lambda d: (int(d["time"] // tick_seconds) + 1, d.get("seq", 0)))
    return updates


def expected_at(updates, region, tick, tick_seconds):
    live = {}
    for d in updates:
        if int(d["time"] // tick_seconds) + 1 > tick:
            break
        if d.get("region") != region or d["op"] not in ("insert", "upsert", "delete"):
            continue
        if d["op"] == "insert" and d["id"] not in live and d["item"]["carrier"] in ("AA", "B6", "DL"):
            live[d["id"]] = d["item"]
        elif d["op"] == "upsert" and d["id"] in live:
            live[d["id"]] = d["item"]
        elif d["op"] == "delete":
            live.pop(d["id"], None)
    carriers = {c: float(sum(1 for v in live.values() if v["carrier"] == c)) for c in ("AA", "B6", "DL")}
    step = 150 / (SUM_BUCKETS - 1)
    total = 0.0
    for v in live.values():
        level = round(min(max(v["amount"], 0), 150) / step) * step
        total += round(level / 150 * 2**20) / 2**20 * 150  # the query answered: entries on the 2^-20 lattice
    return float(len(live)), carriers, total


def test_cli_end_to_end_noise_off_exact(tmp_path, capsys):
    lines = generate(300, seed=3)
    data = tmp_path / "in.jsonl"
    data.write_text("\n".join(lines) + "\n")
    raw = copy.deepcopy(DEMO)
    raw["privacy"]["disable_noise"] = True
    raw["source"]["path"] = str(data)
    raw["sinks"][0]["path"] = str(tmp_path / "out")
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(cfg_path), "--runner=DirectRunner"]) == 0
    captured = capsys.readouterr()
    assert "NOT differentially private" in captured.err
    assert "records read:        305" in captured.out
    releases = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    assert not list((tmp_path / "out").glob("dead_letters*"))  # never beside the releases
    conf = tmp_path / "out-confidential"
    dead = [json.loads(x) for f in conf.glob("dead_letters*.jsonl") for x in f.read_text().splitlines()]
    assert json.loads((conf / "release_manifest.json").read_text())["noise"].startswith("disabled")
    assert sorted(d["reason"] for d in dead) == sorted(
        ["unparseable", "unknown_op", "unknown_entry", "undeclared_stream", "not_in_domain"]
    )
    # each dead letter holds its line as received (also those rejected after parsing)
    assert all(d["encoding"] == "text" and d["record"] in lines and d["stage"] for d in dead)
    assert {d["stage"] for d in dead if d["reason"] == "unknown_entry"} == {"registry"}
    updates = sorted_updates(lines, 600.0)
    assert len(releases) >= 12
    for r in releases:
        count, carriers, total = expected_at(updates, r["stream"], r["tick"], 600.0)
        assert r["error_bound"] == 0
        # exact up to float summation in the counters' estimators
        if r["query"] == "active":
            assert r["estimate"] == pytest.approx(count, abs=1e-6)
        elif r["query"] == "by_carrier":
            assert r["estimate"] == pytest.approx(carriers, abs=1e-6)
        else:
            assert r["estimate"] == pytest.approx(total, abs=1e-6)
    ticks = {(r["stream"], r["tick"]) for r in releases}
    n_ticks = DEMO["time"]["end"] // DEMO["time"]["tick_seconds"]
    assert ticks == {(s, t) for s in ("eu", "us") for t in range(1, n_ticks + 1)}  # every period, every stream
    for r in releases:
        when = datetime.fromtimestamp(r["tick"] * 600, UTC).isoformat().replace("+00:00", "Z")
        assert r["as_of"] == when
    assert list((tmp_path / "out").glob("nodes*.jsonl"))  # written (empty: net_change has no tree)


def _run(tmp_path, name, raw):
    cfg_path = tmp_path / f"{name}.yaml"
    cfg_path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(cfg_path), "--runner=DirectRunner"]) == 0


def _jsonl(dirpath, prefix):
    """The records of two runs compare without their release ids (each run is its own release)."""
    return sorted(
        json.dumps({k: v for k, v in json.loads(x).items() if k != "release_id"}, sort_keys=True)
        for f in Path(dirpath).glob(f"{prefix}*.jsonl")
        for x in f.read_text().splitlines()
    )


def test_csv_and_avro_sources_and_avro_sinks_give_the_same_releases(tmp_path, capsys):
    import csv

    import fastavro

    lines = generate(200, seed=5)
    good = []
    for line in lines:
        try:
            good.append(json.loads(line))
        except json.JSONDecodeError:
            pass
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(d) for d in good) + "\n")
    with (tmp_path / "in.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["time", "op", "id", "region", "seq", "carrier", "amount"])
        for d in good:
            item = d.get("item") or {}
            w.writerow(
                [
                    d["time"],
                    d["op"],
                    d["id"],
                    d["region"],
                    d.get("seq", 0),
                    item.get("carrier", ""),
                    item.get("amount", ""),
                ]
            )
    schema = fastavro.parse_schema(json.loads((ROOT / "pipelines" / "schemas" / "update.avsc").read_text()))
    with (tmp_path / "in.avro").open("wb") as fh:
        fastavro.writer(
            fh,
            schema,
            [
                {
                    "time": float(d["time"]),
                    "op": d["op"],
                    "id": d["id"],
                    "item": d.get("item"),
                    "stream": d["region"],
                    "seq": d.get("seq", 0),
                }
                for d in good
            ],
        )
    results = {}
    for fmt in ("jsonl", "csv", "avro"):
        raw = copy.deepcopy(DEMO)
        raw["privacy"]["disable_noise"] = True
        raw["source"] = {"type": "file", "path": str(tmp_path / f"in.{fmt}"), "format": fmt}
        raw["sinks"] = [{"type": "file", "path": str(tmp_path / f"out_{fmt}"), "format": "jsonl"}]
        if fmt == "avro":
            raw["sinks"].append({"type": "file", "path": str(tmp_path / "out_avro_sink"), "format": "avro"})
        _run(tmp_path, fmt, raw)
        results[fmt] = _jsonl(tmp_path / f"out_{fmt}", "releases")
    assert results["jsonl"] and results["csv"] == results["jsonl"] and results["avro"] == results["jsonl"]
    # the Avro sink holds the same releases as the JSON-lines sink, and nodes and dead letters
    avro_rel = []
    for f in (tmp_path / "out_avro_sink").glob("releases*.avro"):
        with f.open("rb") as fh:
            avro_rel += [
                json.dumps({k: v for k, v in r.items() if v is not None and k != "release_id"}, sort_keys=True)
                for r in fastavro.reader(fh)
            ]
    jsonl_rel = sorted(
        json.dumps({k: v for k, v in json.loads(x).items() if v is not None}, sort_keys=True) for x in results["avro"]
    )
    assert sorted(avro_rel) == jsonl_rel
    assert list((tmp_path / "out_avro_sink").glob("nodes*.avro")) and list(
        (tmp_path / "out_avro_sink-confidential").glob("dead_letters*.avro")
    )


def _noise_off_config(tmp_path, out="out"):
    lines = generate(150, seed=9)
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    raw = copy.deepcopy(DEMO)
    raw["privacy"]["disable_noise"] = True
    raw["source"]["path"] = str(tmp_path / "in.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / out), "format": "jsonl"}]
    return raw


_DATAFLOW = [
    "--runner=DataflowRunner",
    "--project=my-project",
    "--region=europe-west1",
    "--temp_location=gs://my-bucket/tmp",
    "--setup_file=./setup.py",
]
_FLINK = ["--runner=FlinkRunner", "--flink_master=localhost:8081", "--environment_type=LOOPBACK"]


@pytest.mark.parametrize(
    "args,pubsub",
    [
        (_DATAFLOW, False),
        (_DATAFLOW + ["--streaming", "--enable_streaming_engine"], True),
        (_FLINK, False),
        (_FLINK + ["--streaming"], True),
    ],
    ids=["dataflow-batch", "dataflow-streaming", "flink-batch", "flink-streaming"],
)
def test_pipeline_constructs_for_deploy_targets(tmp_path, args, pubsub, monkeypatch):
    """The documented Dataflow and Flink options pass Beam's validation and build
    the whole pipeline graph, batch over files and streaming from Pub/Sub to
    Pub/Sub (Flink and Dataflow cannot run on this machine: no job server, no
    cloud). The one network call of Dataflow's validation (the temp bucket's
    soft-delete policy) is stubbed: this machine reaches no cloud."""
    import apache_beam as beam
    from apache_beam.options import pipeline_options
    from apache_beam.options.pipeline_options import PipelineOptions

    monkeypatch.setattr(
        pipeline_options.GoogleCloudOptions, "_warn_if_soft_delete_policy_enabled", lambda *a, **k: None
    )
    from pipelines.config import parse_config
    from pipelines.release import build_pipeline
    from transforms import NoiseKey

    raw = _noise_off_config(tmp_path)
    if pubsub:
        raw["privacy"]["disable_noise"] = False
        raw["time"]["origin"] = "2026-11-22T00:00:00Z"
        raw["time"].pop("end")
        raw["source"] = {"type": "pubsub", "subscription": _SUB, "timestamp_attribute": "ts", "id_attribute": "uid"}
        raw["sinks"] = [{"type": "pubsub", "topic": _TOPIC, "nodes_topic": _TOPIC, "dead_letter_topic": _TOPIC}]
    cfg = parse_config(raw)
    opts = PipelineOptions(args)
    p = beam.Pipeline(runner=None, options=opts)
    build_pipeline(p, cfg, NoiseKey.from_secret_manager("projects/my-project/secrets/dp-noise-key/versions/latest"))
    proto = p.to_runner_api()
    names = {t.unique_name for t in proto.components.transforms.values()}
    assert any("ReleaseStream" in n for n in names)
    assert any("ResolveEntries" in n or "ResolveShards" in n for n in names)
    if pubsub:
        assert any("ReadPubSub" in n for n in names) and any("Deduplicate" in n for n in names)
        assert sum("Publish" in n for n in names) >= 3  # releases, nodes and dead letters
        # unbounded input takes the streaming registry (state + timers), not the GroupByKey one,
        # and off the DirectRunner the registry in hash shards (transforms/sharded.py), without the per-tick merge
        assert not any("GroupByEntry" in n for n in names)
        assert any(n.endswith("/ResolveShards") for n in names) and not any("MergePerTick" in n for n in names)


def test_cli_runs_through_the_portable_runner(tmp_path, capsys):
    """The portability (Fn API) path that Flink and Dataflow v2 use, for real,
    on a bounded input: the same releases as the DirectRunner."""
    raw = _noise_off_config(tmp_path, "direct")
    _run(tmp_path, "direct", raw)
    raw["sinks"][0]["path"] = str(tmp_path / "portable")
    cfg_path = tmp_path / "portable.yaml"
    cfg_path.write_text(yaml.safe_dump(raw))
    assert (
        main(
            [
                "--config",
                str(cfg_path),
                "--runner=PortableRunner",
                "--job_endpoint=embed",
                "--environment_type=LOOPBACK",
            ]
        )
        == 0
    )
    assert _jsonl(tmp_path / "portable", "releases") == _jsonl(tmp_path / "direct", "releases")


def test_noise_key_sources(tmp_path, monkeypatch):
    import sys
    import types

    from pipelines.config import parse_config
    from pipelines.release import noise_key_for
    from transforms import NoiseKey

    raw = copy.deepcopy(DEMO)
    raw["privacy"]["noise_key"] = {"secret": "projects/p/secrets/dp-key/versions/latest"}
    key = noise_key_for(parse_config(raw))
    assert key == NoiseKey.from_secret_manager("projects/p/secrets/dp-key/versions/latest")

    class _Client:  # stands in for Secret Manager (no cloud here)
        def access_secret_version(self, name):
            assert name == "projects/p/secrets/dp-key/versions/latest"
            return types.SimpleNamespace(payload=types.SimpleNamespace(data=(b"\x07" * 32).hex().encode()))

    fake = types.ModuleType("secretmanager")
    fake.SecretManagerServiceClient = _Client
    monkeypatch.setitem(sys.modules, "google.cloud.secretmanager", fake)
    import google.cloud

    monkeypatch.setattr(google.cloud, "secretmanager", fake, raising=False)
    from transforms.core.foundation.noise import NoiseSource

    assert key.load() == NoiseSource(b"\x07" * 32)
    raw["privacy"]["noise_key"] = {"vault": "x"}
    with pytest.raises(ConfigError, match="privacy.noise_key: must be one of env, file, secret"):
        parse_config(raw)
    raw["privacy"]["noise_key"] = {"env": "DP_KEY_NOT_SET_ANYWHERE"}
    monkeypatch.delenv("DP_KEY_NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(ConfigError, match="remote workers need the key"):
        noise_key_for(parse_config(raw), local=False)


def test_the_cloud_clients_the_key_and_pubsub_paths_import_are_installed():
    """``privacy.noise_key: {secret: ...}`` and the Pub/Sub tools import Google's client libraries at run
    time, on the workers: they must come with the package (apache-beam[gcp] 2.62 does not bring Secret
    Manager's; the test above stands a fake in for it, so only this one sees a missing install)."""
    from google.cloud import pubsub_v1, secretmanager

    assert callable(secretmanager.SecretManagerServiceClient.access_secret_version)
    assert callable(pubsub_v1.PublisherClient)


@pytest.mark.parametrize("consistent", [False, True])
def test_recompute_from_nodes_equals_releases_and_progress_is_shown(tmp_path, capsys, monkeypatch, consistent):
    """With noise on: the answers rebuilt from the node outputs alone equal the
    released ones (with ``release.consistent`` too: the recomputation applies the
    same projection); long runs print progress counts (never payloads)."""
    from pipelines import recompute as rc
    from pipelines import wiring

    monkeypatch.setattr(wiring, "PROGRESS_EVERY", 50)
    lines = generate(300, seed=2)
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    raw = copy.deepcopy(DEMO)
    raw["source"]["path"] = str(tmp_path / "in.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    raw["mechanism"] = {"kind": "fully_dynamic"}  # the mechanism that publishes its tree
    raw["release"] = {"every_ticks": 1, "consistent": True} if consistent else {"every_ticks": 1, "clamp": False}
    monkeypatch.setenv("DP_NOISE_KEY", bytes(range(32)).hex())
    _run(tmp_path, "noisy", raw)
    err = capsys.readouterr().err
    assert "progress: records read by this worker: 50" in err
    assert "carrier" not in err  # no payload in the progress output
    out = tmp_path / "recomputed.jsonl"
    assert (
        rc.main(
            [
                "--config",
                str(tmp_path / "noisy.yaml"),
                "--nodes",
                str(tmp_path / "out" / "nodes*.jsonl"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    recomputed = {
        (r["stream"], r["tick"], r["query"]): r["estimate"] for r in map(json.loads, out.read_text().splitlines())
    }
    released = {
        (r["stream"], r["tick"], r["query"]): r["estimate"]
        for f in (tmp_path / "out").glob("releases*.jsonl")
        for r in map(json.loads, f.read_text().splitlines())
    }
    # the releases at segment closes are rebuilt from the nodes; every other period
    # carries the last close's answer forward
    assert (
        recomputed
        and set(recomputed) <= set(released)
        and len(released) == 2 * 3 * (DEMO["time"]["end"] // DEMO["time"]["tick_seconds"])
    )
    last = {}
    for k in sorted(released, key=lambda k: (k[0], k[2], k[1])):
        stream, tick, query = k
        if k in recomputed:
            last[(stream, query)] = recomputed[k]
        expect = last.get((stream, query))
        if expect is None:
            continue  # before the first close: nothing released yet (estimate 0)
        assert released[k] == pytest.approx(expect, abs=1e-6), k
    assert any(v != 0 for v in released.values() if not isinstance(v, dict))  # noise was on
    if consistent:
        for (stream, tick, _query), v in released.items():
            if isinstance(v, dict):
                assert min(v.values()) >= 0
                assert sum(v.values()) == pytest.approx(released[(stream, tick, "active")], abs=1e-6)


def test_pipeline_dofns_pickle_and_dedup_keys(tmp_path):
    """Every DoFn of ours in the built pipelines (a bounded one with Avro sinks, a streaming Pub/Sub one with
    windowed JSON-lines and Avro file sinks) survives the standard pickle, as Beam serialises it; the
    deduplication key prefers the id attribute, then the payload's update_id, then the payload's hash."""
    import pickle

    import apache_beam as beam
    from apache_beam.io.gcp.pubsub import PubsubMessage
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.pipeline import PipelineVisitor

    from pipelines.io.pubsub import DedupKey
    from pipelines.release import build_pipeline
    from transforms.records import NoiseKey

    class Ours(PipelineVisitor):
        def __init__(self):
            self.fns = []

        def visit_transform(self, node):
            sink_fn = getattr(node.transform, "sink_fn", None)  # fileio.WriteToFiles: our FileSink
            for fn in (getattr(node.transform, "fn", None), sink_fn(None) if sink_fn else None):
                if fn is not None and type(fn).__module__.startswith("pipelines"):
                    self.fns.append(fn)

        enter_composite_transform = visit_transform

    bounded = copy.deepcopy(DEMO)
    bounded["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    bounded["sinks"] = [{"type": "file", "path": str(tmp_path / "a"), "format": "avro"}]
    streaming = copy.deepcopy(bounded)
    streaming["time"].pop("end")
    streaming["source"] = {"type": "pubsub", "subscription": _SUB, "id_attribute": "uid"}
    streaming["sinks"] = [
        {"type": "file", "path": str(tmp_path / "b"), "format": "jsonl"},
        {"type": "file", "path": str(tmp_path / "c"), "format": "avro"},
    ]
    seen = set()
    for raw, options in ((bounded, []), (streaming, ["--streaming"])):
        p = beam.Pipeline(options=PipelineOptions(options))
        build_pipeline(p, parse_config(raw), NoiseKey.disabled())
        ours = Ours()
        p.visit(ours)
        for fn in ours.fns:
            back = pickle.loads(pickle.dumps(fn))
            assert type(back) is type(fn) and sorted(vars(back)) == sorted(vars(fn))
            seen.add(type(fn).__name__)
    assert {"_ParseFn", "_CountReleasesFn", "DeduplicateFn", "JsonFileSink", "AvroFileSink"} <= seen, seen
    key = pickle.loads(pickle.dumps(DedupKey("uid")))
    data = b'{"update_id": "u7", "op": "delete"}'
    digest = hashlib.sha256(data).hexdigest()
    assert key(PubsubMessage(data, {"uid": "a1"}))[0] == "a:a1:" + digest
    assert key(PubsubMessage(data, {}))[0] == "f:u7:" + digest
    # a message that shares only the id (another entry's, another person's) is not a repeat of this one
    other = b'{"update_id": "u7", "op": "delete", "id": "someone else"}'
    assert key(PubsubMessage(other, {"uid": "a1"}))[0] != key(PubsubMessage(data, {"uid": "a1"}))[0]
    assert key(PubsubMessage(other, {}))[0] != key(PubsubMessage(data, {}))[0]
    assert key(PubsubMessage(data, {"uid": "a1", "ts": "5"})) == key(PubsubMessage(data, {"uid": "a1"}))
    assert key(PubsubMessage(b"{oops", None))[0].startswith("h:")
    assert key(PubsubMessage(b"{oops", None)) == key(PubsubMessage(b"{oops", {"other": "x"}))
