"""The k-ary tree counter: a mixed-radix tree (radices chosen for the horizon
and the noise kind) with Honaker's bottom-up inverse-variance estimate, the
best pure-DP counter here (``docs/counters.md``)."""

from __future__ import annotations

import functools
import math

import numpy as np

from transforms.core.counters.base import ContinualCounter
from transforms.core.foundation.accounting import BudgetExceededError, Scope
from transforms.core.foundation.bounds import LAPLACE, NoiseProfile, tail_bounds
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import state_class

__all__ = ["KaryTreeCounter", "kary_radices", "kary_variance_path", "digit_total", "kary_digits", "NEWTON_FROM"]


def digit_total(horizon: int, size: int, radix: int | None) -> int:
    """sum_{t=1}^{T} ((t // size) mod radix) (radix None: no mod, the top level)."""
    q, rem = divmod(horizon, size)
    if radix is None:
        return size * q * (q - 1) // 2 + (rem + 1) * q
    full, part = divmod(q, radix)
    inner = full * radix * (radix - 1) // 2 + part * (part - 1) // 2
    return size * inner + (rem + 1) * (q % radix)


def _kary_level_variances(radices: tuple[int, ...], s2: float) -> list[float]:
    v = [s2]
    for r in radices:
        v.append(1.0 / (1.0 / s2 + 1.0 / (r * v[-1])))
    return v


@functools.lru_cache(maxsize=64)
def kary_radices(horizon: int, exponent: int = 2) -> tuple[int, ...]:
    """Radices (r_0, ..., r_{h-2}) of the tree with the least mean per-step variance
    over t = 1..T under Honaker's estimate; level j nodes cover prod_{i<j} r_i
    timestamps, the top level has T // prod r_i nodes. ``exponent``: a node's
    variance grows as levels^exponent (2: Laplace, eps / levels per node;
    1: Gaussian, rho / levels). Searched over the radix sequences of values k
    and k + 1 (both orders), T^(1/levels) - 1 <= k <= T^(1/(levels-1)) + 1, for
    every number of levels; the mean is exact (closed-form digit sums). The least
    over that family, not over every radix sequence: a search over all sequences
    of values within [T^(1/levels) - 2, T^(1/levels) + 3] found lower means, by at
    most 0.52% (T = 27, 256, 512, 729, 1024, 4096, 2^16; measured 2026-11-23).
    Ties (means within a relative 1e-12, e.g. T = 14, exponent 1: (2, 2) and (2, 3), both 71.0) go to the first
    in the search order (fewer levels, then the smaller radix tuple), so the tree of a configuration does not
    depend on float rounding or on the order of the search's set."""
    if horizon < 1:
        raise ValueError("horizon must be >= 1")
    best, best_radices = float("inf"), ()
    for levels in range(1, max(2, horizon.bit_length()) + 1):
        if levels == 1:
            cands = {()}
        else:
            # the top level's node count T // prod(r) acts as a last radix: balanced
            # trees have radices near T^(1/levels)
            k_lo = max(2, int(horizon ** (1.0 / levels)) - 1)
            k_hi = max(k_lo, int(horizon ** (1.0 / (levels - 1)) + 1e-9) + 1)
            cands = set()
            for k in range(k_lo, min(k_hi, 4 * k_lo + 4) + 1):
                for n_up in range(levels):
                    seq = [k + 1] * n_up + [k] * (levels - 1 - n_up)
                    if math.prod(seq) <= horizon:
                        cands.update({tuple(seq), tuple(reversed(seq))})
        for rad in sorted(cands):
            v = _kary_level_variances(rad, float(levels**exponent))
            sizes = [math.prod(rad[:j]) for j in range(levels)]
            total = sum(
                v[j] * digit_total(horizon, sizes[j], rad[j] if j < levels - 1 else None) for j in range(levels)
            )
            if total < best * (1 - 1e-12):
                best, best_radices = total, rad
    return best_radices


def kary_variance_path(horizon: int, radices: tuple[int, ...], s2: float) -> np.ndarray:
    """Per-step variance of the Honaker k-ary tree, t = 1..T, node variance s2."""
    levels = len(radices) + 1
    v = _kary_level_variances(radices, s2)
    t = np.arange(1, horizon + 1)
    out = np.zeros(horizon)
    size = 1
    for j in range(levels):
        digits = t // size if j == levels - 1 else (t // size) % radices[j]
        out += digits * v[j]
        if j < levels - 1:
            size *= radices[j]
    return out


@state_class("counter.kary_tree")
class KaryTreeCounter(ContinualCounter):
    """Mixed-radix k-ary tree over a horizon T with Honaker's bottom-up estimate.

    Each timestamp lies in exactly one node per level (h levels), so every node
    is released with budget / h (parallel within a level, sequential across
    levels), like the binary tree; a prefix is the sum of the completed nodes
    since the last completed parent, sum_j digit_j(t) nodes. Honaker's
    estimate of a node combines its release y and its children's estimates,
    z = w_y y + w_c sum(children), inverse-variance weights: the best linear
    unbiased estimate of the node from its subtree, hence of every prefix from
    the releases so far. Needs an additive black box for Honaker (else plain
    sums).
    """

    name = "kary_tree"
    needs_horizon = True
    # derived from the level profiles, and the last block of bounds used (both rebuilt on first use)
    _STATE_EXCLUDE = ("_bound_key", "_bound_memo")

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        """Budget / (number of levels) per node; the radices are those chosen for
        the horizon and the noise kind."""
        radices = kary_radices(horizon, 2 if noise_kind == LAPLACE else 1)
        return budget.scale(1.0 / (len(radices) + 1))

    def __init__(
        self, mechanism, budget, *, horizon: int, coords=(), scope=None, radices: tuple[int, ...] | None = None
    ):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if not horizon or int(horizon) < 1:
            raise ValueError("kary_tree needs a horizon >= 1")
        self.horizon = int(horizon)
        exponent = 2 if mechanism.noise_kind == LAPLACE else 1
        self.radices = tuple(int(r) for r in (radices if radices is not None else kary_radices(self.horizon, exponent)))
        if any(r < 2 for r in self.radices) or math.prod(self.radices) > self.horizon:
            raise ValueError(f"radices must be >= 2 with a product <= the horizon, got {self.radices}")
        self.levels = len(self.radices) + 1
        self.sizes = [math.prod(self.radices[:j]) for j in range(self.levels)]
        self.honaker = bool(mechanism.additive)
        self.node_budget = budget.scale(1.0 / self.levels)
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._level_scopes = [self._scope.child(f"level{j}", Scope.PARALLEL) for j in range(self.levels)]
        d = mechanism.domain_size
        self._acc = np.zeros((self.levels, d), dtype=np.int64)  # exact open node per level
        self._sums = np.zeros((self.levels, mechanism.num_queries))  # completed nodes since the parent's last
        self._digits = [0] * self.levels
        self._weights, self._level_profiles = self._honaker_weights() if self.honaker else ([], [])

    def _honaker_weights(self):
        base = self.mechanism.noise_profile(self.node_budget)
        s2 = base.variance()
        v = _kary_level_variances(self.radices, s2)
        weights, profiles = [(1.0, 0.0)], [base]
        for j in range(1, self.levels):
            r = self.radices[j - 1]
            wy, wc = v[j] / s2, v[j] / (r * v[j - 1])
            weights.append((wy, wc))
            profiles.append(base.scaled(wy) + profiles[-1].times(r).scaled(wc))
        return weights, profiles

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        if self.t >= self.horizon:
            raise BudgetExceededError(f"{self.name} counter reached its horizon {self.horizon}")
        self.t += 1
        t = self.t
        self._acc += self._batch(batch)
        for j in range(self.levels):
            if t % self.sizes[j]:
                break
            index = t // self.sizes[j]
            y = self._release(
                self._acc[j],
                self.node_budget,
                self._level_scopes[j],
                noise,
                "node",
                j,
                index,
                ahead=self.horizon // self.sizes[j] - index + 1,  # this level's nodes still to come, this one too
            )
            self._acc[j] = 0
            if j and self.honaker:
                wy, wc = self._weights[j]
                z = wy * y + wc * self._sums[j - 1]
            else:
                z = y
            if j:
                self._sums[j - 1] = 0
                self._digits[j - 1] = 0
            self._sums[j] = self._sums[j] + z
            self._digits[j] += 1
        self.noiseless = noise.is_disabled
        self.estimate = np.add.reduce(self._sums, axis=0)  # what .sum(axis=0) computes, without its wrappers
        nodes = sum(self._digits)
        self._terms = [(self.node_budget, nodes, 1.0)] if nodes else []
        return self.estimate

    def noise_profile(self) -> NoiseProfile:
        if not self.honaker:
            return super().noise_profile()
        return NoiseProfile.sum(self._level_profiles[j].times(a) for j, a in enumerate(self._digits) if a)

    def error_bound(self, beta: float, n: float | None = None) -> float:
        """The tail bound of :meth:`noise_profile`, computed for an aligned block of ``_BLOCK`` periods at once
        (:func:`~transforms.core.foundation.bounds.tail_bounds`, vectorised): with Honaker's estimate the
        profile of period t is a function of t alone (its mixed-radix digits, :func:`kary_digits`) and of the
        counter's public parameters, so a whole block's profiles are known ahead, and the same period gets the
        same bound whichever period a run starts or restores at (blocks are aligned, rows independent). The same
        exact minimiser as :meth:`NoiseProfile.tail_bound` (Newton; within a few ulps of the exact minimum of the
        Chernoff bound: ``tests/test_bound_newton.py``), at every horizon (``NEWTON_FROM`` = 1): a short horizon
        computes one block of ``horizon`` rows."""
        if self.t == 0 or self.noiseless or not any(self._digits):
            return 0.0
        if not self.honaker or self.horizon < NEWTON_FROM:
            return super().error_bound(beta, n)
        return self._bound_at(beta, self.t)

    def _bound_at(self, beta: float, t: int) -> float:
        """:meth:`error_bound` after step ``t`` (Honaker's estimate: a function of t and the public parameters)."""
        index = (t - 1) // _BLOCK
        # The last block used, kept on the instance: consecutive periods share a block (4096 of them), and the
        # shared cache's key (the nested tuple of the level profiles' terms) is hashed on every look-up. The
        # memo holds what _block_bounds returned for the same beta and block index (the key is fixed for the
        # instance: its level profiles never change), so the bound is the same float.
        memo = self.__dict__.get("_bound_memo")
        if memo is not None and memo[0] == beta and memo[1] == index:
            return float(memo[2][(t - 1) % _BLOCK])
        key = getattr(self, "_bound_key", None)
        if key is None:
            key = self._bound_key = tuple(tuple(sorted(p.terms.items())) for p in self._level_profiles)
        block = _block_bounds(key, self.radices, self.horizon, beta / self.mechanism.num_queries, index)
        self._bound_memo = (beta, index, block)
        return float(block[(t - 1) % _BLOCK])

    # -- a block of steps at once (a bounded run's known batches: ContinualCountRelease.apply_block) ----------------

    def block_room(self, noise: NoiseSource) -> int:
        """The most steps :meth:`block_plan` can plan from here: up to the horizon, and short of the first node of
        any level that has not released one yet; 0 where no block can be planned (no Honaker estimate, a release
        log, a source that does not draw ahead or draws no noise, a mechanism that answers one release at a
        time)."""
        t0 = self.t
        in_rows = getattr(self.mechanism, "answers_in_rows", None)
        if (
            not self.honaker
            or self.release_log is not None
            or noise.is_disabled
            or not getattr(noise, "draws_ahead", False)
            or getattr(self.mechanism, "noise_rows", None) is None
            or in_rows is None
            or not in_rows()
        ):
            return 0
        return min([self.horizon - t0] + [size - 1 - t0 for size in self.sizes if size > t0])

    def block_plan(self, n: int, noise: NoiseSource):
        """What :meth:`step_block` needs to take the next ``n`` steps at once (the node noise of each level's
        completed nodes, drawn as :meth:`_noise_ahead` draws it: ``mechanism.noise_rows``, the same values), or
        None where the steps must be taken one by one: past the horizon, without Honaker's estimate, with a
        release log, a source that does not draw ahead (or draws no noise), a mechanism without rows, or a
        level whose first node would be released in the block (its first charge raises the ledger's total;
        every later node of a level is charged the same cost in a parallel scope, which changes no total, so
        no charge of the block can exceed the budget). Draws noise but changes nothing."""
        t0 = self.t
        if n < 1 or t0 + n > self.horizon or not self.honaker or self.release_log is not None:
            return None
        if noise.is_disabled or not getattr(noise, "draws_ahead", False):
            return None
        rows_of = getattr(self.mechanism, "noise_rows", None)
        in_rows = getattr(self.mechanism, "answers_in_rows", None)
        if rows_of is None or in_rows is None or not in_rows():
            return None
        spans = [(t0 // size + 1, (t0 + n) // size) for size in self.sizes]
        if any(first == 1 <= last for first, last in spans):  # a level's first node
            return None
        plan = []
        for j, (first, last) in enumerate(spans):
            if last < first:
                plan.append((first, 0, None))
                continue
            rows = rows_of(self.node_budget, noise, self.coords + ("node", j), first, last - first + 1)
            if rows is None:
                return None
            plan.append((first, last - first + 1, rows))
        return plan

    def charge_step(self, t: int) -> None:
        """The ledger charges step ``t`` makes (its completed nodes, level by level), as :meth:`step` makes
        them: a caller stepping a block charges its steps in their order first (``block_plan``)."""
        cost = self.mechanism.cost(self.node_budget)
        for j, size in enumerate(self.sizes):
            if t % size:
                break
            self._level_scopes[j].charge(cost, self.coords + ("node", j, t // size))

    def step_block(self, batches: np.ndarray, plan) -> list[np.ndarray]:
        """The estimates of the next ``len(batches)`` steps (one ``n x domain_size`` integer array of their
        batches), each the same floats as :meth:`step` gives, and the counter's state after them the same as
        after those steps, with ``plan`` from :meth:`block_plan` (the charges are the caller's:
        :meth:`charge_step`). Each level's nodes are the integer sums of their batches; a node's answers
        ``mechanism.answers_with_noise`` of its noise row; Honaker's combination the same elementwise products
        and sums; each level's running sum the same additions in the same order (``np.add.accumulate``, which
        adds in order, from the same start: the carried sum, or 0.0 after its parent's node); and each
        estimate ``np.add.reduce`` over the levels, row by row as the counter's own (``tests/test_kary_block.py``
        compares them bit for bit)."""
        h = np.asarray(batches)
        n, t0, q = len(h), self.t, self.mechanism.num_queries
        if h.ndim != 2 or h.shape[1] != self.mechanism.domain_size:
            raise ValueError(f"batches must be an n x {self.mechanism.domain_size} array, got shape {h.shape}")
        cum = np.zeros((n + 1, h.shape[1]), dtype=np.int64)
        np.cumsum(h, axis=0, dtype=np.int64, out=cum[1:])
        steps = np.arange(t0 + 1, t0 + n + 1)
        levels = np.empty((n, self.levels, q))  # each step's sums per level, laid out as self._sums
        before_reset = None  # the lower level's sums as each of this level's nodes completes
        for j, size in enumerate(self.sizes):
            first, count, rows = plan[j]
            carried = self._sums[j].copy()
            if not count:
                self._acc[j] += cum[n]
                levels[:, j, :] = carried
                continue
            ends = np.arange(first, first + count) * size - t0  # the completing steps, 1-based in the block
            starts = np.maximum(ends - size, 0)
            nodes = cum[ends] - cum[starts]
            nodes[0] += self._acc[j]  # the part of the first node before the block
            self._acc[j] = cum[n] - cum[ends[-1]]
            y = self.mechanism.answers_with_noise(nodes, self.node_budget, rows)
            if j:
                wy, wc = self._weights[j]
                z = wy * y + wc * before_reset
            else:
                z = y
            upper = self.sizes[j + 1] if j + 1 < self.levels else None
            resets = [] if upper is None else list(np.flatnonzero((ends + t0) % upper == 0))
            after = np.empty((count, q))
            tops, at, cur = [], 0, carried
            for stop in [*resets, count - 1] if not resets or resets[-1] != count - 1 else resets:
                run = np.add.accumulate(np.vstack([cur[None, :], z[at : stop + 1]]), axis=0)[1:]
                after[at : stop + 1] = run
                if upper is not None and (ends[stop] + t0) % upper == 0:
                    tops.append(run[-1])
                    after[stop] = 0.0
                    cur = np.zeros(q)
                else:
                    cur = run[-1]
                at = stop + 1
            self._sums[j] = cur
            before_reset = np.array(tops).reshape(-1, q)
            k = steps // size - first  # the last completed node of this level at each step, -1: none yet
            levels[:, j, :] = np.where((k >= 0)[:, None], after[np.maximum(k, 0)], carried)
        # each row's np.add.reduce over the levels, as step() reduces self._sums: numpy reduces the middle axis of
        # an (n, levels, q) array row by row with the loop it uses for one (levels, q) array (in order, or its
        # pairwise sum for a contiguous run of more than 8), tests/test_kary_block.py checks it on this numpy
        estimates = list(np.add.reduce(levels, axis=1))
        self.t = t0 + n
        self._digits = [int(d) for d in kary_digits(np.array([self.t]), self.radices)[0]]
        self.noiseless = False
        self.estimate = estimates[-1]
        nodes_now = sum(self._digits)
        self._terms = [(self.node_budget, nodes_now, 1.0)] if nodes_now else []
        return estimates

    def block_bounds(self, beta: float, t0: int, n: int) -> list[float]:
        """:meth:`error_bound` after each of the steps ``t0 + 1 .. t0 + n`` taken by :meth:`step_block`."""
        return [self._bound_at(beta, t) for t in range(t0 + 1, t0 + n + 1)]


def kary_digits(t: np.ndarray, radices: tuple[int, ...]) -> np.ndarray:
    """The counter's ``_digits`` after step t, one row per t: the completed nodes of each level since its parent's
    last, i.e. t in the mixed radix (r_0, ..., r_{h-2}), the top level unbounded."""
    t = np.asarray(t, dtype=np.int64)
    cols, size = [], 1
    for r in radices:
        cols.append((t // size) % r)
        size *= r
    cols.append(t // size)
    return np.stack(cols, axis=1)


_BLOCK = 4096  # periods whose bounds are computed at once (a year of one-minute periods: 129 blocks)
NEWTON_FROM = 1  # the horizon (periods) from which the bounds are computed by blocks (error_bound): every horizon


@functools.lru_cache(maxsize=64)
def _block_bounds(levels: tuple, radices: tuple[int, ...], horizon: int, beta: float, block: int) -> np.ndarray:
    """Tail bounds of periods ``block * _BLOCK + 1 ..`` (at most ``_BLOCK``, not past the horizon) of a Honaker
    k-ary tree whose level profiles have the sorted terms ``levels``."""
    terms = sorted({term for level in levels for term, _ in level})
    col = {term: i for i, term in enumerate(terms)}
    m = np.zeros((len(levels), len(terms)), dtype=np.int64)
    for j, level in enumerate(levels):
        for term, c in level:
            m[j, col[term]] = c
    t = np.arange(block * _BLOCK + 1, min((block + 1) * _BLOCK, horizon) + 1)
    return tail_bounds(terms, kary_digits(t, radices) @ m, beta)
