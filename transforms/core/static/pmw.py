"""Private multiplicative weights (MWEM-style) as a static black box.

Releases a synthetic histogram ``A`` (length ``d``, total ``n_hat``) from which
every query of the set is answered: an explicit matrix of linear queries with
entries in [0, 1], or *all ranges* ``[a, b]`` of the domain, evaluated
implicitly with prefix sums (d = 1024 has 524,800 ranges).

Algorithm (Hardt, Ligett, McSherry 2012), with the budget of one release split
as: 10% for ``n_hat = |D| + noise``; the rest evenly over ``T`` iterations,
each half *selection* and half *measurement*:

1. select a query with the exponential mechanism on the score
   ``|q(A_{t-1}) - q(D)|`` (sensitivity 1; a margin of 2^-20 covers float
   rounding), sampled exactly by rejection with exact Bernoulli(exp(-x));
2. measure it: ``m_t = q(D) + noise`` (integer query, integer noise; real
   matrices on the 2^-20 lattice);
3. multiplicative-weights update ``A(x) *= exp(q(x) (m_t - q(A)) / (2 n_hat))``,
   renormalised to ``n_hat``.

The output is the average of ``A_0 .. A_{T-1}``.

Privacy: pure eps (Laplace measurements, eps_sel-EM is eps_sel-DP) or zCDP
(Gaussian measurements; the eps_sel-EM is eps_sel^2/8-zCDP, Cesar-Rogers
2021). Costs compose sequentially over the 2T + 1 steps.

Error bound (``docs/pmw.md``): with probability 1 - beta, for every query,

    |q(A) - q(D)| <= sqrt(4 (n + E)^2 ln d / T + (M + E)^2) + S + 3 E,

with E, M, S the (beta/3)-bounds of the count noise, of all T measurement
noises, and of the T selections' shortfall ``(2 Delta / eps_sel)(ln m + ln(3T/beta))``.
It is the MWEM potential argument with the dataset rescaled to ``n_hat``.

With the noise switched off the release is the exact histogram.
"""

from __future__ import annotations

import math

import numpy as np

from transforms.core.foundation.accounting import Budget
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile
from transforms.core.foundation.noise import (
    RandomStream,
    as_ratio_up,
    bernoulli_exp_float,
    discrete_gaussian,
    discrete_laplace,
)
from transforms.core.foundation.state import state_class
from transforms.core.static.linear import LATTICE_BITS, Release, StaticMechanism

__all__ = ["PMWMechanism", "range_answers"]

_SCORE_MARGIN = 1 + 2.0**-20
_COUNT_SHARE = 0.1


def range_answers(hist: np.ndarray) -> np.ndarray:
    """All range sums [a, b], a <= b, in row-major order of (a, b)."""
    p = np.concatenate([[0.0], np.cumsum(np.asarray(hist, dtype=float))])
    d = len(hist)
    a_idx, b_idx = np.triu_indices(d)
    return p[b_idx + 1] - p[a_idx]


MAX_RANGE_CELLS = math.isqrt((1 << 63) - 1)  # d * d must fit int64 (_range_of's row starts)


@state_class("static.pmw")
class PMWMechanism(StaticMechanism):
    """Private multiplicative weights over a finite domain (see module docstring)."""

    name = "pmw"
    additive = False

    def __init__(
        self, domain_size: int, *, matrix=None, ranges: bool = False, iterations: int = 0, noise: str = "laplace"
    ):
        if noise not in (LAPLACE, GAUSSIAN):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        if (matrix is None) == (not ranges):
            raise ValueError("PMW needs exactly one of: a query matrix, or ranges=True")
        self.noise_kind = noise
        self.d = int(domain_size)
        if self.d < 2:
            raise ValueError("PMW needs a domain of at least 2 values")
        self.ranges = bool(ranges)
        if matrix is not None:
            a = np.asarray(matrix, dtype=float)
            if a.ndim != 2 or a.shape[1] != self.d or np.any(a < 0) or np.any(a > 1):
                raise ValueError("the PMW query matrix must be m x domain_size with entries in [0, 1]")
            self.unit = 2.0**-LATTICE_BITS
            self._aq = np.rint(a / self.unit).astype(np.int64)
            self.matrix = self._aq * self.unit
            self.m = a.shape[0]
        else:
            if self.d > MAX_RANGE_CELLS:
                raise ValueError(
                    f"PMW over all ranges supports at most {MAX_RANGE_CELLS:,} cells (row starts in int64), "
                    f"got {self.d:,}"
                )
            self.matrix = None
            self.m = self.d * (self.d + 1) // 2
        if iterations < 0:
            raise ValueError("PMW iterations must be >= 1 (or 0: chosen per release)")
        self.fixed_iterations = int(iterations)
        self.iterations = int(iterations) if iterations else 20  # upper limit when adaptive

    @property
    def domain_size(self) -> int:
        return self.d

    @property
    def num_queries(self) -> int:
        """Answers are carried as the synthetic histogram (length d)."""
        return self.d

    @property
    def query_count(self) -> int:
        return self.m

    def evaluate(self, hist_like: np.ndarray) -> np.ndarray:
        """All queries of the set on a (synthetic) histogram."""
        h = np.asarray(hist_like, dtype=float)
        return range_answers(h) if self.ranges else self.matrix @ h

    def exact(self, hist):
        return np.asarray(self.validate_hist(hist), dtype=float)

    # -- budget ----------------------------------------------------------------
    def _split(self, budget: Budget, external_count: bool = False, t: int | None = None):
        """(count noise param, per-iteration eps_sel, measurement noise param) for T = t."""
        self.check_budget(budget)
        t = t or self.iterations
        share = 0.0 if external_count else _COUNT_SHARE
        if self.noise_kind == GAUSSIAN:  # (check_budget: a zCDP budget means Gaussian noise)
            rho = budget.gaussian_rho()
            rho_it = (1 - share) * rho / t
            eps_sel = math.sqrt(8 * rho_it / 2)  # eps-EM is eps^2/8-zCDP
            count_p = 1 / (2 * share * rho) if share else None
            return count_p, eps_sel, 1 / (2 * (rho_it / 2))
        eps = budget.epsilon
        eps_it = (1 - share) * eps / t
        return (1 / (share * eps) if share else None), eps_it / 2, 2 / eps_it

    def _units_param(self, param: float, unit: float) -> float:
        """The noise parameter in lattice units (sensitivity 1/unit there), rounded up."""
        if unit == 1.0:
            return float(as_ratio_up(param))
        return float(as_ratio_up(param / unit if self.noise_kind == LAPLACE else param / (unit * unit)))

    def _answer_param(self, param: float) -> float:
        """The measurement noise parameter actually added, in answer units."""
        unit = 1.0 if self.ranges else self.unit
        p = self._units_param(param, unit)
        return p * unit if self.noise_kind == LAPLACE else p * unit * unit

    def _noise(self, stream, param, size):
        if self.noise_kind == LAPLACE:
            return discrete_laplace(stream, param, size)
        return discrete_gaussian(stream, param, size)

    def _profile(self, param) -> NoiseProfile:
        return NoiseProfile.single(self.noise_kind, param)

    # -- release -----------------------------------------------------------------
    def _scores(self, a_syn: np.ndarray, h: np.ndarray):
        """Scores of all queries, as a function of the query index (lazy for ranges)."""
        if self.ranges:
            e = np.concatenate([[0.0], np.cumsum(a_syn - h)])
            return e
        return np.abs(self.matrix @ a_syn - self.matrix @ h)

    def _range_of(self, idx: np.ndarray):
        """Query index (row-major over a <= b) -> (a, b), exactly for every domain whose ``m`` fits int64.

        Row a holds d - a ranges and starts at ``start(a) = a d - a (a - 1) / 2``; a is the largest row with
        ``start(a) <= idx``. The float root of that quadratic finds it to within one row while ``(2d + 1)^2``
        has float precision to spare (up to about 2^26 cells); the rows it misses (at 2^28 cells and more, near
        the last rows, where the root's argument is a small difference of two numbers near 2^58) are found by
        an integer bisection, so a larger domain is exact too (before stop 57 it was not: a wrong (a, b),
        or b past the domain)."""
        d = self.d
        idx = np.asarray(idx, dtype=np.int64)

        def start(r):
            return r * d - r * (r - 1) // 2

        with np.errstate(invalid="ignore"):  # a negative root argument (rounding, huge d): NaN, found below
            root = np.sqrt(float(2 * d + 1) ** 2 - 8 * idx.astype(float))
            a = np.nan_to_num(np.floor((2 * d + 1 - root) / 2), nan=0.0).astype(np.int64)
        a = np.clip(a, 0, d - 1)
        a = np.where(start(a) > idx, a - 1, a)
        a = np.where((start(a + 1) <= idx) & (a + 1 < d), a + 1, a)
        miss = (a < 0) | (start(a) > idx) | (start(a + 1) <= idx)  # start(d) = m: the last row's end
        if miss.any():
            j = np.flatnonzero(miss)
            t = idx[j]
            lo, hi = np.zeros(len(j), dtype=np.int64), np.full(len(j), d - 1, dtype=np.int64)
            while np.any(lo < hi):  # invariant: start(lo) <= t < start(hi + 1)
                mid = (lo + hi + 1) // 2
                go = start(mid) <= t
                lo, hi = np.where(go, mid, lo), np.where(go, hi, mid - 1)
            a = a.copy()
            a[j] = lo
        b = a + (idx - start(a))
        return a, b

    def _select(self, stream: RandomStream, a_syn, h, eps_sel: float) -> int:
        c = eps_sel / (2 * _SCORE_MARGIN)
        if self.ranges:
            e = self._scores(a_syn, h)
            s_max = float(e.max() - e.min())
        else:
            scores = self._scores(a_syn, h)
            s_max = float(scores.max())
        batch = min(self.m, 4096)
        while True:
            idx = stream.uniform_below(np.full(batch, self.m, dtype=np.int64))
            if self.ranges:
                a, b = self._range_of(idx)
                s = np.abs(e[b + 1] - e[a])
            else:
                s = scores[idx]
            x = np.maximum((s_max - s) * c, 0.0)
            ok = np.nonzero(bernoulli_exp_float(stream, x))[0]
            if len(ok):
                return int(idx[ok[0]])

    def _query_vector(self, q: int) -> np.ndarray:
        if self.ranges:
            a, b = self._range_of(np.array([q]))
            v = np.zeros(self.d)
            v[int(a[0]) : int(b[0]) + 1] = 1.0
            return v
        return self.matrix[q]

    def _measure_units(self, q: int, h: np.ndarray):
        """Exact integer answer in lattice units and the unit."""
        if self.ranges:
            a, b = self._range_of(np.array([q]))
            return int(h[int(a[0]) : int(b[0]) + 1].sum()), 1.0
        return int(self._aq[q] @ h), self.unit

    def release(
        self, hist, budget: Budget, stream: RandomStream, n_hat: float | None = None, n_hat_noise=None
    ) -> Release:
        """One release. A caller that has already released a noisy size of the
        same dataset (Alg. 3's n_hat) passes it as ``n_hat`` with its noise law;
        reusing it is post-processing, and the whole budget goes to the
        iterations."""
        h = np.asarray(self.validate_hist(hist), dtype=np.int64)
        if stream.disabled:
            return Release(h.astype(float), budget, None, self._alpha_params(budget))
        external = n_hat is not None
        count_p, _, _ = self._split(budget, external)
        if external:
            n_noise = n_hat_noise
        else:
            n_hat = float(int(h.sum()) + int(self._noise(stream, count_p, 1)[0]))
            n_noise = self._profile(float(as_ratio_up(count_p)))
        t_it = self.choose_iterations(budget, n_hat, external)
        _, eps_sel, meas_p = self._split(budget, external, t_it)
        if n_hat <= 0:
            return Release(np.zeros(self.d), budget, None, (t_it,), n_hat, n_noise)
        a_syn = np.full(self.d, n_hat / self.d)
        acc = np.zeros(self.d)
        measured: list[tuple[np.ndarray, float]] = []
        hf = h.astype(float)
        for _ in range(t_it):
            acc += a_syn
            q = self._select(stream, a_syn, hf, eps_sel)
            units, unit = self._measure_units(q, h)
            m_t = (units + int(self._noise(stream, self._units_param(meas_p, unit), 1)[0])) * unit
            qv = self._query_vector(q)
            measured.append((qv, m_t))
            a_syn = a_syn * np.exp(qv * (m_t - qv @ a_syn) / (2 * n_hat))
            a_syn *= n_hat / a_syn.sum()
        return Release(acc / t_it, budget, None, (t_it,), n_hat, n_noise)

    def _alpha_params(self, budget):
        return (self.iterations,)

    def choose_iterations(self, budget: Budget, n_hat: float, external: bool = False) -> int:
        """T for one release: the fixed value, or (iterations=0) the minimiser of
        MWEM's bound 2n sqrt(ln d / T) + T (2/eps_it) ln m over T, evaluated at
        the public n_hat (post-processing), clamped to [1, 20]."""
        if self.fixed_iterations:
            return self.fixed_iterations
        _, eps_sel1, _ = self._split(budget, external, 1)
        eps_total = 2 * eps_sel1  # per-iteration eps with T = 1 (selection + measurement)
        x = max(n_hat, 1.0) * eps_total * math.sqrt(math.log(self.d)) / (2 * math.log(self.m))
        return int(min(max(round(x ** (2 / 3)), 1), self.iterations))

    # -- error -------------------------------------------------------------------
    def alpha(
        self,
        budget: Budget,
        beta: float,
        k: int = 1,
        n: float | None = None,
        n_hat_noise: NoiseProfile | None = None,
        iterations: int | None = None,
    ) -> float:
        """Union bound over ``k`` releases of the per-release bound (module docstring).

        ``n_hat_noise``: the law of an externally supplied n_hat (if the releases
        reused one), else the mechanism's own count noise."""
        if n is None or not math.isfinite(n):
            return float("inf")
        b = beta / k
        external = n_hat_noise is not None
        t = iterations or self.iterations
        count_p, eps_sel, meas_p = self._split(budget, external, t)
        law = n_hat_noise if external else self._profile(float(as_ratio_up(count_p)))
        big_e = law.tail_bound(b / 3)
        big_m = self._profile(self._answer_param(meas_p)).tail_bound(b / (3 * t))
        sel = (2 * _SCORE_MARGIN / eps_sel) * (math.log(self.m) + math.log(3 * t / b))
        one = math.sqrt(4 * (n + big_e) ** 2 * math.log(self.d) / t + (big_m + big_e) ** 2) + sel + 3 * big_e
        return k * one

    def cost(self, budget: Budget) -> Budget:
        return budget

    def noise_profile(self, budget):  # pragma: no cover - not additive
        raise ValueError("PMW is not an additive mechanism")

    def __reduce__(self):
        mat = None if self.matrix is None else self.matrix
        return (_make_pmw, (self.d, mat, self.ranges, self.fixed_iterations, self.noise_kind))


def _make_pmw(d, matrix, ranges, iterations, noise):
    return PMWMechanism(d, matrix=matrix, ranges=ranges, iterations=iterations, noise=noise)
