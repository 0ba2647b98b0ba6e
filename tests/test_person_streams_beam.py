"""A person across streams in the pipeline (``privacy.max_streams_per_person``): the person step keyed by person
alone (``transforms/person.py``, "Across streams") equals the in-memory reference (the rule
``bound_person_streams`` over each person's records, then the per-stream reference of
``tests/test_person_beam.py``) in batch (FnApiRunner) and streaming (TestStream on the DirectRunner), with a
fixed noise key; the README's command with the limit refuses a person's updates beyond their first stream(s)
as dead letters and states the guarantee; each stream's records state the bounds and the spend of its share
of the budget (the same, record for record, as a run configured with that share), the manifest both budgets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to
from test_person_beam import (
    KEY_HEX,
    QUERIES,
    REL,
    _answer_key,
    _dead_key,
    person_workload,
    reference,
    run_release,
    travelling,
)

from transforms.core import DynamicConfig, NoiseSource, PureDP
from transforms.core.contribution.bounding import PersonLimit, bound_person_streams
from transforms.core.foundation.accounting import PrivacyUnit
from transforms.person import ALL_STREAMS, BoundPersonsBoundedFn, PersonUpdateCheck
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseFullyDynamic, StreamSpec

ROOT = Path(__file__).resolve().parents[1]
CFG = DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3, max_streams=1))


def across_reference(records, spec, cfg, noise):
    """Each person's records decided by ``bound_person_streams`` (all at once: the order puts the tick first,
    so the streaming step's tick-by-tick decisions are the same), the refused ones dead letters of the person
    stage, the admitted ones through the per-stream reference (which re-admits them all)."""
    limit = PersonLimit(cfg.unit.max_entries, cfg.unit.per_window, cfg.unit.max_streams)
    by_person: dict = {}
    for r in records:
        by_person.setdefault(r.person, []).append(r)
    admitted, dead = [], []
    for person, recs in by_person.items():
        index = {(r.stream, r.entry_id, travelling(r, spec)): r for r in recs}
        _, decisions = bound_person_streams(None, list(index), limit)
        for stream, eid, value, reason in decisions:
            if reason is None:
                admitted.append(index[(stream, eid, value)])
            else:
                dead.append((reason, eid, person, "person"))
    answers, more = reference(admitted, spec, cfg, noise, limit=PersonLimit(limit.max_entries, limit.window))
    assert not [d for d in more if d[3] == "person"]  # the per-stream rule re-admits every admitted update
    return answers, sorted(dead + more)


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
@pytest.mark.parametrize("n", [1, 2])
def test_the_person_step_across_streams_equals_the_in_memory_reference(streaming, n):
    """``n = 2`` as well: a person's two streams may hold the same entry id (two entries; on the DirectRunner's
    gated path each is numbered on its own: a shared count held the registry for ever)."""
    cfg = CFG if n == 1 else DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3, max_streams=n))
    # four entry ids at n = 2: persons reuse an id in their two streams
    recs = person_workload(streams=("a", "b", "c"), n=160 if streaming else 260, seed=5, ids=10 if n == 1 else 4)
    spec = StreamSpec(streams=("a", "b", "c"), tick_seconds=5.0, end_time=80.0 if streaming else 150.0)
    t = ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed(KEY_HEX), release=REL)
    expect, dead = across_reference(recs, spec, cfg, NoiseSource.from_hex(KEY_HEX).for_release(t.release))
    bounded = [d for d in dead if d[0] == "contribution_bounded"]
    assert len(bounded) > 20 and len(expect) > 10
    # the limit is what refuses them: without it (per stream) fewer are refused
    _, per_stream = reference(
        recs, spec, DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3)), NoiseSource.disabled()
    )
    assert sum(d[0] == "contribution_bounded" for d in per_stream) < (0.75 if n == 1 else 0.95) * len(bounded)
    if n == 2:  # the same entry id admitted in two streams of one person
        admitted = set()
        for person in {r.person for r in recs}:
            mine = [(r.stream, r.entry_id, travelling(r, spec)) for r in recs if r.person == person]
            _, decisions = bound_person_streams(None, mine, PersonLimit(2, None, 2))
            admitted |= {(person, s, e) for s, e, v, reason in decisions if reason is None and v[2] == "insert"}
        assert len({(p, e) for p, _, e in admitted}) < len(admitted)
    _, p, out = run_release(recs, spec, cfg, NoiseKey.fixed(KEY_HEX), streaming, shuffle_seed=7)
    assert_that(out["answers"] | beam.Map(_answer_key), equal_to(expect), label="Answers")
    assert_that(out["dead_letters"] | beam.Map(_dead_key), equal_to(dead), label="Dead")
    result = p.run()
    result.wait_until_finish()
    if not streaming:
        counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
        assert counters["persons_seen"] == len({r.person for r in recs})  # one key per person, every stream


def test_the_check_keys_by_person_alone_and_the_step_emits_for_the_registry_as_before():
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, end_time=60.0)
    recs = [
        UpdateRecord(1.0, "insert", "e1", (0, 1), "b", 0, person="P"),
        UpdateRecord(2.0, "insert", "e2", (0, 1), "a", 1, person="P"),
        UpdateRecord(12.0, "delete", "e1", None, "b", 2, person="P"),
    ]
    check = PersonUpdateCheck(spec, (1, 4), across_streams=True)
    keyed = [check(r)[1] for r in recs]
    assert {k for k, _ in keyed} == {(ALL_STREAMS, "P")} and [v[8] for _, v in keyed] == ["b", "a", "b"]
    fn = BoundPersonsBoundedFn(spec, PersonLimit(2, None, 1))
    fn.start_bundle()
    out = list(fn.process(((ALL_STREAMS, "P"), [v for _, v in keyed])))
    admitted = [o for o in out if not isinstance(o, beam.pvalue.TaggedOutput)]
    assert [k for k, _ in admitted] == [("b", "1:P:e1"), ("b", "1:P:e1")]
    assert all(len(v) == 8 for _, v in admitted)  # the registry's update tuple, unchanged
    (refused,) = [o.value for o in out if isinstance(o, beam.pvalue.TaggedOutput)]
    assert (refused.reason, refused.stream, refused.record) == ("contribution_bounded", "a", recs[1])
    assert fn.counts == [1, 1, 0]
    with pytest.raises(ValueError, match="cannot be told from the person step's key"):
        ReleaseFullyDynamic(CFG, StreamSpec(streams=("a", ALL_STREAMS)), NoiseKey.disabled())


# ---------------------------------------------------------------------------
# The README's command
# ---------------------------------------------------------------------------


def _lines(persons_in_both: int = 6, alone: int = 4) -> list[str]:
    """Customers booking in both regions (first in ``eu`` for even ones, ``us`` for odd ones) and customers of
    one region; every booking cancelled two periods later for a third of them."""
    out, seq = [], 0
    for c in range(persons_in_both + alone):
        regions = ("eu", "us") if c % 2 == 0 else ("us", "eu")
        for j, region in enumerate(regions if c < persons_in_both else regions[:1]):
            t = 60.0 * c + 600.0 * j + 30.0
            rec = {"time": t, "op": "insert", "id": f"b{c}-{j}", "item": {"carrier": "AA"}, "region": region}
            out.append(json.dumps({**rec, "seq": seq, "customer": f"c{c}"}))
            seq += 1
            if c % 3 == 0:
                out.append(
                    json.dumps(
                        {
                            "time": t + 1200.0,
                            "op": "delete",
                            "id": f"b{c}-{j}",
                            "region": region,
                            "seq": seq,
                            "customer": f"c{c}",
                        }
                    )
                )
                seq += 1
    return out


def _config(tmp: Path, name: str, privacy: str, release: str = "every_ticks: 1") -> Path:
    cfg = tmp / f"{name}.yaml"
    cfg.write_text(
        f"privacy: {{{privacy}, unit: person, person_field: customer, max_entries_per_person: 2, "
        "max_mutations_per_entry: 2}\n"
        "time: {field: time, tick_seconds: 600, origin: 0, end: 6000}\n"
        "streams: {field: region, keys: [eu, us]}\n"
        "mechanism: {kind: auto}\n"
        f"release: {{{release}}}\n"
        "queries:\n  - {name: active, type: count}\n"
        "  - {name: by_carrier, type: histogram, field: carrier, domain: [AA, B6]}\n"
        f"source: {{type: file, path: {tmp / 'in.jsonl'}, format: jsonl}}\n"
        f"sinks:\n  - {{type: file, path: {tmp / name}/, format: jsonl}}\n"
    )
    return cfg


def _run(cfg: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.release", "--config", str(cfg)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _records(folder: Path, pattern: str) -> list[dict]:
    return [json.loads(x) for f in sorted(folder.glob(pattern)) for x in f.read_text().splitlines()]


@pytest.mark.slow
def test_the_readme_command_keeps_a_person_to_one_stream_and_states_the_guarantee(tmp_path):
    """Noise off, ``max_streams_per_person: 1``: a customer's bookings in their second region are dead letters
    ``contribution_bounded`` (stage person), the releases are the exact counts of the bookings admitted, and the
    summary and the manifest say what the budget protects."""
    lines = _lines()
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    proc = _run(_config(tmp_path, "one", "epsilon: 1.0, disable_noise: true, max_streams_per_person: 1"))
    assert "a person's updates reach at most 1 stream: epsilon 1 per person across all streams" in proc.stdout
    guarantee = [x for x in proc.stdout.splitlines() if x.startswith("guarantee:")]
    assert "across all streams: admitted in at most 1 stream " in guarantee[0], guarantee
    conf = tmp_path / "one-confidential"
    dead = _records(conf, "dead_letters*.jsonl")
    refused = sorted(json.loads(d["record"])["id"] for d in dead if d["reason"] == "contribution_bounded")
    assert refused == sorted([f"b{c}-1" for c in range(6)] + [f"b{c}-1" for c in range(0, 6, 3)])
    assert {d["stage"] for d in dead} == {"person"}
    first = {}  # the region of each customer's first booking: its only stream
    for x in lines:
        d = json.loads(x)
        first.setdefault(d["customer"], d["region"])
    truth: dict = {}
    for x in lines:
        d = json.loads(x)
        if d["region"] == first[d["customer"]]:
            tick = int(d["time"] // 600) + 1
            truth.setdefault(d["region"], {}).setdefault(tick, 0)
            truth[d["region"]][tick] += 1 if d["op"] == "insert" else -1
    for r in _records(tmp_path / "one", "releases*.jsonl"):
        if r["query"] == "active":
            want = sum(n for t, n in truth.get(r["stream"], {}).items() if t <= r["tick"])
            assert r["estimate"] == want, r
    (manifest,) = [json.loads(f.read_text()) for f in conf.glob("*manifest*.json")]
    assert manifest["budget_per_stream"]["epsilon"] == 1.0
    assert manifest["budget_per_person_all_streams"]["epsilon"] == 1.0


@pytest.mark.slow
def test_each_stream_states_the_bounds_and_spend_of_its_share(tmp_path):
    """With noise: two streams at ``max_streams_per_person: 2`` and epsilon 1 state, record for record, the bounds
    and the spend of a run configured with epsilon 0.5 (each stream's share; a pipeline that skipped the share
    would state epsilon 1's, larger spends and smaller bounds)."""
    (tmp_path / "in.jsonl").write_text("\n".join(_lines()) + "\n")
    runs = {}
    for name, privacy in (
        ("two", "epsilon: 1.0, max_streams_per_person: 2"),
        ("half", "epsilon: 0.5, max_streams_per_person: per_stream"),
    ):
        # no consistency projection: its stated bound adds the released |tau|, which depends on the noise drawn
        _run(_config(tmp_path, name, privacy, "every_ticks: 1, consistent: false"))
        recs = _records(tmp_path / name, "releases*.jsonl")
        runs[name] = {(r["stream"], r["tick"], r["query"]): (r["error_bound"], r["epsilon_spent"]) for r in recs}
    assert len(runs["two"]) == 2 * 10 * 2 and runs["two"].keys() == runs["half"].keys()
    assert runs["two"] == runs["half"]
    assert max(e for _, e in runs["two"].values()) == pytest.approx(0.5)
    assert sum(b > 0 for b, _ in runs["two"].values()) > 30  # stated bounds to compare
