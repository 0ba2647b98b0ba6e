"""Tests written for the survivors of the mutation round of session 44, group c (``transforms/core/continual/``,
``static/``, ``config.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 mutants a module). Each asserts a
property of the module (a stated bound against the law of its noise, a budget split, a refusal the contract states,
the released values and their fields), never a pinned value, and names in a comment the mutant(s) it kills (checked
with ``python -m benchmarks.mutation_fast confirm NAME TEST``: passes without the mutant, fails with it). Fast: in
memory, no Beam."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from transforms.core import MECHANISMS, ZCDP, ApproxDP, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.config import BudgetProfile
from transforms.core.continual import partition
from transforms.core.continual.auto import AutoOptions
from transforms.core.continual.consistency import Consistency, make_consistent, own_total_histogram, simplex_projection
from transforms.core.continual.fully_dynamic_node import FullyDynamicNode, fenwick_chain, reuse_round_weight
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.continual.partition import InfinitePartitioner, PartitionParams, geometric_capped
from transforms.core.contribution.sensitivity import contribution_sensitivity
from transforms.core.contribution.units import ContributionUnit
from transforms.core.foundation.accounting import PrivacyUnit, as_vector, zeta
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import as_ratio_up, discrete_laplace
from transforms.core.foundation.outputs import Answer
from transforms.core.static.linear import CountMechanism, HistogramMechanism, LinearQueryMechanism
from transforms.core.static.pmw import PMWMechanism, range_answers

KEY = bytes(range(32))


def _dlap_pmf(scale: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    """The discrete Laplace law of scale ``t`` on ``[-w, w]``: ``P(k) = (1 - q) / (1 + q) q^|k|``, ``q = e^(-1/t)``."""
    q = math.exp(-1.0 / scale)
    k = np.arange(-half_width, half_width + 1)
    return k, (1 - q) / (1 + q) * q ** np.abs(k)


def _dgauss_pmf(sigma2: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    """The discrete Gaussian law of parameter ``sigma^2`` on ``[-w, w]`` (normalised there: ``w`` is many sigmas)."""
    k = np.arange(-half_width, half_width + 1)
    w = np.exp(-(k.astype(float) ** 2) / (2 * sigma2))
    return k, w / w.sum()


# kills transforms.core.static.linear.xǁStaticMechanismǁalpha__mutmut_6 (the union bound over the m answers taken at
# beta * m instead of beta / m: for m > 1 the stated bound is exceeded by some answer far more often than beta)
@pytest.mark.parametrize("d", [4, 16])
@pytest.mark.parametrize("budget", [PureDP(1.0), PureDP(0.3), ZCDP(0.5)], ids=["eps1", "eps03", "zcdp"])
@pytest.mark.parametrize("k", [1, 3])
def test_a_static_alpha_holds_for_every_answer_at_once(d, budget, k):
    """``alpha^(k)(beta)`` bounds every one of the ``m`` answers of a sum of ``k`` releases at once w.p. ``1 - beta``:
    the exact law of the sum of ``k`` independent noises of one answer (the discrete law the release draws, at its
    calibrated parameter, convolved k times) gives ``1 - (1 - P(|Z| > alpha))^m <= beta``."""
    noise = "gaussian" if isinstance(budget, ZCDP) else "laplace"
    mech = HistogramMechanism(d, noise)
    ((kind, param, _),) = mech.noise_profile(budget).terms
    if noise == "laplace":
        ks, p = _dlap_pmf(param, int(80 * param) + 40)
    else:
        ks, p = _dgauss_pmf(param, int(40 * math.sqrt(param)) + 40)
    law = p
    for _ in range(k - 1):
        law = np.convolve(law, p)
    w = (len(law) - 1) // 2
    ks = np.arange(-w, w + 1)
    for beta in (0.05, 0.2):
        a = mech.alpha(budget, beta, k=k)
        tail = float(law[np.abs(ks) > a].sum())
        assert 1 - (1 - tail) ** mech.num_queries <= beta, (beta, a, tail)


# kills transforms.core.continual.consistency.x_simplex_projection__mutmut_6 (only a total that is negative AND not
# finite refused: -1, inf and nan projected anyway)
@pytest.mark.parametrize("total", [-1.0, -1e-9, math.inf, math.nan, -math.inf])
def test_a_simplex_projection_refuses_a_total_that_is_negative_or_not_finite(total):
    """The simplex ``{h >= 0, sum(h) = total}`` is empty for a negative total and meaningless for inf / nan: refused
    with the total named."""
    with pytest.raises(ValueError, match="total must be finite and >= 0"):
        simplex_projection(np.array([1.0, 2.0, 3.0]), total)


# kills transforms.core.continual.consistency.x_simplex_projection__mutmut_43 (where float cancellation leaves no
# index qualifying, the threshold taken from the first TWO sorted cells instead of the first: the projection no longer
# sums to the total)
@pytest.mark.parametrize(
    "x,total", [([1e20, 0.0], 1.0), ([3e18, -5.0, 2.0], 7.0), ([0.0, 1e19, 1.0, 4.0], 2.5), ([1e17, 1e17], 3.0)]
)
def test_a_simplex_projection_lies_on_the_simplex_whatever_the_magnitudes(x, total):
    """The released histogram is >= 0 and sums to the total (the count it is made consistent with), also where one
    noisy cell is so large that ``u_0 - (u_0 - total)`` cancels to 0 in floating point; and it is the projection: no
    point of the simplex is closer to ``x`` than it (checked against the simplex's vertices, scaled)."""
    x = np.asarray(x, dtype=float)
    p, tau = simplex_projection(x, total)
    assert np.all(p >= 0)
    assert math.fsum(p) == pytest.approx(total, rel=1e-12)
    dist = np.linalg.norm(p - x)
    for i in range(len(x)):
        v = np.zeros(len(x))
        v[i] = total
        assert dist <= np.linalg.norm(v - x) * (1 + 1e-12) + 1e-6


# kills transforms.core.config.xǁDynamicConfigǁ__post_init____mutmut_15 (a declared horizon of one segment refused: the
# check reads max_segments < 2)
@pytest.mark.parametrize("profile", ["tuned", "tight"])
def test_a_horizon_of_one_segment_is_accepted_and_zero_refused(profile):
    """``max_segments`` must be >= 1 (its refusal says so): 1 is a valid horizon (one level, one segment), 0 is not."""
    q = (QuerySet("n", "count"),)
    cfg = DynamicConfig(q, PureDP(1.0), profile=profile, max_segments=1)
    assert cfg.max_segments == 1 and cfg.budget_profile.level_split.weight(1) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="must be >= 1"):
        DynamicConfig(q, PureDP(1.0), profile=profile, max_segments=0)


# kills transforms.core.continual.auto.xǁAutoReleaseǁcheck_settings__mutmut_21 (the fully_dynamic part's query sets
# with two different weights accepted: it splits its share evenly over them, not by the weights the user gave)
@pytest.mark.parametrize("weights", [(1.0, 2.0), (0.5, 3.0, 0.5), (1.0, 2.0, 4.0)])
def test_auto_refuses_unequal_weights_for_its_fully_dynamic_query_sets(weights):
    """``auto`` splits its budget by the query sets' weights; its ``fully_dynamic`` part cannot (it splits evenly), so
    any two different weights among its (pmw) query sets are refused, naming the setting; equal weights pass."""
    cls = MECHANISMS["auto"].core_cls

    def cfg(ws):
        q = tuple(QuerySet(f"p{i}", "pmw", domain_size=4, ranges=True, weight=w) for i, w in enumerate(ws))
        return DynamicConfig((QuerySet("n", "count"), *q), PureDP(1.0))

    with pytest.raises(ValueError, match="queries: weight: fully_dynamic"):
        cls.check_settings(cfg(weights), AutoOptions())
    cls.check_settings(cfg((2.0,) * len(weights)), AutoOptions())


# kills transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_start__mutmut_21 (the two streams' counters built
# without Honaker's estimator in the tuned profile: a larger error than the insertion-only counters they are)
@pytest.mark.parametrize(
    "budget,profile",
    [(PureDP(1.0), "paper"), (PureDP(1.0), "tuned"), (ZCDP(0.5), "tuned")],
    ids=["paper", "tuned", "z"],
)
def test_each_stream_of_the_two_stream_baseline_is_the_insertion_only_counter(budget, profile):
    """000 §1.3: the baseline runs the insertion-only mechanism twice (insertions; deletions as insertions) on one
    partitioning, each with the whole tree budget / k (parallel composition). So each of its counters states, after
    the same closes, exactly the noise law and the bound of the insertion-only release's counter (Honaker's estimator
    in the tuned profile, for additive black boxes)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, budget, profile=profile)
    two = MECHANISMS["two_stream_baseline"].core_cls(cfg, stream="s")
    ins = MECHANISMS["insertion_only"].core_cls(cfg, stream="s")
    noise = NoiseSource(KEY)
    for t in range(1, 40):
        ups = [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)]
        two.process_tick(t, ups, noise)
        ins.process_tick(t, ups, noise)
    assert two.closed == ins.closed >= 3
    for k in range(len(q)):
        for side in (two.ins[k], two.dels[k]):
            assert side.noise_profile().variance() == pytest.approx(ins.counters[k].noise_profile().variance())
            assert side.error_bound(0.05) == pytest.approx(ins.counters[k].error_bound(0.05), rel=1e-12)


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁsize_bound__mutmut_19 (a node that has
# released no size raises ValueError instead of stating no finite bound)
def test_a_node_that_released_no_size_states_no_finite_size_bound():
    """A node's size bound comes from a released noisy size (its n_hat, or a PMW release's own); a node that has
    released neither has no public bound on its size: ``inf``, so a PMW error bound from it is ``inf`` too."""
    q = (QuerySet("p", "pmw", domain_size=4, ranges=True),)
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig(q, PureDP(1.0)), stream="s")
    node = FullyDynamicNode(core, 1, [np.zeros(4, dtype=np.int64)], 0)
    assert node.size_bound(0.05) == math.inf
    assert core.mechanisms[0].alpha(PureDP(0.1), 0.05, n=node.size_bound(0.05)) == math.inf


# kills transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_counter_hists__mutmut_3 (a new node's content
# built as float histograms: its state no longer holds the exact integer counts of its live items)
@pytest.mark.parametrize("profile", ["paper", "tight"])
def test_fully_dynamic_nodes_hold_exact_integer_counts_through_a_state_round_trip(profile):
    """A node's content is the multiset of its live items: integer counts per query set (what ``_hists`` builds for
    deletions, what the static releases read), kept as integers in the state and after a restore."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, PureDP(1.0), profile=profile)
    cls = MECHANISMS["fully_dynamic"].core_cls
    core = cls(cfg, stream="s")
    noise = NoiseSource(KEY)
    for t in range(1, 25):
        ups = [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)]
        if t > 3:
            ups.append(Update("delete", f"e{t - 3}_0", None))
        core.process_tick(t, ups, noise)
    back = cls.from_state(cfg, core.to_state())
    for c in (core, back):
        assert len(c.nodes) >= 2
        for node in c.nodes.values():
            assert all(h.dtype.kind == "i" for h in node.content), (node.index, [h.dtype for h in node.content])
            assert all(int(h.sum()) == node.size for h in node.content)


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_123 (a node's static
# release logged without its values: the node output carries None) and __mutmut_42 (the same for its n_hat)
@pytest.mark.parametrize("profile", ["paper", "tuned"])
def test_a_static_node_output_carries_the_values_the_node_released(profile):
    """With ``emit_nodes``, each static release is a node output with its values: the query set's answers (one per
    query), and at the tick the node is built its ``node_answer`` (no deletion counted yet) is those values."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig(q, PureDP(1.0), profile=profile), stream="s")
    core.emit_nodes = True
    noise = NoiseSource(KEY)
    for t in range(1, 25):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)], noise)
    outs = core.drain_node_outputs()
    sizes = {"n": 1, "h": 3}
    n_hats = [np.asarray(o.values) for o in outs if o.kind == "n_hat"]
    assert (len(n_hats) > 0) == (profile == "paper" or any(n.n_hat_profile for n in core.nodes.values()))
    for v in n_hats:  # the node's released noisy size: one finite number
        assert v.shape == (1,) and v.dtype.kind in "if" and np.isfinite(v[0]), v
    answers = {(o.tick, o.node, o.query): o.values for o in outs if o.kind == "node_answer"}
    statics = [o for o in outs if o.kind == "static"]
    assert len(statics) >= 4
    for o in statics:
        v = np.asarray(o.values)
        assert v.shape == (sizes[o.query],) and v.dtype.kind in "if" and np.all(np.isfinite(v)), (o.node, v)
        if o.round == 1:
            np.testing.assert_array_equal(answers[(o.tick, o.node, o.query)], v)


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_carried_answer__mutmut_18 (the open segment's drift
# bounded at 2 beta instead of beta / 2: the carried answer's bound fails with probability up to 2.5 beta), _closes__
# mutmut_37 (the last close's bound carried at beta / 3) and baselines.xǁTwoStreamBaselineǁ_bound__mutmut_6 (the
# two-stream structure's bound for carried answers taking the deletions' counter at 2 beta: not its fresh bound)
@pytest.mark.parametrize("name", ["insertion_only", "fully_dynamic", "two_stream_baseline"])
@pytest.mark.parametrize("beta", [0.05, 0.2])
def test_a_carried_answers_bound_splits_beta_between_the_last_close_and_the_drift(name, beta):
    """Between closes a period's answer is the last close's, with the bound ``B(beta / 2) + floor(theta_j) + a``,
    ``P(Z_0 - Z_t > a) <= beta / 2`` for the partitioner's two (rounded-up) discrete Laplace scales: within it w.p.
    ``1 - beta`` (segmented.py's docstring). Checked at every period answer that is not a close."""
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0), beta=beta)
    core = MECHANISMS[name].core_cls(cfg, stream="s", end_tick=60, every_ticks=1)
    noise = NoiseSource(KEY)
    p = core.partitioner.params
    z = NoiseProfile.single("laplace", float(as_ratio_up(p.threshold_scale))) + NoiseProfile.single(
        "laplace", float(as_ratio_up(p.query_scale))
    )
    carried = 0
    for t in range(1, 61):
        res = core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(t % 3)], noise)
        if t in res.closes:  # a fresh answer: the structure's bound at beta, what _bound states for it
            for k, a in enumerate(a for a in res.answers if a.tick == t):
                assert a.error_bound == pytest.approx(core._bound(k, beta), rel=1e-12)
        if t in res.closes or core.carried is None:
            continue
        part = core.partitioner
        drift = math.floor(p.theta(max(part.j, 1), part.prev_close)) + z.tail_bound(beta / 2)
        now = [a for a in res.answers if a.tick == t]
        assert len(now) == 2
        for k, a in enumerate(now):
            assert a.error_bound == pytest.approx(core.carried[k][1] + drift, rel=1e-12)
            assert core.carried[k][1] == pytest.approx(core._bound(k, beta / 2), rel=1e-12)
            carried += 1
    assert carried >= 10


# kills transforms.core.config.xǁBudgetProfileǁtuned__mutmut_1 (BudgetProfile.tuned()'s default eta 1.5: its level
# split 1/(zeta(2.5) l^2.5), not the 1/(zeta(1.5) l^1.5) that a configuration's default and the planned cost state)
@pytest.mark.parametrize("name", ["tuned", "tight"])
def test_the_tuned_profiles_default_level_split_is_the_planned_one_over_l_to_the_1_5(name):
    """Without a declared horizon the tuned / tight levels get ``1 / (zeta(1 + eta) l^(1 + eta))``, eta = 0.5 by
    default: the profile built with its defaults is the one a configuration with its defaults uses, and its weights
    are those ``fully_dynamic``'s planned cost charges (``1 / (zeta(1.5) l^1.5)``), summing to at most 1."""
    prof = getattr(BudgetProfile, name)()
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), profile=name)
    assert prof == cfg.budget_profile
    for level in range(1, 12):
        assert prof.level_split.weight(level) == pytest.approx(1 / (zeta(1.5) * level**1.5), rel=1e-12)
    assert math.fsum(prof.level_split.weight(lv) for lv in range(1, 10**4)) <= 1


# kills transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_9 (the plan's calibrations computed for a period of
# one tick, not the configured one: it states multipliers the running release does not use) and
# transforms.core.continual.auto.xǁAutoReleaseǁ_sub_configs__mutmut_5 (the running parts' counter chosen for a period
# of one tick: with one period in the run, auto runs scaled_sqrt where its plan states sqrt_factorization)
@pytest.mark.parametrize(
    "budget,unit,end,every",
    [
        (ZCDP(0.5), PrivacyUnit.entry(2), 100, 10),
        (ZCDP(0.5), PrivacyUnit.update(), 10, 10),
        (ZCDP(0.5), PrivacyUnit.update(), 100, 7),
        (PureDP(1.0), PrivacyUnit.entry(3), 60, 4),
    ],
    ids=["entry-zcdp", "update-one-period", "update-zcdp", "entry-pure"],
)
def test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run(budget, unit, end, every):
    """The plan ``auto`` prints is what runs: for its additive part, the counter and horizon (in periods of
    ``every_ticks``) of the part's counters and, for an entry unit, each query set's multiplier, the sensitivity its
    counter's ledger scope charges at (``counter_budgets``)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, budget, unit=unit)
    cls = MECHANISMS["auto"].core_cls
    (entry,) = cls.plan(cfg, AutoOptions(), end_tick=end, every_ticks=every)
    core = cls(cfg, stream="s", end_tick=end, every_ticks=every)
    (part,) = core.parts
    assert entry.horizon == math.ceil(end / every) and part._counter_choice() == (entry.counter, entry.horizon)
    assert {c.name for c in part.counters} == {entry.counter}
    used = [m for _, m in part.counter_budgets()]
    if unit.kind == "update":
        assert entry.calibrations == () and used == [1.0, 1.0]
    else:
        assert [c.multiplier for c in entry.calibrations] == pytest.approx(used, rel=1e-12)


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_4 (a coordinate with another
# release's marker but a known query name given a plan: only coordinates wrong in both are refused)
@pytest.mark.parametrize("name", ["continual_count", "net_change"])
def test_a_counter_release_states_no_plan_for_a_coordinate_it_never_charges(name):
    """Every coordinate the release charges has its plan; a coordinate under another marker (another release's
    counters, e.g. ``count`` vs ``net``, or the baselines' ``ins``) or another query set's name has none: refused,
    naming the coordinate."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    opts = {"continual_count": {"counter": "binary_tree", "horizon": 8}, "net_change": {}}[name]
    core = MECHANISMS[name].core_cls(DynamicConfig(q, PureDP(1.0)), stream="s", end_tick=8, **opts)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 9):
        core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise)
    recs = core.ledger.records
    assert recs
    for rec in recs[:6]:
        c = rec.coordinates
        assert as_vector(core.planned_cost(c)) == pytest.approx(as_vector(rec.cost), rel=1e-12)
        for marker in {"count", "net", "ins", "del"} - {c[1]}:
            with pytest.raises(ValueError, match="no planned release"):
                core.planned_cost((c[0], marker, *c[2:]))
        with pytest.raises(ValueError, match="no planned release"):
            core.planned_cost((c[0], c[1], "nope", *c[3:]))


# kills transforms.core.continual.consistency.x_own_total_histogram__mutmut_35 (the rounded own-total histogram's bound
# minus the apportionment's 1 instead of plus: cells moved by the rounding fall outside it)
@pytest.mark.parametrize("rounded", [False, True])
def test_an_own_total_histograms_cells_are_within_its_stated_bound(rounded):
    """consistency.py's lemma: if every noisy cell is within ``B_h`` of the truth, every cell of the projection onto
    the histogram's own clamped total is within ``B_h + |tau|`` (+1 when rounded and apportioned). Checked exactly on
    histograms with adversarial noise at the edge of ``[-B_h, B_h]`` (no randomness in the verdict)."""
    rng = np.random.default_rng(20261127)
    worst = 0.0
    for _ in range(400):
        d = int(rng.integers(2, 7))
        truth = rng.integers(0, 4, size=d).astype(float)
        b_h = float(rng.choice([0.5, 1.0, 2.5]))
        e = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=d) * b_h
        p, bound = own_total_histogram(truth + e, b_h, round_answers=rounded)
        err = float(np.max(np.abs(p - truth)))
        assert bound >= b_h and err <= bound + 1e-9, (truth, e, p, bound)
        worst = max(worst, err - b_h)
    assert worst > 0  # the errors reach past B_h: the lemma's extra terms are needed


def _fully_dynamic_run(profile, budget, max_segments=None, n=300, end=20):
    """A fully-dynamic run whose early nodes lose most of their items: restarts (round 2) where the budget is large."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, budget, profile=profile, max_segments=max_segments)
    core = MECHANISMS["fully_dynamic"].core_cls(cfg, stream="s", end_tick=end, emit_nodes=True)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, end + 1):
        if t <= 4:
            ups = [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(n)]
        elif t <= 7:
            ups = [Update("delete", f"e{t - 4}_{i}", None) for i in range(n)]
        else:
            ups = [Update("insert", f"f{t}", (0, 1))]
        core.process_tick(t, ups, noise)
        if core.finished:
            break
    core.run_to_end(noise)
    return core, core.drain_node_outputs()


# kills transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_42 (the paper profile's
# round weight 6 / pi^2 for every round, not 6 / (pi^2 r^2): a restart's plan states more than it charges) and
# __mutmut_49 (with a declared horizon of segments, each level planned at bit_length times the tree budget instead of
# 1 / bit_length)
@pytest.mark.parametrize(
    "profile,budget,max_segments,restarts",
    [
        ("paper", PureDP(30.0), None, True),
        ("paper", ApproxDP(50.0, 1e-3), None, True),
        ("tuned", ZCDP(5.0), 16, True),
        ("tight", PureDP(10.0), 12, False),
    ],
    ids=["paper-pure", "paper-approx", "tuned-horizon", "tight-horizon"],
)
def test_every_fully_dynamic_charge_has_its_plan_restarts_and_declared_horizons_included(
    profile, budget, max_segments, restarts
):
    """docs/fully_dynamic.md's allocation: node i (level l), round r gets ``w_level(l) w_round(r)`` of the tree budget
    (paper: ``6 / (pi^2 l^2)``, ``6 / (pi^2 r^2)``; a declared horizon of S segments: ``1 / bit_length(S)`` per level),
    split four ways. Every charge of a run with restarts (paper) or a horizon (tuned, tight) is its plan."""
    core, nodes = _fully_dynamic_run(profile, budget, max_segments, n=500)
    tree = [r for r in core.ledger.records if r.coordinates[1] == "tree"]
    assert tree
    assert max(r.coordinates[5] for r in tree) >= (2 if restarts else 1)
    cur = core.ledger.budget.express  # the ledger's currency ((eps, delta): a pure plan is (eps, 0))
    for rec in tree:
        plan = core.planned_cost(rec.coordinates, nodes)
        assert as_vector(cur(plan)) == pytest.approx(as_vector(cur(rec.cost)), rel=1e-9, abs=1e-15), rec.coordinates


# kills transforms.core.continual.net_change.xǁNetChangeReleaseǁcalibrations__mutmut_33 (the sensitivity by
# contribution computed without the release's end: a person limit per window is then refused although the end is
# configured)
@pytest.mark.parametrize("budget", [ZCDP(0.5), PureDP(1.0)], ids=["zcdp", "pure"])
def test_a_per_window_person_limit_is_calibrated_over_the_releases_windows(budget):
    """A person limited to L entries per window of W ticks brings at most ``L ceil(end / W)`` entries over a release
    that ends: each query set's multiplier is the sensitivity by contribution for that many entries (more windows, a
    larger multiplier), computed with the release's end."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    unit = PrivacyUnit.person(2, 2, per_window=20)
    cfg = DynamicConfig(q, budget, unit=unit)
    at = {}
    for end in (20, 100):
        cal = NetChangeRelease.calibrations(cfg, NetChangeOptions(), end_tick=end, every_ticks=1)
        counter, horizon = NetChangeRelease.counter_choice(cfg, NetChangeOptions(), end, 1)
        for qs, c in zip(q, cal):
            want = contribution_sensitivity(
                qs, counter, cfg.noise_kind, ContributionUnit.of(unit), horizon=horizon, end_tick=end
            ).multiplier
            assert c.multiplier == pytest.approx(want, rel=1e-12)
        at[end] = [c.multiplier for c in cal]
    assert all(b > a for a, b in zip(at[20], at[100]))


# kills transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_9 (a query "matrix" that is a vector,
# or 3-D, accepted: only a non-2-D AND empty one refused)
@pytest.mark.parametrize("bad", [[0.5, 1.0], [[[1.0, 0.0]]], np.zeros((0, 3)), np.zeros((2, 0))])
def test_a_linear_query_set_needs_a_non_empty_matrix(bad):
    """Queries x domain: a vector, a 3-D array or an empty matrix is refused with the reason."""
    with pytest.raises(ValueError, match="non-empty 2-D array"):
        LinearQueryMechanism(bad)


# kills transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_6 (the matrix kept as given, not as real
# numbers: exact fractions in [0, 1] are refused by the finiteness check)
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_a_linear_query_matrix_of_exact_fractions_is_the_same_real_matrix(noise):
    """Entries are real numbers in [0, 1] in whatever numeric form (Python fractions, ints): the mechanism is the one
    of the same float matrix: the same lattice, sensitivities and exact answers."""
    exact = [[Fraction(1, 3), 1, 0], [0, Fraction(1, 2), Fraction(1, 4)]]
    a = LinearQueryMechanism(exact, noise)
    b = LinearQueryMechanism(np.array(exact, dtype=float), noise)
    assert (a.unit, a.l1, a.l2) == (b.unit, b.l1, b.l2)
    h = np.array([3, 0, 5])
    np.testing.assert_array_equal(a.exact(h), b.exact(h))


# kills transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_make_counter__mutmut_12 (the paper profile's
# deletion counters charged to a ledger of their own, not the node's scope: their releases never reach the stream's
# ledger) and __mutmut_35 (the same for the tight profile's square-root factorization counters)
@pytest.mark.parametrize(
    "profile,budget",
    [("paper", PureDP(1.0)), ("tight", ZCDP(0.5)), ("tuned", PureDP(1.0))],
    ids=["paper", "tight", "tuned"],
)
def test_every_node_counter_release_is_charged_to_the_streams_ledger(profile, budget):
    """fully_dynamic.py: "every release is charged to the stream's ledger before its noise is drawn". Each release a
    node's deletion counters log (``emit_nodes``) has its charge in the stream's ledger: at the same coordinates and
    cost (tree counters), or, for a lattice counter, which charges its whole budget once at its first step, at the
    counter's coordinates (the log's without its step) with that step's cost; the spend is within the budget."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, budget, profile=profile)
    core = MECHANISMS["fully_dynamic"].core_cls(cfg, stream="s", emit_nodes=True)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 20):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(400)], noise)
    charged = [(tuple(r.coordinates), as_vector(r.cost)) for r in core.ledger.records]
    logged = [o for o in core.drain_node_outputs() if o.kind == "deletion_counter"]
    assert len(logged) >= 5
    paid = 0
    for o in logged:
        c, cost = tuple(o.coordinates), as_vector(o.cost)
        if max(cost) == 0:  # a lattice counter's later step: paid at its first
            continue
        paid += 1
        if c[-2] == "step":
            c = c[:-2]
        assert any(rc == c and rv == pytest.approx(cost, rel=1e-12) for rc, rv in charged), c
    assert paid >= 2
    cap = as_vector(core.ledger.budget)
    assert all(s <= c * (1 + 1e-12) for s, c in zip(as_vector(core.ledger.spent), cap, strict=True))


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁanswer__mutmut_1 (a halted node answers
# np.zeros(1) whatever its query set: a histogram's answers can no longer be summed over the chain) and
# transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_error_bound__mutmut_13 (with a halted node in the
# chain, the live nodes' noise bounded at beta / 3 instead of beta / 2: not the stated split)
def test_a_halted_node_answers_zero_for_every_query_of_its_set():
    """Alg. 3, lines 22-23: a node whose restart finds ``n_hat < 2 gamma`` halts and answers 0 from then on, for every
    query of the set (a histogram: every cell); the released answer is the sum over the chain, halted nodes adding 0.
    Here node 4 loses its items within its lifetime and halts at its restart."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig(q, PureDP(30.0), profile="paper"), stream="s")
    noise = NoiseSource(KEY)
    seen = 0
    for t in range(1, 12):
        if t <= 4:
            ups = [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(500)]
        elif t <= 7:
            ups = [Update("delete", f"e{t - 4}_{i}", None) for i in range(500)]
        else:
            ups = [Update("insert", f"f{t}", (0, 1))]
        res = core.process_tick(t, ups, noise)
        if not res.closes:
            continue
        chain = [core.nodes[i] for i in fenwick_chain(core.closed)]
        for node in chain:
            if node.halted:
                seen += 1
                for k in range(len(q)):
                    np.testing.assert_array_equal(node.answer(k), np.zeros_like(node.static_answers[k]))
        halted = [n for n in chain if n.halted]
        live = [n for n in chain if not n.halted]
        beta = core.config.beta
        for k, a in enumerate(res.answers):
            np.testing.assert_allclose(a.estimate, np.sum([n.answer(k) for n in live], axis=0), rtol=1e-12)
            # the bound: a union of beta / 2 over the halted nodes' sizes and beta / 2 over the live nodes' noise
            want = NoiseProfile.sum(n.noise_profile(core, k) for n in live).tail_bound(
                (beta / 2 if halted else beta) / core.mechanisms[k].num_queries
            )
            if halted:
                want += math.fsum(n.halted_bound(beta / (2 * len(halted))) for n in halted)
            assert a.error_bound == pytest.approx(want, rel=1e-12)
    assert seen >= 1


# kills transforms.core.continual.auto.xǁAutoReleaseǁ_merge__mutmut_5 (auto's answers carry no spend)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_every_auto_answer_carries_the_releases_spend_within_its_budget(budget):
    """Each answer states what the release has spent so far (its parts' spends for the unit, composed): the release's
    ``spent`` at that tick, growing with the releases and within the configured budget."""
    q = (QuerySet("n", "count"), QuerySet("p", "pmw", domain_size=4, ranges=True))
    core = MECHANISMS["auto"].core_cls(DynamicConfig(q, budget), stream="s", end_tick=12, every_ticks=1)
    noise = NoiseSource(KEY)
    last = None
    for t in range(1, 13):
        res = core.process_tick(t, [Update("insert", f"e{t}", (0, t % 4))], noise)
        assert res.answers
        for a in res.answers:
            assert a.spent == core.spent
            assert all(s <= c * (1 + 1e-9) for s, c in zip(as_vector(a.spent), as_vector(budget), strict=True))
            if last is not None:
                assert all(s >= p for s, p in zip(as_vector(a.spent), as_vector(last), strict=True))
            last = a.spent
    assert as_vector(last)[0] > 0


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁ_next_wake__mutmut_1 (the wake-up inverted: no
# wake without periods, every tick with them)
@pytest.mark.parametrize("every", [None, 5])
def test_a_continual_counter_wakes_at_its_next_release(every):
    """The timer a runner sets (``next_wake``): without periods the counter releases at every tick, so it wakes at the
    next one; with ``every_ticks`` it wakes at the next period end (a multiple of it, or the end)."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS["continual_count"].core_cls(cfg, stream="s", end_tick=23, every_ticks=every)
    noise = NoiseSource(KEY)
    for t in (1, 3, 5, 6, 12, 21):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
        want = t + 1 if every is None else min((t // every + 1) * every, 23)
        assert core.next_wake == want, (t, core.next_wake)


# kills transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_29 (the default projection onto a
# histogram's own total ignores round_answers: the cells are not rounded although the user asked for integers) and
# __mutmut_1 (rounding by default, unasked)
@pytest.mark.parametrize("counts", [0, 2])
def test_the_default_projection_rounds_when_asked_with_or_without_a_count(counts):
    """``release.round`` asks for integers: the default projection (onto THE count, or onto each histogram's own total
    when there is no single count) then releases integer cells summing to an integer total."""
    q = (
        *(QuerySet(f"n{i}", "count") for i in range(counts)),
        QuerySet("h", "histogram", domain_size=4),
    )
    assert not Consistency.default_for(DynamicConfig(q, PureDP(1.0))).round_answers  # real cells unless asked
    cons = Consistency.default_for(DynamicConfig(q, PureDP(1.0)), round_answers=True)
    assert cons.round_answers and cons.own_total == ("h",)
    a = Answer("s", 1, 1, "h", np.array([2.4, -1.0, 3.3, 0.6]), 2.0, 0.05, PureDP(1.0))
    (out,) = make_consistent([a], cons)
    assert np.all(out.estimate == np.rint(out.estimate)) and np.all(out.estimate >= 0)
    assert out.estimate.sum() == round(2.4 - 1.0 + 3.3 + 0.6)


# kills transforms.core.continual.baselines.xǁInsertionOnlyReleaseǁ_start__mutmut_30 (the first segment's pending
# insertions kept as float histograms: the state no longer holds exact integer counts) and _close__mutmut_22 (the
# same for every later segment)
def test_insertion_only_pending_insertions_are_exact_integer_counts_in_its_state():
    """The open segment's insertions are counts of items: integer histograms from the start, and through a state
    round trip (as after each close)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, PureDP(1.0))
    cls = MECHANISMS["insertion_only"].core_cls
    core = cls(cfg, stream="s")
    assert all(p.dtype.kind == "i" for p in core.pending)
    noise, closes = NoiseSource(KEY), 0
    for t in range(1, 12):
        closes += len(core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)], noise).closes)
        for c in (core, cls.from_state(cfg, core.to_state())):
            assert all(p.dtype.kind == "i" for p in c.pending), (t, [p.dtype for p in c.pending])
    assert closes >= 2  # after closes too (each close starts the next segment's pending counts)


# kills transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_55 (a public size of exactly 0 run through the
# iterations: the multiplicative weights divide by 2 n_hat = 0 and release NaN)
@pytest.mark.parametrize("kind,budget", [("laplace", PureDP(1.0)), ("gaussian", ZCDP(0.5))])
@pytest.mark.parametrize("iterations", [0, 3])
def test_pmw_with_a_public_size_of_zero_releases_the_empty_histogram(kind, budget, iterations):
    """A dataset whose (public, noisy) size is <= 0 gets the empty synthetic histogram: every answer 0, finite (T
    chosen from the size, or fixed)."""
    mech = PMWMechanism(4, ranges=True, noise=kind, iterations=iterations)
    law = NoiseProfile.single("laplace", 2.0)
    for n_hat in (0.0, -3.0):
        rel = mech.release(np.array([1, 0, 2, 0]), budget, NoiseSource(KEY).stream("pmw", int(n_hat)), n_hat, law)
        assert np.all(np.isfinite(rel.values)) and np.all(rel.values == 0), rel.values
        assert rel.n_hat == n_hat


# kills transforms.core.continual.partition.xǁInfinitePartitionerǁ_start_segment__mutmut_27 (two threshold noises
# drawn and the first kept: segment j's theta_hat is no longer the single draw at its documented coordinates)
def test_each_svt_instance_draws_its_one_threshold_noise_at_its_own_coordinates():
    """Alg. 1: ``theta_hat = theta + Z0``, one ``DLap(2 / eps)`` per SVT instance, drawn from the stream at (coords,
    ``svt``, j, ``threshold``) (a deterministic function of the key and j: a replay or an audit draws it again): so
    ``theta_hat_floor - floor(theta_j)`` is that single draw, for every segment."""
    p = PartitionParams(0.5, 0.05)
    part = InfinitePartitioner(p, coords=("s",))
    noise = NoiseSource(KEY)
    seen = 0
    for t in range(1, 200):
        prev, j = part.prev_close, part.j
        part.observe(t, t % 3, noise)
        if part.j != j:
            want = int(discrete_laplace(noise.stream("s", "svt", part.j, "threshold"), p.threshold_scale, 1)[0])
            assert part.theta_hat_floor - math.floor(p.theta(part.j, part.prev_close)) == want, (t, part.j, prev)
            seen += 1
    assert seen >= 5


# kills transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_32 (a 0/1 matrix kept as floats: its
# answers computed in float64, rounded once the counts pass 2^53)
@pytest.mark.parametrize("noisy", [False, True])
def test_a_zero_one_query_matrix_is_answered_in_exact_integers(noisy):
    """LinearQueryMechanism: "a 0/1 matrix is answered with integer noise directly", in integer arithmetic: its
    all-ones row is released exactly as the count mechanism releases the same histogram (the same lattice, the same
    draw from the same stream), and a 0/1 row exactly as its cells' sum, at any count int64 holds."""
    h = np.array([2**53 + 1, 2, 0], dtype=np.int64)
    src = NoiseSource(KEY) if noisy else NoiseSource.disabled()
    ones = LinearQueryMechanism([[1, 1, 1]]).release(h, PureDP(1.0), src.stream("q"))
    count = CountMechanism(3).release(h, PureDP(1.0), src.stream("q"))
    assert int(ones.values[0]) == int(count.values[0])
    if not noisy:
        rel = LinearQueryMechanism([[1, 0, 1], [0, 1, 1]]).release(h, PureDP(1.0), src.stream("q"))
        assert [int(v) for v in rel.values] == [2**53 + 1, 2]


# kills transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_error_bound__mutmut_36 (a reusing node's union
# weight replacing beta / m instead of multiplying it: the count's bound taken at a failure probability near 1)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_a_reused_counts_bound_is_taken_below_beta_times_its_round_weights(budget):
    """Tight profile: a count set is answered from each node's n_hat, which also decided whether the node's round
    goes on; its bound is the chain's noise at ``beta`` times each reusing node's round weight (a union over the rounds
    it may be in, docs/fully_dynamic.md): so at a failure probability below beta, never above."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig(q, budget, profile="tight"), stream="s")
    noise = NoiseSource(KEY)
    checked = 0
    for t in range(1, 20):
        res = core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(400)], noise)
        if not res.closes:
            continue
        live = [core.nodes[i] for i in fenwick_chain(core.closed)]
        reusing = [n for n in live if n.reuses(core, 0)]
        prof = NoiseProfile.sum(n.noise_profile(core, 0) for n in live)
        w = math.prod(reuse_round_weight(n.round) for n in reusing)
        a = res.answers[0]
        assert a.error_bound == pytest.approx(prof.tail_bound(core.config.beta * w), rel=1e-12)
        assert a.error_bound >= prof.tail_bound(core.config.beta)
        checked += bool(reusing)
    assert checked >= 3


# kills transforms.core.continual.net_change.xǁNetChangeReleaseǁcalibrations__mutmut_49 (a query set without a
# sensitivity by contribution through its counter stated with the method "GROUP", not the documented "group")
def test_a_counter_without_a_contribution_bound_states_group_privacy_in_its_plan():
    """Under an entry unit, Gaussian noise through a tree counter has no sensitivity by contribution: each query set
    is calibrated by group privacy over ``2k - 1`` updates, and the plan says so with the documented method name
    (``Calibration.method``: ``contribution`` or ``group``)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, ZCDP(0.5), unit=PrivacyUnit.entry(3))
    opts = NetChangeOptions("binary_tree", 16)
    cal = NetChangeRelease.calibrations(cfg, opts, end_tick=16, every_ticks=1)
    assert [(c.query, c.method, c.multiplier, c.exact) for c in cal] == [
        ("n", "group", 5.0, False),
        ("h", "group", 5.0, False),
    ]
    assert all("group privacy" in c.text() for c in cal)


# kills transforms.core.continual.partition.x_geometric_capped__mutmut_177 (the fallback bisection asks decide(None):
# where the float guess is off by more than the walk's 10,000 steps, the sampler crashes instead of answering)
@pytest.mark.parametrize("guess", [1, 10**7])
def test_geometric_capped_is_exact_whatever_its_float_guess(monkeypatch, guess):
    """``min(K, cap)`` is decided by exact comparisons of U with ``(1 - p)^n``; the float guess only says where to
    start. A guess 10,000+ steps off (forced here) goes through the walk's fallback, the bisection, to the same K."""
    k0, scale, cap = 50, 4.0, 10**7
    want = [geometric_capped(NoiseSource(KEY).stream("g", i), k0, scale, cap) for i in range(3)]
    assert all(10_000 < w < cap for w in want)  # K ~ Geometric(2e-6): far from the forced guesses

    class BadCeil:
        def __getattr__(self, name):
            return getattr(math, name)

        @staticmethod
        def ceil(x):
            return guess

    monkeypatch.setattr(partition, "math", BadCeil())
    got = [geometric_capped(NoiseSource(KEY).stream("g", i), k0, scale, cap) for i in range(3)]
    assert got == want


# kills transforms.core.config.xǁDynamicConfigǁ__post_init____mutmut_8 (a failure probability beta = 1 accepted: every
# stated bound would then hold "with probability 0")
@pytest.mark.parametrize("beta", [1.0, 0.0, 1.5, -0.1])
def test_a_configs_beta_is_strictly_between_zero_and_one(beta):
    """beta is the failure probability of every stated bound and of the partitioning: in (0, 1), refused otherwise."""
    with pytest.raises(ValueError, match="beta must be in"):
        DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), beta=beta)


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_22 (the counter's plan stated
# for Laplace noise whatever the release's noise: a Gaussian k-ary tree's plan has the Laplace radices)
@pytest.mark.parametrize("counter", ["kary_tree", "binary_tree", "sqrt_factorization"])
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_every_continual_count_charge_has_its_plan_for_its_noise(counter, budget):
    """continual_count states each counter's allocation for the release's noise kind (docs/counters.md): every charge
    of a run is its planned cost at its coordinates."""
    if counter == "sqrt_factorization" and isinstance(budget, PureDP):
        counter = "honaker"
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), budget)
    core = MECHANISMS["continual_count"].core_cls(cfg, stream="s", end_tick=20, counter=counter, horizon=20)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 21):
        core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise)
    assert core.ledger.records
    for rec in core.ledger.records:
        assert as_vector(core.planned_cost(rec.coordinates)) == pytest.approx(as_vector(rec.cost), rel=1e-12)


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_14 (the end check inverted: a periodic
# release without an end crashes comparing its close with None)
@pytest.mark.parametrize("name", ["insertion_only", "two_stream_baseline", "fully_dynamic"])
def test_a_periodic_segmented_release_without_an_end_answers_every_period(name):
    """``every_ticks`` without ``time.end``: an answer for every query set at every period end, for ever."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS[name].core_cls(cfg, stream="s", every_ticks=2)
    noise = NoiseSource(KEY)
    ticks = []
    for t in range(1, 21):
        ticks += [a.tick for a in core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise).answers]
    assert ticks == list(range(2, 21, 2))


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_apply__mutmut_26 (noise off, a deletion sets its cell
# to 1 instead of removing one: the period answers between closes are no longer the truth)
@pytest.mark.parametrize("name", ["two_stream_baseline", "fully_dynamic"])
def test_noise_off_every_period_answer_is_the_exact_current_answer_with_deletions(name):
    """segmented.py: with the noise switched off a period's answer is the exact current answer, between closes too:
    the count and every histogram cell of the live items, deletions included."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS[name].core_cls(DynamicConfig(q, PureDP(1.0)), stream="s", end_tick=30, every_ticks=1)
    noise = NoiseSource.disabled()
    live: dict[str, tuple] = {}
    for t in range(1, 31):
        ups = [Update("insert", f"e{t}_{i}", (0, (t + i) % 3)) for i in range(3)]
        gone = sorted(live)[: (t % 4)]
        ups += [Update("delete", e, None) for e in gone]
        res = core.process_tick(t, ups, noise)
        for e in gone:
            del live[e]
        live.update({u.entry_id: u.item for u in ups if u.op == "insert"})
        hist = np.bincount([v[1] for v in live.values()], minlength=3)
        by_q = {a.query: a.estimate for a in res.answers if a.tick == t}
        np.testing.assert_allclose(by_q["n"], [len(live)], rtol=0, atol=1e-9)  # float sums of exact integers
        np.testing.assert_allclose(by_q["h"], hist, rtol=0, atol=1e-9)


# kills transforms.core.static.linear.x__calibrated__mutmut_15 (the Gaussian scale from l2^3 instead of l2^2: a matrix
# whose column norm is not 1 gets noise for another sensitivity)
@pytest.mark.parametrize(
    "matrix", [[[1, 1], [1, 0]], [[0.5, 1.0, 0.0], [1.0, 0.25, 1.0]], [[1, 1, 1], [1, 1, 0], [1, 0, 0]]]
)
@pytest.mark.parametrize("rho", [0.5, 0.02])
def test_a_gaussian_linear_release_spends_exactly_its_rho_at_its_l2_sensitivity(matrix, rho):
    """The Gaussian mechanism with L2 sensitivity Delta (the largest column norm, in lattice units) and discrete
    Gaussian parameter sigma^2 is (Delta^2 / (2 sigma^2))-zCDP: the release's parameter meets its rho, rounded up to
    a rational (never more privacy loss, and no more noise than the rounding)."""
    mech = LinearQueryMechanism(matrix, "gaussian")
    a = np.rint(np.asarray(matrix, dtype=float) / mech.unit)
    l2 = float(np.sqrt((a**2).sum(axis=0).max()))
    assert l2 != 1.0
    ((_, sigma2, _),) = mech.noise_profile(ZCDP(rho)).terms
    spent = l2**2 / (2 * sigma2)
    assert spent <= rho and spent == pytest.approx(rho, rel=1e-9)


# kills transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_38 (a real matrix's lattice entries kept
# as floats: its answers summed in float64, rounded twice once the products pass 2^53)
def test_a_real_query_matrix_is_answered_exactly_on_its_lattice():
    """A real matrix is rounded to the 2^-20 lattice and answered in integer arithmetic: noise off, each released
    answer is the exact lattice answer (Python integers) rounded once to a float."""
    h = np.array([2**40 + 1, 3], dtype=np.int64)
    mech = LinearQueryMechanism([[0.3, 0.7]])
    (v,) = mech.release(h, PureDP(1.0), NoiseSource.disabled().stream("q")).values
    exact = round(0.3 * 2**20) * (2**40 + 1) + round(0.7 * 2**20) * 3
    assert v == float(exact) * 2.0**-20


# kills transforms.core.static.linear.xǁStaticMechanismǁcheck_budget__mutmut_3 (a Gaussian mechanism given a pure-DP
# budget no longer refused with its reason: it fails later with another message)
@pytest.mark.parametrize(
    "mech",
    [
        HistogramMechanism(3, "gaussian"),
        LinearQueryMechanism([[1.0, 0.5]], "gaussian"),
        PMWMechanism(4, ranges=True, noise="gaussian"),
    ],
    ids=["histogram", "linear", "pmw"],
)
def test_a_gaussian_mechanism_refuses_a_pure_budget_saying_what_to_give_it(mech):
    """A Gaussian mechanism needs a zCDP or (eps, delta > 0) budget: a pure-DP one is refused with what to do."""
    with pytest.raises(ValueError, match="uses Gaussian noise; give it a ZCDP or ApproxDP"):
        mech.check_budget(PureDP(1.0))
    mech.check_budget(ZCDP(0.5))


# kills transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_18 (the bound's split computed for the mechanism's
# T = 20 instead of the release's T: a release with T = 3 states the error of another schedule)
@pytest.mark.parametrize("t", [1, 3, 7])
@pytest.mark.parametrize("kind,budget", [("laplace", PureDP(1.0)), ("gaussian", ZCDP(0.5))])
def test_pmw_alpha_is_stated_for_the_releases_own_number_of_iterations(t, kind, budget):
    """An adaptive PMW release records its T; its bound (module docstring) uses that T's split: selection eps and
    measurement noise of one of T iterations, the shortfall over T selections."""
    mech = PMWMechanism(8, ranges=True, noise=kind)
    n, beta = 500.0, 0.05
    count_p, eps_sel, meas_p = mech._split(budget, False, t)
    e = mech._profile(float(as_ratio_up(count_p))).tail_bound(beta / 3)
    m = mech._profile(mech._answer_param(meas_p)).tail_bound(beta / (3 * t))
    s = (2 * (1 + 2.0**-20) / eps_sel) * (math.log(mech.m) + math.log(3 * t / beta))
    want = math.sqrt(4 * (n + e) ** 2 * math.log(8) / t + (m + e) ** 2) + s + 3 * e
    assert mech.alpha(budget, beta, n=n, iterations=t) == pytest.approx(want, rel=1e-12)


# kills transforms.core.static.pmw.xǁPMWMechanismǁ_select__mutmut_40 (a range's score read from the prefix error
# before b, not after it: the exponential mechanism scores another range)
def test_pmw_selection_with_a_large_budget_picks_a_worst_answered_range():
    """The exponential mechanism over ranges scores ``|q(A) - q(D)|``: with a very large selection epsilon it returns
    a range whose error is the largest (up to the score margin)."""
    mech = PMWMechanism(6, ranges=True)
    h = np.array([0, 9, 0, 0, 4, 0], dtype=float)
    a_syn = np.full(6, h.sum() / 6)
    errors = np.abs(range_answers(a_syn) - range_answers(h))
    for i in range(5):
        q = mech._select(NoiseSource(KEY).stream("sel", i), a_syn, h, eps_sel=1e5)
        assert errors[q] == pytest.approx(errors.max(), abs=1e-3), (q, errors[q], errors.max())


# kills transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_11 (a noise-off release's fields shifted: no cost,
# and the iterations taken for its noise law)
def test_a_noise_off_pmw_release_is_the_exact_histogram_with_its_cost_and_no_noise_law():
    """Noise off: the synthetic histogram is the data itself; the release states its cost (the budget) and, PMW not
    being additive, no noise law (its alpha needs its T)."""
    mech = PMWMechanism(4, ranges=True, iterations=5)
    h = np.array([1, 0, 2, 7])
    rel = mech.release(h, PureDP(1.0), NoiseSource.disabled().stream("p"))
    np.testing.assert_array_equal(rel.values, h)
    assert rel.cost == PureDP(1.0) and rel.noise is None and not rel.is_additive and rel.alpha_params == (5,)


# kills transforms.core.static.pmw.xǁPMWMechanismǁ__init____mutmut_23 (a matrix of the right width with a negative
# entry, or of the wrong width, accepted) and __mutmut_19 (exact fractions refused: the matrix kept as given)
def test_pmw_checks_its_query_matrix_and_takes_its_entries_as_real_numbers():
    """The PMW query matrix is m x domain_size with entries in [0, 1] (refused otherwise, with the reason), in any
    numeric form (Python fractions): the same lattice matrix as the floats."""
    for bad in (np.array([[0.5, -0.5, 0.0, 1.0]]), np.ones((2, 3)), np.array([[0.2, 1.5, 0.0, 0.0]])):
        with pytest.raises(ValueError, match="m x domain_size with entries in"):
            PMWMechanism(4, matrix=bad)
    exact = [[Fraction(1, 3), 1, 0, Fraction(1, 2)]]
    a, b = PMWMechanism(4, matrix=exact), PMWMechanism(4, matrix=np.array(exact, dtype=float))
    np.testing.assert_array_equal(a.matrix, b.matrix)


# kills transforms.core.static.pmw.xǁPMWMechanismǁchoose_iterations__mutmut_39 (T = x instead of x^(2/3): not the
# minimiser of the bound it states)
@pytest.mark.parametrize("n_hat", [50.0, 400.0, 3000.0])
def test_pmw_chooses_the_number_of_iterations_minimising_its_stated_bound(n_hat):
    """choose_iterations: T minimises ``2 n sqrt(ln d / T) + T (2 / eps_1) ln m`` (eps_1: one iteration's eps when
    T = 1), at the public n_hat, clamped to [1, 20]: T is next to the real minimiser (found numerically here)."""
    mech = PMWMechanism(16, ranges=True)
    budget = PureDP(1.0)
    eps1 = 2 * mech._split(budget, False, 1)[1]
    ts = np.linspace(0.05, 40, 200001)
    g = 2 * n_hat * np.sqrt(math.log(16) / ts) + ts * (2 / eps1) * math.log(mech.m)
    star = float(ts[int(np.argmin(g))])
    t = mech.choose_iterations(budget, n_hat)
    assert min(max(math.floor(star), 1), 20) <= t <= min(max(math.ceil(star), 1), 20), (t, star)


# kills transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_21 (the histogram paired with a second
# count that does not exist: the default projection fails for a configuration with exactly one count)
def test_the_default_projection_pairs_every_histogram_with_the_one_count():
    """With exactly one count query the default projects every histogram onto THE count (with the threshold bound)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3), QuerySet("g", "histogram", domain_size=2))
    cons = Consistency.default_for(DynamicConfig(q, PureDP(1.0)))
    assert cons.pairs == (("h", "n"), ("g", "n")) and cons.threshold_bound and not cons.own_total


# kills transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_20 (the partitioning's parallel
# scope named "PARTITION": the audit's scope tree, dp_events' scope paths, no longer says "partition")
@pytest.mark.parametrize("name", ["insertion_only", "fully_dynamic"])
def test_every_svt_charge_is_recorded_in_the_partitions_parallel_scope(name):
    """partition.py: each SVT instance is charged ``PureDP(eps)`` as a member of one parallel scope, the ``partition``
    scope of the release's ledger (the path the DP-events audit lists): every svt record is there, one per segment."""
    core = MECHANISMS[name].core_cls(DynamicConfig((QuerySet("n", "count"),), PureDP(1.0)), stream="s")
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 20):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0,)) for i in range(30)], noise)
    svt = [r for r in core.ledger.records if r.coordinates[1] == "svt"]
    assert len(svt) >= 3 and [r.coordinates[2] for r in svt] == list(range(1, len(svt) + 1))
    for r in svt:
        assert r.scope == ("partition",), r.scope
    assert core.ledger.root.children["partition"].kind == "parallel"
