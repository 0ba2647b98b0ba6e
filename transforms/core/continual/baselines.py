"""The baselines: the insertion-only release (000, Thm 8), the two-stream
baseline (000 §1.3) and a plain continual counter over ticks.

Each implements the :class:`ContinualRelease` contract (``protocol.py``) and
has its registry entry in ``mechanisms.py``; the proofs are in
``docs/fully_dynamic.md`` (the baselines) and ``docs/counters.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from transforms.core.config import DynamicConfig
from transforms.core.continual.segmented import SegmentedRelease
from transforms.core.counters import COUNTER_NAMES, COUNTERS, FINITE_COUNTERS, InfiniteCounter, make_counter
from transforms.core.foundation.accounting import Scope
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.outputs import Answer, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease

__all__ = ["InsertionOnlyRelease", "TwoStreamBaseline", "ContinualCountRelease", "ContinualCountOptions"]


def _infinite_counter_cost(core: SegmentedRelease, c: tuple):
    if c[0] not in ("ins", "del") or c[1] not in {q.name for q in core.config.queries}:
        raise ValueError(f"no planned release at {c}")
    share = core._tree_budget_planned().scale(1 / len(core.config.queries))
    return COUNTERS["infinite"].planned_cost(share, c)


@state_class("mechanism.insertion_only")
class InsertionOnlyRelease(SegmentedRelease):
    """Thm 8: partitioning feeding the Chan-Shi-Song infinite counter (one per
    query set) with the segments as timestamps. Deletes and upserts are
    rejected (``deletion_not_allowed``).

    Neighbours: one more insertion (update level) or one entry's insertion
    (entry level). Budget: ``partition_fraction`` to the partitioning, the
    rest split evenly over the query sets (sequential composition)."""

    name = "insertion_only"
    deletions_allowed = False

    def _start(self) -> None:
        super()._start()
        config = self.config
        k = len(self.mechanisms)
        b = self.tree_budget.part(1.0 / k, 1.0 / k)
        self.counters = [
            InfiniteCounter(
                m,
                b,
                honaker=config.tuned_family and m.additive,
                coords=(self.stream, "ins", config.queries[k_].name),
                scope=self.ledger.root.child(f"ins{k_}"),
            )
            for k_, m in enumerate(self.mechanisms)
        ]
        self.pending = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]

    def _absorb(self, batch: TickBatch) -> None:
        for item in batch.inserts:
            for k, v in enumerate(item):
                self.pending[k][v] += 1

    def _planned_cost(self, c, nodes):
        """Each query set's Chan-Shi-Song counter has the tree's budget / k."""
        return _infinite_counter_cost(self, c)

    def _bound(self, k: int, beta: float) -> float:
        return self.counters[k].error_bound(beta)

    def _close(self, tick, noise, res):
        self.closed += 1
        for k, c in enumerate(self.counters):
            est = c.step(self.pending[k], noise)
            res.answers.append(self._answer(tick, k, est, c.error_bound(self.config.beta)))  # 0 if noiseless
        self.pending = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        res.closes.append(tick)


@state_class("mechanism.two_stream_baseline")
class TwoStreamBaseline(SegmentedRelease):
    """000 §1.3: one insertion-only counter over the insertions, one over the
    deletions (as insertions), subtracted. Both see the segments of one shared
    partitioning.

    Neighbours: update level (or the configured entry unit). One update is in
    exactly one of the two streams, so each counter gets the whole
    non-partitioning budget (parallel composition), split evenly over the
    query sets; the error grows with N_t, not n_t."""

    name = "two_stream_baseline"

    def _start(self) -> None:
        super()._start()
        config = self.config
        k = len(self.mechanisms)
        b = self.tree_budget.part(1.0 / k, 1.0 / k)
        par = self.ledger.root.child("two_streams", Scope.PARALLEL)

        def counters(side: str) -> list[InfiniteCounter]:
            return [
                InfiniteCounter(
                    m,
                    b,
                    honaker=config.tuned_family and m.additive,
                    coords=(self.stream, side, config.queries[i].name),
                    scope=par.child(f"{side}{i}"),
                )
                for i, m in enumerate(self.mechanisms)
            ]

        self.ins = counters("ins")
        self.dels = counters("del")
        self._reset()

    def _planned_cost(self, c, nodes):
        """Each query set's two counters have the tree's budget / k (parallel:
        one update is in exactly one of them)."""
        return _infinite_counter_cost(self, c)

    def _reset(self):
        self.p_ins = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        self.p_del = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]

    def _absorb(self, batch: TickBatch) -> None:
        for item, _ in batch.deletes:
            for k, v in enumerate(item):
                self.p_del[k][v] += 1
        for item in batch.inserts:
            for k, v in enumerate(item):
                self.p_ins[k][v] += 1

    def _bound(self, k: int, beta: float) -> float:
        return self.ins[k].error_bound(beta / 2) + self.dels[k].error_bound(beta / 2)

    def _close(self, tick, noise, res):
        self.closed += 1
        beta = self.config.beta
        for k in range(len(self.mechanisms)):
            a = self.ins[k].step(self.p_ins[k], noise)
            d = self.dels[k].step(self.p_del[k], noise)
            bound = self.ins[k].error_bound(beta / 2) + self.dels[k].error_bound(beta / 2)
            res.answers.append(self._answer(tick, k, a - d, bound))
        self._reset()
        res.closes.append(tick)


@state_class("options.continual_count")
@dataclass(frozen=True)
class ContinualCountOptions:
    """Options of the plain continual counter.

    Attributes:
      counter: one of ``transforms.core.COUNTER_NAMES``.
      horizon: the number of ticks a finite counter (naive_prefix,
        binary_tree, honaker) will run; required for them. The counter stops
        releasing after it (``horizon_reached``).
    """

    counter: str = "infinite_honaker"
    horizon: int | None = None

    def __post_init__(self):
        if self.counter not in COUNTER_NAMES:
            raise ValueError(f"unknown counter {self.counter!r}; choose one of {', '.join(COUNTER_NAMES)}")
        if self.horizon is not None and (isinstance(self.horizon, bool) or int(self.horizon) < 1):
            raise ValueError(f"horizon must be an integer >= 1 (ticks) or None, got {self.horizon!r}")
        if self.counter in FINITE_COUNTERS and not self.horizon:
            raise ValueError(f"counter {self.counter!r} needs horizon= (the number of ticks it will run)")


@state_class("mechanism.continual_count")
class ContinualCountRelease(ContinualRelease):
    """A continual counter (``options.counter`` by name) over ticks: every tick
    (or, with ``every_ticks``, every period) is one timestamp; the batch of a
    timestamp is its inserted items (deletes and upserts are rejected,
    ``deletion_not_allowed``). Releases at every timestamp, empty or not, so
    its work is O(ticks) and its schedule is public.

    Neighbours: one more insertion (update level) or one entry's insertion.
    Budget: ``config.budget`` split evenly over the query sets (sequential
    composition); each counter's own allocation is in ``docs/counters.md``."""

    name = "continual_count"
    deletions_allowed = False
    options_cls = ContinualCountOptions
    horizon_unit = "ticks"
    signed = False  # the batches are insertions only (NetChangeRelease: signed changes)
    #: the ticks whose answers carry their error bound; None (always, in every release): every tick. Only the
    #: plan's forecast (:func:`transforms.core.forecast.forecast`, noise discarded) sets it, to the ticks it
    #: reads, so that forecasting 10,000 periods does not minimise 10,000 bounds it throws away; the other
    #: answers then carry NaN. Which noise is drawn, and when, does not depend on it.
    bound_ticks: frozenset | None = None

    def __init__(self, config: DynamicConfig, *, options=None, counter: str | None = None, horizon=None, **kw):
        if counter is not None or horizon is not None:  # the earlier keyword form
            if options is not None:
                raise TypeError("give options= or counter=/horizon=, not both")
            options = ContinualCountOptions(counter or "infinite_honaker", horizon)
        super().__init__(config, options=options, **kw)

    def _start(self) -> None:
        config = self.config
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        counter_name, horizon = self._counter_choice()
        self.counters = [
            make_counter(
                counter_name,
                m,
                budget,
                horizon=horizon,
                coords=(self.stream, self._coord, config.queries[i].name),
                scope=self.ledger.root.child(f"q{i}", sensitivity=ratio),
            )
            for i, (m, (budget, ratio)) in enumerate(zip(self.mechanisms, self.counter_budgets()))
        ]
        self.tick = 0
        self.closed = 0
        self.acc = None  # the open period's batch (histograms), with every_ticks

    _coord = "count"

    def _counter_choice(self) -> tuple[str, int | None]:
        return self.options.counter, self.options.horizon

    def counter_budgets(self) -> list[tuple]:
        """Per query set: ``(budget, sensitivity ratio)`` of its counter: the budget its noise is
        calibrated to (at one update) and the ratio its ledger scope scales the charges by (1: the
        ledger's budget split evenly, update level; ``net_change`` calibrates for the unit)."""
        k = len(self.config.queries)
        return [(self.config.ledger_budget.part(1.0 / k, 1.0 / k), 1.0)] * k

    def planned_cost(self, coordinates: tuple, nodes=()):
        """Each query set's counter has its :meth:`counter_budgets` budget (the
        ledger's budget / k), charged at its sensitivity ratio; its own
        allocation is its class's (``docs/counters.md``)."""
        c = tuple(coordinates[1:])
        if c[0] != self._coord or c[1] not in {q.name for q in self.config.queries}:
            raise ValueError(f"no planned release at {c}")
        counter, horizon = self._counter_choice()
        budget, ratio = self.counter_budgets()[[q.name for q in self.config.queries].index(c[1])]
        cost = COUNTERS[counter].planned_cost(budget, c, horizon=horizon, noise_kind=self.config.noise_kind)
        return cost if ratio == 1.0 else self.ledger.budget.express(cost).at_sensitivity(ratio)

    @property
    def last_tick(self) -> int:
        return self.tick

    @property
    def _next_wake(self) -> int | None:
        if self.every_ticks is None:
            return self.tick + 1
        return self.next_period_end(self.period_tick)

    @property
    def next_close(self) -> int:
        return self.tick + 1

    def _batch_hists(self, batch: TickBatch) -> list[np.ndarray]:
        return batch.histograms([m.domain_size for m in self.mechanisms], signed=self.signed)

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        self._advance(batch.tick - 1, noise, res)
        if self.finished:
            return
        hists = self._batch_hists(batch)
        self.num_updates += batch.n_updates
        if self.every_ticks is None:
            self._step(batch.tick, hists, noise, res)
            return
        self.acc = hists if self.acc is None else [a + h for a, h in zip(self.acc, hists)]
        self.tick = batch.tick
        if self.next_period_end(self.period_tick) == batch.tick:
            self._step(batch.tick, self.acc, noise, res)

    def apply_block(self, aggregates: list, noise: NoiseSource) -> list[TickResult] | None:
        """``[apply(TickBatch.from_counts(*a), noise) for a in aggregates[:m]]`` (``(tick, inserts, deletes,
        n_updates)`` multisets, the form the Beam steps merge) for the first ``m >= 1`` aggregates, those within
        :meth:`block_room`, computed a block at a time: every period from the last one to the last aggregate's,
        each counter's steps at once (``KaryTreeCounter.step_block``: the same estimates, error bounds and state,
        the ledger charged in the same order). None, with nothing changed, where the block does not take the case
        (:meth:`block_plans`; the caller applies the next one alone). When the releases happen is as before:
        every period, a public schedule."""
        room = self.block_room(noise)
        m = sum(1 for a in aggregates if a[0] <= self.tick + room)  # the aggregates within the room (a prefix)
        plans = self.block_plans([a[0] for a in aggregates[:m]], noise) if m else None
        return None if plans is None else self.apply_planned(aggregates[:m], noise, plans)

    def block_room(self, noise: NoiseSource) -> int:
        """The most periods a block can take from here (its counters' ``block_room``, short of the end and the
        horizon); 0 where none. :meth:`apply_block` takes the aggregates within it and leaves the rest."""
        if not all(hasattr(c, "block_room") for c in self.counters):
            return 0
        room = min(c.block_room(noise) for c in self.counters)
        if self.end_tick is not None:
            room = min(room, self.end_tick - 1 - self.tick)
        horizon = self._counter_choice()[1]
        if self.counters[0].needs_horizon and horizon is not None:
            room = min(room, horizon - 1 - self.closed)
        return max(room, 0)

    def block_plans(self, ticks: list, noise: NoiseSource) -> list | None:
        """Each counter's ``block_plan`` for the periods up to the last of ``ticks`` (the ticks with data), or
        None where the block does not take the case: periods longer than a tick, a period open, bounds on some
        ticks only, the end or the horizon within the block, ticks not increasing, a subclass that steps its own
        way, or a counter that cannot step the block. Draws the block's node noise; changes nothing."""
        cls = type(self)
        if (
            self.finished
            or self.every_ticks not in (None, 1)  # a step every tick (None) or every period of one tick
            or self.acc is not None
            or self.bound_ticks is not None
            or self.period_tick != self.tick
            or cls._step is not ContinualCountRelease._step
            or cls._apply is not ContinualCountRelease._apply
            or cls._advance is not ContinualCountRelease._advance
        ):
            return None
        t0 = self.tick
        if not ticks or ticks[0] <= t0 or any(b <= a for a, b in zip(ticks, ticks[1:])):
            return None
        last, n = ticks[-1], ticks[-1] - t0
        horizon = self._counter_choice()[1]
        if self.end_tick is not None and last >= self.end_tick:
            return None
        if self.counters[0].needs_horizon and horizon is not None and self.closed + n >= horizon:
            return None
        plans = []
        for c in self.counters:
            plan = c.block_plan(n, noise) if hasattr(c, "block_plan") else None
            if plan is None:
                return None
            plans.append(plan)
        return plans

    def apply_planned(self, aggregates: list, noise: NoiseSource, plans: list, cols=None) -> list[TickResult]:
        """:meth:`apply_block` with the plans :meth:`block_plans` gave for these aggregates; ``cols``: the item
        positions of this release's query sets in the aggregates' items (a part of ``auto``: the items as given to
        ``auto``, not projected on the part's query sets)."""
        t0, ticks = self.tick, [a[0] for a in aggregates]
        last, n = ticks[-1], ticks[-1] - t0
        self.noiseless = noise.is_disabled
        sizes = [m.domain_size for m in self.mechanisms]
        rows = None
        if type(self)._batch_hists is ContinualCountRelease._batch_hists:  # the batches' histograms, at once
            rows = TickBatch.block_histograms(aggregates, t0 + 1, n, sizes, self.signed, cols)
        if rows is None:
            rows = [np.zeros((n, d), dtype=np.int64) for d in sizes]
            for a in aggregates:
                batch = TickBatch.from_counts(*a)
                hists = self._batch_hists(batch if cols is None else _projected(batch, cols))
                for k, h in enumerate(hists):
                    rows[k][a[0] - t0 - 1] = self.mechanisms[k].validate_hist(h)
        self.num_updates += sum(a[3] for a in aggregates)
        for t in range(t0 + 1, last + 1):  # the charges, in the order the steps one by one make them
            for c in self.counters:
                c.charge_step(t)
        beta = self.config.beta
        estimates = [c.step_block(h, p) for c, h, p in zip(self.counters, rows, plans)]
        bounds = [c.block_bounds(beta, t0, n) for c in self.counters]
        names = [q.name for q in self.config.queries]
        spent = self.ledger.spent  # no charge of the block changed a total (block_plan)
        out, res, at = [], TickResult(), 0
        for i, t in enumerate(range(t0 + 1, last + 1)):
            self.closed += 1
            for k in range(len(self.counters)):
                res.answers.append(
                    Answer(self.stream, t, self.closed, names[k], estimates[k][i], bounds[k][i], beta, spent)
                )
            res.closes.append(t)
            self.period_tick = self.tick = t
            self._after_release(t, res)
            if t == ticks[at]:
                out.append(res)
                res, at = TickResult(), at + 1
        return out

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        if self.every_ticks is None:
            for t in range(self.tick + 1, tick + 1):
                if self.finished:
                    return
                self._step(t, None, noise, res)
            return
        for t in self._period_ends(tick):
            self._step(t, self.acc, noise, res)
        if not self.finished:
            self.tick = max(self.tick, tick if self.end_tick is None else min(tick, self.end_tick))

    def _step(self, tick, hists, noise, res):
        self.tick = tick
        self.closed += 1
        self.acc = None
        beta = self.config.beta
        bound = self.bound_ticks is None or tick in self.bound_ticks
        for k, c in enumerate(self.counters):
            est = c.step(None if hists is None else hists[k], noise)
            res.answers.append(
                Answer(
                    self.stream,
                    tick,
                    self.closed,
                    self.config.queries[k].name,
                    est,
                    c.error_bound(beta) if bound else float("nan"),
                    beta,
                    self.ledger.spent,
                )
            )
        res.closes.append(tick)
        self.period_tick = tick
        self._after_release(tick, res)
        horizon = self._counter_choice()[1]
        if self.counters[0].needs_horizon and horizon is not None and self.closed >= horizon:
            self._finish(tick, "horizon_reached", res)


def _projected(batch: TickBatch, cols: tuple) -> TickBatch:
    """``batch`` with each item projected on the positions ``cols`` (what ``auto`` gives a part)."""
    return TickBatch(
        batch.tick,
        [tuple(item[c] for c in cols) for item in batch.inserts],
        [(tuple(item[c] for c in cols), t) for item, t in batch.deletes],
        batch.n_updates,
    )
