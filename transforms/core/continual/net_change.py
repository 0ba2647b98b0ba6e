"""The signed continual release (``net_change``): one continual counter per
additive query set over the signed change of each period.

For an additive query set (count, histogram, any linear query; a sum is a
linear query) the answer on the current data is the sum over all updates so
far of ``+f(item)`` for an insertion and ``-f(item)`` for a deletion (an
upsert is ``-f(old) + f(new)``). So the mechanism keeps, per query set, the
histogram ``d_p`` of the signed changes of period ``p`` (ticks
``((p-1) N, p N]``, ``N = every_ticks``) and feeds it to a continual counter,
whose prefix sums are the current answers: with noise switched off every
period's answer is the truth.

Neighbours and sensitivity: update level, one stream has one more insertion
or deletion: it changes one period's ``d_p`` by one item (+1 or -1 in one
cell), exactly the sensitivity the counters are calibrated for (count 1;
histogram L1 = L2 = 1; a linear query set its largest column norm). Under an
entry unit (every update of one entry, at most ``k`` mutations) or a person
unit (every update of one person's at most ``L`` admitted entries) each
counter is calibrated to *its sensitivity by contribution*: the largest
change one entry / one person can make to its releases, ``m`` times one
update's (``docs/contribution.md``; a count changes twice per entry,
whatever ``k``), instead of group privacy over ``2k - 1`` (``L (2k - 1)``)
updates; where no such bound is proven for the counter and noise (Gaussian
noise through a tree, Laplace noise through a lattice counter, the naive
prefix counter) the query set keeps group privacy, ``m = g``. Either way the
counter's noise is calibrated to its share divided by ``m`` (``rho / m^2``,
``eps / m``) and its ledger scope charges at sensitivity ``m``, so the
ledger holds the unit's guarantee itself (:meth:`calibrations`; the plan
states each query set's). The error does not depend on
the stream length N_t or the data size n_t, only on the number of periods
(through the counter). Budget: ``config.budget`` per stream, split over the
query sets in proportion to their ``weight`` (evenly by default; the shares sum
to the budget) (an update is in every query set's change: sequential
composition); each counter spends its share as ``docs/counters.md`` states.
Under an (eps, delta > 0) budget with Gaussian noise the budget is one tight
Gaussian account (``TightGaussian(gaussian_rho_for_approx_tight(eps, delta))``,
split in rho; each lattice counter adds ``DISCRETE_TAU2``): the whole release
is one Gaussian mechanism up to the lattice slack (``docs/accounting.md``,
"The tight Gaussian account"), 6.8% less noise at (1, 1e-6) than splitting
(eps, delta) and converting each part by CKS.

The counter (``options.counter``, default ``auto``) is the best-known one for
the noise kind and whether a horizon is known: with Gaussian noise (a zCDP or
(eps, delta > 0) budget) the square-root factorization over a known horizon
of periods (``time.end`` configured), else a BLT; with Laplace noise (pure
eps) a k-ary tree with Honaker's estimator over a known horizon, else the
unbounded Chan-Shi-Song counter with Honaker trees. Proof note: ``docs/net_change.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

from transforms.core.config import DynamicConfig
from transforms.core.continual.baselines import ContinualCountRelease
from transforms.core.contribution.sensitivity import UnsupportedCounter, calibrated_budget, contribution_sensitivity
from transforms.core.contribution.units import ContributionUnit
from transforms.core.counters import COUNTER_NAMES, COUNTERS
from transforms.core.foundation.accounting import (
    ApproxDP,
    Budget,
    PrivacyUnit,
    TightGaussian,
    gaussian_rho_for_approx_tight,
)
from transforms.core.foundation.state import state_class
from transforms.core.plans import Calibration, PlanEntry, weighted_shares

__all__ = ["NetChangeRelease", "NetChangeOptions", "choose_counter", "tight_account", "lattice_counter"]

AUTO = "auto"
TIGHT, ZCDP_CALIBRATION = "tight", "zcdp"


class _options_aware:  # noqa: N801 (used as a decorator, like classmethod)
    """A classmethod whose ``options`` argument defaults to the instance's own options when it is
    called on an instance (``self.ledger_cap(config)``: the release's ledger), and to the default
    options when it is called on the class (what the configuration alone states)."""

    def __init__(self, func):
        self.func = func
        self.__doc__ = func.__doc__

    def __get__(self, obj, cls):
        func = self.func
        if obj is None:
            return functools.partial(func, cls)
        own = getattr(obj, "options", None)
        return lambda config, options=None: func(type(obj), config, own if options is None else options)


def lattice_counter(counter: str) -> bool:
    """Whether ``counter`` adds discrete Gaussian noise on the integer lattice calibrated by
    ``Budget.gaussian_calibration`` (so that a tight Gaussian account covers it: its class offers
    the ``tight`` calibration): ``sqrt_factorization``, ``blt``, ``scaled_sqrt``, ``anytime_sqrt``."""
    spec = COUNTERS.get(counter)
    return spec is not None and "tight" in getattr(spec.cls, "approx_calibrations", ())


def tight_account(config: DynamicConfig) -> bool:
    """Whether ``net_change`` accounts ``config`` by the tight Gaussian account: Gaussian noise
    under an (epsilon, delta > 0) budget. A public function of the configuration only (it decides
    the noise scale, never when a release happens)."""
    return config.noise_kind == "gaussian" and isinstance(config.budget, ApproxDP) and config.budget.delta > 0


@state_class("options.net_change")
@dataclass(frozen=True)
class NetChangeOptions:
    """Options of the signed continual release.

    Attributes:
      counter: ``auto`` (the best-known counter for the noise kind and horizon,
        see :func:`choose_counter`) or one of ``COUNTER_NAMES``.
      horizon: the number of periods to plan the counter for; default: derived
        from the configured end (``ceil(end_tick / every_ticks)``), else
        unbounded. A finite counter stops releasing after it
        (``horizon_reached``).
      calibration: under an (epsilon, delta > 0) budget with Gaussian noise, ``tight`` (the
        default: the whole release is one tight Gaussian account, ``docs/accounting.md``) or
        ``zcdp`` (each counter's share through the CKS conversion, as before round 8: ``auto``
        sets it for its additive part beside a ``fully_dynamic`` part). Not in the repr (so the
        options' digest, and the noise keyed by it, stay those of before).
    """

    counter: str = AUTO
    horizon: int | None = None
    calibration: str = dataclasses.field(default=TIGHT, repr=False)

    def __post_init__(self):
        if self.counter != AUTO and self.counter not in COUNTER_NAMES:
            raise ValueError(f"unknown counter {self.counter!r}; choose auto or one of {', '.join(COUNTER_NAMES)}")
        if self.horizon is not None and (isinstance(self.horizon, bool) or int(self.horizon) < 1):
            raise ValueError(f"horizon must be an integer >= 1 (periods) or None, got {self.horizon!r}")
        if self.calibration not in (TIGHT, ZCDP_CALIBRATION):
            raise ValueError(f"calibration must be {TIGHT} or {ZCDP_CALIBRATION}, got {self.calibration!r}")


def choose_counter(noise_kind: str, horizon: int | None) -> str:
    """The counter ``auto`` picks: the lowest stated variance for the noise kind
    and horizon among those available (``docs/counters.md`` has the table)."""
    if noise_kind == "gaussian":
        return "sqrt_factorization" if horizon is not None else "blt"
    return "kary_tree" if horizon is not None else "infinite_honaker"


@state_class("mechanism.net_change")
class NetChangeRelease(ContinualCountRelease):
    """The signed continual release: one continual counter per additive query
    set over each period's signed change (module docstring: neighbours,
    sensitivity, budget). Releases every query's answer at every period
    (``every_ticks``, default every tick), data or not."""

    name = "net_change"
    deletions_allowed = True
    options_cls = NetChangeOptions
    horizon_unit = "periods"
    ledger_unit = "configured"  # each counter's scope charges at its sensitivity: the ledger holds the unit's
    signed = True
    _coord = "net"

    @_options_aware
    def ledger_cap(cls, config: DynamicConfig, options=None) -> Budget:
        """The configured guarantee itself, in the ledger's currency: the counters' scopes charge at
        their sensitivity for the unit (:meth:`calibrations`). Gaussian noise under (eps, delta > 0)
        (:func:`tight_account`, ``options.calibration`` ``tight``, the default): the tight Gaussian
        account ``TightGaussian(gaussian_rho_for_approx_tight(eps, delta))``, split over the query sets
        in rho; else (zCDP for Gaussian noise) the update-level budget, as before."""
        options = cls.options_cls() if options is None else options
        if options.calibration == TIGHT and tight_account(config):
            b = config.budget
            return TightGaussian(gaussian_rho_for_approx_tight(float(b.epsilon), float(b.delta)))
        return dataclasses.replace(config, unit=PrivacyUnit.update()).ledger_budget

    @classmethod
    def calibrations(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Per query set, its noise calibration for the configured unit (empty at update level):
        sensitivity by contribution through the counter (``contribution_sensitivity``), or group
        privacy over ``g`` updates where the counter and noise have no such bound
        (``UnsupportedCounter``; ``g = L (2k - 1)``, per window ``group_size_until(end_tick)``).
        Raises ``ValueError`` naming the key where the unit cannot be served (no mutation limit;
        a person limit per window without an end)."""
        unit = config.unit
        if unit.kind == "update":
            return ()
        contribution = ContributionUnit.of(unit)
        if unit.per_window is not None and end_tick is None:
            raise ValueError(
                "time.end: a person limit per window bounds a person's entries only over a bounded release "
                "(configure time.end, or a limit over the whole release)"
            )
        counter, horizon = cls.counter_choice(config, options, end_tick, every_ticks)
        out = []
        for q in config.queries:
            try:
                s = contribution_sensitivity(
                    q, counter, config.noise_kind, contribution, horizon=horizon, end_tick=end_tick
                )
            except UnsupportedCounter:
                g = unit.group_size_until(end_tick)
                why = (
                    f"group privacy over {g} updates: no sensitivity by contribution through {counter} "
                    f"with {config.noise_kind} noise"
                )
                out.append(Calibration(q.name, "group", float(g), False, why))
                continue
            out.append(Calibration(q.name, "contribution", s.multiplier, s.exact, s.method))
        return tuple(out)

    def counter_budgets(self) -> list[tuple]:
        """Per query set: its share of the ledger's budget (the unit's guarantee; in proportion to the query
        sets' ``weight``, equal by default: :func:`~transforms.core.plans.weighted_shares`) divided by its
        multiplier (``calibrated_budget``: ``rho / m^2``, ``eps / m``; the share itself when
        ``m = 1``), charged at sensitivity ``m``."""
        config = self.config
        cap = self.ledger_cap(config)
        shares = [cap.part(w, w) for w in weighted_shares(config.queries)]  # 1 / k each without weights
        cal = self.calibrations(config, self.options, end_tick=self.end_tick, every_ticks=self.every_ticks or 1)
        if not cal:
            return [(share, 1.0) for share in shares]
        out = []
        for share, c in zip(shares, cal):
            m = float(c.multiplier)
            out.append((share, 1.0) if m == 1.0 else (calibrated_budget(share, m, config.noise_kind), m))
        return out

    def _start(self) -> None:
        kinds = sorted({q.kind for q in self.config.queries} - {"count", "histogram", "linear"})
        if kinds:
            raise ValueError(f"net_change answers additive query sets only (count, histogram, linear), not {kinds}")
        self._check_calibration(self.config, self.options, self.end_tick, self.every_ticks)
        super()._start()

    @classmethod
    def _check_calibration(cls, config: DynamicConfig, options, end_tick, every_ticks) -> None:
        """A tight Gaussian account covers the lattice counters only (:func:`lattice_counter`)."""
        if options.calibration != TIGHT or not tight_account(config):
            return
        counter, _ = cls.counter_choice(config, options, end_tick, every_ticks)
        if not lattice_counter(counter):
            raise ValueError(
                f"mechanism.counter: {counter} is not a lattice counter; under an (epsilon, delta) budget with "
                "Gaussian noise net_change accounts the whole release as one tight Gaussian mechanism, which "
                "covers sqrt_factorization, blt, scaled_sqrt and anytime_sqrt (or use a zCDP budget)"
            )

    def _counter_choice(self) -> tuple[str, int | None]:
        return self.counter_choice(self.config, self.options, self.end_tick, self.every_ticks)

    @classmethod
    def counter_choice(cls, config: DynamicConfig, options, end_tick: int | None, every_ticks: int | None):
        """(counter, horizon in periods) for the options (``counter``, ``horizon``),
        the configured end and period: the horizon defaults to the end's number
        of periods; ``auto`` picks :func:`choose_counter`'s."""
        horizon = options.horizon
        if horizon is None and end_tick is not None:
            horizon = math.ceil(end_tick / (every_ticks or 1))
        counter = options.counter
        if counter == AUTO:
            counter = choose_counter(config.noise_kind, horizon)
        return counter, horizon

    @classmethod
    def plan(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        counter, horizon = cls.counter_choice(config, options, end_tick, every_ticks)
        cal = cls.calibrations(config, options, end_tick=end_tick, every_ticks=every_ticks)
        names = tuple(q.name for q in config.queries)
        weights = tuple(q.weight for q in config.queries)
        return (PlanEntry(cls.name, names, counter=counter, horizon=horizon, calibrations=cal, weights=weights),)

    @classmethod
    def check_settings(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """As every mechanism's, and the unit's calibration (:meth:`calibrations` raises where the unit
        cannot be served)."""
        super().check_settings(config, options, end_tick=end_tick, every_ticks=every_ticks)
        cls._check_calibration(config, options, end_tick, every_ticks)
        cls.calibrations(config, options, end_tick=end_tick, every_ticks=every_ticks)
