"""Tests written to kill the mutants that survived the mutation benchmark.

``benchmarks/mutation.sh`` runs mutmut over the privacy core; every mutant the
older tests let live was either justified as equivalent (``docs/testing.md``)
or is killed by a test here. Each test names the mutants it kills (mutmut's
names, ``module.function__mutmut_N``) and was checked to fail on each of them.
All deterministic (fixed keys, exact arithmetic): no false failures; the whole
file runs in seconds.
"""

import dataclasses
import decimal
import math
from fractions import Fraction

import numpy as np
import pytest

from transforms.core import (
    ContinualCountRelease,
    DynamicConfig,
    FullyDynamicRelease,
    InsertionOnlyRelease,
    QuerySet,
    TwoStreamBaseline,
)
from transforms.core.continual.fully_dynamic import FullyDynamicOptions
from transforms.core.continual.partition import (
    InfinitePartitioner,
    PartitionParams,
    _log_one_minus_p,
    _survival_decimal,
    geometric_capped,
)
from transforms.core.counters import InfiniteCounter, make_counter
from transforms.core.foundation.accounting import ZCDP, ApproxDP, Ledger, PureDP, Scope
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile
from transforms.core.foundation.entries import EntryRegistry, TickBatch, Update
from transforms.core.foundation.noise import (
    NoiseSource,
    ReleaseIdentity,
    _geometric_inversion,
    as_ratio_up,
    bernoulli_exp,
    config_digest,
    discrete_laplace_variance,
    encode_coordinates,
    lattice_granularity,
)
from transforms.core.static import (
    LATTICE_BITS,
    CountMechanism,
    HistogramMechanism,
    LinearQueryMechanism,
    Release,
    StaticMechanism,
    union_alpha,
)

KEY = bytes(range(32))

# -- partition.py ----------------------------------------------------------------


@pytest.mark.parametrize("k0", [-3, 0, 1, 2, 5])
@pytest.mark.parametrize("n", [0, 1, 7, 40])
def test_survival_decimal_is_the_exact_survival(k0, n):
    """The decimal fallback of ``geometric_capped`` (taken when the float test
    is within 2^-42 of the boundary, so the older tests never reach it) equals
    (1 - p)^n with p = P(DLap(scale) >= k0): closed form in floats, and the
    precise value at n = 0 is exactly 1.
    Kills partition._survival_decimal mutants 3, 6, 23, 25 (8, ``k0 >= 2``, is
    equivalent: both closed forms give 1 / (1 + q) at k0 = 1)."""
    scale = 4 / 1.5
    exact = math.exp(n * _log_one_minus_p(k0, scale))
    got = _survival_decimal(k0, scale, n, 60)
    assert isinstance(got, decimal.Decimal)
    assert float(got) == pytest.approx(exact, rel=1e-12)
    if n == 0:
        assert got == 1


class SpyNoise(NoiseSource):
    """Records the coordinates of every stream drawn."""

    def __init__(self):
        super().__init__(KEY)
        self.drawn = []

    def stream(self, *coords):
        self.drawn.append(coords)
        return super().stream(*coords)


def test_partitioner_noise_coordinates_are_the_documented_ones():
    """Segment j's threshold draw is at (stream, "svt", j, "threshold") and its
    k-th halting draw at (stream, "svt", j, "ticks", k): a function of the key
    and (j, k) only, so that a restored or retried release redraws the same
    noise (golden state) and no two draws share a stream.
    Kills partition.InfinitePartitioner._draw_from mutants renaming "svt" or
    "ticks" (e.g. _draw_from__mutmut_25) and _start_segment's "threshold"."""
    noise = SpyNoise()
    part = InfinitePartitioner(PartitionParams(epsilon=1.0), coords=("s",))
    assert part.observe(1, 3, noise) == []
    assert part.observe(2, 1, noise) == [2]  # T_1 = 2: segment 1 closes at its deadline
    assert noise.drawn == [
        ("s", "svt", 1, "threshold"),
        ("s", "svt", 1, "ticks", 0),  # the count is 0 from tick 1 on
        ("s", "svt", 1, "ticks", 1),  # 3 updates at tick 1
        ("s", "svt", 1, "ticks", 2),  # 1 more at tick 2
        ("s", "svt", 2, "threshold"),
        ("s", "svt", 2, "ticks", 0),
    ]


class WordStream:
    """A stream of chosen 64-bit words: the first ones, then the last one
    repeated; refuses to give more than ``limit`` words (a mutant that never
    decides fails instead of hanging)."""

    def __init__(self, words, limit=16):
        self.ws = list(words)
        self.given = 0
        self.limit = limit

    def words(self, n):
        out = []
        for _ in range(n):
            self.given += 1
            if self.given > self.limit:
                raise RuntimeError("the sampler asked for too many words")
            out.append(self.ws.pop(0) if len(self.ws) > 1 else self.ws[0])
        return np.array(out, dtype=np.uint64)


def _exact_survival(k0: int, scale: int, n: int) -> decimal.Decimal:
    """(1 - p)^n, p = P(DLap(scale) >= k0) = q^k0 / (1 + q) (k0 >= 1), 120 digits."""
    with decimal.localcontext() as ctx:
        ctx.prec = 120
        q = (-1 / decimal.Decimal(scale)).exp()
        p = q**k0 / (1 + q) if k0 >= 1 else 1 - q ** (1 - k0) / (1 + q)
        return (1 - p) ** n


@pytest.mark.parametrize("k0", [3, -1])
@pytest.mark.parametrize("n", [1, 3, 8])
def test_geometric_capped_exact_path_at_the_boundary(k0, n):
    """K = min{m: U > (1-p)^m} when U is within 2^-64 of the boundary (1-p)^n,
    where the float comparison cannot decide and the decimal path with more
    random words must (probability ~2^-40 per draw: the older tests never get
    there). U just below (1-p)^n gives K = n + 1, just above gives K = n.
    Kills partition.geometric_capped mutants 56, 57, 59 (arguments of the
    decimal survival), 65 (its error term: never decides) and 102 (the next
    word's index)."""
    s = _exact_survival(k0, 4, n)
    w = int(s * 2**64)  # floor: w / 2^64 < (1-p)^n < (w + 1) / 2^64
    assert 0 < s * 2**64 - w < 1
    lo_stream, hi_stream = WordStream([w, 0]), WordStream([w, 2**64 - 1])
    below = geometric_capped(lo_stream, k0, 4.0, 1000)  # U = w / 2^64 exactly
    above = geometric_capped(hi_stream, k0, 4.0, 1000)  # U = (w + 1) / 2^64
    assert (below, above) == (n + 1, n)
    assert lo_stream.given > 1 and hi_stream.given > 1  # the exact path drew more words


# -- accounting.py ---------------------------------------------------------------


def test_pure_ledger_refuses_a_delta_and_takes_a_zero_delta():
    """A pure-DP ledger must refuse an (eps, delta > 0) cost (charging it as
    eps would silently drop delta) and take (eps, 0) as eps.
    Kills accounting._to_currency__mutmut_4 (``delta != 0``)."""
    ledger = Ledger(PureDP(1.0))
    with pytest.raises(ValueError):
        ledger.charge(ApproxDP(0.25, 1e-6), ("a",))
    assert ledger.spent == PureDP(0.0) and ledger.num_releases == 0
    ledger.charge(ApproxDP(0.25, 0.0), ("b",))
    assert ledger.spent == PureDP(0.25)


def test_closed_scope_refuses_charges_and_children_and_closes_twice():
    """A closed scope's spend stays counted, but it takes no more charges and no
    new children (its bookkeeping is gone); closing again is harmless.
    Kills accounting.Scope.close mutants 1 (``closed = None``) and 6 (``pop``
    without a default)."""
    ledger = Ledger(PureDP(1.0))
    par = ledger.root.child("p", Scope.PARALLEL)
    s = par.child("a")
    s.charge(PureDP(0.5), ("x",))
    s.close()
    with pytest.raises(RuntimeError):
        s.charge(PureDP(0.1), ("y",))
    with pytest.raises(RuntimeError):
        s.child("c")
    s.close()
    assert "a" not in par.children
    assert ledger.spent == PureDP(0.5)


def test_would_spend_is_the_total_after_the_charge():
    """``would_spend`` equals the ledger's total after the same charge, whether
    the charge raises the root (sequential) or not (a parallel member below
    the current maximum), and charges nothing.
    Kills accounting.Scope.would_spend mutants 6, 10, 17."""
    ledger = Ledger(ApproxDP(4.0, 1e-5))
    par = ledger.root.child("p", Scope.PARALLEL)
    par.child("a").charge(PureDP(1.0))
    seq = ledger.root.child("s")
    for scope, cost in [(par.child("b"), PureDP(0.5)), (seq, ApproxDP(0.5, 1e-6)), (par.child("c"), PureDP(2.0))]:
        before = (ledger.spent, ledger.num_releases)
        predicted = scope.would_spend(cost)
        assert (ledger.spent, ledger.num_releases) == before
        assert isinstance(predicted, ApproxDP)
        scope.charge(cost)
        assert predicted == ledger.spent


def test_zero_budgets_and_the_root_scope():
    """``is_zero`` of each budget type; ``Ledger.scope()`` with no names is the root.
    Kills accounting.ZCDP.is_zero__mutmut_2 and Ledger.scope__mutmut_9."""
    assert ZCDP(0.0).is_zero and not ZCDP(1.0).is_zero and not ZCDP(0.5).is_zero
    assert PureDP(0.0).is_zero and not PureDP(1.0).is_zero
    assert ApproxDP(0.0, 0.0).is_zero and not ApproxDP(0.0, 1e-9).is_zero
    ledger = Ledger(ZCDP(1.0))
    assert ledger.scope() is ledger.root
    assert ledger.scope("a", "b", kind=Scope.PARALLEL).path == ("a", "b")


# -- static.py -------------------------------------------------------------------


@pytest.mark.parametrize(
    "mech, budget",
    [
        (CountMechanism(3), PureDP(0.5)),
        (HistogramMechanism(4), PureDP(1.0)),
        (HistogramMechanism(4, "gaussian"), ZCDP(0.3)),
        (LinearQueryMechanism([[0.25, 0.5, 1.0, 0.0], [1.0, 0.0, 1.0, 1.0]]), PureDP(1.0)),
    ],
)
def test_release_is_exact_plus_the_drawn_noise_with_its_law(mech, budget):
    """A release is the exact answers plus exactly the noise drawn from its
    stream (the sign matters for byte-identical replay across versions, though
    not for the law), carries that noise's law, and is additive.
    Kills static._AdditiveMechanism.release mutants 10 (``- noise``) and 20
    (no noise profile) and Release.is_additive__mutmut_1."""
    noise = NoiseSource(KEY)
    h = np.array([3, 0, 5, 2][: mech.domain_size] + [0] * max(0, mech.domain_size - 4))
    nonzero = 0
    for i in range(8):
        rel = mech.release(h, budget, noise.stream("r", i))
        drawn = mech.draw_noise(budget, noise.stream("r", i))
        nonzero += int(np.count_nonzero(drawn))
        assert np.array_equal(rel.values, mech.exact(h) + drawn * mech.unit)
        assert rel.noise == mech.noise_profile(budget) and rel.is_additive
    assert nonzero > 0


def test_linear_queries_use_the_power_of_two_lattice():
    """A real matrix is answered on the lattice 2^-LATTICE_BITS: the exact
    answers are those of the matrix rounded to multiples of 2^-20 (each entry
    within 2^-21), so every value is a float-exact multiple of 2^-20.
    Kills static.LinearQueryMechanism.__init____mutmut_35 (a 3^-20 lattice)."""
    a = np.array([[0.1, 0.7, 1 / 3], [0.5, 0.0, 0.9]])
    h = np.array([4, 1, 7])
    m = LinearQueryMechanism(a)
    g = 2.0**-LATTICE_BITS
    rounded = np.rint(a / g).astype(np.int64)
    assert np.all(np.abs(rounded * g - a) <= g / 2)
    assert np.array_equal(m.exact(h), (rounded @ h) * g)
    rel = m.release(h, PureDP(1.0), NoiseSource.disabled().stream("x"))
    assert np.array_equal(rel.values, (rounded @ h) * g)


def test_static_input_validation():
    """Negative query entries are refused (the sensitivity argument assumes
    [0, 1]); a histogram over one cell is allowed; a zero rho is refused with
    ValueError before any noise is drawn.
    Kills static.LinearQueryMechanism.__init____mutmut_16,
    HistogramMechanism.__init____mutmut_4 and _AdditiveMechanism._param__mutmut_13."""
    with pytest.raises(ValueError):
        LinearQueryMechanism([[-0.5, 1.0]])
    assert HistogramMechanism(1).exact(np.array([5])).tolist() == [5]
    with pytest.raises(ValueError):
        HistogramMechanism(2, "gaussian").release(np.array([1, 2]), ZCDP(0.0), NoiseSource(KEY).stream("z"))


def test_union_alpha_splits_beta_over_the_releases():
    """alpha^(k) by the union bound is sum_i alpha_i(beta / k); 0 for no release.
    Kills static.union_alpha mutants 4 and 7."""
    seen = []

    def alpha(b):
        seen.append(b)
        return 1.0 / b

    assert union_alpha([], 0.1) == 0.0
    assert union_alpha([alpha, alpha, alpha, alpha], 0.2) == pytest.approx(4 / 0.05)
    assert seen == [pytest.approx(0.05)] * 4


# -- counters.py -----------------------------------------------------------------


def test_infinite_counter_charges_the_callers_scope_as_planned():
    """Chan-Shi-Song on a caller's scope: every release is charged to *that*
    ledger (not a private one), range i's release costs budget/2 (parallel over
    ranges), range i's tree over horizon 2^i costs budget/2 / (i+1) per node
    (one node per level), in scopes named after the construction.
    Kills counters.InfiniteCounter.__init__ mutants 9 (a private ledger) and
    29 (the ranges scope's name)."""
    ledger = Ledger(PureDP(1.0))
    c = InfiniteCounter(CountMechanism(), PureDP(1.0), coords=("c",), scope=ledger.root.child("mine"))
    noise = NoiseSource(KEY)
    for _ in range(4):
        c.step(np.array([1]), noise)
    tree = ("mine", "infinite", "trees")
    assert [(r.coordinates, r.cost, r.scope) for r in ledger.records] == [
        (("c", "range", 0, "node", 0, 1), PureDP(0.5), tree + ("range0", "binary_tree", "level0")),
        (("c", "range", 0), PureDP(0.5), ("mine", "infinite", "ranges")),
        (("c", "range", 1, "node", 0, 1), PureDP(0.25), tree + ("range1", "binary_tree", "level0")),
        (("c", "range", 1, "node", 1, 1), PureDP(0.25), tree + ("range1", "binary_tree", "level1")),
        (("c", "range", 1), PureDP(0.5), ("mine", "infinite", "ranges")),
        (("c", "range", 2, "node", 0, 1), PureDP(0.5 / 3), tree + ("range2", "binary_tree", "level0")),
    ]
    assert ledger.spent == PureDP(1.0)


def test_counter_names_and_the_default_estimator():
    """Honaker counters are named (and scoped) as such; an ``InfiniteCounter``
    built without ``honaker`` (as the fully-dynamic mechanism's deletion
    counters are) is the plain one: it releases exactly what ``make_counter
    ("infinite")`` releases, and differs from the Honaker estimates.
    Kills counters.BinaryTreeCounter.__init____mutmut_18 and
    InfiniteCounter.__init__ mutants 1 (default ``honaker=True``) and 14."""
    mech, budget = CountMechanism(), PureDP(1.0)
    assert make_counter("honaker", mech, budget, horizon=8).name == "honaker"
    assert make_counter("infinite_honaker", mech, budget).name == "infinite_honaker"
    ledger = Ledger(PureDP(1.0))
    make_counter("honaker", mech, budget, horizon=4, scope=ledger.root).step(np.array([1]), NoiseSource(KEY))
    assert ledger.records[0].scope == ("honaker", "level0")
    default = InfiniteCounter(mech, budget, coords=("x",))
    plain = make_counter("infinite", mech, budget, coords=("x",))
    hon = make_counter("infinite_honaker", mech, budget, coords=("x",))
    assert default.name == "infinite" and not default.honaker
    noise = NoiseSource(KEY)
    a, b, h = [], [], []
    for t in range(1, 16):
        batch = np.array([t % 3])
        a.append(float(default.step(batch, noise)[0]))
        b.append(float(plain.step(batch, noise)[0]))
        h.append(float(hon.step(batch, noise)[0]))
    assert a == b and a != h


class OpaqueCount(StaticMechanism):
    """A non-additive black box (reports alpha only), like PMW."""

    name = "opaque"
    additive = False

    @property
    def domain_size(self):
        return 1

    @property
    def num_queries(self):
        return 1

    def exact(self, hist):
        return np.array([float(np.sum(hist))])

    def release(self, hist, budget, stream):
        return Release(self.exact(hist), budget)

    def alpha(self, budget, beta, k=1, n=None):
        return 1.0 / (budget.epsilon * beta)


def test_infinite_counter_takes_a_non_additive_black_box():
    """The infinite counter works on any static black box: with a non-additive
    one (no noise profile) it steps across range boundaries and its bound is
    the union bound over the releases summed.
    Kills counters.InfiniteCounter.step__mutmut_26 (asks the tree for a noise
    profile that a non-additive box does not have)."""
    c = make_counter("infinite", OpaqueCount(), PureDP(1.0))
    noise = NoiseSource(KEY)
    for t in range(1, 8):
        assert c.step(np.array([1]), noise)[0] == t
    # t = 7: ranges 0, 1 closed (2 releases at eps 1/2) + range 2's tree (t = 7 - 3 = 4
    # inside it: one node at level 2, eps 1/2 / 3); union bound over k = 3 at beta / 3
    beta = 0.3
    assert c.error_bound(beta) == pytest.approx(2 / (0.5 * 0.1) + 1 / (0.5 / 3 * 0.1))


def test_binary_tree_node_coordinates_are_level_and_dyadic_index():
    """The p-sum released at t for level i (t divisible by 2^i, t / 2^i odd or
    the top) is drawn at (coords, "node", i, t >> i): the dyadic node's level
    and index, as the golden state replays it.
    Kills counters.BinaryTreeCounter.step__mutmut_80 (``t << i``)."""
    noise = SpyNoise()
    c = make_counter("binary_tree", CountMechanism(), PureDP(1.0), horizon=8, coords=("q",))
    for _ in range(8):
        c.step(np.array([1]), noise)
    assert noise.drawn == [
        ("q", "node", 0, 1),
        ("q", "node", 1, 1),
        ("q", "node", 0, 3),
        ("q", "node", 2, 1),
        ("q", "node", 0, 5),
        ("q", "node", 1, 3),
        ("q", "node", 0, 7),
        ("q", "node", 3, 1),
    ]


# -- fully_dynamic.py ------------------------------------------------------------


def _pmw_run(profile):
    """A fully-dynamic release over a PMW query set (non-additive: its error is
    reported by alpha), 6 inserts and 2 deletes of the oldest entries per tick;
    Lemma 9's invariants checked after every tick, open segments included."""
    cfg = DynamicConfig((QuerySet("p", "pmw", domain_size=4, ranges=True),), PureDP(4.0), profile=profile)
    rel = FullyDynamicRelease(cfg)
    noise = NoiseSource(KEY)
    live, nid, pending_seen = [], 0, 0
    for tick in range(1, 40 if profile == "tuned" else 80):
        ups = []
        for _ in range(6):
            ups.append(Update("insert", f"e{nid}", (nid % 4,)))
            live.append(f"e{nid}")
            nid += 1
        ups += [Update("delete", live.pop(0)) for _ in range(2)]
        rel.process_tick(tick, ups, noise)
        rel.check_invariants()
        pending_seen += len(rel.pending_del)
    assert pending_seen > 0  # the invariants were checked with deletions pending
    return rel


@pytest.mark.parametrize("profile", ["tuned", "paper"])
def test_non_additive_node_bound_is_the_union_bound_of_its_parts(profile):
    """A node of a non-additive black box answers static release minus
    deletion counter, so its (1 - beta) bound is the union bound: the static
    release's alpha at beta/4 (with the node's size bounded at beta/4 and the
    round's n_hat noise reused) plus the deletion counter's error at beta/2:
    tuned, a histogram counter, summed over the d cells (each range query
    weights cells in [0, 1]); paper, a counter on the PMW box itself (its own
    union bound, with the same size bound).
    Kills fully_dynamic._Node.alpha mutants 4 (counter left out), 20 (n_hat
    noise not reused) and 54 (counter error subtracted), and
    FullyDynamicRelease.check_invariants__mutmut_34."""
    rel = _pmw_run(profile)
    beta = 0.05
    checked = 0
    for node in rel.nodes.values():
        c = node.q_counters[0] if node.q_counters else None
        if node.halted or c is None or c.t == 0:
            continue
        mech = rel.mechanisms[0]
        n = node.size_bound(beta / 4)
        static = mech.alpha(
            node.static_budgets[0], beta / 4, n=n, n_hat_noise=node.n_hat_profile, iterations=node.static_params[0][0]
        )
        if profile == "tuned":
            d = c.mechanism.domain_size
            counter = c.noise_profile().times(d).tail_bound(beta / 2 / mech.query_count)
        else:
            assert c.mechanism is mech
            counter = c.error_bound(beta / 2, n=n)
        assert counter > 0 and node.n_hat_profile is not None
        assert node.alpha(rel, 0, beta) == pytest.approx(static + counter, rel=1e-12)
        checked += 1
    assert checked > 0


def test_node_outputs_name_their_query_set_round_and_cost():
    """The released pieces of the data structure (emit_nodes) have their
    declared fields: a kind among the documented four, the round (>= 1), the
    query set's name as a string ("" for the deletion counters' raw releases);
    a static piece names the query set at the end of its noise coordinates
    and carries the cost the ledger was charged for it.
    Each piece names its stream, the tick and the segment it was released at.
    Kills fully_dynamic._Node.start_round mutants 115 (the name left out), 117
    (the cost left out), 122 (the round left out: the fields shift),
    FullyDynamicRelease._close mutants 112 (round None) and 124 (kind
    renamed), _Node._flush_counter_logs__mutmut_9 (query None) and
    segmented.SegmentedRelease._log mutants 3, 8, 13, 20 (tick, kind, stream,
    query)."""
    queries = (QuerySet("active", "count"), QuerySet("cells", "histogram", domain_size=3))
    rel = FullyDynamicRelease(DynamicConfig(queries, PureDP(2.0)), stream="s1", emit_nodes=True)
    rel.ledger.keep_records = True
    noise = NoiseSource(KEY)
    outs = []
    for tick in range(1, 40):
        ups = [Update("insert", f"e{tick}-{i}", (0, i % 3)) for i in range(3)]
        if tick > 4:
            ups.append(Update("delete", f"e{tick - 4}-0"))
        res = rel.process_tick(tick, ups, noise)
        new = rel.drain_node_outputs()
        assert all((o.stream, o.tick, o.segment) == ("s1", tick, rel.closed) for o in new)
        assert bool(new) == bool(res.closes)
        outs += new
    kinds = {o.kind for o in outs}
    assert kinds == {"static", "n_hat", "deletion_counter", "node_answer"}
    for o in outs:
        assert isinstance(o.query, str) and isinstance(o.round, int) and o.round >= 1
        assert o.query == "" if o.kind in ("n_hat", "deletion_counter") else o.query in ("active", "cells")
    static = [o for o in outs if o.kind == "static"]
    assert {o.query for o in static} == {"active", "cells"}
    charged = {r.coordinates: r.cost for r in rel.ledger.records}
    for o in static:
        assert o.coordinates[-2:] == ("static", o.query)
        assert o.cost is not None and charged[o.coordinates] == o.cost


def test_options_are_kept_and_restore_with_the_state():
    """The options a release was built with are its options: its state
    restores under them (the state digest covers them) and continues alike.
    Kills fully_dynamic.FullyDynamicRelease.__init____mutmut_17 (options not
    passed on: the release kept the defaults, and its state refused its own
    options)."""
    cfg = DynamicConfig((QuerySet("active", "count"),), PureDP(2.0))
    opts = FullyDynamicOptions(horizon=6)
    rel = FullyDynamicRelease(cfg, options=opts)
    noise = NoiseSource(KEY)
    for tick in range(1, 5):
        rel.process_tick(tick, [Update("insert", f"e{tick}", (0,))], noise)
    assert rel.options == opts
    back = FullyDynamicRelease.from_state(cfg, rel.to_state(), options=opts)
    answers = {id(rel): [], id(back): []}
    for tick in range(5, 40):
        for r in (rel, back):
            res = r.process_tick(tick, [Update("insert", f"e{tick}", (0,))], noise)
            answers[id(r)] += [(x.tick, x.estimate.tolist()) for x in res.answers]
    assert answers[id(rel)] and answers[id(rel)] == answers[id(back)]
    assert rel.config.max_segments == back.config.max_segments == 6  # the horizon option is in force


# -- noise.py --------------------------------------------------------------------


def test_noise_key_length_and_release_digest_are_pinned():
    """A 16-byte key is accepted (the documented minimum), 15 bytes are not; a
    release's digest derivation is pinned by a golden value (a change would
    give a continued release other noise than the one it started with).
    Kills noise.NoiseSource.__init____mutmut_5 (17 bytes) and
    ReleaseIdentity.with_digest__mutmut_11 (33 hex digits)."""
    assert NoiseSource(bytes(range(16))).fingerprint == "827b0c8951fd"
    with pytest.raises(ValueError):
        NoiseSource(bytes(15))
    d = ReleaseIdentity("r1", "abc").with_digest("x", 3)
    assert d == ReleaseIdentity("r1", "111d7bfa0f1652ee237fd0fc39747b3a")


def _exact_q_power(t: int, s: int, k: int) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = 120
        return (-decimal.Decimal(s) / decimal.Decimal(t) * k).exp()


@pytest.mark.parametrize("t, s", [(5, 2), (3, 1)])
@pytest.mark.parametrize("k", [1, 2, 4, 9])
def test_geometric_inversion_exact_path_at_the_boundary(t, s, k):
    """X = max{j: U <= q^j}, q = exp(-s/t), when U is within 2^-64 of q^k: the
    float guess is refused (relative band 2^-30) and the exact path refines U
    with more words. U just below q^k gives X = k, just above gives X = k - 1.
    Kills noise._geometric_exact__mutmut_89 (the refined U misscaled) and
    _geometric_inversion__mutmut_53 (the band test accepting a float guess
    that is off by one at the boundary)."""
    qk = _exact_q_power(t, s, k)
    w = int(qk * 2**64)  # w / 2^64 < q^k < (w + 1) / 2^64
    assert 0 < qk * 2**64 - w < 1
    lo_stream, hi_stream = WordStream([w, 0]), WordStream([w, 2**64 - 1])
    below = int(_geometric_inversion(lo_stream, t, s, 1)[0])  # U = w / 2^64
    above = int(_geometric_inversion(hi_stream, t, s, 1)[0])  # U = (w + 1) / 2^64
    assert (below, above) == (k, k - 1)
    assert lo_stream.given > 1 and hi_stream.given > 1  # the exact path drew more words


# -- errors.py -------------------------------------------------------------------


def test_noise_profiles_add_like_independent_sums():
    """Adding profiles with a common term adds their counts (p + p is two
    independent copies: variance and bound of p.times(2)); beta outside (0, 1)
    is refused.
    Kills errors.NoiseProfile.__add____mutmut_5 (the left count dropped: a
    too-small public bound) and NoiseProfile.tail_bound__mutmut_5."""
    lap = NoiseProfile.single(LAPLACE, 2.0)
    gau = NoiseProfile.single(GAUSSIAN, 3.0, 0.5)
    p = lap + gau
    assert (p + p) == p.times(2) and (lap + lap) == lap.times(2)
    assert (p + p).variance() == pytest.approx(2 * p.variance())
    assert (lap + lap).tail_bound(0.1) == lap.times(2).tail_bound(0.1) > lap.tail_bound(0.1)
    for beta in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError):
            lap.tail_bound(beta)


# -- segmented.py ----------------------------------------------------------------


def test_answers_carry_their_segment_and_the_last_close_tick():
    """Every answer names the segment it closes (1, 2, ...), and
    ``last_close_tick`` is 0 before the first close, then the tick of the
    latest close (the insertion-only release uses the segmented one).
    Kills segmented.SegmentedRelease._answer__mutmut_3 (segment None) and
    last_close_tick__mutmut_3 (1 before the first close)."""
    rel = InsertionOnlyRelease(DynamicConfig((QuerySet("active", "count"),), PureDP(2.0)))
    noise = NoiseSource(KEY)
    assert rel.last_close_tick == 0
    closes = 0
    for tick in range(1, 30):
        res = rel.process_tick(tick, [Update("insert", f"e{tick}", (0,))], noise)
        for t in res.closes:
            closes += 1
            assert [a.segment for a in res.answers if a.tick == t] == [closes]
        assert rel.last_close_tick == (res.closes[-1] if res.closes else rel.last_close_tick)
        if closes == 0:
            assert rel.last_close_tick == 0
    assert closes >= 2 and rel.last_close_tick > 0


# -- baselines.py ----------------------------------------------------------------


@pytest.mark.parametrize("cls, coord", [(InsertionOnlyRelease, "ins"), (TwoStreamBaseline, "ins")])
def test_baselines_draw_and_charge_under_their_stream(cls, coord):
    """A baseline release draws every noise under its own stream name and
    charges every counter release to its own ledger (so the ledger enforces the
    configured budget), the insertion counters at (stream, "ins", query, ...).
    Kills baselines.InsertionOnlyRelease.__init__ mutants 33 (counters on a
    private ledger) and 38 (the "ins" coordinate renamed), and
    TwoStreamBaseline.__init____mutmut_5 (stream None: two streams of one job
    would draw the same noise)."""
    rel = cls(DynamicConfig((QuerySet("active", "count"),), PureDP(2.0)), stream="s2")
    rel.ledger.keep_records = True
    noise = SpyNoise()
    answers = []
    for tick in range(1, 30):
        answers += rel.process_tick(tick, [Update("insert", f"e{tick}", (0,))], noise).answers
    assert answers and {a.stream for a in answers} == {"s2"}
    assert noise.drawn and all(c[0] == "s2" for c in noise.drawn)
    charged = {r.coordinates for r in rel.ledger.records}
    counter_draws = [c for c in noise.drawn if c[1] == coord]
    assert counter_draws and all(c[2] == "active" for c in counter_draws)
    assert set(counter_draws) <= charged  # every counter release was charged to this ledger
    assert rel.ledger.spent.epsilon <= 2.0 + 1e-9


def test_continual_count_keyword_form_and_update_count():
    """``ContinualCountRelease(config, horizon=...)`` (the earlier keyword form)
    runs the default counter, infinite_honaker; ``num_updates`` counts the
    accepted updates.
    Kills baselines.ContinualCountRelease.__init____mutmut_14 and
    _apply__mutmut_19."""
    rel = ContinualCountRelease(DynamicConfig((QuerySet("active", "count"),), PureDP(1.0)), horizon=50)
    assert rel.options.counter == "infinite_honaker"
    for tick in range(1, 6):
        rel.process_tick(tick, [Update("insert", f"e{tick}-{i}", (0,)) for i in range(tick)], NoiseSource(KEY))
    assert rel.num_updates == 15


# -- registry.py -----------------------------------------------------------------


def test_mutation_limit_counts_across_deletes_and_reinserts():
    """Under an entry-level unit with at most k = 2 mutations per entry, the
    third mutation of an entry is refused (``constraint_exceeded``), also after
    a delete and a re-insert of the same id (its tombstone keeps counting), so
    one entry accounts for at most 2k - 1 updates whatever the input.
    Kills registry.resolve__mutmut_62 (the count restarting at 0)."""
    reg = EntryRegistry((3,), max_mutations=2)
    b, rej = reg.resolve_tick(1, [Update("insert", "a", (0,)), Update("upsert", "a", (1,))])
    assert not rej and b.n_updates == 3
    b, rej = reg.resolve_tick(2, [Update("delete", "a")])
    assert [r.reason for r in rej] == ["constraint_exceeded"] and b.n_updates == 0
    b, rej = reg.resolve_tick(3, [Update("insert", "b", (2,)), Update("delete", "b")])
    assert not rej
    b, rej = reg.resolve_tick(4, [Update("insert", "b", (2,))])
    assert [r.reason for r in rej] == ["constraint_exceeded"] and b.n_updates == 0
    assert reg.validate(Update("insert", "b", (1,))) == "constraint_exceeded"


def test_fast_path_rejects_out_of_range_items():
    """The fast path (no mutation limit) accepts exactly the well-formed
    in-range items: an out-of-range one (one coordinate or all of them) is
    rejected (``item_out_of_range``) and never reaches a histogram.
    Kills registry.EntryRegistry.resolve_tick__mutmut_37."""
    reg = EntryRegistry((3, 2))
    b, rej = reg.resolve_tick(
        1, [Update("insert", "a", (2, 1)), Update("insert", "b", (3, 0)), Update("insert", "c", (3, 5))]
    )
    assert b.inserts == [(2, 1)] and b.n_updates == 1
    assert [(r.update.entry_id, r.reason) for r in rej] == [("b", "item_out_of_range"), ("c", "item_out_of_range")]
    assert set(reg.entries) == {"a"}


def test_validate_gives_the_reason_against_the_current_state():
    """``validate`` tells, without changing anything, why an update would be
    refused now (None if it would be accepted).
    Kills registry.EntryRegistry.validate mutants 3, 11, 14 and 17 (no tests)."""
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "a", (0,))])
    assert reg.validate(Update("insert", "b", (1,))) is None
    assert reg.validate(Update("insert", "a", (1,))) == "duplicate_insert"
    assert reg.validate(Update("delete", "a")) is None
    assert reg.validate(Update("delete", "z")) == "unknown_entry"
    assert reg.validate(Update("upsert", "a", (5,))) == "item_out_of_range"
    ins_only = EntryRegistry((3,), deletions_allowed=False)
    ins_only.resolve_tick(1, [Update("insert", "a", (0,))])
    assert ins_only.validate(Update("delete", "a")) == "deletion_not_allowed"
    assert len(reg) == 1 and len(ins_only) == 1


def test_tick_batches_merge_with_their_update_counts():
    """Merging two batches of one tick (what the Beam combiner does)
    concatenates them and adds the update counts the partitioning sees.
    Kills registry.TickBatch.merge__mutmut_5 (no tests)."""
    a = TickBatch(4, [(0,)], [((1,), 2)], 2)
    b = TickBatch(4, [(2,), (2,)], [], 3)
    m = a.merge(b)
    assert (m.tick, m.inserts, m.deletes, m.n_updates) == (4, [(0,), (2,), (2,)], [((1,), 2)], 5)
    with pytest.raises(ValueError):
        a.merge(TickBatch(5))


class TaggedStr(str):
    """A str subclass (a coordinate from an enum-like or a library type)."""


def test_coordinates_encode_by_value_whatever_their_int_or_str_type():
    """numpy integers and str subclasses encode exactly like ints and strs (a
    coordinate's type must not change the noise of a release); the encoding is
    pinned by a golden value.
    Kills noise.encode_coordinates mutants 46, 47 (numpy ints), 64, 67, 68, 72
    (str subclasses)."""
    golden = "730000000161690000000131620000000178"
    assert encode_coordinates(("a", 1, b"x")).hex() == golden
    assert encode_coordinates((TaggedStr("a"), np.int64(1), b"x")).hex() == golden
    assert encode_coordinates((np.uint8(7), TaggedStr("node"))) == encode_coordinates((7, "node"))


def test_release_derivations_are_pinned():
    """The digests and sub-keys a release's noise depends on are pinned by
    golden values; a new release id is 128 random bits.
    Kills noise.config_digest mutants 1, 4, NoiseSource.for_release__mutmut_10
    (the personalisation dropped), ReleaseIdentity.with_digest__mutmut_3 and
    ReleaseIdentity.new__mutmut_6 (all no tests)."""
    assert config_digest("a", 1, (2, 3)) == "8df64b66136f410986cdf77ffa666c83"
    sub = NoiseSource(KEY).for_release(ReleaseIdentity("r1", "d"))
    assert sub.fingerprint == "b95feef0b60f" and sub.release == ReleaseIdentity("r1", "d")
    a, b = ReleaseIdentity.new("d"), ReleaseIdentity.new("d")
    assert len(a.release_id) == 32 and int(a.release_id, 16) >= 0 and a.release_id != b.release_id
    assert a.config_digest == "d"


def test_noise_helpers_validate_and_compute():
    """Input validation of the samplers (negative exponent, non-positive bound),
    the ratio rounding (a Fraction whose terms do not fit 62 bits is rounded up
    to a power-of-two denominator), the lattice spacing and the discrete
    Laplace variance 2q / (1 - q)^2.
    Kills noise.bernoulli_exp__mutmut_43, RandomStream.uniform_below__mutmut_20,
    _as_ratio_up__mutmut_5, lattice_granularity__mutmut_8 and
    discrete_laplace_variance__mutmut_3 (no tests)."""
    stream = NoiseSource(KEY).stream("v")
    with pytest.raises(ValueError):
        bernoulli_exp(stream, np.array([-1]), np.array([1]))
    for bad in ([0], [-3], [5, 0]):
        with pytest.raises(ValueError):
            stream.uniform_below(np.array(bad))
    x = Fraction(3, 2**62 + 1)
    r = as_ratio_up(x)
    assert r >= x and r.denominator & (r.denominator - 1) == 0
    assert as_ratio_up(Fraction(3, 2**61 + 1)) == Fraction(3, 2**61 + 1)  # terms fit: exact
    assert lattice_granularity(1.0) == 2.0**-20 and lattice_granularity(3.0, bits=4) == 0.125
    q = math.exp(-1 / 2.0)
    assert discrete_laplace_variance(2.0) == pytest.approx(2 * q / (1 - q) ** 2, rel=1e-12)


def test_bernoulli_exp_decides_a_word_next_to_the_boundary_exactly():
    """Words w (63 bits) next to exp(-1) * 2^63, inside the exact band, whose
    float64 copy rounds to the other side of the boundary: w / 2^63 < exp(-1)
    gives True, above gives False; the decision uses w as an integer.
    Kills noise.bernoulli_exp__mutmut_50 (the words as float64)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        target = decimal.Decimal(-1).exp() * 2**63  # exp(-1) * 2^63
    edge = int(target)  # w <= edge  <=>  w / 2^63 < exp(-1)
    # words whose float64 copy lies on the other side of the boundary
    near = [w for w in range(edge - 600, edge + 600) if (w <= edge) != (int(float(w)) <= edge)]
    assert near
    for w in near[:6] + [edge - 2**30, edge + 2**30]:
        out = bernoulli_exp(WordStream([w << 1, 0]), np.array([1]), np.array([1]))
        assert bool(out[0]) is (w <= edge)


# -- factorization.py ----------------------------------------------------------------


def test_grid_index_is_the_least_exponent_on_the_sixteenth_octave_grid():
    """``_grid_index(w)`` is the least j with 2^(j/16) >= w (the Laplace lattice
    counter groups its rows' weights by it), for weights below and above 1.
    Kills factorization._grid_index__mutmut_4 (``17 * log2``: overshoots above 1)."""
    from transforms.core.counters.factorization import _grid_index

    rng = np.random.default_rng(3)
    for w in np.concatenate([rng.uniform(1e-3, 1, 200), rng.uniform(1, 50, 200), [1.0, 2.0, 0.5]]):
        j = _grid_index(float(w))
        assert 2.0 ** (j / 16) >= w > 2.0 ** ((j - 1) / 16), (w, j)


def test_kary_tree_over_a_non_additive_box_states_the_union_bound_of_its_nodes():
    """Over a non-additive black box (no Honaker: no noise law to weight) the k-ary
    tree's estimate is the plain sum of its completed nodes, and its bound is the
    union bound over them: sum over the d nodes of alpha(node budget, beta / d).
    Kills factorization.KaryTreeCounter.step__mutmut_62 (each node counted twice)."""
    from transforms.core.counters.factorization import KaryTreeCounter

    c = KaryTreeCounter(OpaqueCount(), PureDP(1.0), horizon=27, radices=(3, 3))
    noise = NoiseSource(KEY)
    for t in range(1, 27):
        assert c.step(np.array([1]), noise)[0] == t
        digits = [t % 3, (t // 3) % 3, t // 9]  # nodes in the prefix: its base-3 digits
        d = sum(digits)
        node_eps = 1.0 / 3  # three levels
        assert c.error_bound(0.3) == pytest.approx(d * (1 / (node_eps * 0.3 / d))), t


def test_lattice_counters_refuse_a_non_additive_box_and_calibrate_zcdp_exactly():
    """The factorization counters need an additive box (their noise is added on
    the lattice, not by the box); under a zCDP budget the discrete Gaussian's
    sigma^2 is exactly n2 * l2^2 / (2 rho), rounded up (no extra term: that
    belongs to the tight (eps, delta) calibration only).
    Kills factorization._LatticeToeplitzCounter.__init____mutmut_11 (``or`` ->
    ``and``: a non-additive box with unit answers accepted) and
    _LatticeToeplitzCounter._calibrate__mutmut_17 (``extra = 1``)."""
    from transforms.core.counters.factorization import SqrtFactorizationCounter, _sqrt_tables

    class UnitsButOpaque(OpaqueCount):
        def _answers_units(self, hist):
            return np.array([int(np.sum(hist))])

    with pytest.raises(ValueError, match="additive"):
        SqrtFactorizationCounter(UnitsButOpaque(), PureDP(1.0), horizon=8)
    for rho in (0.3, 1.0, 2.5):
        c = SqrtFactorizationCounter(CountMechanism(1, "gaussian"), ZCDP(rho), horizon=64)
        assert c.noise_param == as_ratio_up(Fraction(_sqrt_tables(64).n2) / (2 * Fraction(rho)))


def test_blt_loss_is_finite_where_the_objective_overflows(monkeypatch):
    """The BLT optimiser's objective returns the finite sentinel 1e30, never inf,
    where the loss overflows (Nelder-Mead needs comparable values).
    Kills factorization._blt_log_loss__mutmut_64 (``and`` -> ``or``)."""
    from transforms.core.counters import factorization as fz

    p = np.concatenate([np.log(-np.log1p(-np.array([0.3, 0.05]))), np.log(-np.log1p(-np.array([0.5, 0.1])))])
    assert fz._blt_log_loss(p, 64) < 1e29  # a feasible point: a real loss
    monkeypatch.setattr(fz, "blt_sensitivity_squared", lambda *a: float("inf"))
    assert fz._blt_log_loss(p, 64) == 1e30


@pytest.mark.slow
def test_blt_optimiser_reproduces_its_table():
    """``optimize_blt`` (offline; its output is ``BLT_TABLE``) reproduces the
    table's entry for n = 8 with 2 buffers and the stated ratio 1.0307.
    Kills factorization.optimize_blt__mutmut_81 (Powell restarted from None)."""
    from transforms.core.counters.factorization import BLT_TABLE, optimize_blt

    theta, theta_hat, ratio = optimize_blt(8, 2)
    # The loss is flat at its minimum: a minimiser stopped at ftol = 1e-14 fixes its arguments to about
    # sqrt(1e-14) = 1e-7 of the loss's scale, and the last steps differ between processors (numpy's SIMD
    # log/exp round differently on AVX-512 and AVX2: 9.7e-6 relative in the smallest parameter, measured on an
    # AMD EPYC). What the table promises is the ratio, checked tightly below; the parameters to 1e-4.
    np.testing.assert_allclose(theta, BLT_TABLE[3][0], rtol=1e-4)
    np.testing.assert_allclose(theta_hat[0], BLT_TABLE[3][1][0], rtol=1e-4)
    assert ratio == pytest.approx(1.0307, abs=5e-5)


# -- auto.py ------------------------------------------------------------------------------

AUTO_QUERIES = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("r", "pmw", domain_size=8, ranges=True),
)


def _auto_workload(ticks=40, seed=9, most=6):
    rng = np.random.default_rng(seed)
    live, out, k = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.integers(0, most))):
            item = (0, int(rng.integers(4)), int(rng.integers(8)))
            if live and rng.random() < 0.35:
                eid = live[int(rng.integers(len(live)))]
                if rng.random() < 0.3:
                    ups.append(Update("upsert", eid, item))
                else:
                    live.remove(eid)
                    ups.append(Update("delete", eid))
            else:
                live.append(f"e{k}")
                ups.append(Update("insert", f"e{k}", item))
                k += 1
        out.append((tick, ups))
    return out


def _answers(results):
    return [
        (a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate), a.error_bound, a.beta)
        for r in results
        for a in r.answers
    ]


@pytest.mark.parametrize("release", [ReleaseIdentity("auto-parts"), None])
def test_auto_releases_exactly_what_its_parts_release_standalone(release):
    """``auto`` over a count, a histogram and a PMW set is its two registered
    parts, each built with its share, the stream, the cadence, the end, the
    options and node emission, and driven with its own sub-key: answers, bounds,
    closes, events, node outputs, next wake, finish and update count all equal
    the parts run standalone (with and without a release identity on the key).
    Kills auto.AutoRelease.__init__ mutmut_5/6/8/9/11/12/14/15/27/29/30/33/35/36,
    _apply mutmut_15/27/28, _merge mutmut_11/12/14, _next_wake mutmut_1-4,
    _noise mutmut_5, _sub_configs mutmut_21/23, drain_node_outputs mutmut_2."""
    from transforms.core.continual.auto import AutoOptions, AutoRelease
    from transforms.core.continual.fully_dynamic import FullyDynamicRelease
    from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease

    config = DynamicConfig(AUTO_QUERIES, PureDP(3.0))
    opts = AutoOptions(counter="binary_tree", horizon=64)
    auto = AutoRelease(config, stream="s1", emit_nodes=True, end_tick=40, every_ticks=2, options=opts)
    assert auto.stream == "s1" and auto.options == opts and auto.every_ticks == 2 and auto.emit_nodes
    base = NoiseSource(KEY)
    noise = base.for_release(release) if release is not None else base
    rid = release.release_id if release is not None else ""
    nc = NetChangeRelease(
        dataclasses.replace(config, queries=AUTO_QUERIES[:2], budget=PureDP(2.0)),
        stream="s1",
        emit_nodes=True,
        end_tick=40,
        every_ticks=2,
        options=NetChangeOptions("binary_tree", 64),
    )
    fd = FullyDynamicRelease(
        dataclasses.replace(config, queries=AUTO_QUERIES[2:], budget=PureDP(1.0)),
        stream="s1",
        emit_nodes=True,
        end_tick=40,
        every_ticks=2,
    )
    parts = [
        (nc, noise.for_release(ReleaseIdentity(f"{rid}/auto/net_change")), (0, 1)),
        (fd, noise.for_release(ReleaseIdentity(f"{rid}/auto/fully_dynamic")), (2,)),
    ]
    got, want, got_nodes, want_nodes, n_updates, seen_wakes, fd_closes = [], [], [], [], 0, 0, set()
    for tick, ups in _auto_workload(most=200):  # busy enough for the sparse vector to close segments
        got.append(auto.process_tick(tick, ups, noise))
        n_updates += sum(2 if u.op == "upsert" else 1 for u in ups)
        for core, sub_noise, cols in parts:
            sub_ups = [u if u.item is None else Update(u.op, u.entry_id, tuple(u.item[c] for c in cols)) for u in ups]
            want.append(core.process_tick(tick, sub_ups, sub_noise))
            fd_closes.update(want[-1].closes if core is fd else ())
        got_nodes += auto.drain_node_outputs()
        for core, _, _ in parts:
            want_nodes += core.drain_node_outputs()
        wakes = [w for w in (nc.next_wake, fd.next_wake) if w is not None]
        assert auto.next_wake == (min(wakes) if wakes else None)
        seen_wakes += bool(wakes)
    got += auto.run_to_end(noise)
    for core, sub_noise, _ in parts:
        want += core.run_to_end(sub_noise)
    fd_closes.update(t for r in want for t in r.closes if r.answers and r.answers[0].query == "r")
    got_nodes += auto.drain_node_outputs()
    for core, _, _ in parts:
        want_nodes += core.drain_node_outputs()
    order = {"n": 0, "h": 1, "r": 2}
    key = lambda a: (a[1], order[a[3]])  # noqa: E731
    assert sorted(_answers(got), key=key) == sorted(_answers(want), key=key)
    assert any(a[3] == "r" for a in _answers(got)) and any(a[3] == "n" for a in _answers(got))
    assert sorted(t for r in got for t in r.closes) == sorted({t for r in want for t in r.closes})
    assert fd_closes - {2, 4, 16, 40}, fd_closes  # closes the data decided (the partition saw the updates)
    assert [e for r in got for e in r.events] == [(40, "ended")]
    assert auto.finished and auto.finished_reason == "ended" and auto.next_wake is None
    assert auto.num_updates == n_updates and seen_wakes
    assert {n.kind for n in got_nodes} and len(got_nodes) == len(want_nodes)
    assert sorted((n.tick, n.node, n.kind, n.query) for n in got_nodes) == sorted(
        (n.tick, n.node, n.kind, n.query) for n in want_nodes
    )


def test_auto_state_round_trip_with_a_pmw_part():
    """Restoring an ``auto`` whose plan has a fully-dynamic part gives each part
    its configuration and options back, and the run continues identically.
    Kills auto.AutoRelease._restore_config__mutmut_7 (the PMW part configured
    without its options)."""
    from transforms.core.continual.auto import AutoRelease
    from transforms.core.foundation.state import decode, encode

    config = DynamicConfig(AUTO_QUERIES, PureDP(3.0))
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("auto-state"))
    batches = _auto_workload()
    a = AutoRelease(config, stream="s", end_tick=40, every_ticks=1)
    b = AutoRelease(config, stream="s", end_tick=40, every_ticks=1)
    for tick, ups in batches[:15]:
        a.process_tick(tick, ups, noise)
        b.process_tick(tick, ups, noise)
    b = AutoRelease.from_state(config, decode(encode(b.to_state())), end_tick=40, every_ticks=1)
    ra = [a.process_tick(t, u, noise) for t, u in batches[15:]] + a.run_to_end(noise)
    rb = [b.process_tick(t, u, noise) for t, u in batches[15:]] + b.run_to_end(noise)
    assert _answers(ra) == _answers(rb) and any(x[3] == "r" for x in _answers(ra))


def test_auto_options_are_checked_and_the_plan_says_why():
    """``AutoOptions`` validates like ``net_change``'s (a horizon of 0 periods is
    refused), an ``auto`` core keeps its stream name (default ``default``), and
    the plan's reasons are the ones the run summary prints.
    Kills auto.AutoOptions.__post_init__ mutmut_2/4, AutoRelease.__init__ mutmut_1/2/3
    and plan mutmut_13/21/22/23/24/29/37/38/39."""
    from transforms.core.continual.auto import AutoOptions, AutoRelease, plan

    with pytest.raises(ValueError, match="horizon"):
        AutoOptions(horizon=0)
    config = DynamicConfig(AUTO_QUERIES, PureDP(3.0))
    core = AutoRelease(config)
    assert core.stream == "default" and core.emit_nodes is False
    assert [p.reason for p in plan(config)] == [
        "additive queries: one counter over the signed change per period; error independent of the data size "
        "and the stream length",
        "private multiplicative weights: Qiu-Yi's tree, error in the data size n_t, not the stream length",
    ]


def test_digit_totals_equal_the_brute_force_sums():
    """``_digit_total(T, size, radix)`` = sum_{t<=T} (t // size) mod radix (the
    closed form kary_radices ranks trees with), and without a radix the plain sum.
    Kills factorization._digit_total__mutmut_7/14/16/27/34/35."""
    from transforms.core.counters.factorization import _digit_total

    for horizon in (1, 7, 30, 64, 100, 243):
        for size in (1, 2, 3, 5, 8):
            for radix in (None, 2, 3, 7):
                want = sum((t // size) % radix if radix else t // size for t in range(1, horizon + 1))
                assert _digit_total(horizon, size, radix) == want, (horizon, size, radix)


def test_kary_radices_is_the_least_mean_variance_over_its_family():
    """An independent search over the documented family (radix sequences of
    values k and k + 1, both orders, product <= T, T^(1/levels) - 1 <= k <=
    T^(1/(levels - 1)) + 1, every number of levels)
    ranked by ``kary_variance_path``'s mean finds the same mean variance as
    ``kary_radices``, for every T up to 300 and a few powers.
    Kills factorization.kary_radices__mutmut_72 (sequences of the wrong length)
    and mutmut_76 (a product equal to T excluded)."""
    from transforms.core.counters.factorization import kary_radices, kary_variance_path

    def family_best(T, exponent):
        best = float("inf")
        for levels in range(1, max(2, T.bit_length()) + 1):
            seqs = {()} if levels == 1 else set()
            lo = max(2, int(T ** (1.0 / levels)) - 1)  # the documented range of k
            hi = int(T ** (1.0 / (levels - 1)) + 1e-9) + 1 if levels > 1 else 0
            for k in range(lo, hi + 1) if levels > 1 else ():
                for n_up in range(levels):
                    seq = [k + 1] * n_up + [k] * (levels - 1 - n_up)
                    if math.prod(seq) <= T:
                        seqs.update({tuple(seq), tuple(reversed(seq))})
            for rad in seqs:
                best = min(best, float(kary_variance_path(T, rad, float((len(rad) + 1) ** exponent)).mean()))
        return best

    for T in [*range(2, 301), 512, 625, 729, 1024]:
        for exponent in (1, 2):
            rad = kary_radices(T, exponent)
            got = float(kary_variance_path(T, rad, float((len(rad) + 1) ** exponent)).mean())
            assert got == pytest.approx(family_best(T, exponent), rel=1e-9), (T, exponent, rad)


def test_unit_sensitivities_of_a_box_that_is_not_one_of_the_built_in_types():
    """A subclass of a built-in box goes through the generic branch: its own l1
    and l2 (l2^2 rounded up by 2^-40), as charged by the lattice counters.
    Kills factorization._unit_sensitivities__mutmut_41."""
    from transforms.core.counters.factorization import _unit_sensitivities

    class MyCount(CountMechanism):
        pass

    l1, l2sq = _unit_sensitivities(MyCount(1, "gaussian"))
    assert l1 == 1 and l2sq == 1 + Fraction(1, 1 << 40)


def test_gaussian_delta_curve_and_tight_calibration_hold_their_target():
    """delta(eps) of the continuous Gaussian is 0 without signal (mu = 0), and the
    tight calibration's rho gives at most the target delta, with the slack the
    docstring states (the rounding goes down, never up).
    Kills factorization.analytic_gaussian_delta__mutmut_3 and
    gaussian_rho_for_approx_tight__mutmut_47 (rounded up by 1e-12)."""
    from transforms.core.counters.factorization import (
        _DELTA_FACTOR,
        _EPS_SLACK,
        _FLOAT_MARGIN,
        analytic_gaussian_delta,
        gaussian_rho_for_approx_tight,
    )

    assert analytic_gaussian_delta(1.0, 0.0) == 0.0
    for eps, delta in ((0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (4.0, 1e-5), (0.1, 1e-3)):
        gaussian_rho_for_approx_tight.cache_clear()
        rho = gaussian_rho_for_approx_tight(eps, delta)
        target = delta / _DELTA_FACTOR / (1 + _FLOAT_MARGIN)
        assert analytic_gaussian_delta(eps - _EPS_SLACK, math.sqrt(2 * rho)) <= target
        # and the bisection is tight: 1e-9 more rho breaks the target
        assert analytic_gaussian_delta(eps - _EPS_SLACK, math.sqrt(2 * rho * (1 + 1e-9))) > target


def test_lattice_tables_refuse_coefficients_that_break_the_decoder():
    """The lattice matrix K must have c_0 = 2^bits, positive, non-increasing
    coefficients and c_1 < c_0 (else the decoder is unstable): each violation is
    refused. Kills factorization._Tables.__init__ mutmut_7/18/21."""
    from transforms.core.counters.factorization import LATTICE_BITS, _Tables

    one = 1 << LATTICE_BITS
    _Tables(np.array([one, one // 2, one // 4]), 4)  # valid
    for bad in (
        [one, one // 2, one // 2 + 1],  # increases by 1
        [one - 1, one // 2],  # c_0 is not 1
        [one, one],  # c_1 = c_0: with two coefficients
        [one, 0],  # not positive
    ):
        with pytest.raises(AssertionError):
            _Tables(np.array(bad), 4)


def test_variance_path_past_the_precomputed_coefficients_continues_the_table():
    """``toeplitz_variance_path`` past the precomputed rows extends the same curve
    (the first rows equal the table's).
    Kills factorization.toeplitz_variance_path__mutmut_50 (wrong lattice scale)."""
    from transforms.core.counters.factorization import _blt_tables, toeplitz_variance_path

    n = len(_blt_tables(3, 2).bsq)
    short = toeplitz_variance_path("blt", 8, steps=n)
    long = toeplitz_variance_path("blt", 8, steps=n + 40)
    np.testing.assert_allclose(long[:n], short, rtol=1e-9)
    assert np.all(np.diff(long) >= 0)


def test_kary_tree_charges_under_its_own_named_scope():
    """The k-ary tree charges its nodes under a child scope named after it
    (sequential across levels), as the ledger plan reads them.
    Kills factorization.KaryTreeCounter.__init____mutmut_51 (an unnamed scope)."""
    from transforms.core.counters.factorization import KaryTreeCounter

    ledger = Ledger(PureDP(1.0), keep_records=True)
    c = KaryTreeCounter(CountMechanism(), PureDP(1.0), horizon=9, scope=ledger.root)
    for _ in range(9):
        c.step(np.array([1]), NoiseSource(KEY))
    assert ledger.records and all(r.scope[0] == "kary_tree" for r in ledger.records)


def test_lattice_counters_pickle_mid_stream_and_continue_identically():
    """A lattice counter pickled mid-stream (its derived tables dropped and
    rebuilt) continues exactly as the original.
    Kills factorization._LatticeToeplitzCounter.__getstate__ mutmut_2/5."""
    import pickle

    from transforms.core.counters.factorization import BLTCounter, SqrtFactorizationCounter

    for cls in (SqrtFactorizationCounter, BLTCounter):
        a = cls(CountMechanism(1, "gaussian"), ZCDP(1.0), horizon=32)
        noise = NoiseSource(KEY)
        for t in range(10):
            a.step(np.array([t % 3]), noise)
        assert "_tab" not in a.__getstate__()  # derived tables are rebuilt, not stored
        b = pickle.loads(pickle.dumps(a))
        for t in range(10, 32):
            assert np.array_equal(a.step(np.array([t % 3]), noise), b.step(np.array([t % 3]), noise))
        assert a.variance() == b.variance()


# -- the mechanism families of issues 16-18 -----------------------------------------------


def test_new_families_validate_their_shapes():
    """HDCR's branching must be >= 2 (and a bad window names the key); a survey
    needs at least two answers; a randomized-response design takes exactly one
    histogram query set.
    Kills changelog.HDCROptions.__post_init____mutmut_8, _11,
    rr_client.SurveyDesign.__post_init____mutmut_2, local_dp.design_for__mutmut_1."""
    from transforms.core.families.changelog import HDCROptions
    from transforms.core.families.local_dp import RROptions, design_for
    from transforms.core.families.rr_client import AtMostK, SurveyDesign

    with pytest.raises(ValueError, match="branching"):
        HDCROptions(branching=1)
    with pytest.raises(ValueError, match="^window"):
        HDCROptions(window=0)
    with pytest.raises(ValueError, match="at least 2 values"):
        SurveyDesign(1, 1.0, 0.0, AtMostK(1))
    two = DynamicConfig(
        (QuerySet("a", "histogram", domain_size=3), QuerySet("b", "histogram", domain_size=3)), PureDP(4.0)
    )
    with pytest.raises(ValueError, match="exactly one histogram"):
        design_for(two, RROptions())


@pytest.mark.parametrize("kind", ["dcr", "hdcr"])
def test_changelog_releases_fall_due_inside_a_gap_of_the_data(kind):
    """With a release every tick, data at ticks 1 and 6 only: the apply at tick 6
    returns the releases of ticks 2 to 5 (carried, noise off: exact) before tick
    6's. Kills changelog._ChangelogRelease._apply__mutmut_3 (the gap's releases
    dropped)."""
    from transforms.core import MECHANISMS

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS[kind].core_cls(config, stream="s", end_tick=8, every_ticks=1)
    off = NoiseSource.disabled()
    first = core.process_tick(1, [Update("insert", "a", (0,)), Update("insert", "b", (0,))], off)
    later = core.process_tick(6, [Update("delete", "a")], off)
    assert [a.tick for a in first.answers] == [1]
    assert [(a.tick, float(a.estimate[0])) for a in later.answers] == [(2, 2.0), (3, 2.0), (4, 2.0), (5, 2.0), (6, 1.0)]


def test_rr_client_ledger_holds_the_fold_of_an_approximate_report():
    """A client's ledger holds fold x (eps_r, delta_r) (Pan Cor. 5.1: 2k-fold for
    at most k mutations), under (eps, delta) reports as under pure ones.
    Kills rr_client.RRClient.__init____mutmut_28 (eps divided by the fold)."""
    from transforms.core.families.rr_client import AtMostK, RRClient, SurveyDesign

    for delta in (0.0, 1e-6):
        d = SurveyDesign(3, 0.5, delta, AtMostK(2))
        cap = RRClient(d).ledger.budget
        assert d.fold == 4
        assert cap == (PureDP(2.0) if delta == 0 else ApproxDP(2.0, 4e-6))


def test_local_dp_reference_runs_to_the_end_and_node_counts_count():
    """The in-memory collector releases every period up to the end even when the
    reports stop early, and ``node_counts`` gives #new=r - #old=r per cell, the
    cells each report's mutation touches and the report count.
    Kills local_dp.in_memory__mutmut_37 and node_counts__mutmut_12."""
    from transforms.core.families.local_dp import (
        RandomizedResponseCollector,
        RROptions,
        in_memory,
        node_counts,
        simulate,
    )
    from transforms.core.families.rr_client import symbol_of

    config = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(16.0))
    coll = RandomizedResponseCollector(config, options=RROptions(max_mutations=2), end_tick=10)
    sim = simulate(coll.design, 40, 4, seed=2)  # reports for periods 1-4 only
    assert [r.tick for r in in_memory(coll, sim.reports, 10)] == list(range(1, 11))
    symbols = [symbol_of(None, 0, 3), symbol_of(0, 2, 3), symbol_of(1, 1, 3), symbol_of(2, None, 3)]
    diff, touch, n = node_counts(symbols, 3)
    assert n == 4 and diff == [1 - 1, 0, 1 - 1] and touch == [2, 0, 2]


def test_growing_query_driver_answers_in_time_then_id_order_with_their_ids():
    """``run_with_queries`` (the reference of the Beam query join) answers a
    tick's queries in (time, id) order, each under its own id, and equals the
    core driven by hand. Two queries share a tick and a time, their rows
    ordered against their ids. Kills growing.run_with_queries__mutmut_1 (no
    query table), _9 (sorted by row instead of id) and _39 (answers without
    their ids)."""
    from transforms.core.families.growing import PMWGOptions, PMWGRelease, run_with_queries

    config = DynamicConfig((QuerySet("x", "histogram", domain_size=3),), PureDP(4.0))
    opts = PMWGOptions(alpha=0.2, n0=5, hard_per_phase=3)
    rows = {"qa": (1.0, 1.0, 0.0), "qb": (0.0, 0.0, 1.0), "qc": (0.0, 1.0, 0.0)}
    queries = [(4, 3.5, "qb", rows["qb"]), (4, 3.5, "qa", rows["qa"]), (2, 1.2, "qc", rows["qc"])]
    by_tick = {t: [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(4)] for t in (1, 3, 4)}
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-growing-queries"))

    _, answered = run_with_queries(PMWGRelease(config, stream="s", options=opts, end_tick=6), by_tick, queries, noise)
    assert [a.query_id for a in answered] == ["qc", "qa", "qb"]

    core = PMWGRelease(config, stream="s", options=opts, end_tick=6)
    want = []
    for t in (1, 2, 3, 4):
        if t in by_tick:
            core.process_tick(t, by_tick[t], noise)
        elif t > core.last_tick:
            core.advance(t, noise)
        for qid in {2: ["qc"], 4: ["qa", "qb"]}.get(t, []):
            want.append(core.answer_query(t, qid, rows[qid], noise))
    assert [(a.query_id, a.tick, a.answer, a.bound, a.hard) for a in answered] == [
        (a.query_id, a.tick, a.answer, a.bound, a.hard) for a in want
    ]


def test_growing_node_outputs_carry_their_epoch():
    """Every node output of a growing release names the epoch it belongs to
    (``segment``: the closes so far); a size release (``n_hat``) is epoch e's
    close, so its segment equals its node; the static re-runs after it share it.
    Kills growing._GrowingRelease._log__mutmut_4 (no epoch)."""
    from transforms.core.families.growing import BBSchedulerOptions, BBSchedulerRelease

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = BBSchedulerRelease(config, stream="s", emit_nodes=True, options=BBSchedulerOptions(n0=10, eta=0.5))
    noise = NoiseSource.disabled()
    for t in range(1, 80):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
    outs = core.drain_node_outputs()
    sizes = [o for o in outs if o.kind == "n_hat"]
    assert len(sizes) >= 3 and all(o.segment == o.node for o in sizes)
    closes = 0
    for o in outs:
        closes += o.kind == "n_hat"
        assert o.segment == closes, (o.kind, o.tick)


def test_simulated_refused_mutation_comes_after_the_entry_starts():
    """The simulator's one mutation too many (``violate``) falls after the
    entry's insertion. Two periods, at most one mutation: an entry inserted in
    period 1 tries (and is refused) a second one in period 2; one inserted in
    period 2 has no room. So the refusals equal the entries present in period 1.
    Kills local_dp.simulate__mutmut_72 (the extra mutation drawn from any
    period, also before the insertion, or at a period 0 that never comes)."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.families.rr_client import AtMostK, SurveyDesign

    design = SurveyDesign(3, 1.0, 0.0, AtMostK(1))
    for seed in range(3):
        sim = simulate(design, 200, 2, seed=seed, violate=1.0)
        assert 0 < sim.refused == sum(sim.truth[0]) < 200


def test_growing_options_refuse_values_outside_their_open_intervals():
    """alpha and growth_fraction in (0, 1), eta and decay in (0, 10), each
    refused at and beyond the ends with a message that starts with its name.
    Kills growing._check_fraction__mutmut_3 (``and``: nothing refused),
    _8 (the upper end allowed) and BBImproverOptions.__post_init____mutmut_20
    (the message's name)."""
    from transforms.core.families.growing import BBImproverOptions, BBSchedulerOptions, PMWGOptions

    cases = [
        (PMWGOptions, "alpha", (0.0, 1.0, 1.5, -0.2), 0.999),
        (BBSchedulerOptions, "growth_fraction", (0.0, 1.0, 2.0), 0.5),
        (BBSchedulerOptions, "eta", (0.0, 10.0, 11.0), 9.99),
        (BBImproverOptions, "decay", (0.0, 10.0, 12.5), 9.99),
    ]
    for cls, field, bad, good in cases:
        for v in bad:
            with pytest.raises(ValueError, match=rf"^{field} must be a number in"):
                cls(**{field: v})
        assert getattr(cls(**{field: good}), field) == good


def test_pmwg_charges_its_own_scope_and_answers_exactly_without_noise():
    """PMWG's rounds are charged under the ledger scope ``pmwg``; with noise
    off a streamed query is answered exactly (row . histogram), and the
    periodic releases between closes (``every_ticks``) are the exact answers
    at every period end. Kills growing.PMWGRelease.__init____mutmut_16 (scope
    name), answer_query__mutmut_32 (no noiseless answer), _between__mutmut_6
    (the noiseless rows without the domain), _GrowingRelease._apply__mutmut_11
    and _periods__mutmut_6 (periods never or always skipped)."""
    from transforms.core.families.growing import PMWGOptions, PMWGRelease

    config = DynamicConfig((QuerySet("x", "histogram", domain_size=3),), PureDP(2.0))
    opts = PMWGOptions(alpha=0.2, n0=6, hard_per_phase=3)
    on = PMWGRelease(config, stream="s", options=opts, end_tick=30)
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-pmwg-scope"))
    for t in range(1, 31):
        on.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)], noise)
    assert "pmwg" in on.ledger.root.children and on.spent.epsilon > 0

    core = PMWGRelease(config, stream="s", options=opts, end_tick=30, every_ticks=5)
    off = NoiseSource.disabled()
    hist, hists, periodic = np.zeros(3), {}, {}
    for t in range(1, 31):
        ups = [Update("insert", f"e{t}-{j}", ((t + j) % 3,)) for j in range(t % 3 + 1)]
        res = core.process_tick(t, ups, off)
        periodic.update({a.tick: a.estimate.tolist() for a in res.answers})
        for u in ups:
            hist[u.item[0]] += 1
        hists[t] = hist.tolist()
        if t == 17:
            q = core.answer_query(t, "q", (1.0, 0.0, 1.0), off)
            assert (q.answer, q.bound, q.hard) == (hist[0] + hist[2], 0.0, False)
    assert set(periodic) == {5, 10, 15, 20, 25, 30} and all(periodic[t] == hists[t] for t in periodic), periodic


def test_black_box_bound_of_a_pmw_set_uses_the_released_size():
    """``bb_scheduler`` over a ``pmw`` query set with noise on: its bound comes
    from the noisy size released with the run (finite, positive). Kills
    growing._BlackBoxRelease._bound__mutmut_13 (the size dropped)."""
    from transforms.core.families.growing import BBSchedulerOptions, BBSchedulerRelease

    config = DynamicConfig((QuerySet("r", "pmw", domain_size=4, ranges=True),), PureDP(2.0))
    core = BBSchedulerRelease(config, stream="s", options=BBSchedulerOptions(n0=20, eta=0.5))
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-bb-pmw-bound"))
    bounds = []
    for t in range(1, 60):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 4,)) for j in range(3)], noise)
        bounds += [a.error_bound for a in res.answers]
    assert bounds and all(0 < b < math.inf for b in bounds)


def test_changelog_call_budget_divides_by_the_sensitivity_ratio():
    """A node's static release of an entry's change (sensitivity ``ratio``
    items) is drawn at the node budget divided by the ratio (eps / r; rho /
    r^2), for every budget kind; a histogram's ratio is 2 (L1) or sqrt 2 (L2).
    Kills changelog._call_budget__mutmut_4 (rho multiplied) and _11 (eps
    multiplied under (eps, delta)): privacy breaks."""
    from transforms.core import MECHANISMS
    from transforms.core.families.changelog import _call_budget

    assert _call_budget(PureDP(1.0), 2.0) == PureDP(0.5)
    assert _call_budget(ApproxDP(1.0, 1e-6), 2.0) == ApproxDP(0.5, 1e-6)
    assert _call_budget(ZCDP(1.0), 2.0) == ZCDP(0.25)
    assert _call_budget(ZCDP(1.0), 1.0) == ZCDP(1.0)
    for budget in (ZCDP(0.5), ApproxDP(1.0, 1e-6), PureDP(1.0)):
        config = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), budget)
        core = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=16)
        node, call = core.node_budget, core.call_budgets[0]
        assert type(call) is type(node)
        if isinstance(node, ZCDP):  # (eps, delta) budgets run as zCDP here (Gaussian noise)
            assert call.rho == pytest.approx(node.rho / 2)  # rho / sqrt(2)^2
        else:
            assert call.epsilon == pytest.approx(node.epsilon / 2)


def test_changelog_entry_ratio_of_small_linear_queries():
    """The entry sensitivity ratio of a linear query set, against the pairs of
    its columns and the absent entry: 1 when one column dominates, 2 for two
    disjoint rows (L1), sqrt 2 in L2, also when every entry is below 1. Kills
    changelog.entry_sensitivity_ratio__mutmut_41 (the search started at 1)."""
    from transforms.core.families.changelog import entry_sensitivity_ratio

    assert entry_sensitivity_ratio(LinearQueryMechanism(((0.2, 0.1, 0.0),))) == pytest.approx(1.0)
    two = ((0.3, 0.0), (0.0, 0.3))
    assert entry_sensitivity_ratio(LinearQueryMechanism(two)) == pytest.approx(2.0)
    assert entry_sensitivity_ratio(LinearQueryMechanism(two, noise="gaussian")) == pytest.approx(math.sqrt(2))


def test_changelog_plan_choices_and_top_layer_coordinates():
    """SWCR's automatic choices: the branching c of the derived HDCR minimises
    (the most nodes any window needs) x (the node variance weight of its
    folds), checked against a brute force over windows; and the direct method
    is taken where it is no worse. HDCR over a horizon of one unit has one
    layer. The top layer's prefix sums have their own noise coordinates. Kills
    changelog.SWCRRelease._plan__mutmut_111 (c never improved), _152 (direct
    never chosen), _ChangelogRelease._horizon_units__mutmut_6 (a one-unit
    horizon taken as two) and _PrefixRelease._node_coords__mutmut_5."""
    from transforms.core import MECHANISMS
    from transforms.core.families.changelog import HDCROptions, SWCROptions, _variance_weight, cover, hdcr_layer_folds
    from transforms.core.foundation.accounting import PrivacyUnit

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), unit=PrivacyUnit.entry(4))
    core = MECHANISMS["swcr"].core_cls(config, stream="s", end_tick=400, options=SWCROptions(window=64, period=1))

    def score(c, h):
        most = max(len(cover(max(0, r - 64), r, c, h)) for r in range(1, 64 + 2 * c**h))
        return most * _variance_weight("laplace", sum(hdcr_layer_folds(h, c, 4, None, 1)))

    best = min(score(c, max(1, math.ceil(math.log(64, c) - 1e-9))) for c in range(2, 33))
    assert not core.direct and core.c != 2 and score(core.c, core.h) == pytest.approx(best)
    short = MECHANISMS["swcr"].core_cls(config, stream="s", end_tick=400, options=SWCROptions(window=2, period=2))
    assert short.direct and short.h == 1
    one = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=1, options=HDCROptions(branching=2))
    assert (one.c, one.h) == (2, 1)
    tree = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=64, options=HDCROptions(branching=2, height=3))
    assert tree._node_coords(0, (2, 5), 0) == ("s", "hdcr", "n", "layer", 2, "nodes", 1, 5)


def test_changelog_keeps_only_the_nodes_it_still_needs():
    """A layer-i node is dropped once its parent closes: over 300 units of an
    HDCR (c = 2, h = 4) the stored nodes stay at most c per lower layer plus the
    top layer's. Kills changelog._PrefixRelease._prune__mutmut_4 (never pruned:
    state grows with time)."""
    from transforms.core import MECHANISMS
    from transforms.core.families.changelog import HDCROptions

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=300, options=HDCROptions(branching=2, height=4))
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-changelog-prune"))
    most = 0
    for t in range(1, 301):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
        lower = [key for key in core.nodes[0] if key[0] < core.h - 1]
        most = max(most, len(lower))
    assert 0 < most <= 2 * (core.h - 1)


def test_simulator_keeps_time_bounded_entries_inside_their_bound():
    """Under a time bound, the simulated entries plan their mutations within the
    bound of their insertion, so without ``violate`` no client refuses anything
    (and with it, some do). Kills local_dp.simulate__mutmut_22 (mutations
    planned to the last period, past the bound)."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.families.rr_client import SurveyDesign, TimeBounded

    design = SurveyDesign(3, 1.0, 0.0, TimeBounded(2))
    assert simulate(design, 200, 12, seed=4).refused == 0
    assert simulate(design, 200, 12, seed=4, violate=0.5).refused > 0
