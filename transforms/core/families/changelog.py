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

from __future__ import annotations

import bisect
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from transforms.core.config import DynamicConfig
from transforms.core.foundation.accounting import Budget, PrivacyUnit, Scope, compose_sequential
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.outputs import Answer, NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease

__all__ = [
    "most_span",
    "dcr_fold",
    "hdcr_layer_folds",
    "hdcr_fold",
    "swcr_fold",
    "hybrid_fold",
    "fold",
    "cover",
    "prefix_nodes",
    "entry_sensitivity_ratio",
    "DCROptions",
    "HDCROptions",
    "SWCROptions",
    "DCRRelease",
    "HDCRRelease",
    "SWCRRelease",
    "DESIGN_HORIZON",
]

DESIGN_HORIZON = 4096  # units an HDCR is sized for when the release has no configured end
MAX_BRANCHING = 32


# ---------------------------------------------------------------------------
# accounting by constraint
# ---------------------------------------------------------------------------


def most_span(t, b: int) -> int:
    """MostSpan(t, B) (Def. 4.4): the largest number of consecutive ranges
    ``(t_{i-1}, t_i]`` (``t_0 = -inf``) that a window ``[s, s + B]`` meets, for
    an increasing sequence ``t`` of integer range ends (ticks) and B >= 0.

    A window can be slid right until it starts at the end of its first range
    without meeting fewer ranges, so the maximum is over windows starting at
    some ``t_i``; O(n log n). (The paper's listing returns 0 when the window
    reaches past the last end; here such windows count the ranges to the end.)
    """
    t = [int(x) for x in t]
    if not t:
        return 0
    if any(b2 <= a2 for a2, b2 in zip(t, t[1:])):
        raise ValueError("range ends must increase")
    if b < 0:
        raise ValueError(f"B must be >= 0, got {b}")
    n = len(t)
    best = 0
    for i, ti in enumerate(t):
        j = bisect.bisect_left(t, ti + b)  # the range holding tick ti + B (0-based), or n past the end
        best = max(best, min(j, n - 1) - i + 1)
    return best


def _check_k(k):
    if k is not None and (isinstance(k, bool) or int(k) < 1):
        raise ValueError(f"k must be an integer >= 1 or None, got {k!r}")


def _time_bounded(b: int | None, span: int) -> int | None:
    """ceil(B / span) + 1: nodes of span ``span`` ticks met by B+1 consecutive ticks."""
    if b is None:
        return None
    return -(-int(b) // int(span)) + 1


def _min_fold(*folds) -> int:
    given = [f for f in folds if f is not None]
    if not given:
        raise ValueError("an entry-level fold needs k (at most k mutations) or B (time-bounded mutations)")
    return min(given)


def dcr_fold(k: int | None = None, b: int | None = None, w: int = 1) -> int:
    """How many nodes of a DCR with a fixed period of ``w`` ticks one entry can
    affect: k (at most k mutations, Thm 4.1), ceil(B/W) + 1 (mutations within
    B ticks of the first, Cor. 4.1), the smaller when both hold."""
    _check_k(k)
    return _min_fold(k, _time_bounded(b, w))


def hdcr_layer_folds(h: int, c: int, k: int | None = None, b: int | None = None, w: int = 1) -> tuple[int, ...]:
    """Per layer i < h (nodes of c^i W ticks): the DCR fold of that layer."""
    _check_k(k)
    if h < 1 or c < 2:
        raise ValueError("an HDCR needs h >= 1 and c >= 2")
    return tuple(_min_fold(k, _time_bounded(b, c**i * w)) for i in range(h))


def hdcr_fold(h: int, c: int, k: int | None = None, b: int | None = None, w: int = 1) -> int:
    """HDCR (Thm 4.3): hk (at most k), the sum over layers of ceil(B/(c^i W))+1
    (time-bounded), per layer the smaller when both hold."""
    return sum(hdcr_layer_folds(h, c, k, b, w))


def swcr_fold(w: int, p: int, k: int | None = None, b: int | None = None) -> int:
    """SWCR(W, P) (Thms 4.5, 4.6): k ceil(W/P) (at most k), ceil((B+W)/P)
    (time-bounded), the smaller when both hold (W, P, B in ticks)."""
    _check_k(k)
    if w < 1 or p < 1:
        raise ValueError("an SWCR needs W >= 1 and P >= 1")
    at_most = None if k is None else int(k) * -(-int(w) // int(p))
    timed = None if b is None else -(-(int(b) + int(w)) // int(p))
    return _min_fold(at_most, timed)


def hybrid_fold(*folds: int) -> int:
    """Thm 4.10: a population where every entry satisfies ONE of several
    constraints: the worst (largest) fold bounds the loss."""
    if not folds:
        raise ValueError("hybrid_fold needs at least one fold")
    return max(folds)


def fold(cost: Budget, times: int) -> Budget:
    """The ``times``-fold sequential composition of ``cost`` (pure eps and
    (eps, delta) add up, zCDP rho adds up)."""
    if times < 1:
        raise ValueError("a fold is at least 1")
    return compose_sequential([cost] * int(times))


# ---------------------------------------------------------------------------
# hierarchical nodes
# ---------------------------------------------------------------------------


def cover(lo: int, hi: int, c: int, h: int) -> list[tuple[int, int]]:
    """The nodes ``(layer i, index j)`` of an HDCR with branching c and height h
    whose ranges ``((j-1) c^i, j c^i]`` (in units) partition ``(lo, hi]``: from
    the left, the largest aligned node that fits (Thm 4.4: at most 2(c-1)h_min
    nodes with h_min = ceil(log_c(hi - lo)), h >= h_min)."""
    if lo < 0 or hi < lo:
        raise ValueError(f"not a range: ({lo}, {hi}]")
    out = []
    pos = lo
    spans = [c**i for i in range(h)]
    while pos < hi:
        for i in range(h - 1, -1, -1):
            s = spans[i]
            if pos % s == 0 and pos + s <= hi:
                out.append((i, pos // s + 1))
                pos += s
                break
    return out


def prefix_nodes(u: int, c: int, h: int) -> list[tuple[int, int]]:
    """The nodes of the prefix (0, u]: the top layer's closed nodes and, below,
    u's base-c digits (the same nodes as ``cover(0, u, c, h)``)."""
    return cover(0, u, c, h)


def _digits(n: int, c: int) -> int:
    d = 0
    while n:
        n //= c
        d += 1
    return d


def _ceil_log(n: int, c: int) -> int:
    """The smallest h >= 1 with c^h >= n."""
    h = 1
    while c**h < n:
        h += 1
    return h


def entry_sensitivity_ratio(mechanism) -> float:
    """Sensitivity of one entry's change over a range (``F y - F x``, x and y
    two values or absent) divided by the static mechanism's (one item), in its
    norm (L1 for Laplace, L2 for Gaussian)."""
    gauss = mechanism.noise_kind == "gaussian"
    name = mechanism.name
    if name == "count":
        return 1.0
    if name == "histogram":
        return math.sqrt(2.0) if gauss else 2.0
    a = getattr(mechanism, "_aq", None)
    if a is None:
        raise ValueError(f"{name}: the changelog releases answer count, histogram and linear query sets")
    cols = np.concatenate([a.astype(float), np.zeros((a.shape[0], 1))], axis=1).T  # values and absent
    item = mechanism.l2 if gauss else mechanism.l1
    best = 0.0
    for x in cols:
        diff = cols - x
        norms = np.sqrt((diff**2).sum(axis=1)) if gauss else np.abs(diff).sum(axis=1)
        best = max(best, float(norms.max()))
    return best / item


def _variance_weight(noise_kind: str, f: int) -> float:
    """Node variance at an F-fold split, up to the common factor: Laplace
    scale ~ F (variance F^2), Gaussian rho / F (variance F)."""
    return float(f) ** 2 if noise_kind == "laplace" else float(f)


# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------


def _int_option(name: str, value, lo: int = 1, none_ok: bool = True):
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}{' or None' if none_ok else ''}, got {value!r}")


@dataclass(frozen=True)
class DCROptions:
    """Options of the disjoint continual release.

    Attributes:
      window: W, the periods (``every_ticks`` ticks each, default 1 tick) per
        node; a release at every node close. Default 1.
    """

    window: int = 1

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)


@dataclass(frozen=True)
class HDCROptions:
    """Options of the hierarchical disjoint continual release.

    Attributes:
      window: W, periods per bottom node (a release at every bottom node's
        close). Default 1.
      branching: c >= 2; None (default): the c in 2..32 with the smallest mean
        variance of the current value over the horizon, for the configured
        constraint (``docs/changelog.md``).
      height: h >= 1; None (default): the number of base-c digits of the
        horizon in units (the configured end, else 4096 units), so a current
        value needs at most (c-1) nodes per layer.
    """

    window: int = 1
    branching: int | None = None
    height: int | None = None

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)
        _int_option("branching", self.branching, lo=2)
        if self.branching is not None and self.branching > 1024:
            raise ValueError(f"branching must be at most 1024, got {self.branching}")
        _int_option("height", self.height)
        if self.height is not None and self.height > 64:
            raise ValueError(f"height must be at most 64, got {self.height}")


SWCR_METHODS = ("auto", "direct", "hdcr")


@dataclass(frozen=True)
class SWCROptions:
    """Options of the sliding-window continual release.

    Attributes:
      window: W, the window in periods: each release is the change over the
        last W periods. Default 7.
      period: P, periods between releases. Default 1.
      method: ``direct`` (one query per window, Thms 4.5-4.6), ``hdcr``
        (aggregated from an HDCR over units of gcd(W, P) periods, Thm 4.7) or
        ``auto`` (default: the lower variance for the same guarantee).
      branching: c of the derived HDCR; None: the c with the smallest
        worst-window variance.
      height: h of the derived HDCR; None: ceil(log_c(W / gcd(W, P))) (at
        least 1), as Thm 4.7.
    """

    window: int = 7
    period: int = 1
    method: str = "auto"
    branching: int | None = None
    height: int | None = None

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)
        _int_option("period", self.period, none_ok=False)
        if self.method not in SWCR_METHODS:
            raise ValueError(f"method must be one of {', '.join(SWCR_METHODS)}, got {self.method!r}")
        _int_option("branching", self.branching, lo=2)
        if self.branching is not None and self.branching > 1024:
            raise ValueError(f"branching must be at most 1024, got {self.branching}")
        _int_option("height", self.height)
        if self.height is not None and self.height > 64:
            raise ValueError(f"height must be at most 64, got {self.height}")


# ---------------------------------------------------------------------------
# the mechanisms
# ---------------------------------------------------------------------------


def _constraint(config: DynamicConfig) -> tuple[int | None, int | None]:
    """(k, B in ticks) of the configured unit; the update unit is k = 1 (one mutation)."""
    unit = config.unit
    if unit.kind != "entry":
        return 1, None
    return unit.max_mutations, getattr(unit, "mutation_window", None)


class _ChangelogRelease(ContinualRelease):
    """What DCR, HDCR and SWCR share: units, layers of nodes, the ledger by
    constraint, answers and node outputs."""

    deletions_allowed = True
    ledger_unit = "configured"  # the ledger charges the configured (entry-level) guarantee, not update level
    _STATE_EXCLUDE = (
        "mechanisms",
        "ratios",
        "k",
        "b",
        "n_per",
        "unit_ticks",
        "c",
        "h",
        "layer_folds",
        "total_fold",
        "node_budget",
        "call_budgets",
        "node_profiles",
        "answer_every",
        "window_units",
        "direct",
        "_spans",
    )
    _kind = ""

    def _start(self) -> None:
        kinds = sorted({q.kind for q in self.config.queries} - {"count", "histogram", "linear"})
        if kinds:
            raise ValueError(f"{self.name} answers count, histogram and linear query sets, not {kinds}")
        self._setup()
        nq = len(self.config.queries)
        self.tick = 0
        self.units_done = 0  # the last unit boundary processed
        self.closed = 0  # answers released (per query)
        self.scopes = [self.ledger.root.child(f"q{i}") for i in range(nq)]
        self._init_structure()

    # -- configuration-derived values (not in state) ----------------------------
    @classmethod
    def ledger_cap(cls, config: DynamicConfig) -> Budget:
        """The ledger's total: the configured (entry-level) guarantee itself, in
        the ledger's currency (zCDP for Gaussian noise): the folds, not group
        privacy, turn node budgets into it."""
        return dataclasses.replace(config, unit=PrivacyUnit.update()).ledger_budget

    def _setup(self) -> None:
        config = self.config
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        self.ratios = [entry_sensitivity_ratio(m) for m in self.mechanisms]
        self.k, self.b = _constraint(config)
        self.n_per = self.every_ticks or 1
        self._plan()  # unit_ticks, c, h, layer_folds, total_fold, answer_every, window_units, direct
        share = self.ledger_cap(config).scale(1.0 / len(config.queries))
        self.node_budget = share.scale(1.0 / self.total_fold)
        self.call_budgets = [self.node_budget if r == 1.0 else self.node_budget.for_sensitivity(r) for r in self.ratios]
        self.node_profiles = [m.noise_profile(b) for m, b in zip(self.mechanisms, self.call_budgets)]
        self._spans = [self.c**i for i in range(self.h)]

    def _restore_config(self) -> None:
        self._setup()

    def _horizon_units(self) -> int:
        if self.end_tick is None:
            return DESIGN_HORIZON
        return max(1, -(-self.end_tick // self.unit_ticks))

    def _plan(self) -> None:
        raise NotImplementedError

    def _choose_branching(self, horizon: int, height, mean_nodes) -> tuple[int, int]:
        """(c, h) with the smallest ``nodes(c, h) * variance weight(fold)``."""
        best = None
        for c in range(2, MAX_BRANCHING + 1):
            h = height or max(1, _digits(horizon, c))
            f = sum(hdcr_layer_folds(h, c, self.k, self.b, self.unit_ticks))
            score = mean_nodes(c, h) * _variance_weight(self.config.noise_kind, f)
            if best is None or score < best[0] - 1e-12:
                best = (score, c, h)
        return best[1], best[2]

    # -- structure ------------------------------------------------------------------
    def _init_structure(self) -> None:
        nq, d = len(self.mechanisms), [m.domain_size for m in self.mechanisms]
        # the exact change of each layer's open node, per query set
        self.acc = [np.zeros((self.h, d[q]), dtype=np.int64) for q in range(nq)]
        # released nodes still needed: per query set, (layer, index) -> values
        self.nodes = [dict() for _ in range(nq)]
        self.top_sum = [np.zeros(m.num_queries) for m in self.mechanisms]  # closed top nodes (HDCR prefix)

    @property
    def last_tick(self) -> int:
        return self.tick

    def _boundary_tick(self, u: int) -> int:
        t = u * self.unit_ticks
        return t if self.end_tick is None else min(t, self.end_tick)

    @property
    def _next_wake(self) -> int | None:
        if self.end_tick is not None and self.units_done * self.unit_ticks >= self.end_tick:
            return None
        return self._boundary_tick(self.units_done + 1)

    def _hists(self, batch: TickBatch) -> list[np.ndarray]:
        hists = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        for item in batch.inserts:
            for q, v in enumerate(item):
                hists[q][v] += 1
        for item, _ in batch.deletes:
            for q, v in enumerate(item):
                hists[q][v] -= 1
        return hists

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        self._advance(batch.tick - 1, noise, res)
        if self.finished:
            return
        self.num_updates += batch.n_updates
        if batch.inserts or batch.deletes:
            self._absorb(self._hists(batch))
        self.tick = batch.tick
        if self._next_wake == batch.tick:
            self._boundary(batch.tick, noise, res)

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        while not self.finished:
            t = self._next_wake
            if t is None or t > tick:
                break
            self._boundary(t, noise, res)
        if not self.finished:
            self.tick = max(self.tick, tick if self.end_tick is None else min(tick, self.end_tick))

    def _absorb(self, hists) -> None:
        for q, hst in enumerate(hists):
            self.acc[q] += hst  # every layer's open node

    def _boundary(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        """Unit boundary ``units_done + 1`` at ``tick`` (the end tick may close a
        partial unit): close the nodes ending there, answer if due."""
        self.tick = tick
        last = self.end_tick is not None and tick >= self.end_tick
        u = self.units_done + 1
        self._close_unit(u, tick, noise)
        self.units_done = u
        if last:  # all data is in: run the unit clock to the next answer boundary (empty units)
            while self.units_done % self.answer_every:
                self.units_done += 1
                self._close_unit(self.units_done, tick, noise)
        if self.units_done % self.answer_every == 0:
            self._answer(tick, self.units_done, res)
        if last:
            self._finish(tick, "ended", res)

    def _release_node(self, q: int, layer: int, index: int, hist, tick: int, noise: NoiseSource, coords: tuple):
        cost = fold(self.node_budget, self.layer_folds[layer])
        self.scopes[q].child(f"layer{layer}", Scope.PARALLEL).charge(cost, coords)  # before the noise
        m = self.mechanisms[q]
        values = m.answer(m.release(hist, self.call_budgets[q], noise.stream(*coords)))
        if self.emit_nodes:
            self.node_outputs.append(
                NodeOutput(
                    self.stream,
                    tick,
                    self.closed + 1,
                    index,
                    layer,
                    1,
                    "static",
                    self.config.queries[q].name,
                    values,
                    cost,
                    coords,
                )
            )
        return values

    def _close_unit(self, u: int, tick: int, noise: NoiseSource) -> None:
        """Release every node ending at unit u (layer i when c^i divides u)."""
        for i, span in enumerate(self._spans):
            if u % span:
                continue
            j = u // span
            for q in range(len(self.mechanisms)):
                coords = (self.stream, self.name, self.config.queries[q].name, "layer", i, "node", j)
                values = self._release_node(q, i, j, self.acc[q][i], tick, noise, coords)
                self.acc[q][i] = 0
                self._keep(q, i, j, values)
        self._prune(u)

    def _keep(self, q: int, i: int, j: int, values) -> None:
        self.nodes[q][(i, j)] = values

    def _prune(self, u: int) -> None:
        return None

    def _answer(self, tick: int, u: int, res: TickResult) -> None:
        self.closed += 1
        beta = self.config.beta
        for q, m in enumerate(self.mechanisms):
            parts = self._parts(q, u)
            est = np.zeros(m.num_queries)
            n_nodes = 0
            for key, values, count in parts:
                est = est + values
                n_nodes += count
                if self.emit_nodes:
                    i, j = key
                    self.node_outputs.append(
                        NodeOutput(
                            self.stream,
                            tick,
                            self.closed,
                            j,
                            i,
                            1,
                            "node_answer",
                            self.config.queries[q].name,
                            np.asarray(values, dtype=float),
                            None,
                            self._node_coords(q, key, count),
                        )
                    )
            bound = 0.0
            if not self.noiseless and n_nodes:
                bound = self.node_profiles[q].times(n_nodes).tail_bound(beta / m.num_queries)
            res.answers.append(
                Answer(self.stream, tick, self.closed, self.config.queries[q].name, est, bound, beta, self.ledger.spent)
            )
        res.closes.append(tick)
        self.period_tick = tick

    def _node_coords(self, q, key, count) -> tuple:
        i, j = key
        return (self.stream, self.name, self.config.queries[q].name, "layer", i, "node", j)

    def _parts(self, q: int, u: int) -> list:
        """(node key, values, number of node noises) summed into the answer at unit u."""
        raise NotImplementedError

    # -- error -------------------------------------------------------------------------
    def variance(self, q: int, n_nodes: int) -> float:
        """Variance of each answer of query set q summed from ``n_nodes`` nodes."""
        return self.node_profiles[q].times(n_nodes).variance()


class _PrefixRelease(_ChangelogRelease):
    """DCR and HDCR: the current value at unit u is the sum of the prefix's nodes."""

    def _keep(self, q: int, i: int, j: int, values) -> None:
        if i == self.h - 1:  # the top layer: only their running sum is needed
            self.top_sum[q] = self.top_sum[q] + values
            return
        self.nodes[q][(i, j)] = values

    def _prune(self, u: int) -> None:
        # a layer-i node is needed until its parent (layer i+1) closes
        for i in range(self.h - 1):
            if u % self._spans[i + 1] == 0:
                parent = u // self._spans[i]
                for q in range(len(self.mechanisms)):
                    for j in range(parent - self.c + 1, parent + 1):
                        self.nodes[q].pop((i, j), None)

    def _parts(self, q: int, u: int) -> list:
        out = []
        top = u // self._spans[-1]
        if top:
            out.append(((self.h - 1, top), self.top_sum[q], top))
        for i, j in cover(top * self._spans[-1], u, self.c, self.h):
            out.append(((i, j), self.nodes[q][(i, j)], 1))
        return out

    def _node_coords(self, q, key, count) -> tuple:
        i, j = key
        if i == self.h - 1:  # the sum of the top layer's nodes 1..j
            return (self.stream, self.name, self.config.queries[q].name, "layer", i, "nodes", 1, j)
        return super()._node_coords(q, key, count)


@state_class("mechanism.dcr")
class DCRRelease(_PrefixRelease):
    """The disjoint continual release (Pan, Def. 4.3): one node per unit of
    ``window`` periods releases the change of each query set over the unit
    (sensitivity b - a for one entry's change); the current value is the sum
    of the nodes so far. Released at every unit, data or not.

    Neighbours and privacy: two changelogs differing by one entry (all its
    mutations) under the enforced constraint: at most k mutations (k-fold,
    Thm 4.1) and/or all within B ticks of its first insertion (ceil(B/W)+1-fold,
    Cor. 4.1), the smaller when both are enforced; under ``unit: update`` one
    mutation (1-fold). The configured budget, split evenly over the query sets,
    is that many node budgets. Proof note: ``docs/changelog.md``."""

    name = "dcr"
    options_cls = DCROptions

    def _plan(self) -> None:
        self.unit_ticks = self.options.window * self.n_per
        self.c, self.h = 2, 1
        self.layer_folds = (dcr_fold(self.k, self.b, self.unit_ticks),)
        self.total_fold = self.layer_folds[0]
        self.answer_every = 1
        self.window_units = None
        self.direct = False


@state_class("mechanism.hdcr")
class HDCRRelease(_PrefixRelease):
    """The hierarchical disjoint continual release HDCR(h, c, W) (Pan, Def.
    4.6): h layers of DCRs whose nodes span c^i units of ``window`` periods;
    the current value at each unit is the sum of at most (c-1) nodes per layer
    (Thm 4.4: any range from at most 2(c-1)h_min nodes).

    Neighbours and privacy: one entry (all its mutations) under the enforced
    constraint: hk-fold for at most k mutations, sum over layers of
    ceil(B / (c^i W)) + 1 for mutations within B ticks of the first insertion
    (Thm 4.3), per layer the smaller when both are enforced; one mutation under
    ``unit: update``. Every node gets the same budget (the configured budget per
    query set over the total fold). Proof note: ``docs/changelog.md``."""

    name = "hdcr"
    options_cls = HDCROptions

    def _plan(self) -> None:
        o = self.options
        self.unit_ticks = o.window * self.n_per
        horizon = self._horizon_units()
        if o.branching is not None:
            self.c = o.branching
            self.h = o.height or max(1, _digits(horizon, self.c))
        else:
            samples = sorted({max(1, round(horizon * (i + 1) / 256)) for i in range(256)})

            def mean_nodes(c, h):
                return sum(len(cover(0, p % c ** (h - 1), c, h)) + p // c ** (h - 1) for p in samples) / len(samples)

            self.c, self.h = self._choose_branching(horizon, o.height, mean_nodes)
        self.layer_folds = hdcr_layer_folds(self.h, self.c, self.k, self.b, self.unit_ticks)
        self.total_fold = sum(self.layer_folds)
        self.answer_every = 1
        self.window_units = None
        self.direct = False


@state_class("mechanism.swcr")
class SWCRRelease(_ChangelogRelease):
    """The sliding-window continual release SWCR(W, P) (Pan, Def. 4.7): every
    P periods, each query set's change over the last W periods, released
    directly (one query per window) or aggregated from an HDCR over units of
    gcd(W, P) periods (Thm 4.7), whichever has the lower variance for the same
    guarantee (``options.method``).

    Neighbours and privacy: one entry (all its mutations) under the enforced
    constraint. Direct: k ceil(W/P)-fold for at most k mutations (Thm 4.5),
    ceil((B+W)/P)-fold for mutations within B ticks of the first insertion
    (Thm 4.6), the smaller when both are enforced; derived: the HDCR's fold
    (Thm 4.3). One mutation under ``unit: update``. Proof note:
    ``docs/changelog.md``."""

    name = "swcr"
    options_cls = SWCROptions

    def _plan(self) -> None:
        o = self.options
        g = math.gcd(o.window, o.period)
        self.unit_ticks = g * self.n_per
        self.window_units = o.window // g
        self.answer_every = o.period // g
        wt, pt = o.window * self.n_per, o.period * self.n_per
        direct_fold = swcr_fold(wt, pt, self.k, self.b)
        wu, pu = self.window_units, self.answer_every

        memo = {}

        def max_nodes(c, h):
            """The most nodes a window needs (its cover repeats with period lcm(P, c^(h-1)))."""
            if (c, h) not in memo:
                top = c ** (h - 1)
                rs = list(range(pu, wu + top * pu // math.gcd(top, pu) + pu, pu))
                if len(rs) > 4096:
                    rs = rs[:: len(rs) // 4096 + 1]
                memo[c, h] = max(len(cover(max(0, r - wu), r, c, h)) for r in rs)
            return memo[c, h]

        def default_h(c):
            return o.height or _ceil_log(wu, c)

        if o.branching is not None:
            c = o.branching
            h = default_h(c)
        else:
            best = None
            for c_ in range(2, max(2, min(MAX_BRANCHING, wu)) + 1):
                h_ = default_h(c_)
                f = sum(hdcr_layer_folds(h_, c_, self.k, self.b, self.unit_ticks))
                score = max_nodes(c_, h_) * _variance_weight(self.config.noise_kind, f)
                if best is None or score < best[0] - 1e-12:
                    best = (score, c_, h_)
            c, h = best[1], best[2]
        derived_folds = hdcr_layer_folds(h, c, self.k, self.b, self.unit_ticks)
        method = o.method
        if method == "auto":
            # the same guarantee: node variance ~ fold^2 (Laplace) or fold (Gaussian); derived sums max_nodes
            v_direct = _variance_weight(self.config.noise_kind, direct_fold)
            v_derived = max_nodes(c, h) * _variance_weight(self.config.noise_kind, sum(derived_folds))
            method = "direct" if v_direct <= v_derived else "hdcr"
        self.direct = method == "direct"
        if self.direct:
            self.c, self.h = 2, 1
            self.layer_folds = (direct_fold,)
        else:
            self.c, self.h = c, h
            self.layer_folds = derived_folds
        self.total_fold = sum(self.layer_folds)

    def _init_structure(self) -> None:
        super()._init_structure()
        if self.direct:  # the exact change of each of the last W units
            self.ring = [np.zeros((self.window_units, m.domain_size), dtype=np.int64) for m in self.mechanisms]

    def _close_unit(self, u: int, tick: int, noise: NoiseSource) -> None:
        if not self.direct:
            super()._close_unit(u, tick, noise)
            return
        w = self.window_units
        for q in range(len(self.mechanisms)):
            self.ring[q][u % w] = self.acc[q][0]
            self.acc[q][0] = 0
        if u % self.answer_every == 0:
            for q in range(len(self.mechanisms)):
                coords = (self.stream, self.name, self.config.queries[q].name, "window", u)
                hist = self.ring[q].sum(axis=0)
                self.nodes[q] = {(0, u): self._release_node(q, 0, u, hist, tick, noise, coords)}

    def _prune(self, u: int) -> None:
        lo = u - self.window_units
        for q in range(len(self.mechanisms)):
            for key in [k for k in self.nodes[q] if k[1] * self._spans[k[0]] <= lo]:
                del self.nodes[q][key]

    def _parts(self, q: int, u: int) -> list:
        if self.direct:
            return [((0, u), self.nodes[q][(0, u)], 1)]
        return [((i, j), self.nodes[q][(i, j)], 1) for i, j in cover(max(0, u - self.window_units), u, self.c, self.h)]

    def _node_coords(self, q, key, count) -> tuple:
        if self.direct:
            return (self.stream, self.name, self.config.queries[q].name, "window", key[1])
        return super()._node_coords(q, key, count)

    @property
    def window_ticks(self) -> int:
        """The window's length in ticks (each answer is the change over it)."""
        return self.options.window * self.n_per
