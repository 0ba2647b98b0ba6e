"""The exact privacy loss of a whole output between two neighbouring inputs, from every noise
draw's pre-noise value and scale (issue 28's first test; the harness: :mod:`.harness`).

Each release of the counters is ``value + z`` with ``z`` drawn independently of the data, in
integer lattice units: discrete Gaussian of variance parameter ``sigma^2`` or discrete Laplace of
scale ``b``. Between two inputs whose pre-noise values differ by ``Delta`` per draw, the output
distributions differ by

* Gaussian: Renyi divergence of order ``alpha`` at most ``alpha sum Delta^2 / (2 sigma^2)``
  (Canonne, Kamath, Steinke 2020, for the discrete Gaussian as for the continuous), i.e.
  ``rho = sum Delta^2 / (2 sigma^2)``-zCDP for this pair; the whole release is then one Gaussian
  mechanism of ``mu = sqrt(2 rho)`` whose (continuous) privacy profile is
  ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)`` (Balle and Wang 2018);
* Laplace: a privacy loss of at most ``sum |Delta| / b`` (pure DP), attained.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ZCDP,
    ApproxDP,
    Budget,
    PureDP,
    TightGaussian,
    analytic_gaussian_delta,
    gaussian_rho_for_approx_tight,
    rho_for_approx,
    smallest_epsilon,
)

__all__ = ["Draw", "PrivacyLoss", "privacy_loss", "gaussian_epsilon", "TOLERANCE"]

TOLERANCE = 1e-9  # relative: float sums of exact integer ratios


@dataclass(frozen=True)
class Draw:
    """One noisy release of a counter: where (``coords``), the noise (``gaussian``: ``scale``
    is ``sigma^2``; ``laplace``: the scale ``b``; lattice units) and the pre-noise values
    (integers, lattice units); ``noisy``: the released values, same units, if recorded."""

    coords: tuple
    noise: str
    scale: Fraction
    values: tuple
    noisy: tuple | None = None


@dataclass
class PrivacyLoss:
    """The privacy loss of a whole output between two inputs."""

    rho: float = 0.0  # Gaussian part: sum Delta^2 / (2 sigma^2)
    rho_lattice: float = 0.0  # the same with sigma^2 - DISCRETE_TAU2 (the tight calibration's statement)
    epsilon: float = 0.0  # Laplace part: sum |Delta| / b
    draws: int = 0
    differing: int = 0  # draws whose pre-noise values differ
    by_query: dict = field(default_factory=dict)  # coords[2] (the query name) -> (rho, epsilon)

    def approx_epsilon(self, delta: float) -> float:
        """The smallest eps with the pair's privacy profile at most ``delta``: the Laplace part
        plus the Gaussian part's exact (continuous) Gaussian profile."""
        return self.epsilon + gaussian_epsilon(self.rho, delta)

    def within(self, budget: Budget) -> bool:
        """Is the pair's loss within ``budget``? zCDP: ``rho + eps^2 / 2``; pure: ``eps`` (no
        Gaussian part); (eps, delta) with a Gaussian part: the counters' calibration route,
        ``rho <= rho_for_approx(budget)`` (and the Laplace part must be 0), with delta 0: as pure."""
        tol = 1 + TOLERANCE
        if isinstance(budget, TightGaussian):  # a tight account's rho: the lattice proof's statement
            return self.epsilon == 0 and self.rho_lattice <= budget.rho * tol
        if isinstance(budget, ZCDP):
            return self.rho + self.epsilon**2 / 2 <= budget.rho * tol
        if isinstance(budget, PureDP) or (isinstance(budget, ApproxDP) and budget.delta == 0):
            return self.rho == 0 and self.epsilon <= budget.epsilon * tol
        if self.epsilon:
            return self.epsilon <= budget.epsilon * tol and self.rho == 0
        # either route proves (eps, delta) for the discrete Gaussian: the CKS conversion of rho-zCDP, or the
        # lattice proof of the tight calibration (docs/accounting.md, "The tight Gaussian account"), whose rho
        # counts sigma^2 - DISCRETE_TAU2; a release on a tight account may pass by the second only
        eps, delta = float(budget.epsilon), float(budget.delta)
        return self.rho <= rho_for_approx(budget) * tol or (
            self.rho_lattice <= gaussian_rho_for_approx_tight(eps, delta) * tol
        )


def gaussian_epsilon(rho: float, delta: float) -> float:
    """The smallest eps with ``analytic_gaussian_delta(eps, sqrt(2 rho)) <= delta`` (bisection)."""
    if rho <= 0:
        return 0.0
    mu = math.sqrt(2 * rho)
    return smallest_epsilon(lambda eps: analytic_gaussian_delta(eps, mu), delta)


def privacy_loss(a: dict, b: dict) -> PrivacyLoss:
    """The loss between two recorded runs (``{coords: Draw}``, the same releases: the schedule
    is public, so two neighbouring inputs draw the same noise at the same coordinates)."""
    if set(a) != set(b):
        raise ValueError("the two runs did not release at the same coordinates")
    out = PrivacyLoss()
    for coords in sorted(a, key=repr):
        da, db = a[coords], b[coords]
        if (da.noise, da.scale) != (db.noise, db.scale):
            raise ValueError(f"the noise at {coords} depends on the input")
        diff = np.asarray(da.values, dtype=object) - np.asarray(db.values, dtype=object)
        out.draws += 1
        if not any(diff):
            continue
        out.differing += 1
        q = coords[2] if len(coords) > 2 else coords
        rho, eps = out.by_query.get(q, (0.0, 0.0))
        if da.noise == "gaussian":
            sq = Fraction(int(sum(int(x) * int(x) for x in diff)), 2)
            v = float(sq / da.scale)
            out.rho += v
            out.rho_lattice += float(sq / (da.scale - DISCRETE_TAU2)) if da.scale > DISCRETE_TAU2 else math.inf
            rho += v
        else:
            v = float(Fraction(int(sum(abs(int(x)) for x in diff))) / da.scale)
            out.epsilon += v
            eps += v
        out.by_query[q] = (rho, eps)
    return out
