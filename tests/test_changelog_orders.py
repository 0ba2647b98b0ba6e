"""``transforms/core/families/changelog_orders.py``: the synthetic orders changelog (the bundled input of
``configs/changelog.yaml``) has the shape its docstring promises: every order starts with an insert, mutates in
the documented order and timing, keeps the constraint (at most ``k`` mutations, all within the window) unless it
is one of the planted violations, and the file in ``data/`` is the generator's output (issue 27: the module had
no test of its own)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from transforms.core.families.changelog_orders import DAY, STATUSES, generate, main, to_lines

ROOT = Path(__file__).resolve().parent.parent


def _by_order(records):
    out = defaultdict(list)
    for r in records:
        out[r["id"]].append(r)
    return out


def _violates(muts, k, window_days):
    return len(muts) > k or muts[-1]["time"] - muts[0]["time"] > window_days * DAY + 1e-3


@pytest.mark.parametrize(("k", "window_days", "violations"), [(4, 30.0, 0.0), (2, 2.0, 0.0), (4, 30.0, 0.2)])
def test_orders_have_the_documented_shape_and_keep_the_constraint_unless_planted(k, window_days, violations):
    days = 40.0
    recs = generate(orders=1500, days=days, seed=3, k=k, window_days=window_days, violations=violations)
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    assert [(r["time"], r["id"]) for r in recs] == sorted((r["time"], r["id"]) for r in recs)
    assert all(0.0 <= r["time"] < days * DAY for r in recs)
    orders = _by_order(recs)
    assert len(orders) == 1500 - sum(1 for n in range(1500) if f"o{n:07d}" not in orders) > 1400
    broken = cancelled = 0
    for muts in orders.values():
        first = muts[0]
        assert first["op"] == "insert" and first["item"]["status"] == "placed"
        amount = first["item"]["amount"]
        assert 5.0 <= amount <= 200.0 and round(amount, 2) == amount
        assert all("item" not in m for m in muts if m["op"] == "delete")
        assert all(m["op"] == "upsert" for m in muts[1:] if m["op"] != "delete")
        statuses = [m["item"]["status"] for m in muts if m["op"] != "delete"]
        bad = _violates(muts, k, window_days)
        broken += bad
        if not bad and violations == 0.0:  # a planted violation cut at the span's end looks like none
            assert statuses == list(STATUSES[: len(statuses)])
            assert all(
                m["item"]["amount"] == (0.0 if m["item"]["status"] == "returned" else amount)
                for m in muts[1:]
                if m["op"] != "delete"
            )
        if muts[-1]["op"] == "delete":
            cancelled += 1
            assert len(muts) == 2
            assert 0.02 * min(window_days, 3) * DAY - 1e-3 <= muts[1]["time"] - first["time"]
            assert muts[1]["time"] - first["time"] <= 0.4 * min(window_days, 3) * DAY + 1e-3
        elif len(muts) > 1 and not bad:
            assert 0.3 * DAY - 1e-3 <= muts[1]["time"] - first["time"] <= 3.0 * DAY + 1e-3  # shipped
    assert 0.08 < cancelled / len(orders) < 0.16  # 12% cancel
    if violations == 0.0:
        assert broken == 0
    else:  # a planted violation on an order that was not cancelled (the 88% of the orders): at most 0.2 * 0.88, fewer
        # where the late change falls past the span's end
        assert 0.05 < broken / len(orders) < 0.23


def test_full_orders_reach_delivered_and_some_are_returned_and_refunded():
    recs = generate(orders=1000, days=60.0, seed=5, violations=0.0)
    statuses = [[m["item"]["status"] for m in muts if m["op"] != "delete"] for muts in _by_order(recs).values()]
    full = sum(s[:3] == ["placed", "shipped", "delivered"] for s in statuses)
    assert 0.6 < full / len(statuses) < 0.85  # 88% shipped, 85% of those delivered: 75%
    returned = sum(s[-1] == "returned" for s in statuses)
    assert 0.02 < returned / len(statuses) < 0.1  # 8% of the delivered
    for muts in _by_order(recs).values():
        times = [m["time"] for m in muts]
        assert times == sorted(times)
        if len(muts) >= 3 and muts[2]["op"] == "upsert":
            assert 1.0 * DAY - 1e-3 <= muts[2]["time"] - muts[1]["time"] <= 7.0 * DAY + 1e-3  # delivered
        if len(muts) == 4:
            assert 0.5 * DAY - 1e-3 <= muts[3]["time"] - muts[2]["time"] <= 12.0 * DAY + 1e-3  # returned


def test_lines_are_json_and_the_bundled_file_is_the_generators_default_output(tmp_path, capsys):
    recs = generate(orders=20, days=10.0, seed=1)
    lines = to_lines(recs)
    assert [json.loads(x) for x in lines] == recs
    assert lines[0].startswith('{"time": ') and ', "op": "insert", "id": "o' in lines[0]
    out = tmp_path / "o.jsonl"
    assert main(["--out", str(out), "--orders", "20", "--days", "10", "--seed", "1"]) == 0
    assert out.read_text() == "\n".join(lines) + "\n"
    assert f"wrote {len(lines)} mutations to {out}" in capsys.readouterr().out
    bundled = (ROOT / "data" / "changelog_orders.jsonl").read_text()
    assert bundled == "\n".join(to_lines(generate())) + "\n"
