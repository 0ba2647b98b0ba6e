"""Static mechanisms: the black boxes of the continual-release constructions.

A *dataset* is a histogram over a declared finite domain ``{0, ..., d-1}``
(``numpy`` integer vector of length ``d``). A static mechanism family
(:class:`StaticMechanism`) answers a fixed set ``Q`` of ``m`` linear queries:

* :meth:`~StaticMechanism.release` draws one private data structure for a
  dataset under a given budget (the noise comes from the caller's stream);
* :meth:`~StaticMechanism.answer` answers all of ``Q`` from a release;
* :meth:`~StaticMechanism.alpha` is the error function alpha(beta), and
  :func:`union_alpha` / :meth:`Release.noise` give alpha^(k) for a sum of ``k``
  releases on disjoint datasets (000, App. A.2).

Neighbouring datasets differ by one item (add or remove), so the L1 / L2
sensitivity of a query matrix is its largest column L1 / L2 norm.

Every release of an *additive* mechanism (Laplace / Gaussian families) is
``exact answers + independent noise`` with a public :class:`NoiseProfile`;
counters sum profiles to get tight bounds. Non-additive mechanisms (private
multiplicative weights) report ``alpha`` only and are combined by union bound.

Cost of one release (update-level, add/remove-one-item neighbours):

* Laplace family: ``PureDP(eps)`` (an ``ApproxDP`` budget is spent as its eps
  part with delta unused);
* Gaussian family: ``ZCDP(rho)``; an ``ApproxDP(eps, delta)`` budget is met by
  the largest rho whose CKS conversion is within it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from transforms.core.foundation.accounting import Budget
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile
from transforms.core.foundation.noise import (
    RandomStream,
    as_ratio_up,
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_rows,
)
from transforms.core.foundation.state import state_class

__all__ = [
    "StaticMechanism",
    "Release",
    "CountMechanism",
    "HistogramMechanism",
    "LinearQueryMechanism",
    "union_alpha",
    "LATTICE_BITS",
]

_DISCRETE_LAPLACE = discrete_laplace  # the sampler itself (noise_rows: a replaced one is asked release by release)
LATTICE_BITS = 20  # real-valued query matrices are rounded to multiples of 2**-20


@dataclass
class Release:
    """One private release: the data structure and what it cost.

    Attributes:
      values: the released data structure (noisy answers, or a synthetic
        histogram for PMW), in answer units.
      cost: the budget this release spent (update-level).
      noise: the law of the noise in each answer (additive mechanisms), or None.
      alpha_params: for non-additive mechanisms, what their alpha needs.
      n_hat, n_hat_noise: a noisy size of the dataset released alongside (PMW)
        and its noise law, which let a caller bound |D| publicly.
    """

    values: np.ndarray
    cost: Budget
    noise: NoiseProfile | None = None
    alpha_params: tuple | None = field(default=None)
    n_hat: float | None = None
    n_hat_noise: NoiseProfile | None = None

    @property
    def is_additive(self) -> bool:
        return self.noise is not None


class StaticMechanism:
    """Interface of a static mechanism family answering ``m`` linear queries."""

    name: str = "static"
    noise_kind: str = LAPLACE
    additive: bool = True

    @property
    def domain_size(self) -> int:
        raise NotImplementedError

    @property
    def num_queries(self) -> int:
        raise NotImplementedError

    def exact(self, hist: np.ndarray) -> np.ndarray:
        """The exact answers ``Q(D)`` (in answer units)."""
        raise NotImplementedError

    def release(self, hist: np.ndarray, budget: Budget, stream: RandomStream) -> Release:
        raise NotImplementedError

    def answer(self, release: Release) -> np.ndarray:
        """Answers to all of ``Q`` from a release (post-processing)."""
        return np.asarray(release.values, dtype=float)

    def noise_rows(self, budget: Budget, source, head: tuple, first: int, count: int) -> np.ndarray | None:
        """The noise of many releases drawn at once, or None: every release draws its own (here, a black box
        that is not a sum of answers and noise; the additive mechanisms' is below)."""
        return None

    def noise_profile(self, budget: Budget) -> NoiseProfile:
        """Law of the noise of one answer of a release under ``budget``."""
        raise NotImplementedError

    def cost(self, budget: Budget) -> Budget:
        """What a release under ``budget`` is charged (same type as the family uses)."""
        return budget

    def alpha(self, budget: Budget, beta: float, k: int = 1, n: int | None = None) -> float:
        """alpha^(k): error bound, simultaneously over all queries, of a sum of
        ``k`` releases (each under ``budget``) on disjoint datasets, w.p. 1-beta."""
        prof = self.noise_profile(budget).times(k)
        return prof.tail_bound(beta / self.num_queries)

    def check_budget(self, budget: Budget) -> None:
        if self.noise_kind in budget.noise_families:
            return
        if self.noise_kind == LAPLACE:
            raise ValueError(
                f"{self.name} uses Laplace noise (pure DP); give it a PureDP budget or choose noise='gaussian' for zCDP"
            )
        if self.noise_kind == GAUSSIAN:
            raise ValueError(
                f"{self.name} uses Gaussian noise; give it a ZCDP or ApproxDP(delta>0) budget "
                "or choose noise='laplace' for pure DP"
            )

    def validate_hist(self, hist) -> np.ndarray:
        h = np.asarray(hist)
        if h.shape != (self.domain_size,):
            raise ValueError(f"dataset must be a histogram of length {self.domain_size}, got shape {h.shape}")
        return h


class _AdditiveMechanism(StaticMechanism):
    """``release = exact integer answers + integer noise``, optionally on a lattice.

    Subclasses define ``_answers_units`` (exact integer answers in lattice
    units), ``l1`` / ``l2`` sensitivities in those units and ``unit``.
    """

    unit: float = 1.0
    l1: float = 1.0
    l2: float = 1.0
    _STATE_EXCLUDE = ("_release_memo",)  # release's calibration memo (rebuilt on use)

    def __init__(self, noise: str = "laplace"):
        if noise not in (LAPLACE, GAUSSIAN):
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        self.noise_kind = noise

    # -- calibration ------------------------------------------------------
    def _param(self, budget: Budget) -> float:
        self.check_budget(budget)
        return _calibrated(self.noise_kind, self.l1, self.l2, budget)

    def noise_profile(self, budget: Budget) -> NoiseProfile:
        return NoiseProfile.single(self.noise_kind, self._param(budget), self.unit)

    def draw_noise(self, budget: Budget, stream: RandomStream) -> np.ndarray:
        """The integer noise vector (lattice units) of one release."""
        return self.draw_noise_n(budget, stream, self.num_queries)

    def draw_noise_n(self, budget: Budget, stream: RandomStream, n: int) -> np.ndarray:
        """``n`` independent draws of this mechanism's per-answer noise (lattice units)."""
        p = self._param(budget)
        if self.noise_kind == LAPLACE:
            return discrete_laplace(stream, p, n)
        return discrete_gaussian(stream, p, n)

    def _answers_units(self, hist: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def exact(self, hist: np.ndarray) -> np.ndarray:
        return self._answers_units(self.validate_hist(hist)) * self.unit

    def release(self, hist, budget: Budget, stream: RandomStream) -> Release:
        h = self.validate_hist(hist)
        _, p, term = self._calibration(budget)
        # the sampler is called as before (through this module's name: the privacy harness wraps it)
        if self.noise_kind == LAPLACE:
            noise = discrete_laplace(stream, p, self.num_queries)
        else:
            noise = discrete_gaussian(stream, p, self.num_queries)
        return self._noised(h, budget, noise, term)

    def _calibration(self, budget: Budget) -> tuple:
        """``(budget, p, term)``: the calibration of the last budget released under (a counter releases every node
        under the same budget object): what _param gives (the family's check passed for it, and a budget is a
        frozen value) and the noise profile's term. Kept on the instance, not stored state; another budget
        object calibrates again."""
        memo = self.__dict__.get("_release_memo")
        if memo is None or memo[0] is not budget:
            p = self._param(budget)  # once (draw_noise_n and noise_profile each calibrate: the same value)
            NoiseProfile.single(self.noise_kind, p, self.unit)  # its checks, as before
            memo = self._release_memo = (budget, p, (self.noise_kind, float(p), float(self.unit)))
        return memo

    def _noisy_values(self, h: np.ndarray, noise: np.ndarray) -> np.ndarray:
        """The released values of ``h`` with ``noise`` added (lattice units times the unit)."""
        values = (self._answers_units(h) + noise).astype(np.int64)
        return values * self.unit if self.unit != 1.0 else values

    def _noised(self, h: np.ndarray, budget: Budget, noise: np.ndarray, term: tuple) -> Release:
        out = self._noisy_values(h, noise)
        profile = NoiseProfile.__new__(NoiseProfile)  # NoiseProfile.single(kind, p, unit): its one term, fresh
        profile.terms = {term: 1}
        return Release(out, budget, profile)

    def noise_rows(self, budget: Budget, source, head: tuple, first: int, count: int) -> np.ndarray | None:
        """The noise (lattice units, one row per release) that :meth:`release` under ``budget`` adds at the
        coordinates ``head + (i,)`` for i = first .. first + count - 1, drawn at once: row i - first is what
        ``release(hist, budget, source.stream(*head, i))`` adds, the same values (:func:`discrete_laplace_rows`).
        None where they must be drawn one release at a time: Gaussian noise (its sampler rejects), a source that
        cannot give seeds (:meth:`NoiseSource.seeds_at`), a sampler replaced in this module or a release
        overridden (a test's)."""
        if (
            self.noise_kind != LAPLACE
            or discrete_laplace is not _DISCRETE_LAPLACE
            or type(self).release is not _AdditiveMechanism.release
        ):
            return None
        seeds = source.seeds_at(head, first, count)
        if seeds is None:
            return None
        return discrete_laplace_rows(seeds, self._calibration(budget)[1], self.num_queries)

    def answers_in_rows(self) -> bool:
        """Whether :meth:`answers_with_noise` answers many releases at once: a count, a histogram or a linear
        query set as this module defines them (not a subclass that answers or adds its noise its own way)."""
        cls = type(self)
        return cls._noisy_values is _AdditiveMechanism._noisy_values and cls._answers_units in _ROWS

    def answers_with_noise(self, hists: np.ndarray, budget: Budget, noise: np.ndarray) -> np.ndarray:
        """:meth:`answer_with_noise` of each row of ``hists`` (an ``n x domain_size`` integer array) with the
        noise row of the same index (``noise_rows``' rows), at once: row i is the same floats as
        ``answer_with_noise(hists[i], budget, noise[i])`` (integer answers plus integer noise, then the unit:
        exact integer arithmetic row by row, ``tests/test_kary_block.py``). Only where :meth:`answers_in_rows`."""
        if not self.answers_in_rows():
            raise TypeError(f"{type(self).__name__} answers one release at a time")
        h = np.asarray(hists)
        if h.ndim != 2 or h.shape[1] != self.domain_size:
            raise ValueError(f"datasets must be histograms of length {self.domain_size}, got shape {h.shape}")
        self._calibration(budget)  # the budget's checks, as a release makes them
        values = (_ROWS[type(self)._answers_units](self, h.astype(np.int64, copy=False)) + noise).astype(np.int64)
        return np.asarray(values * self.unit if self.unit != 1.0 else values, dtype=float)

    def answer_with_noise(self, hist, budget: Budget, noise: np.ndarray) -> np.ndarray:
        """``answer(release(hist, budget, stream))`` with the release's noise given: ``noise`` is a row of
        :meth:`noise_rows` (the release's own, drawn ahead from the same stream), so the answers are the same
        floats; the :class:`Release` itself is not built (a counter's node release keeps only its answers)."""
        h = self.validate_hist(hist)
        self._calibration(budget)  # the budget's checks, as a release makes them
        return np.asarray(self._noisy_values(h, noise), dtype=float)


@functools.lru_cache(maxsize=4096)
def _calibrated(noise_kind: str, l1: float, l2: float, budget: Budget) -> float:
    """The noise parameter of one release under ``budget`` (a discrete Laplace scale l1 / eps, or a discrete
    Gaussian sigma^2 l2^2 / (2 rho), rounded up to an exact rational). Every node release of a counter asks for
    the same few budgets: the result is kept (an error, such as a budget of the wrong family, is raised each
    time; budgets are frozen dataclasses, equal only to their own type's equal values). The caller has checked
    that the budget's family fits the noise (``check_budget``)."""
    if noise_kind == LAPLACE:
        eps = budget.epsilon
        if eps <= 0:
            raise ValueError("epsilon must be > 0 to release")
        return float(as_ratio_up(l1 / eps))
    rho = budget.gaussian_rho()
    if rho <= 0:
        raise ValueError("rho must be > 0 to release")
    return float(as_ratio_up(l2**2 / (2 * rho)))


class _CellsMechanism(_AdditiveMechanism):
    """A mechanism over the cells of a histogram of ``domain_size`` (count, histogram)."""

    def __init__(self, domain_size: int, noise: str = "laplace"):
        super().__init__(noise)
        if domain_size < 1:
            raise ValueError("domain_size must be >= 1")
        self._d = int(domain_size)

    @property
    def domain_size(self) -> int:
        return self._d

    def __reduce__(self):
        return (type(self), (self._d, self.noise_kind))


@state_class("static.count")
class CountMechanism(_CellsMechanism):
    """The number of items: one query, sensitivity 1."""

    name = "count"

    def __init__(self, domain_size: int = 1, noise: str = "laplace"):
        if isinstance(domain_size, str):  # the earlier (noise, domain_size) argument order
            domain_size, noise = (noise if isinstance(noise, int) and not isinstance(noise, bool) else 1), domain_size
        super().__init__(domain_size, noise)

    @property
    def num_queries(self) -> int:
        return 1

    def _answers_units(self, hist):
        # np.sum of an array is its add.reduce over every axis; called directly, without np.sum's wrappers
        return np.array([int(np.add.reduce(hist, axis=None))], dtype=np.int64)


@state_class("static.histogram")
class HistogramMechanism(_CellsMechanism):
    """Every cell of a histogram over a finite domain (L1 = L2 sensitivity 1)."""

    name = "histogram"

    @property
    def num_queries(self) -> int:
        return self._d

    def _answers_units(self, hist):
        return np.asarray(hist, dtype=np.int64)


@state_class("static.linear")
class LinearQueryMechanism(_AdditiveMechanism):
    """A set of linear queries given as an ``m x d`` matrix with entries in [0, 1].

    Sensitivity is the largest column norm (L1 for Laplace, L2 for Gaussian).
    A 0/1 matrix is answered with integer noise directly. A real matrix is
    rounded to the lattice ``2**-LATTICE_BITS`` (the answered query is the
    rounded one, each entry within ``2**-21`` of the given one) and released
    as integers in lattice units, so no floating-point noise is ever drawn.
    """

    name = "linear_queries"

    def __init__(self, matrix, noise: str = "laplace"):
        super().__init__(noise)
        a = np.asarray(matrix, dtype=float)
        if a.ndim != 2 or a.size == 0:
            raise ValueError("the query matrix must be a non-empty 2-D array (queries x domain)")
        if np.any(a < 0) or np.any(a > 1) or not np.all(np.isfinite(a)):
            raise ValueError("query matrix entries must lie in [0, 1]")
        self.matrix = a
        if np.all(a == np.rint(a)):
            self.unit = 1.0
            self._aq = a.astype(np.int64)
        else:
            self.unit = 2.0**-LATTICE_BITS
            self._aq = np.rint(a / self.unit).astype(np.int64)
        self.l1 = float(np.max(np.abs(self._aq).sum(axis=0)))
        self.l2 = float(np.sqrt(np.max((self._aq.astype(float) ** 2).sum(axis=0))))
        if self.l1 == 0:
            raise ValueError("the query matrix is all zeros")

    @property
    def domain_size(self) -> int:
        return self.matrix.shape[1]

    @property
    def num_queries(self) -> int:
        return self.matrix.shape[0]

    def _answers_units(self, hist):
        return self._aq @ np.asarray(hist, dtype=np.int64)

    def __reduce__(self):
        return (LinearQueryMechanism, (self.matrix, self.noise_kind))


def union_alpha(alphas: Sequence, beta: float) -> float:
    """alpha^(k) by the union bound: sum_i alpha_i(beta / k) (000, App. A.2)."""
    k = len(alphas)
    if k == 0:
        return 0.0
    return math.fsum(a(beta / k) for a in alphas)


#: ``_answers_units`` of each row of an ``n x d`` int64 array at once, by the class's own ``_answers_units``: a
#: count's sum of cells, a histogram's cells, a linear query set's integer matrix product (exact integers, the same
#: values row by row)
_ROWS = {
    CountMechanism._answers_units: lambda m, h: np.add.reduce(h, axis=1).reshape(-1, 1),
    HistogramMechanism._answers_units: lambda m, h: h,
    LinearQueryMechanism._answers_units: lambda m, h: h @ m._aq.T,
}
