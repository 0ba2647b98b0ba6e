"""BBScheduler and BBImprover (Cummings et al. 2018, Thm 27 and 29): any static
black box re-run as the private size grows (``docs/growing.md``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from transforms.core.families.growing.base import GrowingRelease, check_fraction, check_growth_options, check_int
from transforms.core.foundation.accounting import SeriesSplit, zeta
from transforms.core.foundation.state import state_class

__all__ = [
    "BBSchedulerOptions",
    "BBSchedulerRelease",
    "BBImproverOptions",
    "BBImproverRelease",
    "scheduler_eta",
    "scheduler_weight",
]


def scheduler_eta(eps: float, n0: int, beta: float) -> float:
    """The paper's growth factor for a p = 1, g = 1 black box (Thm 27):
    ``eta = (ln(1/beta) / (eps n0))^(1/3)``, clamped to [0.05, 1]."""
    return min(max((math.log(1 / beta) / (eps * n0)) ** (1 / 3), 0.05), 1.0)


def scheduler_weight(i: int, eta: float, power: int = 1) -> float:
    """Re-run ``i``'s share: ``(q - 1) / q^(i + 1)``, q = (1 + eta)^power: 1 + eta
    for eps, (1 + eta)^2 for rho (the budget's ``scale_power``): the shares sum
    to 1 over i = 0, 1, ..."""
    q = (1 + eta) ** power
    return (q - 1) / q ** (i + 1)


@state_class("options.bb_scheduler")
@dataclass(frozen=True)
class BBSchedulerOptions:
    """Options of ``bb_scheduler``.

    Attributes:
      n0: the starting size n: re-run 0 happens when the estimated size
        reaches it (public configuration).
      eta: the growth factor between re-runs (re-run i at n0 (1 + eta)^i);
        None: the paper's choice for a p = 1 black box,
        ``(ln(1/beta) / (eps_r n0))^(1/3)`` clamped to [0.05, 1].
      growth_fraction: the share of the budget of the private growth tracker.
    """

    n0: int = 100
    eta: float | None = None
    growth_fraction: float = 0.1

    def __post_init__(self):
        check_growth_options(self.n0, self.growth_fraction)
        if self.eta is not None:
            check_fraction("eta", self.eta, 0.0, 10.0)


@state_class("options.bb_improver")
@dataclass(frozen=True)
class BBImproverOptions:
    """Options of ``bb_improver``.

    Attributes:
      n0: the starting size (re-run 1 when the estimated size reaches it).
      step: insertions per growth step (a re-run at each); None: n0.
      decay: re-run j gets 1 / (zeta(1 + decay) j^(1 + decay)) of the budget.
      growth_fraction: the share of the budget of the private growth tracker.
    """

    n0: int = 100
    step: int | None = None
    decay: float = 0.5
    growth_fraction: float = 0.1

    def __post_init__(self):
        check_growth_options(self.n0, self.growth_fraction)
        if self.step is not None:
            check_int("step", self.step)
        check_fraction("decay", self.decay, 0.0, 10.0)


class _BlackBoxRelease(GrowingRelease):
    """A re-run of every query set's static black box at each epoch close."""

    def _start(self) -> None:
        super()._start()
        self.runs = 0
        self.carried = None  # [(estimate, bound at beta / 2)] of the latest re-run

    def _planned_share(self, c, rest):
        """Re-run ``i`` of a query set: its planned weight of the rest, over k sets."""
        if c[0] != "rerun" or len(c) != 3 or c[2] not in {q.name for q in self.config.queries}:
            raise ValueError(f"no planned release at {c}")
        return rest.scale(self._planned_weight(c[1]) / len(self.config.queries))

    def _planned_weight(self, i: int) -> float:
        raise NotImplementedError

    def _weight(self, run: int) -> float:
        raise NotImplementedError

    def _bound(self, m, budget, rel, beta: float) -> float:
        if self.noiseless:
            return 0.0
        if m.additive:
            return float(m.alpha(budget, beta))
        if rel.n_hat is None:
            return float("inf")
        n_up = max(rel.n_hat, 0.0) + rel.n_hat_noise.tail_bound(beta / 2)  # PMW: a public size bound
        return float(m.alpha(budget, beta / 2, n=n_up, iterations=rel.alpha_params[0]))

    def _on_close(self, t, noise):
        run = self.runs
        self.runs += 1
        k = len(self.mechanisms)
        w = self._weight(run)
        beta = self.config.beta
        out, carried = [], []
        scope = self.ledger.root.child("reruns")
        for i, (q, m) in enumerate(zip(self.config.queries, self.mechanisms)):
            b = self.rest.part(w / k, w / k)
            coords = (self.stream, "rerun", run, q.name)
            cost = m.cost(b)
            scope.charge(cost, coords)  # before the black box draws its noise
            rel = m.release(self.hists[i], b, noise.stream(*coords))
            est = np.asarray(m.answer(rel), dtype=float)
            self._log(t, run, 0, run, "static", q.name, rel.values, cost, coords)
            out.append((est, self._bound(m, b, rel, beta)))
            carried.append((est, self._bound(m, b, rel, beta / 2)))
        self.carried = carried
        return out

    def _between(self, t, noise):
        beta = self.config.beta
        if self.noiseless:
            return [(self._exact(k), 0.0) for k in range(len(self.mechanisms))]
        if self.carried is None:  # before re-run 0: every answer lies in [0, size]
            drift = self.tracker.open_bound(beta)
            return [(np.zeros(m.num_queries), drift) for m in self.mechanisms]
        # insertions since the latest re-run: those of the open epoch (every close re-runs)
        drift = self.tracker.open_bound(beta / 2)
        return [(est, bound + drift) for est, bound in self.carried]


@state_class("mechanism.bb_scheduler")
class BBSchedulerRelease(_BlackBoxRelease):
    """BBScheduler (001, Thm 27) with private growth: re-run ``i`` of every
    query set's static black box (count, histogram, linear, PMW) when the
    estimated size reaches ``ceil(n0 (1 + eta)^i)``, with budget
    ``eps_r (q - 1) / q^(i + 1)`` (``q = 1 + eta``, or ``(1 + eta)^2`` for rho),
    split evenly over the query sets; between re-runs the latest answers are
    carried with the open epoch's bound added. Deletes and upserts are refused
    (``deletion_not_supported``).

    Neighbours: one more insertion (update level) or one entry's insertion
    under privacy unit entry(k). Privacy: the growth tracker (``growth_fraction``
    of the budget, parallel over epochs) plus the re-runs (a geometric series
    summing to the rest), sequential composition (``docs/growing.md``)."""

    name = "bb_scheduler"
    options_cls = BBSchedulerOptions

    def _start(self) -> None:
        super()._start()
        config = self.config
        eps_r = self.rest.pure_step(1.0)[0]
        o = self.options
        # public: from the configuration only
        self.eta = float(o.eta) if o.eta is not None else scheduler_eta(eps_r, o.n0, config.beta)

    def target(self, i: int) -> int:
        """The nominal size of re-run ``i``: ceil(n0 (1 + eta)^i)."""
        return math.ceil(self.options.n0 * (1 + self.eta) ** i - 1e-9)

    def _threshold(self, e, total_hat):
        # epoch e ends with re-run e - 1: wait for what is missing to its nominal size
        return max(self.target(e - 1) - max(total_hat, 0), 1)

    def _weight(self, run):
        return scheduler_weight(run, self.eta, self.rest.scale_power)

    def _planned_weight(self, i: int) -> float:
        q = (1 + self.eta) ** (2 if self.config.gaussian else 1)  # rho, or eps
        return (q - 1) / q ** (i + 1)


@state_class("mechanism.bb_improver")
class BBImproverRelease(_BlackBoxRelease):
    """BBImprover (001, Thm 29) with private growth: a re-run of every query
    set's static black box at every growth step (the estimated size reaching
    n0, then every ``step`` more insertions), re-run ``j`` (1, 2, ...) with
    ``1 / (zeta(1 + decay) j^(1 + decay))`` of the re-run budget (eps, or rho
    under zCDP, where the error then shrinks relative to the size). Deletes
    and upserts are refused (``deletion_not_supported``).

    Neighbours: one more insertion (update level) or one entry's insertion.
    Privacy: the growth tracker (parallel over epochs) plus the re-runs (a
    series summing to at most the rest): ``docs/growing.md``."""

    name = "bb_improver"
    options_cls = BBImproverOptions

    def _threshold(self, e, total_hat):
        o = self.options
        return o.n0 if e == 1 else (o.step or o.n0)

    def _weight(self, run):
        return SeriesSplit("zeta", self.options.decay).weight(run + 1)

    def _planned_weight(self, i: int) -> float:
        d = self.options.decay
        return 1 / (zeta(1 + d) * (i + 1) ** (1 + d))
