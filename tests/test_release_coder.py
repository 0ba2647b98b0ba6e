"""The coders of the bounded graph's record types (``transforms.coders``): the same records out of them as went
in, the bounded graph typed with them (and a streaming graph not: its coders unchanged, for Dataflow updates),
and no record pickled on the bounded path where the parse step's chunks used to be, for their size estimates."""

from __future__ import annotations

import json
import math
import pickle

import apache_beam as beam
import pytest
import yaml
from apache_beam.coders import coders
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.windowed_value import WindowedValue

import pipelines.wiring as wiring
import transforms.releases as releases
from pipelines.config import parse_config
from pipelines.demo_data import generate
from pipelines.parse import is_text
from pipelines.release import main
from transforms.coders import ReleaseRecordCoder, ReleaseRecordFields, UpdateChunkCoder
from transforms.records import NoiseKey, ReleaseRecord, UpdateChunk, UpdateRecord

FNAPI = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
RECORDS = [
    ReleaseRecord("eu", 1, 1, "active", (7.0,), 27.0, 0.05, (1 / 3,), "1970-01-01T00:10:00Z"),
    ReleaseRecord("us", 2**40, 3, "by_carrier", (0.0, -0.5, 6.5, math.inf), None, 0.05, (0.5, 1e-9), None),
    ReleaseRecord("s", 5, 2, "q", (math.nan,), float("nan"), 0.1, (0.25,)),
]
UPDATES = [
    UpdateRecord(14.674, "insert", "b0", (0, 0, 79), "eu", 0, '{"time": 14.674, "é": "\\u00e9"}'),
    UpdateRecord(38.5, "delete", "b1", None, "us", 2, b"\xff raw bytes", "person-7"),
    UpdateRecord(1.0, "upsert", "b2", (2, 1, 0), "eu", 3, ("payload", {"attr": "x"})),
    UpdateRecord(0.0, "insert", "b3"),
]


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@pytest.mark.parametrize("nested", [False, True])
def test_a_release_record_round_trips_as_itself(nested):
    impl = ReleaseRecordCoder().get_impl()
    for r in RECORDS:
        encoded = impl.encode_nested(r) if nested else impl.encode(r)
        back = impl.decode_nested(encoded) if nested else impl.decode(encoded)
        assert _same(back, r), (back, r)
        assert impl.estimate_size(r, nested) == len(encoded)
    # in a windowed value, as Beam's data plane carries it
    wv = coders.WindowedValueCoder(ReleaseRecordCoder(), coders.GlobalWindowCoder()).get_impl()
    value = WindowedValue(RECORDS[1], 17.5, (GlobalWindow(),))
    assert _same(wv.decode(wv.encode(value)).value, RECORDS[1])


def test_an_update_chunk_round_trips_as_itself():
    impl = UpdateChunkCoder().get_impl()
    chunk = UpdateChunk(UPDATES)
    for value in (chunk, UpdateChunk()):
        back = impl.decode(impl.encode(value))
        assert type(back) is UpdateChunk and _same(list(back), list(value))
        assert impl.estimate_size(value) == len(impl.encode(value))
    # a chunk of more than 64 records: its size estimated from a sample, within a few percent
    big = UpdateChunk(UPDATES[0]._replace(entry_id=f"b{i}", seq=i, raw="x" * (i % 50)) for i in range(4096))
    exact = len(impl.encode(big))
    assert abs(impl.estimate_size(big) - exact) < 0.05 * exact
    # the twin: a decoder that gave plain tuples (or a list) would fail the type check above
    assert not _same(tuple(UPDATES[0]), UPDATES[0]) and not _same(list(chunk), chunk)


def test_a_release_record_is_smaller_than_its_pickle():
    assert len(ReleaseRecordCoder().get_impl().encode(RECORDS[0])) < len(pickle.dumps(RECORDS[0], 5))


def _config(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(generate(300)) + "\n")
    cfg = yaml.safe_load(open("configs/demo.yaml").read())
    cfg["source"] = {"type": "file", "path": str(src), "format": "jsonl"}
    cfg["sinks"] = [{"type": "file", "path": str(tmp_path / "out") + "/", "format": "jsonl"}]
    cfg["time"]["end"] = 7200
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path, cfg


def _coders(p) -> dict:
    """``{label: coder}`` of every PCollection of ``p``'s graph that a ParDo or Flatten outputs."""
    found = {}

    class Visit(beam.pipeline.PipelineVisitor):
        def visit_transform(self, node):
            for tag, pc in node.outputs.items():
                found[f"{node.full_label}:{tag}"] = beam.coders.registry.get_coder(pc.element_type)

    p.visit(Visit())
    return found


def test_the_bounded_graph_is_typed_with_the_coders(tmp_path):
    p = beam.Pipeline(options=PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"]))
    wiring.build_pipeline(p, parse_config(_config(tmp_path)[1]), NoiseKey.disabled())
    found = _coders(p)
    answers = [k for k, c in found.items() if isinstance(c, ReleaseRecordCoder)]
    chunks = [k for k, c in found.items() if isinstance(c, UpdateChunkCoder)]
    assert "Release/Answers:None" in answers
    assert [k.split("/")[1] for k in answers if k.endswith("answers") or "/ParDo(" in k] == [
        "ReleaseStream",
        "ReleaseIdleStreams",
    ], answers
    assert len(chunks) == 1 and chunks[0].startswith("Parse")


def _entry_key_coder(p):
    """The key coder of the elements entering the release's ``GroupByEntry``."""
    return _coders(p)["Release/Validate/ParDo(ValidateFn):None"].coders()[0]  # a TupleCoder: (key, value)


def test_the_bounded_entry_shuffle_is_keyed_by_text(tmp_path):
    """Bounded: the entry shuffle's key is one text (``transforms.common.entry_key_prefixes``), encoded by the
    text coder; streaming: the pair of texts, its tuple coder, as a running job's state keys were."""
    bounded = beam.Pipeline(
        options=PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"])
    )
    wiring.build_pipeline(bounded, parse_config(_config(tmp_path)[1]), NoiseKey.disabled())
    assert isinstance(_entry_key_coder(bounded), coders.StrUtf8Coder)
    opts = PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner", "--streaming"])
    streaming = beam.Pipeline(options=opts)
    wiring.build_pipeline(streaming, parse_config(_config(tmp_path)[1]), NoiseKey.disabled())
    key = _entry_key_coder(streaming)
    assert isinstance(key, coders.TupleCoder) and all(isinstance(c, coders.StrUtf8Coder) for c in key.coders()), key


def test_a_streaming_graph_keeps_its_coders(tmp_path):
    """No PCollection of a streaming graph gets the new coders (a running Dataflow job updated in place by this
    version keeps every PCollection's coder)."""
    opts = PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner", "--streaming"])
    p = beam.Pipeline(options=opts)
    wiring.build_pipeline(p, parse_config(_config(tmp_path)[1]), NoiseKey.disabled())
    found = _coders(p)
    assert found and not [k for k, c in found.items() if isinstance(c, (ReleaseRecordCoder, UpdateChunkCoder))]


def test_no_update_is_pickled_on_the_bounded_path(tmp_path, monkeypatch, capsys):
    """Beam's size estimates of the parse step's chunks pickled every record of the sampled chunks (the first
    ten, then ~7 per doubling: 120,000 pickles in a run of 200,000 updates), and the release records were
    pickled where they cross a stage; with the coders no update or release record is. The twin: the same run
    with the Parse and release outputs untyped pickles both."""
    counts: dict = {}
    real = pickle.dumps

    def dumps(x, *a, **k):
        counts[type(x).__name__] = counts.get(type(x).__name__, 0) + 1
        return real(x, *a, **k)

    monkeypatch.setattr(pickle, "dumps", dumps)  # the fallback coders' impls are made when the job runs
    config, _ = _config(tmp_path)
    assert main(["--config", str(config)]) == 0
    assert counts.get("UpdateRecord", 0) == 0 and counts.get("ReleaseRecord", 0) == 0, counts
    counts.clear()
    # the twin: the chunks plain lists and the answers typed ReleaseRecord, as before the coders
    monkeypatch.setattr(wiring, "UpdateChunk", list)
    monkeypatch.setattr(releases, "ReleaseRecordFields", ReleaseRecord)
    assert main(["--config", str(config), "--overwrite"]) == 0
    assert counts.get("UpdateRecord", 0) >= 200 and counts.get("ReleaseRecord", 0) >= 12 * 2 * 3, counts
    capsys.readouterr()


def test_a_text_the_fields_cannot_encode_is_pickled_and_comes_back():
    """A lone surrogate (a JSON line's ``"\\ud800"``) cannot be UTF-8: that value is pickled, as Beam's default
    coder would, instead of failing the job where the default one did not."""
    chunk = UpdateChunk([UPDATES[0]._replace(stream="\ud800"), UPDATES[1]])
    record = RECORDS[0]._replace(query="q\udfff")
    for coder, value in ((UpdateChunkCoder(), chunk), (ReleaseRecordCoder(), record)):
        impl = coder.get_impl()
        encoded = impl.encode(value)
        assert encoded[:1] == b"\x01" and _same(impl.decode(encoded), value)
        assert impl.estimate_size(value) == len(encoded)
        assert _same(impl.decode_nested(impl.encode_nested(value)), value)
    assert UpdateChunkCoder().get_impl().encode(UpdateChunk(UPDATES[:1]))[:1] == b"\x00"


def test_a_stream_or_id_that_is_not_text_is_a_dead_letter_not_a_failure(tmp_path, capsys):
    """A JSON line's ``"\\ud800"`` decodes to a lone surrogate, which no UTF-8 coder takes: as a stream it failed
    the job where the dead letter was written, as an id at the entry shuffle's key. The parse step refuses both
    (``undeclared_stream``, ``malformed``); the run ends, every other record released."""
    config, _ = _config(tmp_path)
    src = tmp_path / "in.jsonl"
    line = '{{"time": 30.0, "op": "insert", "id": {}, "item": {{"carrier": "AA", "amount": 3.0}}, "region": {}}}'
    bad = [line.format('"z"', '"\\ud800"'), line.format('"\\udc00"', '"eu"'), line.format('"\\u00e9t\\u00e9"', '"eu"')]
    src.write_text("\n".join(bad) + "\n" + src.read_text())
    assert main(["--config", str(config)]) == 0
    dead = [json.loads(x) for f in (tmp_path / "out-confidential").glob("dead_letters*") for x in f.open()]
    mine = {d["record"]: d["reason"] for d in dead if d["record"] in bad}
    assert mine == {bad[0]: "undeclared_stream", bad[1]: "malformed"}  # "été" is text: an id like any other
    assert is_text("été") and not is_text("\ud800") and not is_text("a\udfffb") and is_text("")
    capsys.readouterr()


def test_records_as_grouping_keys_take_the_default_deterministic_coder():
    """A user's step that groups by a release record (``Distinct``) gets the deterministic coder Beam's default
    gives (the fields coder is not deterministic)."""
    with beam.Pipeline(runner="apache_beam.runners.portability.fn_api_runner.FnApiRunner") as p:
        out = (
            p
            | beam.Create(RECORDS[:2] * 2).with_output_types(ReleaseRecordFields)
            | beam.Distinct()
            | beam.combiners.Count.Globally()
        )
        assert_that(out, equal_to([2]))
