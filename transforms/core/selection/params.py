"""Parameters of continual private key selection, derived from the budget (issue 33; proof:
``docs/open_keys.md``).

Neighbour relation: the person unit, one person more or less. That person brings at most
``max_keys_per_person`` keys (``K``; enforced by :mod:`.keys`), possibly keys nobody else has, and
at most ``L`` entries of at most ``k`` mutations each (the answers' group ``g = L (2k - 1)``).

The selection counter of a candidate key (one per key, :mod:`.candidate`) is a dyadic tree over
the *global* periods ``1, 2, ...`` on the key's signed change of live contributors: a person is a
contributor of a key at most once (+1 when their first live entry of the key appears, -1 when
their last one goes; a later return is not counted, :mod:`.keys`). So one person changes a key's
change stream by at most one +1 and one -1, which touch at most two nodes of each level: L1 and
L2^2 at most 2 per level. Level ``l`` gets the share ``w_l`` of the per-key budget (sum of ``w_l``
at most 1):

* pure eps (discrete Laplace): node scale ``b_l = 2 / (eps_key w_l)``: ``eps_key`` per key;
* (eps, delta) (discrete Gaussian, calibrated in zCDP): ``sigma_l^2 = 2 / (2 rho_key w_l)``: ``rho_key`` per key;

and ``eps_key = eps_sel / K`` (``rho_key = rho_sel / K``): K keys per person, sequential
composition over the keys a person touches (the other keys' counters do not move).

Weights: with a horizon of ``H`` periods the tree has ``H.bit_length()`` levels, ``w_l = 1 / levels``;
without one, ``w_l = 1 / ((l + 1)(l + 2))`` (sums to 1 over all levels: private for ever).

The sparse-vector test (``test="svt"``, pure eps or (eps, delta); the default there, ``docs/open_keys.md`` has the
numbers): per key, AboveThreshold (Lyu, Su, Li 2017, Alg. 1) on the key's live contributors at each
period it is tested: a noisy threshold ``T_p + rho`` (``rho`` discrete Laplace of scale ``2 / eps_key``,
drawn once per key) and a fresh query noise ``nu_p`` (scale ``4 / eps_key``); one person changes each
query by at most 1 (a contributor indicator is 0 or 1); the test halts at the first crossing
(the key is selected): ``eps_key``-DP for any number of periods (its noise is discrete Laplace under
(eps, delta) too: its delta is all ``delta_event``). The tree test (``test="tree"``: discrete Gaussian
nodes under (eps, delta), discrete Laplace under pure eps) is the alternative.

Threshold: a key whose counter's input is zero at every period (a key nobody has) crosses the
threshold ``T_p`` at period ``p`` with probability at most ``P(|Z_p| > T_p) <= delta_p``, ``Z_p`` the
sum of the noise of the nodes decomposing ``[1, p]`` (a Chernoff bound: ``NoiseProfile.tail_bound``);
``delta_p = delta_key / H`` over a horizon, else ``delta_key / (p (p + 1))``: over every period,
at most ``delta_key``. Over the at most K keys only the extra person has:
``K delta_key = delta_event / e^eps_sel``, so the selection is ``(eps_sel, delta_event)``-DP
(``docs/open_keys.md``, "Why the event costs delta").

The stated guarantee (:func:`selection_guarantee`; the ledger is charged exactly that). No budget kind
makes the event free: a key only one person has is released with a probability above zero with that
person and exactly zero without, so no open-key release is pure eps-DP, and none is rho-zCDP.

* ``(eps, delta)``: the release is ``(eps, delta)``-DP; ``delta_event`` is a share of the configured
  delta (nothing is added).
* pure ``eps``: the release is stated, charged and reported as ``(eps, delta_event)``-DP, with
  ``delta_event`` the configured failure probability: never as pure eps. The noise stays discrete
  Laplace (the counters and the sparse vector are pure eps; only the event costs delta).
* ``rho`` (zCDP): **refused** (:class:`OpenKeysNeedDelta`). The selection is ``(eps(rho, d), d +
  e^eps delta_event)``-DP for every ``d`` (the coupling of ``docs/open_keys.md``), but zCDP has no
  delta to state ``delta_event`` in, and approximate zCDP (rho plus delta, Bun and Steinke 2016,
  Def. 8.1) needs events of probability ``1 - delta`` on both sides under which the Renyi bound
  holds: the coupling gives the event on one side only, and conditioning the Gaussian noise on it
  breaks the Renyi bound. We do not state what we cannot prove: a zCDP user configures ``(epsilon,
  delta)`` (the tree test then calibrates discrete Gaussian noise in zCDP inside it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from transforms.core.foundation.accounting import ZCDP, ApproxDP, Budget, PureDP, rho_for_approx
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile
from transforms.core.foundation.samplers import as_ratio_up
from transforms.core.selection.keys import KeyLimit

__all__ = ["OpenKeysNeedDelta", "SelectionParams", "dyadic_nodes", "selection_guarantee", "NEED_DELTA"]

#: the start of every refusal of a budget that cannot state the selection's delta
NEED_DELTA = "open keys need a delta: "


class OpenKeysNeedDelta(ValueError):
    """The budget cannot state the selection's delta (a zCDP budget, or (eps, 0)): the configuration
    layer turns it into a ConfigError naming the budget key. Its text starts with :data:`NEED_DELTA`."""


def dyadic_nodes(p: int) -> tuple[tuple[int, int], ...]:
    """The nodes ``(level, index)`` of the dyadic tree whose intervals ``((index-1) 2^level,
    index 2^level]`` partition ``[1, p]``: one per set bit of ``p``, highest level first."""
    if p < 1:
        raise ValueError(f"a period is >= 1, got {p}")
    return tuple((lvl, p >> lvl) for lvl in range(p.bit_length() - 1, -1, -1) if (p >> lvl) & 1)


@dataclass(frozen=True)
class SelectionParams:
    """The selection's parameters (module docstring).

    Attributes:
      budget: the whole open-key release's budget (PureDP or ApproxDP; ZCDP is refused:
        :class:`OpenKeysNeedDelta`, module docstring).
      max_keys_per_person: ``K``.
      selection_share: the share of ``budget`` the selection spends (the answers the rest).
      failure: ``delta_event`` under a pure-eps budget (the probability budget of selecting a key only
        the extra person has; the release is stated as ``(eps, failure)``); under (eps, delta) unused:
        the selection takes its delta share (half of it with the tree test).
      horizon: the number of periods (None: unbounded).
      group: ``g``, updates one person accounts for in the answers (group privacy over the keys'
        counters, a histogram over keys).
      threshold: a fixed threshold instead of the derived one (tests with noise off only).
      test: ``auto`` (``svt``), ``tree`` or ``svt``.
    """

    budget: Budget
    max_keys_per_person: int
    selection_share: float = 0.5
    failure: float = 1e-9
    horizon: int | None = None
    group: int = 1
    threshold: float | None = None
    test: str = "auto"

    def __post_init__(self):
        if isinstance(self.budget, ZCDP):
            raise OpenKeysNeedDelta(
                NEED_DELTA + "a zCDP budget cannot state the probability that a key only one person has is"
                " released (the selection is not rho-zCDP); configure an (epsilon, delta) budget"
            )
        if not isinstance(self.budget, (PureDP, ApproxDP)) or self.budget.is_zero:
            raise ValueError("budget must be a PureDP or ApproxDP budget above zero")
        for name in ("max_keys_per_person", "group"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.horizon is not None and (isinstance(self.horizon, bool) or int(self.horizon) < 1):
            raise ValueError(f"horizon must be an integer >= 1 or None, got {self.horizon!r}")
        if not 0 < self.selection_share < 1:
            raise ValueError(f"selection_share must be in (0, 1), got {self.selection_share!r}")
        if not 0 < self.failure < 1:
            raise ValueError(f"failure must be in (0, 1), got {self.failure!r}")
        if isinstance(self.budget, ApproxDP) and self.budget.delta == 0:
            raise OpenKeysNeedDelta(
                NEED_DELTA + "an (epsilon, delta) budget with delta = 0 leaves none for the selection of a key only"
                " one person has; give delta > 0, or a pure epsilon budget (stated as (epsilon, failure))"
            )
        if self.test not in ("auto", "tree", "svt"):
            raise ValueError(f"test must be auto, tree or svt, got {self.test!r}")
        object.__setattr__(self, "_thresholds", {})

    @property
    def selection_test(self) -> str:
        """``svt`` or ``tree`` (``auto``: the sparse-vector test, the lower thresholds under both budget
        kinds, ``docs/open_keys.md``)."""
        return "svt" if self.test == "auto" else self.test

    @property
    def svt_scales(self) -> tuple[float, float]:
        """(threshold noise, query noise) discrete Laplace scales of the sparse-vector test: ``2 / eps_key``
        and ``4 / eps_key`` (sensitivity 1), rounded up."""
        e = self.key_share
        return float(as_ratio_up(2.0 / e)), float(as_ratio_up(4.0 / e))

    # -- budgets ------------------------------------------------------------------------
    @property
    def noise_kind(self) -> str:
        """The answers' noise (as ``net_change``'s under the budget)."""
        return LAPLACE if isinstance(self.budget, PureDP) else GAUSSIAN

    @property
    def selection_noise(self) -> str:
        """The selection test's noise: discrete Laplace for the sparse vector, else the answers'."""
        return LAPLACE if self.selection_test == "svt" else self.noise_kind

    @property
    def event_delta(self) -> float:
        """``delta_event``: the selection's delta for keys only one person has."""
        if isinstance(self.budget, ApproxDP):
            half = 1 if self.selection_test == "svt" else 2  # Laplace noise needs no delta
            return self.budget.delta * self.selection_share / half
        return float(self.failure)

    @property
    def counter_budget(self) -> Budget:
        """What the selection counters (all keys) cost, in the budget's currency."""
        s = self.selection_share
        if isinstance(self.budget, ApproxDP):
            if self.selection_test == "svt":
                return PureDP(self.budget.epsilon * s)
            return ApproxDP(self.budget.epsilon * s, self.budget.delta * s / 2)
        return self.budget.part(s, s)

    @property
    def selection_cost(self) -> Budget:
        """The selection's charge: the counters' cost and ``delta_event``."""
        c = self.counter_budget
        return ApproxDP(c.epsilon, (c.delta if isinstance(c, ApproxDP) else 0.0) + self.event_delta)

    @property
    def answers_budget(self) -> Budget:
        """The answers' share: the keys' counters, a histogram over keys (parallel composition)."""
        s = 1 - self.selection_share
        return self.budget.part(s, s)

    @property
    def ledger_budget(self) -> Budget:
        """The cap of the release's ledger: the budget, with ``delta_event`` under pure eps."""
        if isinstance(self.budget, PureDP):
            return ApproxDP(self.budget.epsilon, self.event_delta)
        return self.budget

    def guarantee(self) -> ApproxDP:
        """The whole release's stated guarantee: ``(eps, delta)`` (the configured budget, or ``(eps,
        delta_event)`` under pure eps); what the ledger is charged in total (:func:`selection_guarantee`)."""
        return self.ledger_budget

    @property
    def key_share(self) -> float:
        """``eps_key`` (Laplace) or ``rho_key`` (Gaussian): the selection counter of one key."""
        c = self.counter_budget
        if self.selection_noise == LAPLACE:
            return c.epsilon / self.max_keys_per_person
        return rho_for_approx(c) / self.max_keys_per_person

    @property
    def key_delta(self) -> float:
        """``delta_key``: the probability that a key nobody has is ever selected."""
        c = self.counter_budget
        return self.event_delta / (self.max_keys_per_person * math.exp(c.epsilon))

    # -- the tree ----------------------------------------------------------------------
    @property
    def levels(self) -> int | None:
        return None if self.horizon is None else int(self.horizon).bit_length()

    def level_weight(self, level: int) -> float:
        if self.levels is not None:
            if level >= self.levels:
                raise ValueError(f"level {level} is above the tree of horizon {self.horizon}")
            return 1.0 / self.levels
        return 1.0 / ((level + 1) * (level + 2))

    def node_param(self, level: int) -> float:
        """The noise of one node of ``level``: discrete Laplace scale (L1 = 2) or discrete Gaussian
        sigma^2 (L2^2 = 2), rounded up as the static mechanisms round."""
        share = self.key_share * self.level_weight(level)
        if self.selection_noise == LAPLACE:
            return float(as_ratio_up(2.0 / share))
        return float(as_ratio_up(2.0 / (2.0 * share)))

    def period_delta(self, p: int) -> float:
        if self.horizon is not None:
            return self.key_delta / self.horizon
        return self.key_delta / (p * (p + 1))

    def noise_profile(self, p: int) -> NoiseProfile:
        """The law of a candidate's noise at period ``p`` (the sum over :func:`dyadic_nodes`; the sparse-vector
        test: ``nu_p - rho``, the same law as their sum)."""
        if self.selection_test == "svt":
            return NoiseProfile.sum(NoiseProfile.single(LAPLACE, s) for s in self.svt_scales)
        return NoiseProfile.sum(
            NoiseProfile.single(self.selection_noise, self.node_param(lvl)) for lvl, _ in dyadic_nodes(p)
        )

    def threshold_at(self, p: int) -> float:
        """``T_p``: a key is selected at ``p`` when its noisy count is strictly above it."""
        if self.horizon is not None and p > self.horizon:
            raise ValueError(f"period {p} is past the horizon ({self.horizon} periods)")
        if self.threshold is not None:
            return float(self.threshold)
        cache = self._thresholds
        if p not in cache:
            cache[p] = self.noise_profile(p).tail_bound(self.period_delta(p))
        return cache[p]


def selection_guarantee(
    budget: Budget,
    share: float,
    max_keys_per_person: int,
    max_entries: int,
    max_mutations: int,
    failure: float = 1e-9,
) -> ApproxDP:
    """The stated guarantee of an open-key release, person unit (``max_keys_per_person`` keys,
    ``max_entries`` entries of ``max_mutations`` mutations each), selection share ``share``, failure
    probability ``failure`` (``delta_event`` under pure eps): ``(eps, delta)`` under an (eps, delta)
    budget, ``(eps, failure)`` under pure eps. It does not depend on ``K``, ``L`` or ``k`` (the
    selection and the answers are calibrated to them inside it); they are checked like the release
    checks them. Raises :class:`OpenKeysNeedDelta` (a ValueError) for a zCDP budget or (eps, 0), and
    ValueError for any other invalid argument. :class:`~.release.OpenKeyRelease`'s ledger is charged
    exactly this in total (``tests/test_open_keys.py``)."""
    KeyLimit(max_keys_per_person, max_entries, max_mutations)
    params = SelectionParams(budget, max_keys_per_person, selection_share=share, failure=failure)
    return params.guarantee()
