"""Growing databases (Cummings, Krehbiel, Lai, Tantipongpipat 2018, seed 001):
BBScheduler and BBImprover over any static black box, and PMWG.

The paper's model: one insertion per time step, so the database size is the
(public) time. Ours: insertions arrive in ticks, any number per tick, and the
size is private. Every mechanism here therefore runs a :class:`GrowthTracker`
(private growth): the stream of insertions is cut into *epochs* by the sparse
vector technique (an epoch closes at the first tick where its insertion count,
plus noise, reaches a threshold computed from public values only), and each
closed epoch releases a noisy count of its insertions. The epochs hold
disjoint insertions, so the tracker is ``eps_g``-DP for an unbounded number of
epochs (adaptive parallel composition, as the partitioning of 000 Thm 6). The
released counts add up to the public size estimate ``N_hat``.

* :class:`BBSchedulerRelease` (``bb_scheduler``, Thm 27): re-run ``i = 0, 1,
  ...`` of every query set's static black box when the estimated size reaches
  ``s_i = ceil(n0 (1 + eta)^i)``, with ``eps_i = eps_r (q - 1) / q^(i+1)``
  (``q = 1 + eta``; ``(1 + eta)^2`` for rho under zCDP), which sums to
  ``eps_r``; answers between re-runs come from the latest one.
* :class:`BBImproverRelease` (``bb_improver``, Thm 29): a re-run at every
  growth step (``step`` insertions, estimated), re-run ``j`` with
  ``eps_r / (zeta(1 + decay) j^(1 + decay))`` (rho under zCDP).
* :class:`PMWGRelease` (``pmwg``): online private multiplicative weights with
  a uniform mix-in as the database grows, an easy/hard test (AboveThreshold
  in rounds; each doubling of the estimated size is a phase with its share of
  an infinite series, split into at most ``hard_per_phase`` rounds), and a
  Laplace answer and multiplicative-weights update on hard queries. Besides its configured query
  sets it answers linear queries one at a time (:meth:`PMWGRelease.answer_query`,
  the query stream of ``transforms/queries.py``).

Deletions are outside the paper's model: these mechanisms refuse deletes and
upserts with the reason ``deletion_not_supported``.

Proofs, parameters and the noise-scale derivation of PMWG: ``docs/growing.md``.
The package: ``base`` (the growth tracker and the release loop), ``black_box``
(the two schedulers) and ``pmwg``.
"""

from transforms.core.families.growing.base import GrowthTracker
from transforms.core.families.growing.black_box import (
    BBImproverOptions,
    BBImproverRelease,
    BBSchedulerOptions,
    BBSchedulerRelease,
    scheduler_eta,
    scheduler_weight,
)
from transforms.core.families.growing.pmwg import OnlinePMW, PMWGOptions, PMWGRelease, QueryAnswer, run_with_queries

__all__ = [
    "BBImproverOptions",
    "BBImproverRelease",
    "BBSchedulerOptions",
    "BBSchedulerRelease",
    "GrowthTracker",
    "OnlinePMW",
    "PMWGOptions",
    "PMWGRelease",
    "QueryAnswer",
    "run_with_queries",
    "scheduler_eta",
    "scheduler_weight",
]
