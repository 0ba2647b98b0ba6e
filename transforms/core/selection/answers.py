"""The selected keys' answers calibrated by contribution, not group privacy (issue 33, point 2;
proof: ``docs/open_keys.md``, "After selection").

A key selected at period ``p`` is answered by one continual counter of its live entries
(:class:`~.release.OpenKeyRelease`: ``answer_counter(noise, H - p + 1)``, first batch the key's live
entries at ``p``, then each period's signed change). Every key's counter is built with the one
update-level budget :func:`answer_budget` returns, chosen so that **one person** (``K`` keys, ``L``
entries of ``k`` mutations) loses at most the answers' share ``(1 - s) B`` over all the keys:

* **Gaussian noise** (an (eps, delta) budget; calibrated in zCDP at ``rho_a = rho_for_approx((1 - s)
  B)``): *sequential composition over the K keys* a person can touch. Per key the person is a count
  query's person unit (``L`` entries, ``k`` mutations: :func:`contribution_sensitivity` through the
  key's counter): the first batch is the prefix sum of the person's changes before ``p`` (0 or 1 per
  entry), so the key's change stream is again an entry lifecycle of at most ``k`` alive toggles,
  i.e. a pattern the bound covers. A key's counter runs over ``t = H - p + 1`` periods for some
  ``p``; the multiplier ``m`` is the maximum over every ``t <= H`` (``sqrt_factorization``), or the
  BLT's (no horizon: every key's counter is the same BLT). Each key gets ``rho_a / K`` at that
  multiplier: ``ZCDP(rho_a / (K m^2))``; the keys the person does not touch do not move. A joint
  (histogram) bound over the K keys' counters would be lower (about 6.1 against ``sqrt(2) 4.95 = 7.0``
  at ``K = 2, L = 4, k = 2``, 64 periods) but the keys' counters start at different periods on
  collapsed streams, which the histogram bound does not model: not claimed.
* **Laplace noise** (pure eps): *the joint L1 bound* over the keys. A Laplace counter's loss is the
  L1 change of its node values over its scale, per level at most the change mass a pattern puts on the
  key, so a counter calibrated to ``eps'`` per change (its own levels included) loses ``eps' mass``;
  summed over the keys, ``eps'`` times the person's total change mass over a histogram of ``min(K, k)``
  cells (an upsert between keys moves two): ``L (2k - 1)`` once ``K >= 2``, i.e. exactly the group
  size ``g`` (no gain under pure eps: a histogram's L1 is its number of cell changes), ``L`` times an
  entry's alive toggles for ``K = 1``.

Either way the result is never above group privacy's noise: the multiplier is ``min(route, g)``
(group privacy over ``g = L (2k - 1)`` updates bounds every key's change by its number of updates, and
``sum n_X^2 <= g^2``). Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from transforms.core.config import QuerySet
from transforms.core.continual.auto import auto_counter
from transforms.core.continual.net_change import choose_counter
from transforms.core.contribution.sensitivity import calibrated_budget, contribution_sensitivity
from transforms.core.contribution.units import ContributionUnit
from transforms.core.foundation.accounting import ZCDP, Budget, rho_for_approx
from transforms.core.foundation.bounds import GAUSSIAN
from transforms.core.selection.keys import KeyLimit
from transforms.core.selection.params import SelectionParams

__all__ = ["AnswerCalibration", "answer_calibration", "answer_budget", "answer_counter"]

_COUNT = QuerySet("open_keys", "count")


def answer_counter(noise_kind: str, horizon: int | None) -> str:
    """The counter of a selected key's answers over ``horizon`` periods (None: a run without an end).
    With an end: what ``counter: auto`` picks for a count at person level
    (:func:`~transforms.core.continual.auto.auto_counter`: ``sqrt_factorization`` / ``kary_tree``).
    Without one: ``blt`` / ``infinite_honaker`` (``net_change``'s choice), not ``auto``'s ``anytime_sqrt``:
    every selected key holds its own counter, and ``anytime_sqrt``'s state grows with the periods
    (O(t) numbers, about 17 MB a cell after a year of one-minute periods) where ``blt``'s is fixed
    (2^13 numbers); the key count is not bounded in advance. The calibration below is by contribution
    through that counter; a counter the person unit's bound does not cover is refused
    (:class:`~transforms.core.contribution.sensitivity.UnsupportedCounter`)."""
    if horizon is None:
        return choose_counter(noise_kind, None)
    return auto_counter(noise_kind, horizon, "person")


@dataclass(frozen=True)
class AnswerCalibration:
    """How the selected keys' counters are calibrated.

    Attributes:
      budget: the update-level budget every key's counter is built with.
      multiplier: the noise scale against an update-level counter at the whole answers' share
        (``sqrt(K) m`` or the joint L1 mass; ``g`` when group privacy is lower).
      group: ``g = L (2k - 1)``, for comparison.
      route: ``sequential`` (Gaussian, per key by contribution, K keys), ``joint_l1`` (Laplace) or ``group``.
      method: a one-line account for plans and manifests.
    """

    budget: Budget
    multiplier: float
    group: int
    route: str
    method: str


@functools.lru_cache(maxsize=64)
def _gaussian_key_multiplier(horizon: int | None, max_entries: int, max_mutations: int) -> tuple[float, str]:
    """(m, counter): the largest person-unit multiplier of one key's count counter over every
    counter horizon the release can build (``t = 1 .. horizon``; the BLT without a horizon)."""
    unit = ContributionUnit.person(max_entries, max_mutations)
    counter = answer_counter(GAUSSIAN, horizon)
    if horizon is None:
        return contribution_sensitivity(_COUNT, counter, GAUSSIAN, unit).multiplier, counter
    m = max(
        contribution_sensitivity(_COUNT, counter, GAUSSIAN, unit, horizon=t).multiplier
        for t in range(1, int(horizon) + 1)
    )
    return m, counter


def _laplace_mass(horizon: int | None, limit: KeyLimit) -> tuple[float, str]:
    unit = ContributionUnit.person(limit.max_entries, limit.max_mutations)
    counter = answer_counter("laplace", horizon)
    cells = min(limit.max_keys, limit.max_mutations)
    query = _COUNT if cells == 1 else QuerySet("open_keys", "histogram", domain_size=cells)
    return contribution_sensitivity(query, counter, "laplace", unit, horizon=horizon).multiplier, counter


def answer_calibration(params: SelectionParams, limit: KeyLimit) -> AnswerCalibration:
    """The calibration of the selected keys' counters (module docstring)."""
    if params.max_keys_per_person != limit.max_keys:
        raise ValueError("params.max_keys_per_person and limit.max_keys differ")
    share, kind, g, K = params.answers_budget, params.noise_kind, limit.group, limit.max_keys
    if kind == GAUSSIAN:
        m, counter = _gaussian_key_multiplier(params.horizon, limit.max_entries, limit.max_mutations)
        route_m = math.sqrt(K) * m
        if route_m < g:
            rho = share.rho if isinstance(share, ZCDP) else rho_for_approx(share)
            budget = calibrated_budget(ZCDP(rho / K), m, kind)
            how = f"sequential over {K} keys, each a count's person unit through {counter} (x {m:.4g})"
            return AnswerCalibration(budget, route_m, g, "sequential", f"{how}: x {route_m:.4g}; group {g}")
    else:
        route_m, counter = _laplace_mass(params.horizon, limit)
        if route_m <= g:
            budget = calibrated_budget(share, route_m, kind)
            how = f"joint L1 over the keys through {counter}: x {route_m:.4g}; group {g}"
            return AnswerCalibration(budget, route_m, g, "joint_l1", how)
    budget = calibrated_budget(share, float(g), kind)
    return AnswerCalibration(budget, float(g), g, "group", f"group privacy over {g} updates")


def answer_budget(params: SelectionParams, limit: KeyLimit) -> Budget:
    """The update-level budget of every selected key's counter (:func:`answer_calibration`)."""
    return answer_calibration(params, limit).budget
