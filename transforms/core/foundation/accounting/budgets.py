"""Privacy budgets (``PureDP``, ``ApproxDP``, ``ZCDP``) and what they do.

A budget is an immutable value. Everything that depends on its kind is a
method of its class, so that no code outside this package branches on the
kind of a budget:

* currency: :meth:`Budget.vector` / :meth:`Budget.from_vector` (the tuple of
  its numbers), :meth:`Budget.express` (a cost in this budget's currency:
  pure costs are eps^2/2 in zCDP), :meth:`Budget.as_zcdp`,
  :meth:`Budget.to_approx`;
* shares: :meth:`Budget.scale`, :meth:`Budget.part` (eps and delta weighted
  apart), :meth:`Budget.pure_part`, :meth:`Budget.pure_step` (an eps-DP step
  in this currency), :meth:`Budget.for_sensitivity`;
* group privacy: :meth:`Budget.group` / :meth:`Budget.ungroup`;
* calibration: :attr:`Budget.noise_families`,
  :attr:`Budget.gaussian_calibrated`, :meth:`Budget.gaussian_rho`,
  :meth:`Budget.gaussian_calibration` (the numbers: :mod:`.calibration`).

:func:`compose_sequential` / :func:`compose_parallel` compose in the most
general currency present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from .calibration import (
    DISCRETE_TAU2,
    gaussian_rho_for_approx_tight,
    rho_for_epsilon_delta,
    tight_gaussian_epsilon,
    zcdp_epsilon,
)

LAPLACE, GAUSSIAN = "laplace", "gaussian"  # the noise families (as in foundation.bounds)

__all__ = [
    "stream_share",
    "Budget",
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "TightGaussian",
    "BudgetExceededError",
    "as_vector",
    "compose_sequential",
    "compose_parallel",
    "to_approx",
    "zcdp_to_approx",
    "zcdp_delta_for_epsilon",
    "rho_for_approx",
    "stated_share",
]


class BudgetExceededError(RuntimeError):
    """A release was refused because it would exceed the configured budget."""


def _check_nonneg(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


class Budget:
    """A privacy budget (the base of the three kinds; see the module docstring).

    ``rank`` orders the currencies by generality (composition takes the most
    general one present); ``noise_families`` are the noise families a static
    mechanism may be calibrated to it with; ``scale_power``: the budget's
    number goes as the noise scale to the power ``-scale_power`` (eps: 1,
    rho: 2), so a budget that shrinks by ``q ** scale_power`` keeps the
    relative error of a size that grows by ``q``.
    """

    __slots__ = ()
    rank: ClassVar[int] = 0
    noise_families: ClassVar[tuple[str, ...]] = ()
    scale_power: ClassVar[int] = 1  # the primary number goes as (1 / noise scale) ** scale_power

    def __add__(self, other):
        return compose_sequential([self, other])

    # -- numbers ----------------------------------------------------------------
    def vector(self) -> tuple[float, ...]:
        """The tuple of its numbers: ``(eps,)``, ``(eps, delta)`` or ``(rho,)``."""
        raise NotImplementedError

    @classmethod
    def from_vector(cls, v: tuple[float, ...]) -> Budget:
        return cls(*v)

    @property
    def primary(self) -> float:
        """The number that measures it: eps, or rho for zCDP."""
        return self.vector()[0]

    @property
    def is_zero(self) -> bool:
        return not any(self.vector())

    def scale(self, w: float) -> Budget:
        return self.part(w, w)

    def part(self, w_eps: float, w_delta: float) -> Budget:
        """This budget with its eps (or rho) times ``w_eps`` and its delta times ``w_delta``."""
        raise NotImplementedError

    # -- currencies ---------------------------------------------------------------
    def express(self, cost: Budget) -> Budget:
        """``cost`` in this budget's currency (a ledger of this budget charges it so)."""
        raise NotImplementedError

    def as_zcdp(self) -> ZCDP:
        """The same guarantee as zCDP: eps-DP implies (eps^2/2)-zCDP (Bun-Steinke Prop. 1.4)."""
        raise NotImplementedError

    def to_approx(self, delta: float | None = None) -> ApproxDP:
        """The same guarantee as (eps, delta); zCDP needs the target ``delta``."""
        raise NotImplementedError

    # -- shares -------------------------------------------------------------------
    def pure_part(self, w: float) -> Budget:
        """A share ``w`` paid as pure DP where the currency allows (Laplace under
        (eps, delta): its delta unused), zCDP under zCDP."""
        return self.part(w, 0.0)

    def pure_step(self, w: float) -> tuple[float, Budget]:
        """(eps, cost in this currency) of an eps-DP step given share ``w``:
        eps = w eps, or sqrt(2 w rho) (an eps-DP step is eps^2/2-zCDP)."""
        eps = w * self.primary
        return eps, self.part(w, 0.0)

    def for_sensitivity(self, ratio: float) -> Budget:
        """The budget of a release at sensitivity 1 whose release at sensitivity
        ``ratio`` costs this budget (eps / ratio, or rho / ratio^2)."""
        raise NotImplementedError

    def at_sensitivity(self, ratio: float) -> Budget:
        """What a release calibrated to this budget at sensitivity 1 costs for a
        change of sensitivity ``ratio`` (the inverse of :meth:`for_sensitivity`:
        eps * ratio, or rho * ratio^2). An (eps, delta) cost keeps its delta: it
        is the cost of a Laplace release (its delta unused); Gaussian releases
        are charged in zCDP."""
        raise NotImplementedError

    # -- group privacy ----------------------------------------------------------------
    def group(self, g: int) -> Budget:
        """The guarantee for groups of ``g`` neighbours (group privacy)."""
        raise NotImplementedError

    def ungroup(self, g: int) -> Budget:
        """The budget whose guarantee for groups of ``g`` is within this one."""
        raise NotImplementedError

    # -- calibration --------------------------------------------------------------------
    @property
    def gaussian_calibrated(self) -> bool:
        """Whether a Gaussian mechanism composing in zCDP can be calibrated to it."""
        return False

    def gaussian_rho(self) -> float:
        """The rho a Gaussian mechanism is calibrated to under this budget."""
        raise ValueError("a Gaussian mechanism needs delta > 0 (or a zCDP budget)")

    def gaussian_calibration(self, method: str = "zcdp") -> tuple[float, int]:
        """(rho, extra lattice variance) of a discrete Gaussian under this budget:
        ``method`` ``tight`` calibrates an (eps, delta) budget by the analytic
        curve (:func:`gaussian_rho_for_approx_tight`, plus ``DISCRETE_TAU2``)."""
        return self.gaussian_rho(), 0


@dataclass(frozen=True)
class PureDP(Budget):
    """eps-differential privacy."""

    epsilon: float
    rank: ClassVar[int] = 0
    noise_families: ClassVar[tuple[str, ...]] = (LAPLACE,)

    def __post_init__(self):
        _check_nonneg("epsilon", self.epsilon)

    def vector(self) -> tuple[float, ...]:
        return (self.epsilon,)

    def part(self, w_eps: float, w_delta: float) -> PureDP:
        return PureDP(self.epsilon * w_eps)

    def express(self, cost: Budget) -> Budget:
        return cost.as_pure_cost()

    def as_pure_cost(self) -> PureDP:
        return self

    def as_approx_cost(self) -> ApproxDP:
        return ApproxDP(self.epsilon, 0.0)

    def as_zcdp(self) -> ZCDP:
        return ZCDP(self.epsilon**2 / 2)

    def to_approx(self, delta: float | None = None) -> ApproxDP:
        return ApproxDP(self.epsilon, 0.0)

    def for_sensitivity(self, ratio: float) -> PureDP:
        return PureDP(self.epsilon / ratio)

    def at_sensitivity(self, ratio: float) -> PureDP:
        return PureDP(self.epsilon * ratio)

    def group(self, g: int) -> PureDP:
        return PureDP(g * self.epsilon)

    def ungroup(self, g: int) -> PureDP:
        return PureDP(self.epsilon / g)


@dataclass(frozen=True)
class ApproxDP(Budget):
    """(eps, delta)-differential privacy."""

    epsilon: float
    delta: float
    rank: ClassVar[int] = 1
    noise_families: ClassVar[tuple[str, ...]] = (LAPLACE, GAUSSIAN)

    def __post_init__(self):
        _check_nonneg("epsilon", self.epsilon)
        _check_nonneg("delta", self.delta)
        if self.delta >= 1:
            raise ValueError(f"delta must be < 1, got {self.delta}")

    def vector(self) -> tuple[float, ...]:
        return (self.epsilon, self.delta)

    def part(self, w_eps: float, w_delta: float) -> ApproxDP:
        return ApproxDP(self.epsilon * w_eps, self.delta * w_delta)

    def express(self, cost: Budget) -> Budget:
        return cost.as_approx_cost()

    def as_pure_cost(self) -> PureDP:
        if self.delta == 0:
            return PureDP(self.epsilon)
        raise ValueError("a ApproxDP cost cannot be charged to a pure-DP ledger")

    def as_approx_cost(self) -> ApproxDP:
        return self

    def as_zcdp(self) -> ZCDP:
        if self.delta == 0:
            return ZCDP(self.epsilon**2 / 2)
        raise ValueError("an (eps, delta>0) cost cannot be expressed in zCDP; use an ApproxDP ledger")

    def to_approx(self, delta: float | None = None) -> ApproxDP:
        return self

    def pure_part(self, w: float) -> PureDP:
        return PureDP(self.epsilon * w)

    def for_sensitivity(self, ratio: float) -> ApproxDP:
        return ApproxDP(self.epsilon / ratio, self.delta)

    def at_sensitivity(self, ratio: float) -> ApproxDP:
        return ApproxDP(self.epsilon * ratio, self.delta)

    def group(self, g: int) -> ApproxDP:
        e, d = self.epsilon, self.delta
        return ApproxDP(g * e, min(g * math.exp((g - 1) * e) * d, 1 - 1e-16))

    def ungroup(self, g: int) -> ApproxDP:
        e = self.epsilon / g
        return ApproxDP(e, self.delta / (g * math.exp((g - 1) * e)))

    @property
    def gaussian_calibrated(self) -> bool:
        return self.delta > 0

    def gaussian_rho(self) -> float:
        return rho_for_approx(self)

    def gaussian_calibration(self, method: str = "zcdp") -> tuple[float, int]:
        if method == "tight":
            return gaussian_rho_for_approx_tight(self.epsilon, self.delta), DISCRETE_TAU2
        return rho_for_approx(self), 0


@dataclass(frozen=True)
class ZCDP(Budget):
    """rho-zero-concentrated differential privacy (Bun-Steinke 2016)."""

    rho: float
    rank: ClassVar[int] = 2
    noise_families: ClassVar[tuple[str, ...]] = (GAUSSIAN,)
    scale_power: ClassVar[int] = 2

    def __post_init__(self):
        _check_nonneg("rho", self.rho)

    def vector(self) -> tuple[float, ...]:
        return (self.rho,)

    def part(self, w_eps: float, w_delta: float) -> ZCDP:
        return ZCDP(self.rho * w_eps)

    def express(self, cost: Budget) -> Budget:
        return cost.as_zcdp()

    def as_pure_cost(self) -> PureDP:
        raise ValueError("a ZCDP cost cannot be charged to a pure-DP ledger")

    def as_approx_cost(self) -> ApproxDP:
        raise ValueError("a zCDP cost cannot be charged to an (eps, delta) ledger directly")

    def as_zcdp(self) -> ZCDP:
        return self

    def to_approx(self, delta: float | None = None) -> ApproxDP:
        if delta is None:
            raise ValueError("converting zCDP to (eps, delta) needs a target delta")
        return zcdp_to_approx(self.rho, delta)

    def pure_step(self, w: float) -> tuple[float, ZCDP]:
        return math.sqrt(2 * w * self.rho), ZCDP(w * self.rho)

    def for_sensitivity(self, ratio: float) -> ZCDP:
        return ZCDP(self.rho / ratio**2)

    def at_sensitivity(self, ratio: float) -> ZCDP:
        return ZCDP(self.rho * ratio * ratio)

    def group(self, g: int) -> ZCDP:
        return ZCDP(g * g * self.rho)

    def ungroup(self, g: int) -> ZCDP:
        return ZCDP(self.rho / (g * g))

    @property
    def gaussian_calibrated(self) -> bool:
        return True

    def gaussian_rho(self) -> float:
        return self.rho


@dataclass(frozen=True)
class TightGaussian(ZCDP):
    """A tight Gaussian account: a composition of discrete Gaussian lattice releases on
    non-adaptive integer inputs, each adding ``N_Z(0, sigma_j^2)`` per coordinate with
    ``sigma_j^2 >= Delta_j^2 / (2 rho_j) + DISCRETE_TAU2`` (its share ``rho_j`` of ``rho``).

    The whole composition is then one Gaussian mechanism up to the lattice slack: ``mu^2 =
    sum_j Delta_j^2 / (sigma_j^2 - tau^2) <= 2 rho`` (rho adds up, as in zCDP), and its
    (eps, delta) is the analytic Gaussian curve at ``mu`` (:func:`~.calibration.tight_gaussian_epsilon`),
    not a zCDP conversion (proof: ``docs/accounting.md``, "The tight Gaussian account"). Under an
    (eps, delta) target the account's total is ``gaussian_rho_for_approx_tight(eps, delta)``.

    It is also ``rho``-zCDP (:meth:`as_zcdp`), but only releases calibrated by
    :meth:`gaussian_calibration` (which adds ``DISCRETE_TAU2``) may be charged to it: a ledger of
    this currency refuses any other cost (:meth:`express`), and :meth:`gaussian_rho` (the
    calibration of a Gaussian release without the lattice term) refuses, so that a release the
    proof does not cover fails loudly instead of being counted at the wrong price."""

    rank: ClassVar[int] = 3  # composes only with itself (express refuses the others)

    def part(self, w_eps: float, w_delta: float) -> TightGaussian:
        return TightGaussian(self.rho * w_eps)

    def express(self, cost: Budget) -> Budget:
        if isinstance(cost, TightGaussian):
            return cost
        raise ValueError(
            f"a tight Gaussian account charges discrete Gaussian lattice releases only, not {cost!r} "
            "(docs/accounting.md, the tight Gaussian account)"
        )

    def as_zcdp(self) -> ZCDP:
        return ZCDP(self.rho)

    def to_approx(self, delta: float | None = None) -> ApproxDP:
        if delta is None:
            raise ValueError("stating a tight Gaussian account as (eps, delta) needs a target delta")
        return ApproxDP(tight_gaussian_epsilon(self.rho, delta), delta)

    def pure_step(self, w: float) -> tuple[float, ZCDP]:
        raise ValueError("a tight Gaussian account has no pure-DP steps")

    def for_sensitivity(self, ratio: float) -> TightGaussian:
        return TightGaussian(self.rho / ratio**2)

    def at_sensitivity(self, ratio: float) -> TightGaussian:
        return TightGaussian(self.rho * ratio * ratio)

    def group(self, g: int) -> TightGaussian:
        return TightGaussian(g * g * self.rho)

    def ungroup(self, g: int) -> TightGaussian:
        return TightGaussian(self.rho / (g * g))

    def gaussian_rho(self) -> float:
        raise ValueError(
            "a tight Gaussian account calibrates discrete Gaussian lattice counters only "
            "(gaussian_calibration adds DISCRETE_TAU2); this release has no lattice calibration"
        )

    def gaussian_calibration(self, method: str = "zcdp") -> tuple[float, int]:
        return self.rho, DISCRETE_TAU2


def stated_share(ledger: Budget, target: Budget, w: float) -> Budget:
    """The budget a share ``w`` of a release is stated with: ``w`` of the configured ``target``
    ((eps, delta) parts compose by adding up), except under a tight Gaussian account, whose parts
    are shares of its rho (``w`` of ``ledger``): (w eps, w delta) would misstate them, the analytic
    curve is not linear."""
    return ledger.scale(w) if isinstance(ledger, TightGaussian) else target.scale(w)


def stream_share(target: Budget, n: int, ledger_of) -> Budget:
    """The budget of each of ``n`` releases (a person's streams) that compose to ``target``, in the currency they
    compose in; ``ledger_of(budget)``: the ledger total the mechanism keeps for ``budget`` (its ``ledger_cap``).

    * pure ``eps`` and zCDP ``rho``: ``target / n`` (epsilons add; rhos add);
    * ``(eps, delta)`` where the ledger is a rho (Gaussian noise: a zCDP ledger, or a tight Gaussian account): the
      releases compose by adding their rhos, and the mechanism states a release's ``(eps, delta)`` from its rho by
      one conversion. So each gets ``(eps_s, delta)`` with ``eps_s`` the largest whose ledger rho is at most
      ``rho(target) / n`` (bisection, 60 halvings): ``n`` of them hold at most ``rho(target)``, which the same
      conversion states as ``target``. (``(eps / n, delta / n)`` is valid too, by basic composition, but the
      Gaussian's ``(eps, delta)`` curve is not linear in rho: at (1, 1e-6) and ``n = 2`` it costs 1.4x the noise's
      standard deviation);
    * any other ``(eps, delta)`` ledger (Laplace noise): ``(eps / n, delta / n)`` (basic composition)."""
    if n == 1:
        return target
    share = target.scale(1.0 / n)
    if not isinstance(target, ApproxDP) or target.delta <= 0:
        return share
    ledger = ledger_of(target)
    if not isinstance(ledger, ZCDP):
        return share
    want = ledger.rho / n

    def rho_at(eps: float) -> float:
        return ledger_of(ApproxDP(eps, target.delta)).rho

    lo, hi = float(share.epsilon), float(target.epsilon)
    if rho_at(lo) > want:  # a conversion that is not superadditive: keep basic composition's share
        return share
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if rho_at(mid) <= want:
            lo = mid
        else:
            hi = mid
    return ApproxDP(lo, target.delta)


def as_vector(b: Budget) -> tuple[float, ...]:
    """A budget as the tuple of its numbers: ``(eps,)``, ``(eps, delta)`` or ``(rho,)``."""
    return b.vector()


def zcdp_to_approx(rho: float, delta: float) -> ApproxDP:
    """The tight conversion of rho-zCDP to (eps, delta)-DP (CKS 2020, Cor. 13;
    :func:`~.calibration.zcdp_epsilon`)."""
    _check_nonneg("rho", rho)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for a zCDP conversion, got {delta}")
    return ApproxDP(zcdp_epsilon(rho, delta), delta)


def zcdp_delta_for_epsilon(rho: float, epsilon: float) -> float:
    """The smallest delta (by the same CKS bound) with rho-zCDP => (eps, delta)-DP."""
    lo, hi = 1e-300, 1 - 1e-15
    if zcdp_to_approx(rho, hi).epsilon > epsilon:
        return 1.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if zcdp_to_approx(rho, mid).epsilon <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def rho_for_approx(budget: ApproxDP) -> float:
    """The largest rho (bisection, rounded down) with rho-zCDP => ``budget``."""
    if budget.delta <= 0:
        raise ValueError("a Gaussian mechanism needs delta > 0 (or a zCDP budget)")
    return rho_for_epsilon_delta(float(budget.epsilon), float(budget.delta))


def to_approx(b: Budget, delta: float | None = None) -> ApproxDP:
    """Express any budget as (eps, delta); zCDP needs the target ``delta``."""
    return b.to_approx(delta)


def _compose(budgets, column) -> Budget:
    budgets = list(budgets)
    if not budgets:
        return PureDP(0.0)
    top = max(budgets, key=lambda b: b.rank)  # the most general currency present
    return top.from_vector(tuple(column(c) for c in zip(*(top.express(b).vector() for b in budgets))))


def compose_sequential(budgets) -> Budget:
    """Basic sequential composition (sum) in the most general type present.

    zCDP composes additively in rho; pure and approximate DP add eps and delta.
    Mixing zCDP with (eps, delta>0) raises ``ValueError``.
    """
    return _compose(budgets, math.fsum)


def compose_parallel(budgets) -> Budget:
    """Parallel composition over disjoint data: the componentwise maximum."""
    return _compose(budgets, max)
