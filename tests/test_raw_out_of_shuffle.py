"""The bounded registry without the records as received in its shuffle (issue 30, docs/performance.md round 12).

With a source read twice (a bounded file source of lines), the entry shuffle carries a digest of each line
instead of the line, and the registry's dead letters get their lines back from a second read of the source
(``transforms.common.raw_digest`` / ``tie_refs`` / ``join_raw``, ``ReleaseContinually(raw_lines=...)``). The
user sees nothing of it: the same releases (byte for byte), the same dead letters (record, reason, stage,
stream; the same multiset), the same counters. Checked here against the line-carrying path on inputs with
every registry rejection and exact ties (updates equal in everything but their line, where the line decides
which of them is dead-lettered); each check has a broken twin that must fail.
"""

from __future__ import annotations

import collections
import copy
import csv
import hashlib
import io
import json
import random
import typing
from pathlib import Path

import pytest
import yaml

import pipelines.cli as cli
import pipelines.wiring as wiring
import transforms.bounded as bounded
import transforms.common as common
import transforms.releases as releases
from pipelines.release import main
from transforms.common import (
    dead_letter,
    digest_length,
    entry_key_prefixes,
    in_update_order,
    join_raw,
    line_digest,
    raw_digest,
    resolve_updates,
    split_entry_key,
    tie_refs,
)
from transforms.core.foundation.entries import DeletionsRefused
from transforms.records import UpdateRecord
from transforms.spec import StreamSpec
from transforms.validate import UpdateCheck

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())

# ---------------------------------------------------------------------------
# the registry's dead letters: the digest path's join against the line-carrying registry (pure, fast)
# ---------------------------------------------------------------------------

_DOMAINS = (3,)


def _line(d: dict, variant: int) -> str:
    """A line of the update ``d``; variants are other lines of the same update (key order, spacing, a field
    nothing reads): exact ties for the registry."""
    if variant == 1:
        d = dict(reversed(list(d.items())))
    elif variant == 2:
        d = {**d, "note": "x"}
    elif variant == 3:
        return json.dumps(d, separators=(",", ":")) + " é"  # not JSON any more: only the bytes matter here
    return json.dumps(d)


def _entry(rng: random.Random, eid: str):
    """One entry's update tuples ``(tick, seq, op, item, time, raw)``: few distinct contents, repeated with
    other lines and as the same line (identical duplicates), so runs of tied updates are common."""
    contents = []
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(("insert", "insert", "upsert", "delete"))
        item = None if op == "delete" and rng.random() < 0.5 else (rng.randrange(3),)
        if op == "delete" and item is not None and rng.random() < 0.3:
            item = ()  # a delete's item is not read: () and None tie in update_order
        t = rng.choice((10.0, 10.0, 20.0, 0.0, -0.0)) + 100.0 * rng.randrange(2)
        contents.append((1 + int(t // 100), rng.choice((0, 0, 1)), op, item, t))
    values = []
    for c in contents:
        d = {"time": c[4], "op": c[2], "id": eid, "seq": c[1], "item": c[3]}
        for _ in range(rng.randint(1, 4)):
            values.append((*c, _line(d, rng.randrange(4))))
    rng.shuffle(values)  # a shuffle's order is any order
    return values


def _old(key, values, deletions_allowed, max_mutations):
    """The line-carrying registry's dead letters (``ResolveEntriesBoundedFn`` without digests)."""
    _, _, dead, _ = resolve_updates(
        None, key[1], in_update_order(values), _DOMAINS, deletions_allowed, max_mutations, {}
    )
    return [dead_letter(reason, key, v) for reason, v in dead]


def _new(key, values, deletions_allowed, max_mutations, join=join_raw, rng=None):
    """The digest path's: the same resolution over digests, the references, the join with the lines."""
    digested = [(*v[:5], raw_digest(v[5])) for v in values]
    if rng is not None:
        rng.shuffle(digested)  # the shuffle's order differs between the two paths too
    ordered = in_update_order(digested)
    _, _, dead, _ = resolve_updates(None, key[1], ordered, _DOMAINS, deletions_allowed, max_mutations, {})
    ties = tie_refs(ordered, dead)
    raws = {line_digest(v[5].encode("utf-8")): v[5] for v in values}  # what the second read finds
    return [join((reason, key, v, ties.get(id(v))), raws)[0] for reason, v in dead]


def _mismatches(join=join_raw, n=400) -> tuple[int, int, collections.Counter]:
    """(entries whose dead letters differ between the two paths, entries with a tie among their rejections,
    the reasons seen) over random entries under every registry refusal."""
    rng = random.Random(30)
    bad = tied = 0
    reasons = collections.Counter()
    settings = ((True, None), (False, None), (DeletionsRefused("deletion_not_supported"), None), (True, 2))
    for i in range(n):
        deletions_allowed, max_mutations = settings[i % len(settings)]
        key = ("eu", f"e{i}")
        values = _entry(rng, key[1])
        old = _old(key, list(values), deletions_allowed, max_mutations)
        new = _new(key, list(values), deletions_allowed, max_mutations, join, rng)
        reasons.update(d.reason for d in old)
        digested = in_update_order([(*v[:5], raw_digest(v[5])) for v in values])
        _, _, dead, _ = resolve_updates(None, key[1], digested, _DOMAINS, deletions_allowed, max_mutations, {})
        tied += bool(tie_refs(digested, dead))
        bad += collections.Counter(old) != collections.Counter(new)
    return bad, tied, reasons


def test_join_gives_the_line_carrying_registrys_dead_letters():
    bad, tied, reasons = _mismatches()
    assert bad == 0
    assert tied >= 50  # the inputs do exercise ties among the rejections
    assert {"duplicate_insert", "unknown_entry", "deletion_not_allowed", "deletion_not_supported"} <= set(reasons)
    assert reasons["constraint_exceeded"] > 0


def _ignore_ties(ref, raws):
    return join_raw((*ref[:3], None), raws)


def _swap_raws(ref, raws):
    dead, found = join_raw(ref, raws)
    others = sorted(set(raws.values()))
    rec = dead.record
    if rec.raw in others and len(others) > 1:  # another line of the entry
        rec = rec._replace(raw=others[(others.index(rec.raw) + 1) % len(others)])
    return dead._replace(record=rec), found


def _drop_raw(ref, raws):
    dead, found = join_raw(ref, raws)
    return dead._replace(record=dead.record._replace(raw=None)), found


def _first_of_tie(ref, raws):  # the tie's member in digest order (the choice left to the digest)
    tie = ref[3]
    return join_raw(ref if tie is None else (ref[0], ref[1], tie[1][tie[0]], None), raws)


@pytest.mark.parametrize("broken", [_ignore_ties, _swap_raws, _drop_raw, _first_of_tie])
def test_join_twins_fail(broken):
    bad, _, _ = _mismatches(broken, n=200)
    assert bad > 0


def test_digests_of_lines_and_of_records():
    for text in ('{"a": 1}', "é ü \u2028 x", ""):
        assert line_digest(text.encode("utf-8")) == raw_digest(text) == line_digest(text)
        assert type(raw_digest(text)) is bytes and len(raw_digest(text)) == 16
    assert raw_digest(None) is None
    assert raw_digest(b"{}") not in (raw_digest("{}"), line_digest(b"{}"))  # never matches a line
    assert raw_digest("a") != raw_digest("b")
    for text in ('{"a": 1}', "é ü \u2028 x", ""):  # the length the second read filters by: UTF-8 bytes
        assert digest_length(raw_digest(text)) == len(text.encode("utf-8"))
    assert raw_digest("ab") != raw_digest("ba") and digest_length(raw_digest("ab")) == 2


def _matched(lines, wanted_texts, monkeypatch):
    """``(found {digest: line}, lines hashed)`` of ``_MatchLinesFn`` over ``lines`` (bytes) for the digests of
    ``wanted_texts``."""
    hashed = []
    real = hashlib.blake2b

    def counted(data, **kw):
        hashed.append(data)
        return real(data, **kw)

    wanted = [raw_digest(t) for t in wanted_texts]
    monkeypatch.setattr(common.hashlib, "blake2b", counted)
    try:
        found = dict(releases._MatchLinesFn().process(lines, wanted))
    finally:
        monkeypatch.undo()
    return found, hashed


def test_the_second_read_hashes_only_lines_of_a_wanted_length(monkeypatch):
    """A line of bytes whose length no wanted digest holds is not hashed; the lines found are those wanted,
    whatever their length (twin: a line longer than a digest's length field is hashed and found)."""
    rng = random.Random(3)
    texts = [json.dumps({"id": i, "pad": "x" * rng.randrange(40)}) for i in range(400)]
    lines = [t.encode("utf-8") for t in texts]
    want = [texts[5], texts[77], texts[300]]
    found, hashed = _matched(lines, want, monkeypatch)
    assert found == {raw_digest(t): t for t in want}
    lengths = {len(t.encode()) for t in want}
    assert len(hashed) == sum(len(x) in lengths for x in lines) < len(lines) // 4
    # a length that a digest cannot hold (here: past 20 bytes) is clamped in the digest, and such lines are always
    # hashed (a filter by the line's own length would drop the line)
    monkeypatch.setattr(common, "MAX_DIGEST_LENGTH", 20)
    monkeypatch.setattr(releases, "MAX_DIGEST_LENGTH", 20)
    wanted = [raw_digest(texts[9])]
    assert digest_length(wanted[0]) == 20 < len(lines[9])
    got = dict(releases._MatchLinesFn().process(lines, wanted))
    assert got == {wanted[0]: texts[9]}


def test_update_check_with_digests_is_the_check_with_the_digest():
    spec = StreamSpec(streams=("eu",), tick_seconds=10.0, end_time=100.0)
    plain, digests = UpdateCheck(spec, (3,)), UpdateCheck(spec, (3,), digests=True)
    recs = [
        UpdateRecord(5.0, "insert", "a", (1,), "eu", 0, '{"x": 1}'),
        UpdateRecord(5, "insert", "a", [1], "eu", 0, "line"),  # the general path (an int time, a list item)
        UpdateRecord(5.0, "delete", "a", None, "eu", 3, "d"),
        UpdateRecord(5.0, "insert", "a", (1,), "eu", 0),  # no raw
        UpdateRecord(500.0, "insert", "a", (1,), "eu", 0, "late"),  # after_end
    ]
    for rec in recs:
        (r1, o1), (r2, o2) = plain(rec), digests(rec)
        assert r1 == r2
        if o1 is not None:
            assert o2 == (o1[0], (*o1[1][:5], raw_digest(o1[1][5])))


_STREAMS = ("eu", "1\x00x", "1", "12", "", "\x00", "é")
_IDS = ["a", "b\x00c", "\x00", "0", "1\x00", "x\x00a", "été", "x" * 300]


def test_joined_entry_keys_split_back_to_their_pair():
    """Every (declared stream, id) pair is joined to one key and split back to itself, and distinct pairs give
    distinct keys (streams and ids holding NULs and digits too): the bounded shuffle's groups are the pairs'."""
    prefixes = entry_key_prefixes(_STREAMS)
    keys = {}
    for stream in _STREAMS:
        for eid in _IDS:
            key = prefixes[stream] + eid
            assert split_entry_key(key, _STREAMS) == (stream, eid)
            keys[key] = (stream, eid)
    assert len(keys) == len(_STREAMS) * len(_IDS)


def test_joined_entry_keys_twin_fails():
    """Broken twins: a split at the last NUL, and a prefix by the stream's own text, each lose a pair."""
    prefixes = entry_key_prefixes(_STREAMS)

    def last_nul(key, streams):
        place, _, eid = key.rpartition("\x00")
        return streams[int(place)], eid

    with pytest.raises((AssertionError, ValueError)):
        for stream in _STREAMS:
            for eid in _IDS:
                assert last_nul(prefixes[stream] + eid, _STREAMS) == (stream, eid)
    by_text = {stream + "\x00" + eid: (stream, eid) for stream in _STREAMS for eid in _IDS}
    assert len(by_text) < len(_STREAMS) * len(_IDS)  # ("1\x00x", "a") and ("1", "x\x00a") style collisions


def test_update_check_with_joined_keys_is_the_check_with_the_pair_joined():
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=10.0, end_time=100.0)
    for digests in (False, True):
        plain = UpdateCheck(spec, (3,), digests=digests)
        joined = UpdateCheck(spec, (3,), digests=digests, joined_keys=True)
        assert joined.output_type == tuple[str, typing.Any] and plain.output_type == tuple[tuple[str, str], typing.Any]
        recs = [
            UpdateRecord(5.0, "insert", "a", (1,), "us", 0, '{"x": 1}'),
            UpdateRecord(5, "insert", "a\x00b", [1], "eu", 0, "line"),  # the general path
            UpdateRecord(5.0, "delete", "0", None, "us", 3, "d"),
            UpdateRecord(500.0, "insert", "a", (1,), "eu", 0, "late"),  # after_end
            UpdateRecord(5.0, "insert", "a", (1,), "asia", 0, "x"),  # undeclared_stream
        ]
        for rec in recs:
            (r1, o1), (r2, o2) = plain(rec), joined(rec)
            assert r1 == r2 and (o1 is None) == (o2 is None)
            if o1 is not None:
                assert type(o2[0]) is str and split_entry_key(o2[0], spec.streams) == o1[0] and o2[1] == o1[1]
                assert joined.accepted(rec) in (None, o2)


# ---------------------------------------------------------------------------
# the CLI's bounded runs: both paths, byte for byte (pipelines)
# ---------------------------------------------------------------------------


@pytest.fixture
def no_picture(monkeypatch):
    monkeypatch.setattr(cli, "draw_picture", lambda cfg: None)


def _updates() -> list[dict]:
    """Updates of two regions with every registry refusal the configurations below give, and exact ties."""
    rng = random.Random(12)
    out = []
    for i in range(60):
        eid, region = f"b{i}", ("eu", "us")[i % 2]
        t = 10.0 + 7 * i
        out.append(
            {"time": t, "op": "insert", "id": eid, "region": region, "seq": 0, "item": {"carrier": "AA", "amount": 10}}
        )
        if i % 3 == 0:
            out.append(
                {
                    "time": t + 50,
                    "op": "upsert",
                    "id": eid,
                    "region": region,
                    "seq": 0,
                    "item": {"carrier": "DL", "amount": 20},
                }
            )
        if i % 4 == 0:
            out.append({"time": t + 90, "op": "delete", "id": eid, "region": region, "seq": 0})
        if i % 5 == 0:
            out.append({"time": t + 95, "op": "delete", "id": eid, "region": region, "seq": 0})  # unknown_entry
        if i % 7 == 0:
            out.append(
                {
                    "time": t + 3,
                    "op": "insert",
                    "id": eid,
                    "region": region,
                    "seq": 1,
                    "item": {"carrier": "B6", "amount": 5},
                }
            )  # duplicate_insert
        if i % 6 == 0:
            out.append(
                {
                    "time": t + 60,
                    "op": "upsert",
                    "id": eid,
                    "region": region,
                    "seq": 0,
                    "item": {"carrier": "B6", "amount": 30},
                }
            )
            out.append(
                {
                    "time": t + 70,
                    "op": "upsert",
                    "id": eid,
                    "region": region,
                    "seq": 0,
                    "item": {"carrier": "AA", "amount": 40},
                }
            )  # past 3 mutations under the entry unit
    rng.shuffle(out)
    return out


def _lines(updates: list[dict]) -> list[str]:
    """JSON lines: each update, some twice more as other lines of the same update (exact ties) or the same line
    again, and a few lines the parse and validation steps refuse."""
    lines = []
    for n, d in enumerate(updates):
        lines.append(json.dumps(d))
        if n % 4 == 0:
            lines.append(json.dumps({**d, "note": "other line"}))
            lines.append(json.dumps(dict(reversed(list(d.items())))))
        if n % 9 == 0:
            lines.append(json.dumps(d))
    lines += [
        "{not json",
        json.dumps({"time": 5.0, "op": "insert", "id": "z", "region": "mars", "item": {}}),
        json.dumps(
            {"time": 5000.0, "op": "insert", "id": "late", "region": "eu", "item": {"carrier": "AA", "amount": 1}}
        ),
    ]
    return lines


def _csv(updates: list[dict]) -> list[str]:
    rows = ["time,op,id,region,seq,carrier,amount"]
    for d in updates:
        buf = io.StringIO()
        item = d.get("item", {})
        csv.writer(buf, lineterminator="").writerow(
            [d["time"], d["op"], d["id"], d["region"], d["seq"], item.get("carrier", ""), item.get("amount", "")]
        )
        rows.append(buf.getvalue())
        if d["op"] == "insert" and d["seq"] == 0 and int(d["id"][1:]) % 4 == 0:  # the same update, another row
            rows.append(buf.getvalue().replace(",0,", ",00,", 1) if ",0," in buf.getvalue() else buf.getvalue())
    return rows


def _config(tmp_path, source, fmt, out, **privacy):
    raw = copy.deepcopy(DEMO)
    raw["privacy"].update(privacy)
    raw["time"] = {"field": "time", "tick_seconds": 100, "origin": 0, "end": 1200}
    raw["source"] = {"type": "file", "path": str(source), "format": fmt}
    raw["sinks"] = [{"type": "file", "path": str(out), "format": "jsonl"}]
    return raw


def _run(tmp_path, raw, name) -> dict:
    """Every output file of a CLI run (releases, nodes, dead letters, the manifest), its lines sorted where a
    sink's line order is the runner's."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(path), "--release-id", "raw-out-of-shuffle"]) in (0, None)
    out = Path(raw["sinks"][0]["path"])
    files = {}
    for folder in (out, out.parent / (out.name + "-confidential")):
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                text = f.read_text()
                files[f.name] = text if f.suffix == ".json" else sorted(text.splitlines())
    return files


CASES = {
    "jsonl": ("jsonl", {}),
    "csv": ("csv", {}),
    "jsonl_entry_unit": ("jsonl", {"unit": "entry", "max_mutations_per_entry": 3}),
}


def _both(tmp_path, case, monkeypatch):
    fmt, privacy = CASES[case]
    updates = _updates()
    source = tmp_path / f"in.{fmt}"
    source.write_text("\n".join(_csv(updates) if fmt == "csv" else _lines(updates)) + "\n")
    taken = []
    real = wiring._raw_lines
    monkeypatch.setattr(wiring, "_raw_lines", lambda cfg, read: taken.append(real(cfg, read)) or taken[-1])
    new = _run(tmp_path, _config(tmp_path, source, fmt, tmp_path / "new", **privacy), "new")
    assert taken and taken[-1] is not None  # the digest path ran
    monkeypatch.setattr(wiring, "_raw_lines", lambda cfg, read: None)
    old = _run(tmp_path, _config(tmp_path, source, fmt, tmp_path / "old", **privacy), "old")
    manifests = [json.loads(f["release_manifest.json"]) for f in (new, old)]
    for f in (new, old):
        f.pop("release_manifest.json")
    return new, old, manifests


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_outputs_equal_the_line_carrying_path(tmp_path, case, monkeypatch, no_picture):
    new, old, (m_new, m_old) = _both(tmp_path, case, monkeypatch)
    assert new == old
    dead = [json.loads(x) for f, lines in new.items() if f.startswith("dead_letters") for x in lines]
    registry = collections.Counter(d["reason"] for d in dead if d["stage"] == "registry")
    assert registry["duplicate_insert"] and registry["unknown_entry"], registry
    if case == "jsonl_entry_unit":
        assert registry["constraint_exceeded"], registry
    # the manifests: the same counters, the same everything but where the outputs went
    strip = json.dumps(m_old).replace(str(tmp_path / "old"), "OUT")
    assert json.dumps(m_new).replace(str(tmp_path / "new"), "OUT") == strip


def _reread(tmp_path, source, fmt) -> int:
    """The ``source_lines_reread`` counter of a bounded run of the CLI's graph over ``source``."""
    import apache_beam as beam
    from apache_beam.metrics.metric import MetricsFilter
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.config import parse_config
    from transforms.records import NoiseKey

    p = beam.Pipeline(options=PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"]))
    wiring.build_pipeline(p, parse_config(_config(tmp_path, source, fmt, tmp_path / "metrics")), NoiseKey.disabled())
    result = p.run()
    result.wait_until_finish()
    found = result.metrics().query(MetricsFilter().with_name("source_lines_reread"))["counters"]
    return sum(c.committed for c in found)


def test_clean_input_is_not_read_twice(tmp_path, monkeypatch, no_picture):
    """No update refused by the registry (the parse step's refusals have their lines already): the second read
    reads nothing (``source_lines_reread`` 0), and the outputs are the line-carrying path's; with refusals it
    reads every line once (twin: the counter would be 0 there too if the read were skipped regardless)."""
    updates = [d for d in _updates() if d["op"] == "insert" and d.get("seq") == 0]
    seen = set()
    updates = [d for d in updates if not (d["id"] in seen or seen.add(d["id"]))]
    lines = [json.dumps(d) for d in updates] + ["{not json"]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")
    new = _run(tmp_path, _config(tmp_path, source, "jsonl", tmp_path / "new"), "new")
    monkeypatch.setattr(wiring, "_raw_lines", lambda cfg, read: None)
    old = _run(tmp_path, _config(tmp_path, source, "jsonl", tmp_path / "old"), "old")
    monkeypatch.undo()
    m_new, m_old = (json.loads(f.pop("release_manifest.json")) for f in (new, old))
    assert new == old
    dead = [json.loads(x) for f, lines in new.items() if f.startswith("dead_letters") for x in lines]
    assert [d["stage"] for d in dead] == ["parse"]  # no registry refusal: nothing wanted
    assert json.dumps(m_new).replace(str(tmp_path / "new"), "OUT") == json.dumps(m_old).replace(
        str(tmp_path / "old"), "OUT"
    )
    assert _reread(tmp_path, source, "jsonl") == 0
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_text("\n".join(_lines(_updates())) + "\n")
    assert _reread(tmp_path, dirty, "jsonl") == len(_lines(_updates()))


def test_cli_twin_ties_left_to_the_digest_fail(tmp_path, monkeypatch, no_picture):
    """Twin: the tie references dropped (a tie's dead letter names the line the digest order put there)."""
    monkeypatch.setattr(bounded, "tie_refs", lambda ordered, dead: {})
    new, old, _ = _both(tmp_path, "jsonl", monkeypatch)
    assert new != old


def test_the_entry_shuffle_carries_no_line(tmp_path):
    """The elements entering ``GroupByEntry`` of a bounded file run: a 16-byte digest where the line was, and
    no line's text anywhere in them (twin: the same check on the line-carrying path fails)."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.testing.util import assert_that

    from pipelines.config import parse_config
    from transforms.records import NoiseKey

    lines = _lines(_updates())
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")

    def carries_no_line(values):
        assert values
        for _key, v in values:
            assert len(v) == 6 and type(v[5]) is bytes and len(v[5]) == 16, v
            assert not any(type(f) is str and f.startswith("{") for f in v)

    def carries_lines(values):
        assert any(type(v[5]) is str and v[5].startswith("{") for _, v in values)

    for name, raw_lines, check in (("new", wiring._raw_lines, carries_no_line), ("old", None, carries_lines)):
        p = beam.Pipeline(
            options=PipelineOptions(["--runner=apache_beam.runners.portability.fn_api_runner.FnApiRunner"])
        )
        orig = wiring._raw_lines
        wiring._raw_lines = raw_lines or (lambda cfg, read: None)
        try:
            build_raw = _config(tmp_path, source, "jsonl", tmp_path / name)
            wiring.build_pipeline(p, parse_config(build_raw), NoiseKey.disabled())
        finally:
            wiring._raw_lines = orig
        inputs = []

        class Find(beam.pipeline.PipelineVisitor):
            def enter_composite_transform(self, node, inputs=inputs):
                if node.full_label.endswith("/GroupByEntry"):
                    inputs.append(node.inputs[0])

            visit_transform = enter_composite_transform

        p.visit(Find())
        assert len(inputs) == 1
        assert_that(inputs[0], check, label=f"Check{name}")
        p.run().wait_until_finish()


def test_the_second_read_is_taken_for_bounded_line_sources_only(tmp_path):
    """``pipelines.wiring._raw_lines``: JSON lines and CSV files (bounded, lines read in chunks) get a second read of
    the same files; an Avro file (records, not lines) does not, nor does a followed file (unbounded), nor lines
    read without saying which files they come from (``Elements.lines_of``)."""
    import apache_beam as beam

    from pipelines.config import parse_config

    (tmp_path / "in.jsonl").write_text(json.dumps({"time": 1.0, "op": "delete", "id": "a", "region": "eu"}) + "\n")
    (tmp_path / "in.csv").write_text("time,op,id,region,seq,carrier,amount\n1.0,delete,a,eu,0,,\n")
    (tmp_path / "in.avro").write_bytes(b"")
    taken = {}
    for fmt in ("jsonl", "csv", "avro"):
        cfg = parse_config(_config(tmp_path, tmp_path / f"in.{fmt}", fmt, tmp_path / fmt))
        p = beam.Pipeline()
        read = cfg.source.read_chunks(p, cfg)
        taken[fmt] = wiring._raw_lines(cfg, read)
        assert read.chunked == (fmt != "avro")
        assert wiring._raw_lines(cfg, cfg.source.read(beam.Pipeline(), cfg)) is None
    assert callable(taken["jsonl"]) and callable(taken["csv"]) and taken["avro"] is None
    follow = dict(_config(tmp_path, tmp_path / "in.jsonl", "jsonl", tmp_path / "f"))
    follow["source"] = {"type": "follow", "path": str(tmp_path / "in.jsonl")}
    follow["time"].pop("end")
    cfg = parse_config(follow)
    p = beam.Pipeline()
    assert wiring._raw_lines(cfg, cfg.source.read_chunks(p, cfg)) is None


def test_read_again_calls_the_former_one_parameter_form_too():
    """``ReleaseContinually(raw_lines=...)``: a callable of ``(pipeline, needed)`` gets the gate; one of
    ``(pipeline)`` only (the form before it) is still called, and reads regardless."""
    from transforms.releases import read_again

    calls = []
    read_again(lambda p, needed: calls.append(("two", p, needed)), "P", "N")
    read_again(lambda p: calls.append(("one", p)), "P", "N")
    read_again(lambda p, needed=None: calls.append(("default", p, needed)), "P", "N")
    read_again(lambda *a: calls.append(("var", *a)), "P", "N")
    assert calls == [("two", "P", "N"), ("one", "P"), ("default", "P", "N"), ("var", "P", "N")]
