"""A histogram whose cells are not declared (issue 33: ``domain: open``): the configuration (accepted, refused in
one line naming the key), the parse of a cell, the release with noise off and threshold 0 (every cell with a live
contributor released at the period it appears, exactly), the exact privacy loss on neighbours (a person who brings
cells nobody has, one who adds to existing cells) with twins that fail, and the published figures. A (stream,
cell) pair is a key of the open-key release (``docs/open_keys.md`` "Open histogram cells"); the Beam step on
such keys is ``tests/test_open_histogram_beam.py``."""

from __future__ import annotations

import copy
import json
import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipelines.config import ConfigError, load_config, parse_config
from pipelines.config.load import read_raw
from pipelines.config.open_keys import key_limit, open_settings, selection_params
from pipelines.open_keys import open_key
from pipelines.parse import MAX_CELL_TEXT, RecordParser, encode_detail
from pipelines.plan import main as plan_main
from transforms.core.contribution.loss import Draw, privacy_loss
from transforms.core.foundation.accounting import ApproxDP, PureDP, rho_for_approx
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.samplers import discrete_laplace_pmf
from transforms.core.selection import KeyLimit, OpenKeyRelease, PersonKeys, SelectionParams, selection_guarantee
from transforms.core.selection.candidate import select_coords

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "open_histogram.yaml"


def _raw(**query):
    raw = read_raw(CONFIG)
    raw["queries"] = [{**raw["queries"][0], **query}]
    return raw


def _error(raw) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    return str(e.value)


# -- configuration --------------------------------------------------------------------------------------------


def test_an_open_histogram_domain_is_accepted_and_keys_the_noise():
    cfg = load_config(CONFIG)
    s = open_settings(cfg)
    assert cfg.open_keys and not cfg.streams_config.open_keys and cfg.streams == ("app", "web")
    assert s == (("page", 1000, 2, 0.5, 1e-9, True))
    assert key_limit(cfg) == KeyLimit(2, 3, 3)
    other = parse_config(_raw(selection_share=0.25))
    assert other.release_digest() != cfg.release_digest()  # the settings key the noise
    # the query's legacy repr (part of every digest) shows nothing of the open settings
    assert "max_cells" not in cfg.queries[0].legacy_repr()


@pytest.mark.parametrize(
    "change, key",
    [
        ({"max_cells": 0}, "max_cells"),
        ({"max_cells": None}, "max_cells"),
        ({"max_cells_per_person": 1.5}, "max_cells_per_person"),
        ({"selection_share": 1.5}, "selection_share"),
        ({"failure": 2}, "failure"),
        ({"open_domain": True}, "open_domain"),
        ({"domain": ["page-00"]}, "max_cells"),  # the open settings without domain: open
    ],
)
def test_bad_open_cell_settings_are_one_line_naming_the_key(change, key):
    q = {k: v for k, v in change.items() if v is not None}
    raw = _raw(**q)
    for k, v in change.items():
        if v is None:
            del raw["queries"][0][k]
    msg = _error(raw)
    assert key in msg and "\n" not in msg


def test_what_an_open_histogram_needs_from_the_rest_is_one_line_naming_the_key():
    raw = _raw()
    raw["queries"] = [*raw["queries"], {"name": "n", "type": "count"}]
    assert "queries" in _error(raw)
    raw = _raw()
    raw["streams"] = {"field": "dev", "keys": "open", "max_keys": 10, "max_keys_per_person": 1}
    msg = _error(raw)
    assert "domain" in msg and "keys: open" in msg
    raw = _raw()
    raw["privacy"] = {"epsilon": 1.0, "unit": "update"}
    assert "privacy.unit" in _error(raw) and "max_cells_per_person" in _error(raw)
    raw = _raw()
    raw["privacy"] = {k: v for k, v in raw["privacy"].items() if k not in ("epsilon", "delta")} | {"rho": 0.5}
    assert "privacy.rho" in _error(raw)
    raw = _raw()
    raw["release"] = {"every_ticks": 2}
    assert "release.every_ticks" in _error(raw)


def test_a_refused_configuration_exits_2_with_one_line(tmp_path, capsys):
    raw = _raw(max_cells_per_person=0)
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert plan_main(["--config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "max_cells_per_person" in err and len(err.splitlines()) == 1


def test_declared_histograms_are_unchanged():
    cfg = load_config(ROOT / "configs" / "demo_person.yaml")
    hist = [q for q in cfg.queries if q.type == "histogram"]
    assert hist and not any(q.open_domain for q in hist) and not cfg.open_keys
    assert cfg.release_digest() == "ee3d0823eca03a69ec7cf0b8bb52e0e3"  # tests/test_configs.py's pin


# -- the cell of a record ---------------------------------------------------------------------------------------


def test_a_cell_is_the_text_of_the_field_or_a_dead_letter_reason():
    q = load_config(CONFIG).queries[0]
    assert encode_detail(q, {"page": "page-07"}) == ("page-07", None, False)
    assert encode_detail(q, {"page": 3}) == ("3", None, False)
    assert encode_detail(q, {"page": 3.0}) == ("3", None, False)  # CSV and JSON spell numbers differently
    assert encode_detail(q, {"other": 1})[1] == "missing_field"
    for bad in (True, None, float("nan"), float("inf"), 10**400, "", "x" * (MAX_CELL_TEXT + 1), [1], {"a": 1}):
        assert encode_detail(q, {"page": bad}) == (None, "bad_value", False)


def test_a_record_s_key_is_its_stream_and_cell():
    cfg = load_config(CONFIG)
    parser = RecordParser(cfg)
    line = json.dumps({"t": 5, "op": "insert", "id": "1-0", "dev": "web", "reader": 1, "item": {"page": "p"}})
    rec = parser.parse(line).record
    assert open_key(rec, True) == ("web", "p") and open_key(rec, False) == "web"


# -- noise off, threshold 0 ---------------------------------------------------------------------------------------


def _cell_stream(seed: int, periods: int, persons: int = 10, streams=("app", "web"), cells: int = 6, per: int = 7):
    """Random (person, Update) periods over (stream, cell) keys: inserts, upserts that move an entry to another
    cell (or stream), deletes; some updates invalid (unknown entries, a third cell)."""
    rnd = random.Random(seed)
    out = []
    for _ in range(periods):
        ups = []
        for _ in range(rnd.randrange(per)):
            person, e = f"p{rnd.randrange(persons)}", f"e{rnd.randrange(4)}"
            op = rnd.choice(("insert", "insert", "upsert", "delete"))
            item = None if op == "delete" else ((rnd.choice(streams), f"c{rnd.randrange(cells)}"),)
            ups.append((person, Update(op, e, item)))
        out.append(ups)
    return out


def _live_cells(stream, limit: KeyLimit):
    """Per period, the live entries of every (stream, cell) and the periods at which each first had a live
    contributor, from the person bound's own events (``PersonKeys``, the pipeline's first stage)."""
    pk, entries, live, first, per = PersonKeys(limit), {}, {}, {}, []
    for p, ups in enumerate(stream, 1):
        for key, d_live, d_entries in pk.decide_tick(p, ups)[2]:
            live[key] = live.get(key, 0) + d_live
            entries[key] = entries.get(key, 0) + d_entries
        for key, n in live.items():
            if n > 0:
                first.setdefault(key, p)
        per.append({k: v for k, v in entries.items()})
    return per, first


@pytest.mark.parametrize("seed", range(4))
def test_noise_off_threshold_zero_releases_every_live_cell_at_its_period_exactly(seed):
    limit = KeyLimit(2, 3, 3)
    stream = _cell_stream(seed, 16)
    per, first = _live_cells(stream, limit)
    rel = OpenKeyRelease(SelectionParams(PureDP(1.0), 2, horizon=16, threshold=0), limit, NoiseSource.disabled())
    selected_at = {}
    for p, ups in enumerate(stream, 1):
        out = rel.step(ups)
        for key in out.selected:
            selected_at[key] = p
        assert out.answers == {key: per[p - 1].get(key, 0) for key in selected_at}
        assert all(out.bounds[key] == 0 for key in out.answers)  # noise off: exact, and stated so
    assert selected_at == first and all(isinstance(k, tuple) and len(k) == 2 for k in first)


# -- exact privacy loss on neighbours ---------------------------------------------------------------------------

H, K, L, k = 6, 2, 3, 2
BUDGETS = [PureDP(1.0), ApproxDP(1.0, 1e-6)]  # pure eps is stated as (eps, failure = 1e-9)


def _base():
    base = [[] for _ in range(H)]
    people = (("p1", ("app", "A")), ("p2", ("app", "A")), ("p3", ("web", "A")), ("p4", ("web", "B")))
    for i, (person, cell) in enumerate(people):
        base[i % 3].append((person, Update("insert", f"{person}e", (cell,))))
    base[4].append(("p2", Update("delete", "p2e")))
    return base


def _cells_nobody_has():
    """The extra person brings K cells nobody has (one per stream), and tries a third (refused)."""
    extra = [[] for _ in range(H)]
    cells = [("app", "only"), ("web", "only"), ("app", "third")]
    for e in range(L):
        extra[e % 2].append(("X", Update("insert", f"x{e}", (cells[e],))))
        extra[H - 1].append(("X", Update("delete", f"x{e}")))  # every level of its tree moves by 2
    return extra


def _adds_to_existing_cells():
    """The extra person's entries in cells others have, moved between cells and streams by upserts."""
    extra = [[] for _ in range(H)]
    for e in range(L):
        extra[0].append(("X", Update("insert", f"x{e}", (("app", "A"),))))
        extra[2 + e].append(("X", Update("upsert", f"x{e}", (("web", "B"),))))
    return extra


NEIGHBOURS = {"cells nobody has": _cells_nobody_has, "adds to existing cells": _adds_to_existing_cells}


def _contributors(stream, limit):
    pk, out = PersonKeys(limit), {}
    for p, ups in enumerate(stream, 1):
        for key, d_live, _ in pk.decide_tick(p, ups)[2]:
            out.setdefault(key, {})
            out[key][p] = out[key].get(p, 0) + d_live
    return out


def _tree_draws(live: dict, keys, params: SelectionParams) -> dict:
    """Every node of every cell's selection tree (the ideal mechanism's draws, noise off: pre-noise values)."""
    out = {}
    for key in keys:
        ch = live.get(key, {})
        for lvl in range(params.levels):
            for j in range(1, ((H - 1) >> lvl) + 2):
                lo, hi = (j - 1) << lvl, j << lvl
                c = select_coords(key, lvl, j)
                v = sum(d for p, d in ch.items() if lo < p <= hi)
                out[c] = Draw(c, params.selection_noise, Fraction(params.node_param(lvl)), (v,))
    return out


def _tree_loss(extra, params, limit):
    a = _contributors([b + e for b, e in zip(_base(), extra)], limit)
    b = _contributors(_base(), limit)
    keys = sorted(set(a) | set(b), key=repr)
    return privacy_loss(_tree_draws(a, keys, params), _tree_draws(b, keys, params))


def _within(loss, params) -> bool:
    if params.selection_noise == "laplace":
        return loss.epsilon <= params.counter_budget.epsilon * (1 + 1e-9)
    return loss.rho <= rho_for_approx(params.counter_budget) * (1 + 1e-9)


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("neighbour", sorted(NEIGHBOURS))
def test_selection_trees_exact_loss_within_the_selection_budget(budget, neighbour):
    params, limit = SelectionParams(budget, K, horizon=H, test="tree"), KeyLimit(K, L, k)
    loss = _tree_loss(NEIGHBOURS[neighbour](), params, limit)
    assert loss.differing > 0 and _within(loss, params)
    stated = selection_guarantee(budget, params.selection_share, K, L, k, failure=params.failure)
    assert stated.delta == (1e-9 if isinstance(budget, PureDP) else budget.delta)


@pytest.mark.parametrize("budget", BUDGETS)
def test_selection_trees_twins_fail(budget):
    """A twin selecting with too little noise (the node noise of twice the budget) and a twin without the person's
    cell bound (2K cells let through) overspend the selection's budget."""
    params, limit = SelectionParams(budget, K, horizon=H, test="tree"), KeyLimit(K, L, k)
    thin = SelectionParams(type(budget)(*(2 * x if i == 0 else x for i, x in enumerate(budget.vector()))), K,
                           horizon=H, test="tree")  # fmt: skip
    assert not _within(_tree_loss(_cells_nobody_has(), thin, limit), params)
    assert not _within(_tree_loss(_cells_nobody_has(), params, KeyLimit(2 * K, L, k)), params)


def _dlap_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    q = math.exp(-1.0 / scale)
    x = np.asarray(x, dtype=float)
    return np.where(x >= 0, 1 - q ** (x + 1) / (1 + q), q ** (-x) / (1 + q))


def _svt_outcomes(params: SelectionParams, counts) -> np.ndarray:
    """P(the cell is selected first at period p), p = 1..H, then P(never): the sparse-vector test's exact law."""
    thr, query = params.svt_scales
    span = int(60 * thr) + 10
    rho = np.arange(-span, span + 1)
    w, alive, out = discrete_laplace_pmf(rho, thr), np.ones(2 * span + 1), []
    for p, c in enumerate(counts, 1):
        stay = _dlap_cdf(np.floor(params.threshold_at(p) + rho - c), query)
        out.append(float(np.sum(w * alive * (1 - stay))))
        alive = alive * stay
    return np.array(out + [float(np.sum(w * alive))])


def _svt_loss(extra, params, limit) -> float:
    """The largest loss over the cells of the neighbours' live-contributor sequences (each cell's test is
    separate; the person's at most K cells compose to K times this)."""
    a = _contributors([b + e for b, e in zip(_base(), extra)], limit)
    b = _contributors(_base(), limit)
    worst = 0.0
    for key in set(a) | set(b):
        seqs = [np.cumsum([c.get(p, 0) for p in range(1, H + 1)]) for c in (a.get(key, {}), b.get(key, {}))]
        pa, pb = (_svt_outcomes(params, s) for s in seqs)
        keep = (pa > 1e-300) & (pb > 1e-300)
        worst = max(worst, float(np.max(np.abs(np.log(pa[keep]) - np.log(pb[keep])))))
    return worst


@pytest.mark.parametrize("budget", [PureDP(8.0), ApproxDP(8.0, 1e-3)])
def test_sparse_vector_selection_of_cells_exact_loss_within_the_cell_budget(budget):
    """The default test (sparse vector, discrete Laplace, under both budget kinds): the exact law of the period at
    which each cell is first selected, on both neighbours, within a cell's share ``eps_sel / K``; a twin with
    half the noise fails. (A large epsilon keeps the threshold small enough for the exact sums.)"""
    params, limit = SelectionParams(budget, K, horizon=H, threshold=2), KeyLimit(K, L, k)
    assert params.selection_test == "svt"
    for make in NEIGHBOURS.values():
        assert 0 < _svt_loss(make(), params, limit) <= params.key_share * (1 + 1e-9)

    class Thin(SelectionParams):
        @property
        def svt_scales(self):
            t, q = super().svt_scales
            return t / 2, q / 2

    twin = Thin(budget, K, horizon=H, threshold=2)
    assert max(_svt_loss(make(), twin, limit) for make in NEIGHBOURS.values()) > twin.key_share


# -- the published figures -------------------------------------------------------------------------------------


def test_the_plan_states_the_open_domain_and_the_selection_cost_never_candidates(capsys):
    assert plan_main(["--config", str(CONFIG)]) == 0
    out = capsys.readouterr().out
    p = selection_params(load_config(CONFIG), 24)
    for words in ("cells of histogram 'views'", "domain: open", "cost epsilon 1, delta 5e-07", "max_cells: at most"):
        assert words in out
    assert f"threshold {p.threshold_at(1):.1f}" in out
    assert "candidate cells is operator data" in out


def test_a_run_states_the_open_domain_and_never_names_an_unselected_cell(tmp_path, capsys, monkeypatch):
    """The CLI on the bundled example: the summary and the manifest state the open domain and the selection's
    cost; every record names one released cell with its own bound; a cell never selected (the input has 70 or
    so (device, page) pairs) is in no file and no printed line; the number of candidates is printed nowhere."""
    from pipelines.release import main

    raw = copy.deepcopy(read_raw(CONFIG))
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out") + "/", "format": "jsonl"}]
    path = tmp_path / "open_histogram.yaml"
    path.write_text(yaml.safe_dump(raw))
    monkeypatch.setenv("DP_NOISE_KEY", bytes(range(32)).hex())
    assert main(["--config", str(path)]) == 0
    printed = capsys.readouterr()
    records = [json.loads(line) for f in sorted((tmp_path / "out").glob("releases*.jsonl")) for line in f.open()]
    assert records
    released = {(r["stream"], *r["estimate"]) for r in records}
    assert all(len(r["estimate"]) == 1 and r["error_bound"] > 0 and r["query"] == "views" for r in records)
    firsts = {}
    for r in records:
        key = (r["stream"], *r["estimate"])
        firsts[key] = min(firsts.get(key, 99), r["tick"])
    for key, t in firsts.items():  # every period from its selection to the end
        assert sorted(r["tick"] for r in records if (r["stream"], *r["estimate"]) == key) == list(range(t, 25))
    lines = map(json.loads, (ROOT / raw["source"]["path"]).open())
    cells = {(d["dev"], d["item"]["page"]) for d in lines if "item" in d}
    never = {c for _, c in cells - released} - {c for _, c in released}
    assert len(cells) > 2 * len(released) and never
    text = printed.out + printed.err
    for f in tmp_path.rglob("*"):
        if f.is_file() and f.suffix in (".jsonl", ".json", ".txt"):
            text += f.name + f.read_text()
    manifest = next(tmp_path.rglob("release_manifest.json")).read_text()
    assert "domain: open" in manifest and "cost epsilon 1" in manifest
    assert "domain: open" in printed.out
    for cell in never:
        assert f'"{cell}"' not in text and f"'{cell}'" not in text
    assert f" {len(cells)} " not in text.replace("\n", " ")


class _Metric:
    def __init__(self, name, value):
        self.key = type("K", (), {"metric": type("M", (), {"name": name})()})()
        self.committed = value


class _Result:
    """A finished run's metrics, as ``pipelines.summary`` reads them (counters of our namespace)."""

    def __init__(self, counts):
        self._counts = counts

    def metrics(self):
        counts = self._counts

        class _Q:
            def query(self, _filter=None):
                return {"counters": [_Metric(k, v) for k, v in counts.items()], "distributions": []}

        return _Q()


@pytest.mark.parametrize(
    "config,line", [("open_histogram.yaml", "max_cells reached: "), ("open_keys.yaml", "max_keys reached: ")]
)
def test_the_summary_names_the_cap_that_was_reached(config, line):
    """When the cap on released keys is reached the summary says which cap, with its configured value (an open
    histogram's is ``max_cells``, not the streams' ``max_keys``, which is unset there)."""
    from pipelines.summary import summary

    cfg = load_config(ROOT / "configs" / config)
    text = summary(_Result({"open_keys_max_keys_reached": 1}), {}, cfg, 1.0)
    cap = open_settings(cfg).max_keys
    assert f"{line}{cap} " in text and "None" not in text.split(line)[1].split("\n")[0]
    assert line not in summary(_Result({}), {}, cfg, 1.0)
