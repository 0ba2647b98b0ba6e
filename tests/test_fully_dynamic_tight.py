"""The tight fully-dynamic profile (docs/fully_dynamic.md, "The tight profile").

Count query sets are answered from each round's n_hat release and its
deletion-count counter (the same quantities, already released:
post-processing), which take the shares the count set would have had; node
counters are the best counter for their known lifetime. The contract tests run
the profile through every generic check (noise-off exactness, ledger = plan,
no noise coordinate twice, state round trips, Beam = core); coverage of its
bounds is in test_coverage.py. Here: the reuse itself, and that the profile is
tighter than ``tuned`` where it claims to be.
"""

from __future__ import annotations

import numpy as np
import pytest

from transforms.core import ZCDP, DynamicConfig, NoiseSource, PureDP, QuerySet, ReleaseIdentity, Update
from transforms.core.continual.fully_dynamic import FullyDynamicRelease
from transforms.core.counters.factorization import KaryTreeCounter, SqrtFactorizationCounter

KEY = bytes(range(32))
QUERIES = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4))


def workload(ticks=300, seed=0, churn=0.08):
    rng = np.random.default_rng(seed)
    live, k, out = [], 0, []
    for t in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.poisson(3))):
            ups.append(Update("insert", f"e{k}", (0, int(rng.integers(4)))))
            live.append(f"e{k}")
            k += 1
        if t > 20:
            for _ in range(int(rng.binomial(len(live), churn))):
                ups.append(Update("delete", live.pop(int(rng.integers(len(live))))))
        out.append((t, ups))
    return out


def run(profile, budget, *, keep_records=False, check=None, churn=0.08):
    cfg = DynamicConfig(QUERIES, budget, profile=profile)
    core = FullyDynamicRelease(cfg, stream="s")
    core.ledger.keep_records = keep_records
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("tight-test"))
    closes = []
    for t, ups in workload(churn=churn):
        res = core.process_tick(t, ups, noise)
        for a in res.answers:
            if a.tick in res.closes:
                closes.append((a.tick, a.query, a.error_bound))
        if check is not None and res.closes:
            check(core)
    return core, closes


@pytest.mark.parametrize("budget", [PureDP(2.0), ZCDP(1.0)], ids=["laplace", "gaussian"])
def test_count_is_n_hat_minus_the_deletion_count_counter(budget):
    """At every close, every live non-leaf node answers the count as its
    round's n_hat minus its deletion-count counter's estimate, draws no static
    release and no query counter for it, and uses the best counter for its
    lifetime; the ledger holds no charge for the count set's own releases."""
    seen = []

    def check(core):
        for node in core.nodes.values():
            if node.halted or node.n_hat_profile is None:
                continue  # halted: answers 0; a leaf: static releases only
            seen.append(node.index)
            assert node.q_counters[0] is None and node.static_budgets[0] is None
            expect = node.n_hat - (node.del_counter.estimate[0] if node.del_counter.t else 0.0)
            assert node.answer(0)[0] == pytest.approx(expect, abs=1e-9)
            best = SqrtFactorizationCounter if budget == ZCDP(1.0) else KaryTreeCounter
            assert isinstance(node.del_counter, best) and isinstance(node.q_counters[1], best)

    core, _ = run("tight", budget, keep_records=True, check=check)
    assert len(set(seen)) >= 3, "the workload must build several non-leaf nodes"
    own = 0
    for rec in core.ledger.records:
        c = tuple(rec.coordinates)  # (stream, "tree", "node", i, "round", r, kind, query, ...)
        if c[1] == "tree" and c[6] in ("static", "del_query") and c[7] == "n":
            # only a leaf (odd i: no n_hat, never queried later) releases the count itself
            assert c[6] == "static" and c[3] % 2 == 1, c
            own += 1
    assert own >= 1


@pytest.mark.parametrize("budget", [PureDP(2.0), ZCDP(1.0)], ids=["laplace", "gaussian"])
def test_tight_bounds_are_below_tuned(budget):
    """Same key, same partition (the sparse vector's draws do not depend on
    the profile), low churn so that no node restarts in either run (a restart
    changes the structure, and the comparison): at every close whose chain
    holds a non-leaf node, the tight profile's stated count bound is strictly
    below tuned's, and its histogram bound no larger on average over the closes
    (same shares, better counters in their worst step). A reuse that did not hand the count's shares to n_hat fails the
    first (n_hat's 0.1 < static's 0.2)."""
    rounds = set()

    def no_restart(core):
        rounds.update(node.round for node in core.nodes.values())

    _, tight = run("tight", budget, churn=0.01, check=no_restart)
    _, tuned = run("tuned", budget, churn=0.01, check=no_restart)
    assert rounds == {1}, "a node restarted: pick a workload without restarts"
    assert [(t, q) for t, q, _ in tight] == [(t, q) for t, q, _ in tuned], "the partitions differ"
    strictly = 0
    for (tick, q, b_tight), (_, _, b_tuned) in zip(tight, tuned):
        if q == "n" and tick != tight[0][0]:
            assert b_tight < b_tuned, (tick, b_tight, b_tuned)
            strictly += 1
    assert strictly >= 3
    ratios = {q: np.mean([bt / bu for (_, q_, bt), (_, _, bu) in zip(tight, tuned) if q_ == q]) for q in ("n", "h")}
    print(f"tight / tuned bound at closes: count {ratios['n']:.3f}, histogram {ratios['h']:.3f}")
    # the node counters are better in their worst step, not at every step (the
    # binary tree wins right after a parent completes): on average, no worse
    assert ratios["h"] <= 1.0


def test_reuse_round_weights_are_a_union_bound():
    """The per-round shares of beta of a node that reuses n_hat sum to at most
    1 (to 1 in the limit), and round 1 gets 1 - REUSE_OMEGA."""
    from transforms.core.continual.fully_dynamic_node import REUSE_OMEGA, reuse_round_weight

    total = sum(reuse_round_weight(r) for r in range(1, 200_000))
    assert total <= 1.0 and total == pytest.approx(1.0, abs=1e-5)
    assert reuse_round_weight(1) == 1 - REUSE_OMEGA and reuse_round_weight(2) == pytest.approx(
        REUSE_OMEGA * 6 / np.pi**2
    )


def test_profiles_name_themselves():
    """A profile's ``name`` is what the configuration's ``profile`` reads (``tuned_family``, the summary):
    ``tight`` is named ``tight`` (issue 27: a renamed profile survived the fast tier)."""
    from transforms.core.config import BudgetProfile

    assert BudgetProfile.paper().name == "paper"
    assert BudgetProfile.tuned().name == "tuned"
    tight = BudgetProfile.tight()
    assert tight.name == "tight" and tight.counter == "best" and tight.reuse_count is True
