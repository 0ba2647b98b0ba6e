"""Mechanisms driven by the private partitioning (000, Alg. 2): ticks are
grouped into segments by the sparse vector technique, and a mechanism
releases when a segment closes.

:class:`SegmentedRelease` implements the :class:`ContinualRelease` contract
for them: it feeds each tick's update count to the partitioner, and calls the
subclass's ``_absorb`` (the tick's resolved updates) and ``_close`` (the
release at a segment close). The partitioning gets ``partition_fraction`` of
the budget (``BudgetProfile``); its closes happen at public deadlines
(``T_j = t_{j-1}^2``) or when the sparse vector fires (a private, charged
output), never because of the data otherwise.

**An answer every period** (``every_ticks``): at every period end the
mechanism releases each query's current answer. At a close that is the fresh
release; between closes it is the last close's answer carried forward
(post-processing of released values: free), with a bound that adds what the
open segment can hold. The sparse vector has not halted in the open segment
``j`` at tick ``t``, so its update count satisfies ``c_t + Z_t <= floor(theta_j)
+ Z_0`` (``Z_0 ~ DLap(2/eps)``, ``Z_t ~ DLap(4/eps)``, the tick-by-tick
model, which the skip reproduces in law), hence ``c_t <= floor(theta_j) +
(Z_0 - Z_t)``; one update moves any count, histogram cell or linear query
with entries in [0, 1] by at most 1, so the carried answer is off by at most
``floor(theta_j) + a`` more, where ``P(Z_0 - Z_t > a) <= beta / 2``. The
last structure's bound is taken at ``beta / 2``: each carried answer is
within its bound with probability at least ``1 - beta``. ``theta_j`` and the
scales are public. With noise switched off (tests) a period's answer is the
exact current answer.
"""

from __future__ import annotations

import math

import numpy as np

from transforms.core.continual.partition import InfinitePartitioner, PartitionParams
from transforms.core.foundation.accounting import Budget
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource, as_ratio_up
from transforms.core.foundation.outputs import Answer, NodeOutput, TickResult
from transforms.core.protocol import ContinualRelease

__all__ = ["SegmentedRelease"]


class SegmentedRelease(ContinualRelease):
    """Ticks -> partitioning -> per-segment work. Subclasses do the releasing
    (``_absorb`` a tick's batch, ``_close`` a segment)."""

    def _start(self) -> None:
        config = self.config
        eps_p, self.tree_budget = config.split()
        self.partitioner = InfinitePartitioner(
            PartitionParams(eps_p, config.beta), coords=(self.stream,), scope=self.ledger.root
        )
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        self.closed = 0  # number of closed segments J
        if self.every_ticks is not None:
            # what a period's release needs between closes: the last close's answers
            # and their bounds at beta / 2; and (noise off only) the exact histograms
            self.carried: list | None = None
            self.exact_hists = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]

    # -- the planned allocation ------------------------------------------------------
    def planned_cost(self, coordinates: tuple, nodes=()) -> Budget:
        """The partitioning's sparse vector gets ``f`` of the ledger's budget as a
        pure step (``f`` = 0.5 in the paper profile, 0.1 otherwise; eps_p^2 / 2
        in zCDP); the rest, the tree, is the subclass's (:meth:`_planned_cost`
        with the coordinates after the stream)."""
        c = tuple(coordinates[1:])
        if c[0] == "svt":
            return self.config.ledger_budget.pure_step(self._partition_share())[1]
        return self._planned_cost(c, nodes)

    def _partition_share(self) -> float:
        return 0.5 if self.config.profile == "paper" else 0.1

    def _tree_budget_planned(self) -> Budget:
        return self.config.ledger_budget.part(1 - self._partition_share(), 1.0)

    def _planned_cost(self, c: tuple, nodes) -> Budget:
        raise NotImplementedError(f"{type(self).__name__} states no planned allocation")

    # -- the contract --------------------------------------------------------------
    @property
    def last_tick(self) -> int:
        return self.partitioner.last_tick

    @property
    def _next_wake(self) -> int | None:
        wake = max(self.partitioner.next_close, 1)  # 0 before the first segment starts
        period = self.next_period_end(self.period_tick)
        return wake if period is None else min(wake, period)

    @property
    def next_close(self) -> int:
        """Tick at which the open segment closes if no update arrives."""
        return self.partitioner.next_close

    @property
    def last_close_tick(self) -> int:
        """The tick of the latest segment close (0 before the first)."""
        return self.partitioner.prev_close if self.closed else 0

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        self._through(batch.tick - 1, noise, res)
        if self.finished:
            return
        self._absorb(batch)
        if self.every_ticks is not None:
            for item in batch.inserts:
                for k, v in enumerate(item):
                    self.exact_hists[k][v] += 1
            for item, _ in batch.deletes:
                for k, v in enumerate(item):
                    self.exact_hists[k][v] -= 1
        self.num_updates += batch.n_updates
        self._closes(self.partitioner.observe(batch.tick, batch.n_updates, noise), noise, res)
        self._periods(batch.tick, res)

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        if self.every_ticks is not None and self.end_tick is not None:
            tick = min(tick, self.end_tick)  # nothing is released after the end
        self._through(tick, noise, res)

    def _through(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        """The partitioner's closes and the period ends up to ``tick``, one period end at a time.

        A period's release between closes states its bound with the partitioner's drift
        (``_carried_answer``), so it must see the partitioner as of its own end: advancing the
        partitioner to ``tick`` first (one call over many periods: a bounded run's gap in the data, an
        in-memory caller's next tick) gave an earlier period the threshold of a later segment, a bound
        that differed from the one the streaming step's wake at that period end states. Now every
        grouping of calls gives the same records (``tests/test_bounded_lazy.py``)."""
        while self.every_ticks is not None and not self.finished:
            p = self.next_period_end(self.period_tick)
            if p is None or p >= tick:
                break
            self._closes(self.partitioner.advance(p, noise), noise, res)
            self._periods(p, res)
        self._closes(self.partitioner.advance(tick, noise), noise, res)
        self._periods(tick, res)

    def _closes(self, ticks: list[int], noise: NoiseSource, res: TickResult) -> None:
        for t in ticks:
            if self.finished:  # the partitioner may have scheduled closes past the end
                return
            if self.every_ticks is None:
                self._close(t, noise, res)
                self._after_release(t, res)
                continue
            if self.end_tick is not None and t > self.end_tick:
                return
            self._periods(t - 1, res)
            n0 = len(res.answers)
            self._close(t, noise, res)
            fresh = res.answers[n0:]
            del res.answers[n0:]
            beta = self.config.beta
            self.carried = [(a.estimate, self._bound(k, beta / 2)) for k, a in enumerate(fresh)]
            if self.next_period_end(self.period_tick) == t:  # a close at a period end: the fresh release
                res.answers.extend(fresh)
                self._period_done(t, res)

    def _periods(self, upto: int, res: TickResult) -> None:
        """Release every period end in (period_tick, upto] from the carried answers."""
        for t in self._period_ends(upto):
            for k in range(len(self.mechanisms)):
                res.answers.append(self._answer(t, k, *self._carried_answer(k)))
            self._period_done(t, res)

    def _period_done(self, t: int, res: TickResult) -> None:
        self.period_tick = t
        self._after_release(t, res)

    def _carried_answer(self, k: int) -> tuple:
        """(estimate, bound) of query set ``k`` now, from the last close."""
        mech = self.mechanisms[k]
        if self.noiseless:
            return np.asarray(mech.exact(self.exact_hists[k]), dtype=float), 0.0
        beta = self.config.beta
        if self.carried is None:  # before the first close: nothing released yet
            est, bound = np.zeros(mech.num_queries), 0.0
            drift = self._drift_bound(beta)
        else:
            est, bound = self.carried[k]
            drift = self._drift_bound(beta / 2)
        return np.array(est, dtype=float), bound + drift

    def _drift_bound(self, beta: float) -> float:
        """A (1-beta) bound on the updates in the open segment (module docstring)."""
        p, part = self.partitioner.params, self.partitioner
        j = max(part.j, 1)
        theta = math.floor(p.theta(j, part.prev_close))
        # the effective (rounded-up) discrete Laplace scales the partitioner samples with
        z = NoiseProfile.single("laplace", float(as_ratio_up(p.threshold_scale))) + NoiseProfile.single(
            "laplace", float(as_ratio_up(p.query_scale))
        )
        return float(theta) + z.tail_bound(beta)

    def _bound(self, k: int, beta: float) -> float:
        """The current structure's (1-beta) bound for query set ``k``."""
        raise NotImplementedError

    # -- what subclasses implement ---------------------------------------------------
    def _absorb(self, batch: TickBatch) -> None:
        raise NotImplementedError

    def _close(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        raise NotImplementedError

    # -- helpers -------------------------------------------------------------------
    def _answer(self, tick: int, k: int, estimate, bound) -> Answer:
        return Answer(
            self.stream,
            tick,
            self.closed,
            self.config.queries[k].name,
            estimate,
            bound,
            self.config.beta,
            self.ledger.spent,
        )

    def _log(self, tick, node, level, rnd, kind, query, values, cost, coords=()):
        if self.emit_nodes:
            self.node_outputs.append(
                NodeOutput(
                    self.stream, tick, self.closed, node, level, rnd, kind, query, np.asarray(values), cost, coords
                )
            )
