"""Changelog releases with entry-level guarantees (Pan, 004 §2-§4): DCR, HDCR
and SWCR under at-most-k and time-bounded mutation constraints.

The changelog model: a database is the stream of its *mutations*; a mutation
of entry x at tick t carries x's old and new value (insert: no old value;
delete: no new value). A linear query f over a time range (l, r] is answered by
its *change* ``sum f(new) - f(old)`` over the mutations in the range. The
change of ONE entry over a range telescopes to ``f(value at r) - f(value at
l)``, however many of its mutations fall in the range, so its sensitivity is
``b - a`` for f with values in [a, b] (an absent entry counts 0): count 1; a
histogram ``e_y - e_x`` (L1 2, L2 sqrt 2); a linear query set the largest norm
of a difference of two of its columns (or of one column).

Mechanisms (all ``ContinualRelease``, registry names ``dcr``, ``hdcr``,
``swcr``; time in *units* of ``window`` periods, a period being
``every_ticks`` ticks, default 1):

* **DCR** (Def. 4.3): one node per unit, the change over ``((u-1)W, uW]``;
  the released current value at unit u is the sum of nodes 1..u.
* **HDCR(h, c, W)** (Def. 4.6): h layers of DCRs, layer i's nodes span c^i
  units; the current value at unit u is the sum of the nodes of u's base-c
  decomposition (at most (c-1) per layer), any range (lW, rW] of at most
  2(c-1)h_min nodes (Thm 4.4, :func:`cover`).
* **SWCR(W, P)** (Def. 4.7): at every P periods the change over the last W
  periods, either *directly* (one fresh query per window, Thms 4.5-4.6) or
  *derived* from an HDCR over units of gcd(W, P) periods (Thm 4.7), whichever
  has the lower variance for the same loss (Thms 4.8-4.9 give sufficient
  conditions; we compare the exact variances).

Privacy (the accounting functions below; proof sketch in ``docs/changelog.md``):
every node is a mechanism on a disjoint time range (a DCR layer); an entry
affects only the nodes that contain one of its mutations. With at most k
mutations per entry it affects at most k nodes of a DCR (Thm 4.1), k per HDCR
layer (hk in all, Thm 4.3) and k ceil(W/P) SWCR windows (Thm 4.5); with all its
mutations within B ticks of its first insertion, at most MostSpan(t, B) nodes
of a DCR (Thm 4.2; ceil(B/W)+1 for a fixed period, Cor. 4.1), the sum over
layers for an HDCR, ceil((B+W)/P) windows (Thm 4.6). When both constraints are
enforced on every entry, every entry satisfies each of them, so the smaller
count bounds its loss (per layer); Thm 4.10 (:func:`hybrid_fold`, the worst
count) covers a population where each entry satisfies one of them. So the
per-query-set share of the budget is split as ``F`` equal node budgets (F the
fold count), every node release is charged its F_layer-fold composition to a
parallel ledger scope (the nodes of a layer are disjoint; one entry's loss is
at most that), and layers and query sets compose sequentially: the ledger's
total is exactly the configured entry-level guarantee. Under ``unit: update``
(one mutation differs) the folds are those of k = 1.

The registry enforces the constraints (``privacy.max_mutations_per_entry``,
``privacy.mutation_window``; ``registry.MutationLimit``): a mutation past k or
more than B ticks after the entry's first insertion is rejected
(``constraint_exceeded``) and never reaches a release.

Noise: each node is one release of the query set's static mechanism (exact
discrete Laplace / Gaussian noise, integers for integer queries) at
coordinates ``(stream, name, query, "layer", i, "node", j)`` or ``(stream,
"swcr", query, "window", u)``; charged before it is drawn.
"""

from transforms.core.families.changelog.folds import (
    DESIGN_HORIZON,
    DCROptions,
    HDCROptions,
    SWCROptions,
    cover,
    dcr_fold,
    entry_sensitivity_ratio,
    fold,
    hdcr_fold,
    hdcr_layer_folds,
    hybrid_fold,
    most_span,
    prefix_nodes,
    swcr_fold,
)
from transforms.core.families.changelog.releases import DCRRelease, HDCRRelease, SWCRRelease

__all__ = [
    "cover",
    "dcr_fold",
    "DCROptions",
    "DCRRelease",
    "DESIGN_HORIZON",
    "entry_sensitivity_ratio",
    "fold",
    "hdcr_fold",
    "hdcr_layer_folds",
    "HDCROptions",
    "HDCRRelease",
    "hybrid_fold",
    "most_span",
    "prefix_nodes",
    "swcr_fold",
    "SWCROptions",
    "SWCRRelease",
]
