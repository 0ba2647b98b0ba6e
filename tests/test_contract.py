"""Contract tests over every registered mechanism (river's ``check_estimator``
style): whatever is in ``transforms.core.MECHANISMS`` must pass all of them.

* the registry entry is complete (docstring, proof note, options, query kinds);
* noise switched off gives exact answers on a random stream;
* versioned state (``to_state`` -> bytes -> ``from_state``) and pickling,
  taken mid-stream, continue exactly like the uninterrupted run;
* the ledger's charges equal the planned allocation exactly (the plan is
  written out here from the docs' formulas, not read from the code), and every
  released piece of the data structure was charged;
* no noise coordinate is ever drawn twice (a spy NoiseSource), in memory and
  through Beam, bounded and streaming;
* the Beam transform releases exactly what the in-memory mechanism releases.

Broken twins (noise coordinates without the round or the level, a skipped
charge, restarts paid at round 1's share, the partitioning charged twice its
share) must fail these checks.
"""

from __future__ import annotations

import math
import pickle
from collections import Counter
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER

from transforms.core import (
    MECHANISMS,
    QUERY_KINDS,
    ZCDP,
    ApproxDP,
    ContinualRelease,
    DynamicConfig,
    NoiseSource,
    PureDP,
    QuerySet,
    ReleaseIdentity,
    Update,
)
from transforms.core.continual.segmented import SegmentedRelease
from transforms.core.foundation.accounting import BudgetExceededError, as_vector
from transforms.core.foundation.state import decode, encode
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, StreamSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = bytes(range(32))
REL = ReleaseIdentity("contract-release")
# the update-stream checks below run over the mechanisms that take updates; a
# report collector (input_kind "reports", trust "local": randomized_response)
# gets the analogous checks at the end of this file
NAMES = sorted(n for n, spec in MECHANISMS.items() if spec.input_kind == "updates")
REPORT_NAMES = sorted(n for n, spec in MECHANISMS.items() if spec.input_kind == "reports")
QUERIES = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("lin", "linear", domain_size=3, matrix=((0.5, 0.25, 1.0), (1.0, 0.0, 0.75))),
)
BUDGETS = {
    "pure-tuned": (PureDP(4.0), "tuned"),
    "pure-paper": (PureDP(4.0), "paper"),
    "zcdp": (ZCDP(2.0), "tuned"),
    "approx": (ApproxDP(4.0, 1e-6), "tuned"),
    "restarts": (PureDP(200.0), "tuned"),  # noise small enough that nodes restart (grow_then_shrink)
    # the tight profile (fully_dynamic only): count sets reuse n_hat, best node counters
    "pure-tight": (PureDP(4.0), "tight"),
    "zcdp-tight": (ZCDP(2.0), "tight"),
    "restarts-tight": (PureDP(200.0), "tight"),
}
OPTIONS = {
    "continual_count": {"counter": "honaker", "horizon": 200},
    # growing databases: small starting sizes so that the short workloads re-run often
    "bb_scheduler": {"n0": 40, "eta": 0.25},
    "bb_improver": {"n0": 40, "step": 40},
    "pmwg": {"n0": 40, "eta": 0.1},
    # changelog releases: a fixed HDCR shape, and an SWCR derived from an HDCR (the direct one: test_changelog.py)
    "hdcr": {"branching": 3, "height": 4},
    "swcr": {"window": 5, "method": "hdcr", "branching": 2},
}


def options_for(name, **over):
    return MECHANISMS[name].options(**{**OPTIONS.get(name, {}), **over})


def config_for(budget_name, queries=QUERIES, **kw):
    budget, profile = BUDGETS[budget_name]
    return DynamicConfig(queries, budget, profile=profile, **kw)


def applicable(name, budget_name):
    if "tight" in budget_name:  # a fully-dynamic profile; the others ignore it
        return name == "fully_dynamic"
    return not (name == "continual_count" and budget_name == "pure-paper")


CASES = [(n, b) for n in NAMES for b in BUDGETS if applicable(n, b) and not b.startswith("restarts")]
RESTARTS = [("fully_dynamic", "restarts"), ("fully_dynamic", "restarts-tight")]


def workload(name, ticks=80, seed=0, per_tick=(0, 4), churn=0.45):
    """Random updates by tick, valid for the mechanism (inserts only when it
    takes no deletions); items are (count cell, histogram cell, linear cell)."""
    rng = np.random.default_rng(seed)
    deletions = MECHANISMS[name].deletions_allowed
    live, out, k = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.integers(per_tick[0], per_tick[1] + 1))):
            item = (0, int(rng.integers(4)), int(rng.integers(3)))
            if deletions and live and rng.random() < churn:
                eid = live[int(rng.integers(len(live)))]
                if rng.random() < 0.3:
                    ups.append(Update("upsert", eid, item))
                else:
                    live.remove(eid)
                    ups.append(Update("delete", eid))
            else:
                eid = f"e{k}"
                k += 1
                live.append(eid)
                ups.append(Update("insert", eid, item))
        out.append((tick, ups))
    return out


def grow_then_shrink(name, ticks=120, seed=0):
    """Many insertions, then most of the data deleted: nodes of the fully-dynamic
    tree restart and halt (insertions only for insertion-only mechanisms)."""
    rng = np.random.default_rng(seed)
    deletions = MECHANISMS[name].deletions_allowed
    live, out, k = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        if tick <= ticks // 3 or not deletions:
            for _ in range(40):
                ups.append(Update("insert", f"e{k}", (0, int(rng.integers(4)), int(rng.integers(3)))))
                live.append(f"e{k}")
                k += 1
        else:
            for _ in range(min(len(live), 25)):
                ups.append(Update("delete", live.pop(int(rng.integers(len(live))))))
        out.append((tick, ups))
    return out


def run(core, batches, noise):
    results = [core.process_tick(t, ups, noise) for t, ups in batches]
    return results


def answers(results):
    return [
        (a.stream, a.tick, a.segment, a.query, a.estimate.tolist(), a.error_bound, as_vector(a.spent))
        for r in results
        for a in r.answers
    ]


# ---------------------------------------------------------------------------
# the registry entry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_registry_entry_is_complete(name):
    spec = MECHANISMS[name]
    cls = spec.core_cls
    assert issubclass(cls, ContinualRelease) and cls.name == name
    doc = cls.__doc__ or ""
    assert len(doc.split()) >= 20 and ("neighbour" in doc.lower() or "privacy" in doc.lower()), doc
    assert spec.neighbours and spec.summary and set(spec.query_kinds) <= set(QUERY_KINDS)
    proof = ROOT / spec.proof
    assert proof.is_file() and (name in proof.read_text() or cls.__name__ in proof.read_text()), spec.proof
    spec.options_cls()  # defaults are valid (or raise only for settings that need a value)
    with pytest.raises((TypeError, ValueError)):
        spec.options(no_such_option=1)


# ---------------------------------------------------------------------------
# noise off: exact
# ---------------------------------------------------------------------------


def truth(batches, upto):
    live = {}
    for tick, ups in batches:
        if tick > upto:
            break
        for u in ups:
            if u.op == "delete":
                live.pop(u.entry_id, None)
            else:
                live[u.entry_id] = u.item
    items = list(live.values())
    hist = np.bincount([i[1] for i in items], minlength=4)
    lin_hist = np.bincount([i[2] for i in items], minlength=3)
    lin = np.asarray(QUERIES[2].matrix) @ lin_hist
    return {"n": [float(len(items))], "h": hist.astype(float).tolist(), "lin": lin.tolist()}


@pytest.mark.parametrize("name,budget", CASES)
def test_noise_off_answers_are_exact(name, budget):
    batches = workload(name, seed=1)
    core = MECHANISMS[name].core_cls(config_for(budget), stream="s", options=options_for(name))
    released = answers(run(core, batches, NoiseSource.disabled()))
    released += answers([core.advance(2000, NoiseSource.disabled())])
    assert len({r[1] for r in released}) >= 3
    window = getattr(core, "window_ticks", None)  # swcr: each answer is the change over the last window
    for _, tick, _, q, est, bound, _ in released:
        expect = truth(batches, tick)[q]
        if window:
            expect = (np.asarray(expect) - np.asarray(truth(batches, tick - window)[q])).tolist()
        assert est == pytest.approx(expect, abs=1e-6), (tick, q)
        assert bound == 0


# ---------------------------------------------------------------------------
# state: versioned round trips and pickling
# ---------------------------------------------------------------------------


def _through_state(core, name, config, options, end_tick=None):
    data = encode(core.to_state())
    assert isinstance(data, bytes)
    return MECHANISMS[name].core_cls.from_state(config, decode(data), options=options, end_tick=end_tick)


@pytest.mark.parametrize("name,budget", CASES)
@pytest.mark.parametrize("how", ["state", "pickle"])
def test_interrupted_run_continues_identically(name, budget, how):
    """Interrupt the run at three points, restore, continue: the releases,
    the node outputs, the spend and the schedule are those of the
    uninterrupted run."""
    config, options = config_for(budget), options_for(name)
    cls = MECHANISMS[name].core_cls
    noise = NoiseSource(KEY).for_release(REL)
    batches = workload(name, ticks=90, seed=2)
    whole = cls(config, stream="s", emit_nodes=True, options=options, end_tick=400)
    pieces = cls(config, stream="s", emit_nodes=True, options=options, end_tick=400)
    got_whole, got_pieces = [], []
    for i, (t, ups) in enumerate(batches):
        got_whole += answers([whole.process_tick(t, ups, noise)])
        got_pieces += answers([pieces.process_tick(t, ups, noise)])
        if i in (5, 30, 70):
            if how == "state":
                registry = pieces.registry  # the in-memory registry is part of the state too
                pieces = _through_state(pieces, name, config, options, end_tick=400)
                assert pieces.registry.entries == registry.entries
            else:
                pieces = pickle.loads(pickle.dumps(pieces))
        assert pieces.next_wake == whole.next_wake and pieces.finished == whole.finished
        assert as_vector(pieces.spent) == as_vector(whole.spent)
        assert [vars(n) | {"values": n.values.tolist()} for n in pieces.drain_node_outputs()] == [
            vars(n) | {"values": n.values.tolist()} for n in whole.drain_node_outputs()
        ]
    got_whole += answers(whole.run_to_end(noise))
    got_pieces += answers(_through_state(pieces, name, config, options, end_tick=400).run_to_end(noise))
    assert got_pieces == got_whole and got_whole


def test_state_refuses_another_configuration_or_mechanism():
    from transforms.core.foundation.state import StateError

    cls = MECHANISMS["fully_dynamic"].core_cls
    core = cls(config_for("pure-tuned"), stream="s")
    state = core.to_state()
    with pytest.raises(StateError, match="another configuration"):
        cls.from_state(config_for("zcdp"), state)
    with pytest.raises(StateError, match="cannot restore"):
        MECHANISMS["two_stream_baseline"].core_cls.from_state(config_for("pure-tuned"), state)
    with pytest.raises(StateError, match="newer than this library"):
        cls.from_state(config_for("pure-tuned"), {**state, "schema": 99})


# ---------------------------------------------------------------------------
# the ledger follows the plan
# ---------------------------------------------------------------------------

PI2 = math.pi**2


def _zeta(s):
    from scipy.special import zeta  # an independent implementation

    return float(zeta(s))


def _scale(b, w_eps, w_delta=None):
    """The budget ``b`` with its eps (or rho) times w_eps and delta times w_delta."""
    w_delta = w_eps if w_delta is None else w_delta
    if isinstance(b, ZCDP):
        return ZCDP(b.rho * w_eps)
    if isinstance(b, ApproxDP):
        return ApproxDP(b.epsilon * w_eps, b.delta * w_delta)
    return PureDP(b.epsilon * w_eps)


def _pure_share(b, w):
    """The n_hat share: pure (Laplace) unless the ledger is zCDP."""
    return ZCDP(b.rho * w) if isinstance(b, ZCDP) else PureDP(b.epsilon * w)


def _counter_cost(kind, budget, coords, horizon=None, noise_kind="laplace"):
    """Cost of one raw counter release at ``coords`` (docs/counters.md):
    binary tree: budget / (floor(log2 T) + 1) per node; Chan-Shi-Song:
    budget/2 per finished range, budget/2 / (i + 1) per node of range i's tree;
    k-ary tree: budget / (number of levels) per node; a factorization counter
    (square root, BLT): the whole budget once, for the whole stream."""
    if kind in ("sqrt_factorization", "blt"):
        assert coords[-1] == kind
        return budget
    if kind == "kary_tree":
        from transforms.core.counters.factorization import kary_radices

        radices = kary_radices(horizon, 2 if noise_kind == "laplace" else 1)
        return _scale(budget, 1.0 / (len(radices) + 1))
    if "range" in coords:
        r = coords[coords.index("range") + 1]
        if "node" in coords:
            return _scale(budget, 0.5 / (r + 1))
        return _scale(budget, 0.5)
    if kind in ("binary_tree", "honaker"):
        return _scale(budget, 1.0 / horizon.bit_length())
    if kind == "naive_prefix":
        return _scale(budget, 1.0 / horizon)
    return budget  # naive_increments


class Plan:
    """The planned cost of every release, from the docs' formulas."""

    def __init__(self, name, config, options, node_round_starts):
        self.name, self.config, self.options = name, config, options
        self.starts = node_round_starts  # (node, round) -> segment at which the round started
        L = config.ledger_budget
        self.L = L
        self.k = len(config.queries)
        self.f = 0.5 if config.profile == "paper" else 0.1
        if isinstance(L, ZCDP):
            self.svt = ZCDP(self.f * L.rho)  # SVT is eps_p-DP with eps_p = sqrt(2 f rho): (eps_p^2/2)-zCDP
        elif isinstance(L, ApproxDP):
            self.svt = ApproxDP(self.f * L.epsilon, 0.0)
        else:
            self.svt = PureDP(self.f * L.epsilon)
        self.tree = _scale(L, 1 - self.f, 1.0)

    def level_weight(self, level):
        if self.config.profile == "paper":
            return 6 / (PI2 * level**2)
        if self.config.max_segments:
            return 1 / self.config.max_segments.bit_length()
        return 1 / (_zeta(1.5) * level**1.5)

    def round_weight(self, r):
        return 6 / (PI2 * r * r) if self.config.profile == "paper" else 1 / (_zeta(3.0) * r**3)

    def cost(self, coords):
        c = coords[1:]  # drop the stream
        if c[0] == "svt":
            return self.svt
        qi = {q.name: i for i, q in enumerate(self.config.queries)}
        if self.name == "fully_dynamic":
            return self._fully_dynamic(c)
        if self.name in ("bb_scheduler", "bb_improver", "pmwg"):
            return self._growing(c)
        if self.name in ("dcr", "hdcr", "swcr"):
            return self._changelog(c)
        if self.name in ("insertion_only", "two_stream_baseline"):
            share = _scale(self.tree, 1 / self.k)
            assert c[0] in ("ins", "del") and c[1] in qi
            return _counter_cost("infinite", share, c)
        share = _scale(self.L, 1 / self.k)
        if self.name == "net_change":
            from transforms.core.continual.net_change import choose_counter

            assert c[0] == "net" and c[1] in qi
            kind = self.options.counter
            kind = choose_counter(self.config.noise_kind, self.options.horizon) if kind == "auto" else kind
            return _counter_cost(kind, share, c, self.options.horizon, self.config.noise_kind)
        assert c[0] == "count" and c[1] in qi
        return _counter_cost(self.options.counter, share, c, self.options.horizon, self.config.noise_kind)

    def _changelog(self, c):
        """docs/changelog.md: the configured budget per query set is F node
        budgets (F: the nodes one entry can affect), and a node of layer i is
        charged its F_i-fold composition. At update level (one mutation) F_i
        is 1 per layer: every node of an h-layer structure costs share / h; a
        direct SWCR window is ceil(W/P) node budgets: the whole share."""
        qi = {q.name for q in self.config.queries}
        assert c[0] == self.name and c[1] in qi, c
        share = _scale(self.L, 1 / self.k)
        if c[2] == "window":
            assert self.name == "swcr" and self.options.method != "hdcr" and len(c) == 4
            return share
        assert c[2] == "layer" and c[4] == "node" and len(c) == 6, c
        if self.name == "dcr":
            h = 1
        elif self.name == "hdcr":
            h = self.options.height
        else:  # Thm 4.7: h = ceil(log_c(W / gcd(W, P)))
            h = math.ceil(math.log(self.options.window / math.gcd(self.options.window, self.options.period), 2))
        assert 0 <= c[3] < h
        return _scale(share, 1 / h)

    def _growing(self, c):
        """docs/growing.md: the growth tracker gets growth_fraction of the budget
        as a pure step (each epoch, parallel); re-run i of bb_scheduler
        (q - 1) / q^(i + 1) of the rest, q = 1 + eta (or (1 + eta)^2 for rho);
        re-run j of bb_improver 1 / (zeta(1 + decay) j^(1 + decay)); a round of pmwg in
        phase p 1 / (zeta(1 + decay) (p + 1)^(1 + decay)) / hard_per_phase; split evenly
        over the query sets."""
        qi = {q.name: i for i, q in enumerate(self.config.queries)}
        f = self.options.growth_fraction
        L = self.L
        if c[0] == "growth":
            assert len(c) == 2
            return _pure_share(L, f) if not isinstance(L, ApproxDP) else ApproxDP(f * L.epsilon, 0.0)
        rest = _scale(L, 1 - f, 1.0)
        if self.name == "pmwg":  # round r of phase p: w(p + 1) / hard_per_phase of the set's share
            assert c[0] == "pmwg" and c[1] in qi and c[2] == "phase" and c[4] == "round" and len(c) == 6
            p, r, decay = c[3], c[5], self.options.decay
            assert 1 <= r <= self.options.hard_per_phase
            w = 1 / (_zeta(1 + decay) * (p + 1) ** (1 + decay)) / self.options.hard_per_phase / self.k
            return _pure_share(rest, w) if not isinstance(rest, ApproxDP) else ApproxDP(w * rest.epsilon, 0.0)
        assert c[0] == "rerun" and c[2] in qi and len(c) == 3
        i = c[1]
        if self.name == "bb_scheduler":
            q = (1 + self.options.eta) ** (2 if isinstance(L, ZCDP) else 1)
            w = (q - 1) / q ** (i + 1)
        else:
            w = 1 / (_zeta(1 + self.options.decay) * (i + 1) ** (1 + self.options.decay))
        return _scale(rest, w / self.k)

    def _fully_dynamic(self, c):
        assert c[:2] == ("tree", "node") and c[3] == "round"
        i, r = c[2], c[4]
        level = (i & -i).bit_length()
        paper = self.config.profile == "paper"
        tight = self.config.profile == "tight"
        node = _scale(self.tree, self.level_weight(level))
        b_r = _scale(node, self.round_weight(r))
        we = (0.25,) * 4 if paper else (0.1, 0.4, 0.4, 0.1)
        wd = (0.0, 1 / 3, 1 / 3, 1 / 3) if paper else (0.0, 0.4, 0.4, 0.2)
        horizon = (i & -i) - 1
        kind, rest = c[5], c[6:]
        if not paper and horizon == 0:  # a leaf releases its static answers only
            assert kind == "static"
            return _scale(b_r, 1 / self.k)
        # tight: the count set ("n") is answered from n_hat and the deletion-count
        # counter; it releases nothing of its own, the other sets split its share
        # (n_hat and the deletion-count counter take the shares it would have had)
        counts = [q.name for q in self.config.queries if q.kind == "count"] if tight else []
        c_k = len(counts) / self.k
        if kind in ("static", "del_query"):
            assert rest[0] not in counts, ("a count set released on its own in the tight profile", c)
        if kind == "n_hat":
            return _pure_share(b_r, we[0] + c_k * we[1])
        if kind == "static":
            return _scale(b_r, we[1] / self.k, wd[1] / self.k)
        remaining = horizon - (self.starts[(i, r)] - i)
        if kind == "del_query":
            budget = _scale(b_r, we[2] / self.k, wd[2] / self.k)
            rest = rest[1:]
        else:
            assert kind == "del_count"
            budget = _scale(b_r, we[3] + c_k * we[2], wd[3] + c_k * wd[2])
        if tight:  # the best counter over the node's lifetime rounded up to 2^k - 1
            h = (1 << remaining.bit_length()) - 1
            gauss = self.config.noise_kind == "gaussian"
            return _counter_cost(
                "sqrt_factorization" if gauss else "kary_tree", budget, rest, h, self.config.noise_kind
            )
        return _counter_cost("infinite" if paper else "binary_tree", budget, rest, remaining)


def _close(a, b):
    va, vb = as_vector(a), as_vector(b)
    return len(va) == len(vb) and all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for x, y in zip(va, vb))


def check_ledger_plan(name, budget, ticks=120, seed=3):
    config, options = config_for(budget), options_for(name)
    top = MECHANISMS[name].core_cls(config, stream="s", emit_nodes=True, options=options)
    parts = getattr(top, "parts", [top])  # auto: every part keeps its own ledger
    for core in parts:
        core.ledger.keep_records = True
    noise = NoiseSource(KEY).for_release(REL)
    batches = grow_then_shrink(name, ticks=ticks, seed=seed)
    run(top, batches, noise)
    segmented = all(isinstance(core, SegmentedRelease) for core in parts)
    top.advance(70_000 if segmented else ticks + 40, noise)  # per-tick mechanisms: a few more ticks
    nodes = top.drain_node_outputs()
    starts = {(n.node, n.round): n.segment for n in nodes if n.kind == "n_hat"}
    for n in nodes:  # leaves release only their static answers
        if n.kind == "static":
            starts.setdefault((n.node, n.round), n.segment)
    records = []
    for core in parts:
        if name == "auto":  # each part's share of the configured budget is its share of the query sets
            k = len(core.config.queries) / len(config.queries)
            assert _close(core.config.budget, _scale(config.budget, k)), (core.name, core.config.budget)
        plan = Plan(core.name, core.config, core.options, starts)
        assert core.ledger.records
        for rec in core.ledger.records:
            expect = plan.cost(rec.coordinates)
            assert _close(rec.cost, expect), (rec.coordinates, rec.cost, expect)
        records += core.ledger.records
    # every released piece of the data structure was charged, at its coordinates
    charged = Counter(tuple(r.coordinates) for r in records)
    for n in nodes:
        if n.kind in ("static", "n_hat", "deletion_counter"):
            coords = tuple(n.coordinates)
            if "step" in coords:  # a factorization counter: one charge, at its first step, for the stream
                coords = coords[: coords.index("step")]
            assert charged[coords] >= 1, ("released without a charge", n.coordinates)
    spent, cap = as_vector(top.spent), as_vector(top.config.ledger_budget)
    assert all(s <= c * (1 + 1e-12) for s, c in zip(spent, cap))
    return records, nodes


@pytest.mark.parametrize("name,budget", CASES + RESTARTS)
def test_ledger_charges_equal_the_plan(name, budget):
    records, nodes = check_ledger_plan(name, budget)
    if budget.startswith("restarts"):
        rounds = {(n.node, n.round) for n in nodes if n.kind in ("n_hat", "static")}
        assert any(r > 1 for _, r in rounds), "the workload must make nodes restart"


def test_entry_unit_through_the_pipeline_config_spends_the_group_share(tmp_path):
    """unit: entry with k mutations: the ledger's cap is the update-level budget
    target / (2k - 1), so the stated entry-level guarantee is the target (the
    review found a planted bug giving the entry unit the full budget)."""
    import yaml

    from pipelines.config import parse_config

    raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    raw["privacy"].update(unit="entry", max_mutations_per_entry=3, epsilon=2.5)
    cfg = parse_config(raw).dynamic_config()
    assert cfg.ledger_budget == PureDP(0.5) and cfg.max_mutations == 3
    core = MECHANISMS["fully_dynamic"].core_cls(cfg)
    assert core.ledger.budget == PureDP(0.5)


@pytest.mark.parametrize(
    "twin",
    ["restart_at_round_one_share", "skipped_static_charge", "partition_charged_twice"],
)
def test_ledger_plan_catches_broken_allocations(twin, monkeypatch):
    from transforms.core.config import DynamicConfig as DC
    from transforms.core.continual import fully_dynamic
    from transforms.core.foundation import accounting

    if twin == "restart_at_round_one_share":
        orig = fully_dynamic._Node._round_budgets

        def first_round(self, owner):
            r, self.round = self.round, 1
            try:
                return orig(self, owner)
            finally:
                self.round = r

        monkeypatch.setattr(fully_dynamic._Node, "_round_budgets", first_round)
    elif twin == "skipped_static_charge":
        orig = accounting.Scope.charge

        def skip_static(self, cost, coordinates=()):
            if "static" in coordinates:
                return None
            return orig(self, cost, coordinates)

        monkeypatch.setattr(accounting.Scope, "charge", skip_static)
    else:
        orig = DC.split

        def twice(self):
            eps_p, tree = orig(self)
            return (eps_p * math.sqrt(2), tree) if isinstance(self.ledger_budget, ZCDP) else (2 * eps_p, tree)

        monkeypatch.setattr(DC, "split", twice)
    with pytest.raises(AssertionError):
        budget = {"partition_charged_twice": "zcdp", "restart_at_round_one_share": "restarts"}.get(twin, "pure-paper")
        check_ledger_plan("fully_dynamic", budget)


# ---------------------------------------------------------------------------
# no noise coordinate is ever drawn twice
# ---------------------------------------------------------------------------

_DRAWN: list = []


class SpyNoise(NoiseSource):
    """Records every coordinate a stream is requested at (and the release)."""

    def stream(self, *coords):
        _DRAWN.append((getattr(self.release, "release_id", None),) + tuple(coords))
        return super().stream(*coords)

    def for_release(self, release):
        out = super().for_release(release)
        spy = SpyNoise(out._key)
        spy.release = release
        return spy


def check_no_repeated_coordinates(name, budget="pure-paper", ticks=120):
    _DRAWN.clear()
    noise = SpyNoise(KEY).for_release(REL)
    config, options = config_for(budget), options_for(name)
    for stream in ("a", "b"):
        core = MECHANISMS[name].core_cls(config, stream=stream, options=options)
        run(core, grow_then_shrink(name, ticks=ticks, seed=4), noise)
        parts = getattr(core, "parts", [core])
        core.advance(70_000 if all(isinstance(p, SegmentedRelease) for p in parts) else ticks + 40, noise)
    repeated = [c for c, n in Counter(_DRAWN).items() if n > 1]
    assert _DRAWN and not repeated, f"noise drawn twice at {repeated[:3]}"


@pytest.mark.parametrize("name,budget", CASES + RESTARTS)
def test_noise_coordinates_never_repeat_in_memory(name, budget):
    check_no_repeated_coordinates(name, budget)


def test_noise_spy_catches_coordinates_without_the_round(monkeypatch):
    from transforms.core.continual import fully_dynamic

    monkeypatch.setattr(fully_dynamic._Node, "coords", property(lambda self: ("tree", "node", self.index, "round", 1)))
    with pytest.raises(AssertionError, match="noise drawn twice"):
        check_no_repeated_coordinates("fully_dynamic", "restarts")


def test_noise_spy_catches_tree_coordinates_without_the_level(monkeypatch):
    from transforms.core import counters

    orig = counters.ContinualCounter._release

    def no_level(self, hist, budget, scope, noise, *coord):
        if coord and coord[0] == "node":
            coord = (coord[0], coord[2])
        return orig(self, hist, budget, scope, noise, *coord)

    monkeypatch.setattr(counters.ContinualCounter, "_release", no_level)
    with pytest.raises(AssertionError, match="noise drawn twice"):
        check_no_repeated_coordinates("two_stream_baseline")


# ---------------------------------------------------------------------------
# Beam releases exactly what the mechanism releases
# ---------------------------------------------------------------------------


def _records(name, ticks=40, seed=5):
    recs = []
    for tick, ups in workload(name, ticks=ticks, seed=seed):
        for j, u in enumerate(ups):
            recs.append(UpdateRecord(tick - 0.5, u.op, u.entry_id, u.item, "a", j))
    return recs


def _in_memory(name, config, options, spec, records, transform):
    noise = NoiseSource(KEY).for_release(transform.release)
    out = []
    for stream in spec.streams:
        core = MECHANISMS[name].core_cls(config, stream=stream, options=options, end_tick=spec.end_tick)
        by_tick = {}
        for r in sorted((r for r in records if r.stream == stream), key=lambda r: (spec.tick_of(r.event_time), r.seq)):
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        results = [core.process_tick(t, ups, noise) for t, ups in sorted(by_tick.items())]
        results += core.run_to_end(noise)
        out += [(a.stream, a.tick, a.query, tuple(float(x) for x in a.estimate)) for r in results for a in r.answers]
    return sorted(out)


def _streaming():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("path", ["bounded", "streaming"])
def test_beam_transform_equals_the_mechanism(name, path):
    config, options = config_for("pure-tuned"), options_for(name)
    spec = StreamSpec(streams=("a", "idle"), tick_seconds=1.0, end_time=60.0)
    records = _records(name)
    t = ReleaseContinually(name, config, spec, NoiseKey.fixed(KEY.hex()), options=options, release=REL)
    expect = _in_memory(name, config, options, spec, records, t)
    assert any(e[0] == "idle" for e in expect) and any(e[0] == "a" for e in expect)
    opts = _streaming() if path == "streaming" else PipelineOptions(runner=FNAPI_RUNNER)
    with TestPipeline(options=opts) as p:
        if path == "streaming":
            ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
            wm = 0.0
            while wm < 300:
                wm += 0.5 if wm < 70 else 20.0
                ts = ts.advance_watermark_to(wm)
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(records) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        out = src | t
        got = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.query, a.estimate))
        assert_that(got, equal_to(expect))


# ---------------------------------------------------------------------------
# a finished mechanism stops cleanly
# ---------------------------------------------------------------------------


def test_budget_exhaustion_finishes_cleanly():
    """A ledger refusal mid-call finishes the mechanism (``budget_exhausted``):
    no exception, no further wake, nothing released later."""
    core = MECHANISMS["two_stream_baseline"].core_cls(config_for("pure-tuned"), stream="s")
    noise = NoiseSource(KEY).for_release(REL)
    core.process_tick(1, [Update("insert", "x", (0, 1, 2))], noise)
    core.ledger._cap = tuple(x * 0 for x in core.ledger._cap)  # nothing left to spend
    res = core.advance(1000, noise)
    assert res.events and res.events[-1][1] == "budget_exhausted" and core.finished and core.next_wake is None
    assert not core.advance(10**6, noise).answers
    with pytest.raises(BudgetExceededError):  # the ledger itself still refuses loudly
        core.ledger.charge(PureDP(1.0))


def _horizon_inputs():
    """Stream ``busy`` closes a segment at almost every tick (its sparse vector
    fires); ``quiet`` has one update and closes only at the deadlines 2, 4, 16."""
    busy = [UpdateRecord(t - 0.5, "insert", f"b{t}-{j}", (0,), "busy", j) for t in range(1, 12) for j in range(60)]
    quiet = [UpdateRecord(0.5, "insert", "q", (0,), "quiet", 0)]
    return busy + quiet


def _horizon_transform():
    config = DynamicConfig(QUERIES[:1], PureDP(10.0))
    spec = StreamSpec(streams=("busy", "quiet"), tick_seconds=1.0, end_time=40.0)
    return ReleaseContinually(
        "fully_dynamic", config, spec, NoiseKey.fixed(KEY.hex()), options={"horizon": 3}, release=REL
    )


def _check_horizon(releases):
    busy = sorted(t for s, t in releases if s == "busy")
    quiet = sorted(t for s, t in releases if s == "quiet")
    assert len(busy) == 3 and busy[-1] <= 6, busy  # horizon reached early: no more releases
    assert quiet == [2, 4, 16], quiet  # the other stream goes on, to its own horizon


def test_horizon_finishes_cleanly_streaming():
    ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in _horizon_inputs()])
    wm = 0.0
    while wm < 60:
        wm += 0.25
        ts = ts.advance_watermark_to(wm)
    with TestPipeline(options=_streaming()) as p:
        out = p | ts.advance_watermark_to_infinity() | _horizon_transform()
        got = out["answers"] | beam.Map(lambda a: (a.stream, a.tick))
        assert_that(got, _check_horizon)
        assert_that(out["dead_letters"], equal_to([]), label="NoDead")


def test_horizon_finishes_cleanly_bounded():
    p = TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER))
    out = (
        p
        | beam.Create(_horizon_inputs())
        | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        | _horizon_transform()
    )
    got = out["answers"] | beam.Map(lambda a: (a.stream, a.tick))
    assert_that(got, _check_horizon)
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    assert counters["horizon_reached"] == 2  # both streams, each once


# ---------------------------------------------------------------------------
# the noise spy through Beam: bounded and streaming
# ---------------------------------------------------------------------------


def _spy_key(monkeypatch):
    monkeypatch.setattr(NoiseKey, "load", lambda self: SpyNoise(KEY))


@pytest.mark.parametrize(
    "name,path", [("fully_dynamic", "bounded"), ("two_stream_baseline", "bounded"), ("fully_dynamic", "streaming")]
)
def test_noise_coordinates_never_repeat_through_beam(name, path, monkeypatch):
    """Every coordinate the pipeline's workers request (in-process runners, so
    the spy sees them all): none twice, over two streams and a whole run."""
    _spy_key(monkeypatch)
    _DRAWN.clear()
    config, options = config_for("restarts"), options_for(name)
    spec = StreamSpec(streams=("a", "b"), tick_seconds=1.0, end_time=40.0)
    records = []
    for stream in ("a", "b"):
        for tick, ups in grow_then_shrink(name, ticks=30, seed=7):
            records += [UpdateRecord(tick - 0.5, u.op, u.entry_id, u.item, stream, j) for j, u in enumerate(ups)]
    t = ReleaseContinually(name, config, spec, NoiseKey.fixed(KEY.hex()), options=options, release=REL)
    opts = _streaming() if path == "streaming" else PipelineOptions(runner=FNAPI_RUNNER)
    with TestPipeline(options=opts) as p:
        if path == "streaming":
            ts = TestStream()
            for tick in range(1, 31):
                ts = ts.add_elements(
                    [
                        beam.window.TimestampedValue(r, r.event_time)
                        for r in records
                        if r.event_time < tick and r.event_time >= tick - 1
                    ]
                )
                ts = ts.advance_watermark_to(float(tick))
            wm = 30.0
            while wm < 300:
                wm += 2.0
                ts = ts.advance_watermark_to(wm)
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(records) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        _ = src | t
    repeated = [c for c, n in Counter(_DRAWN).items() if n > 1]
    assert len(_DRAWN) > 50 and not repeated, repeated[:3]
    assert {c[1] for c in _DRAWN} == {"a", "b"}  # both streams drew, each at its own coordinates


# ---------------------------------------------------------------------------
# report collectors (input_kind "reports", trust "local"): the analogous checks
# ---------------------------------------------------------------------------


def _report_config(name, budget=None):
    return DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), budget or PureDP(8.0))


REPORT_OPTIONS = {"randomized_response": ({"max_mutations": 2}, {"aggregation": "hdcr", "layers": 3})}


@pytest.mark.parametrize("name", REPORT_NAMES)
def test_report_collector_entry_is_complete(name):
    """Docstring with the privacy statement, proof note naming it, options
    that validate, local trust, and no ledger of its own (it adds no noise)."""
    spec = MECHANISMS[name]
    cls = spec.core_cls
    assert spec.trust == "local" and cls.name == name and cls.options_cls is spec.options_cls
    doc = cls.__doc__ or ""
    assert len(doc.split()) >= 20 and "privacy" in doc.lower() and "no noise" in doc.lower(), doc
    proof = ROOT / spec.proof
    assert proof.is_file() and (name in proof.read_text() or cls.__name__ in proof.read_text())
    spec.options_cls()
    with pytest.raises((TypeError, ValueError)):
        spec.options(no_such_option=1)
    assert set(spec.query_kinds) <= set(QUERY_KINDS)


@pytest.mark.parametrize("name", REPORT_NAMES)
@pytest.mark.parametrize("variant", [0, 1])
@pytest.mark.parametrize("how", ["state", "pickle"])
def test_report_collector_interrupted_run_continues_identically(name, variant, how):
    """State (to_state -> bytes -> from_state) and pickling, taken at three
    points, continue exactly like the uninterrupted run; another
    configuration is refused."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.foundation.state import StateError

    config = _report_config(name)
    options = MECHANISMS[name].options(**REPORT_OPTIONS[name][variant])
    cls = MECHANISMS[name].core_cls
    whole = cls(config, stream="s", options=options, end_tick=30)
    pieces = cls(config, stream="s", options=options, end_tick=30)
    sim = simulate(whole.design, 300, 24, seed=3)
    by_tick = {}
    for _, rep in sim.reports:
        counts = by_tick.setdefault(rep.period, {}).setdefault(rep.layer, [0] * whole.design.num_symbols)
        counts[(0 if rep.old is None else rep.old + 1) * 4 + (0 if rep.new is None else rep.new + 1)] += 1
    got_whole, got_pieces = [], []
    for i, tick in enumerate(sorted(by_tick)):
        got_whole += whole.apply(tick, by_tick[tick])
        got_pieces += pieces.apply(tick, by_tick[tick])
        if i in (2, 9, 17):
            if how == "state":
                pieces = cls.from_state(config, decode(encode(pieces.to_state())), options=options, end_tick=30)
            else:
                pieces = pickle.loads(pickle.dumps(pieces))
        assert pieces.next_wake == whole.next_wake and pieces.last_tick == whole.last_tick
    got_whole += whole.run_to_end()
    got_pieces += cls.from_state(config, decode(encode(pieces.to_state())), options=options, end_tick=30).run_to_end()
    assert got_pieces == got_whole and len(got_whole) == 30
    with pytest.raises(StateError, match="another configuration"):
        cls.from_state(_report_config(name, PureDP(4.0)), pieces.to_state(), options=options, end_tick=30)


@pytest.mark.parametrize("name", REPORT_NAMES)
@pytest.mark.parametrize(
    "options,expected_fold",
    [
        ({"max_mutations": 3}, 6),  # Cor. 5.1: 2k
        ({"constraint": "time_bounded", "bound_ticks": 4}, 10),  # Cor. 5.2 + 4.1: 2 (ceil(B/W) + 1)
        ({"max_mutations": 2, "aggregation": "hdcr", "layers": 3}, 12),  # Cor. 5.3: 2hk
        # Cor. 5.3, time-bounded, counted in nodes: 2 sum_i (ceil(5 / 2^i) + 1) = 2 (6 + 4 + 3)
        ({"constraint": "time_bounded", "bound_ticks": 5, "aggregation": "hdcr", "layers": 3}, 26),
    ],
)
def test_report_collector_client_loss_matches_the_corollaries(name, options, expected_fold):
    """The clients' loss, charged by the ledger report by report (twice the
    per-report cost for each node holding a mutation, Thm 5.1), reaches the
    corollary's bound exactly for an entry that uses its whole constraint, and
    the next mutation is refused."""
    from transforms.core.families.rr_client import ConstraintExceeded, RRClient

    config = _report_config(name, PureDP(6.0))
    coll = MECHANISMS[name].core_cls(config, options=MECHANISMS[name].options(**options))
    design = coll.design
    assert design.fold == expected_fold and design.epsilon == pytest.approx(6.0 / expected_fold)
    client = RRClient(design, randbits=__import__("random").Random(0).getrandbits)  # a test: seeded
    c = design.constraint
    # mutations that hit as many distinct nodes per layer as the constraint allows
    if hasattr(c, "k"):
        step = design.branching ** (design.layers - 1)
        times = [1 + j * step for j in range(c.k)]
    else:
        times = list(
            range(design.branching ** (design.layers - 1), design.branching ** (design.layers - 1) + c.span + 1)
        )
    answer, t = None, 0
    for t in range(1, max(times) + 1):
        if t in times:
            answer = (0 if answer is None else answer + 1) % 3
        client.report(t, answer)
    assert as_vector(client.spent)[0] == pytest.approx(6.0, rel=1e-9)  # the corollary's fold x eps_r
    with pytest.raises(ConstraintExceeded):
        client.report(t + 1, (answer + 1) % 3)
