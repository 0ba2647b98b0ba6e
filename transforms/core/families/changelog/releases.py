"""The changelog releases DCR, HDCR and SWCR (Pan 004 §4): layers of nodes over
release units, each node's change released once, the ledger charged by the
enforced constraint (``docs/changelog.md``)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from transforms.core.config import DynamicConfig
from transforms.core.families.changelog.folds import (
    DESIGN_HORIZON,
    MAX_BRANCHING,
    DCROptions,
    HDCROptions,
    SWCROptions,
    ceil_log,
    cover,
    dcr_fold,
    entry_sensitivity_ratio,
    fold,
    hdcr_layer_folds,
    num_digits,
    swcr_fold,
    variance_weight,
)
from transforms.core.foundation.accounting import Budget, PrivacyUnit, Scope
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.outputs import Answer, NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease

__all__ = ["DCRRelease", "HDCRRelease", "SWCRRelease"]


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

    # -- the planned allocation (docs/changelog.md) -------------------------------
    def planned_cost(self, coordinates: tuple, nodes=()) -> Budget:
        """Under the update unit (one mutation: every node fold is 1): the
        configured budget per query set is split evenly over the h layers, so
        every node costs share / h; a direct SWCR window costs the whole share.
        Under an entry constraint a node of layer i costs its F_i-fold
        composition of share / F (``docs/changelog.md``)."""
        if self.config.unit.kind != "update":
            raise NotImplementedError("the planned allocation is stated for the update unit")
        c = tuple(coordinates[1:])
        if c[0] != self.name or c[1] not in {q.name for q in self.config.queries}:
            raise ValueError(f"no planned release at {c}")
        share = self.ledger_cap(self.config).scale(1 / len(self.config.queries))
        if c[2] == "window" and len(c) == 4:
            return share
        if c[2] != "layer" or c[4] != "node" or len(c) != 6 or not 0 <= c[3] < self.h:
            raise ValueError(f"no planned release at {c}")
        return share.scale(1 / self.h)

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
            h = height or max(1, num_digits(horizon, c))
            f = sum(hdcr_layer_folds(h, c, self.k, self.b, self.unit_ticks))
            score = mean_nodes(c, h) * variance_weight(self.config.noise_kind, f)
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
        return batch.histograms([m.domain_size for m in self.mechanisms])

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
            self.h = o.height or max(1, num_digits(horizon, self.c))
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
            return o.height or ceil_log(wu, c)

        if o.branching is not None:
            c = o.branching
            h = default_h(c)
        else:
            best = None
            for c_ in range(2, max(2, min(MAX_BRANCHING, wu)) + 1):
                h_ = default_h(c_)
                f = sum(hdcr_layer_folds(h_, c_, self.k, self.b, self.unit_ticks))
                score = max_nodes(c_, h_) * variance_weight(self.config.noise_kind, f)
                if best is None or score < best[0] - 1e-12:
                    best = (score, c_, h_)
            c, h = best[1], best[2]
        derived_folds = hdcr_layer_folds(h, c, self.k, self.b, self.unit_ticks)
        method = o.method
        if method == "auto":
            # the same guarantee: node variance ~ fold^2 (Laplace) or fold (Gaussian); derived sums max_nodes
            v_direct = variance_weight(self.config.noise_kind, direct_fold)
            v_derived = max_nodes(c, h) * variance_weight(self.config.noise_kind, sum(derived_folds))
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
