"""``mechanism: auto``: per query set, the mechanism whose error is smallest.

Additive query sets (count, histogram, linear; a ``sum`` is linear) go to the
signed continual release (``net_change``): one counter per set over the
signed change of each period, whose error depends on neither the data size
nor the stream length. Query sets answered by private multiplicative weights
(``pmw``) go to Qiu-Yi's ``fully_dynamic`` mechanism, the one construction
whose error follows the data size for a non-additive black box (000 §4).
Each part is the registered mechanism itself, run on its query sets.

Budget: split explicitly between the parts in proportion to their query sets'
weights (``queries[].weight``; equal by default: their number of query sets)
(``plan``), and within the additive part between its query sets by the same
weights; both parts see every update, so their guarantees add
up (sequential composition) to the configured budget, for the configured
unit. Noise: each part draws from its own sub-key (the release's key and
the part's name), so the parts never share noise. The run summary prints the
plan: which mechanism each query set got, its share, and why.

Neighbours: those of the parts (update level, or the configured entry or
person unit): ``docs/net_change.md``, ``docs/fully_dynamic.md``. Under an
entry or a person unit the additive part calibrates each counter to its
sensitivity by contribution (its ledger holds the unit's guarantee), the
``fully_dynamic`` part keeps group privacy (its ledger holds the update
level); :attr:`AutoRelease.spent` states each part's spend for the unit (the
latter through group privacy) and adds them up.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass

from transforms.core.config import DynamicConfig
from transforms.core.continual.fully_dynamic import FullyDynamicOptions, FullyDynamicRelease
from transforms.core.continual.net_change import AUTO, NetChangeOptions, NetChangeRelease, choose_counter
from transforms.core.foundation.accounting import Budget, PrivacyUnit, compose_sequential
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity
from transforms.core.foundation.outputs import NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease, PlanEntry

_LOG = logging.getLogger(__name__)

__all__ = ["AutoRelease", "AutoOptions", "plan", "auto_counter"]

ADDITIVE = ("count", "histogram", "linear")


@state_class("options.auto")
@dataclass(frozen=True)
class AutoOptions:
    """Options of ``auto``.

    Attributes:
      counter: the additive part's counter (``auto`` or a counter name).
      horizon: the additive part's horizon in periods (default: from the end).
    """

    counter: str = AUTO
    horizon: int | None = None

    def __post_init__(self):
        NetChangeOptions(self.counter, self.horizon)  # the same checks


def auto_counter(noise_kind: str, horizon: int | None, unit_kind: str = "update") -> str:
    """The additive part's counter under ``counter: auto``.

    ``net_change``'s :func:`choose_counter`, except under Gaussian noise:

    * a bounded run at update level: ``scaled_sqrt`` (6-16% lower max variance than ``sqrt_factorization`` at
      every horizon from 2^4 to 2^20, the same work per step);
    * a run with no end, for every unit: ``anytime_sqrt`` instead of ``blt``. Its variance at every t from 2^10 to
      2^24 stays within 1.25x of the square root designed for t (profile 4, the merged start: 4.6x
      to 15x before step 896; ``docs/counters.md``),
      where ``blt``'s grows linearly past its design horizon 2^12 (2.4x the square root at 2^16,
      6.8x at 2^18); ``blt`` is better only for runs shorter than about 2^14 periods (the two are
      even there), which a run without an end cannot promise. It has no step limit (exact wide int64 limbs once its
      coefficients sum past 2^31) but keeps O(t) state per stream (``blt``: O(2^13)): about 17 MB
      per cell after a year of one-minute periods (``docs/counters.md``, "Anytime square root"); the
      streaming step writes it in chunks, a firing the ones that changed (``foundation/state_chunks.py``).

    The entry and person units' sensitivity by contribution (``transforms/core/contribution/``)
    covers ``sqrt_factorization``, ``blt`` and ``anytime_sqrt``: a bounded run under those units keeps
    ``sqrt_factorization`` (no bound by contribution through ``scaled_sqrt``'s scaled rows yet); a run
    with no end gets ``anytime_sqrt``, at the BLT's multiplier (``sqrt`` of the changes, Lemma A1).
    A public function of the configuration only (noise kind, horizon, unit): it decides which
    counter's noise is drawn, never when a release happens."""
    if noise_kind == "gaussian":
        if horizon is None:
            return "anytime_sqrt"
        if horizon >= 2 and unit_kind == "update":
            return "scaled_sqrt"
    return choose_counter(noise_kind, horizon)


def _net_change_options(config: DynamicConfig, options, end_tick: int | None, every_ticks: int | None):
    """The additive part's options: ``counter: auto`` resolved by :func:`auto_counter` where it
    differs from ``net_change``'s own choice (elsewhere ``auto`` is passed on, so that the
    options, and the noise keyed by them, stay those of before)."""
    counter = options.counter
    if counter == AUTO:
        horizon = options.horizon
        if horizon is None and end_tick is not None:
            horizon = math.ceil(end_tick / (every_ticks or 1))
        pick = auto_counter(config.noise_kind, horizon, config.unit.kind)
        if pick != choose_counter(config.noise_kind, horizon):
            counter = pick
    return NetChangeOptions(counter, options.horizon, calibration=_calibration(config))


def _restored_options(core, opts):
    """The options of a part restored from state. ``auto`` picked other counters for some configurations in
    earlier versions (``blt`` for a Gaussian run without an end: at update level before issue 31's round 7,
    under an entry or person unit before stop 49); such a state keeps its counters, their noise and their
    spend, and continues exactly as it would have. Its options then name the counter it holds, so that
    what the part computes from them (its calibrations, planned costs) describes what runs."""
    names = {c.name for c in getattr(core, "counters", ())}
    if len(names) != 1 or not isinstance(opts, NetChangeOptions):
        return opts
    (held,) = names
    chosen, _ = core.counter_choice(core.config, opts, core.end_tick, core.every_ticks)
    if held == chosen:
        return opts
    # the job's plan and manifest are computed from the configuration before any state is read, so they
    # name today's choice: say what runs (counter names only, no payload)
    _LOG.warning(
        "a restored auto part holds %s counters (written by an earlier version), not the %s this version "
        "picks: they continue with their noise and spend; this job's plan and manifest name %s",
        held,
        chosen,
        chosen,
    )
    return dataclasses.replace(opts, counter=held)


def _calibration(config: DynamicConfig) -> str:
    """The additive part's calibration: the tight Gaussian account when it is the only part (its
    rho covers the whole release); beside a ``fully_dynamic`` part (not a lattice mechanism) the
    zCDP route, as before: the two parts then compose as (w eps, w delta) + ((1 - w) eps, (1 - w) delta)."""
    return "tight" if all(q.kind in ADDITIVE for q in config.queries) else "zcdp"


@dataclass(frozen=True)
class Part:
    """One part of the plan: a mechanism, its query sets and its budget share."""

    mechanism: str
    queries: tuple[str, ...]
    share: float
    reason: str


def plan(config: DynamicConfig) -> tuple[Part, ...]:
    """Which mechanism answers which query sets, with what share of the budget."""
    additive = tuple(q.name for q in config.queries if q.kind in ADDITIVE)
    other = tuple(q.name for q in config.queries if q.kind not in ADDITIVE)
    # each part's share: its query sets' weights over all (their number over k without weights, as before)
    k = math.fsum(q.weight for q in config.queries)
    weight = {q.name: q.weight for q in config.queries}
    parts = []
    if additive:
        parts.append(
            Part(
                "net_change",
                additive,
                math.fsum(weight[n] for n in additive) / k,
                "additive queries: one counter over the signed change per period; error independent of the data "
                "size and the stream length",
            )
        )
    if other:
        parts.append(
            Part(
                "fully_dynamic",
                other,
                math.fsum(weight[n] for n in other) / k,
                "private multiplicative weights: Qiu-Yi's tree, error in the data size n_t, not the stream length",
            )
        )
    return tuple(parts)


def _share(b: Budget, w: float) -> Budget:
    return b.scale(w)


@state_class("mechanism.auto")
class AutoRelease(ContinualRelease):
    """Per query set, the mechanism with the smallest error (module docstring);
    the parts run side by side on every update and their releases are merged.

    Neighbours and cost: the configured budget for the configured unit, split
    between the parts by :func:`plan` (sequential composition)."""

    name = "auto"
    _STATE_EXCLUDE = ("_spent_memo", "_noise_memo")  # memos of :attr:`spent` and :meth:`_noise` (remade on use)
    deletions_allowed = True
    options_cls = AutoOptions
    horizon_unit = "periods"
    ledger_unit = "configured"  # spent: each part's spend stated for the unit, added up

    @classmethod
    def ledger_cap(cls, config: DynamicConfig) -> Budget:
        """The configured guarantee in the ledger's currency (at update level: the update-level
        budget, as before); :attr:`spent` states each part's spend for the unit. With additive query
        sets only, the additive part's own (the tight Gaussian account under (eps, delta > 0) with
        Gaussian noise: ``NetChangeRelease.ledger_cap``)."""
        if _calibration(config) == "tight":
            return NetChangeRelease.ledger_cap(config)
        return dataclasses.replace(config, unit=PrivacyUnit.update()).ledger_budget

    @classmethod
    def parts_of(cls, config: DynamicConfig, options, end_tick: int | None = None, every_ticks: int | None = 1) -> list:
        """``(Part, class, configuration, options)`` of each part of :func:`plan` (the end and
        period decide the additive part's counter under ``counter: auto``)."""
        out = []
        for p in plan(config):
            sub = dataclasses.replace(
                config,
                queries=tuple(q for q in config.queries if q.name in p.queries),
                budget=_share(config.budget, p.share),
            )
            if p.mechanism == "net_change":
                out.append((p, NetChangeRelease, sub, _net_change_options(config, options, end_tick, every_ticks)))
            else:
                out.append((p, FullyDynamicRelease, sub, FullyDynamicOptions()))
        return out

    @classmethod
    def plan(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Per part of :func:`plan`: its mechanism, query sets, share and reason
        (and the additive part's counter; each query set's calibration for an entry or a
        person unit)."""
        out = []
        at = dict(end_tick=end_tick, every_ticks=every_ticks)
        for p, part_cls, sub, opts in cls.parts_of(config, options, end_tick, every_ticks):
            counter = horizon = None
            if part_cls is NetChangeRelease:
                counter, horizon = NetChangeRelease.counter_choice(config, opts, end_tick, every_ticks)
            cal = part_cls.calibrations(sub, opts, **at)
            weights = tuple(q.weight for q in sub.queries) if part_cls is NetChangeRelease else ()
            out.append(PlanEntry(p.mechanism, p.queries, p.share, p.reason, counter, horizon, cal, weights))
        return tuple(out)

    @classmethod
    def check_settings(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """As every mechanism's, and each part's own checks on its query sets."""
        super().check_settings(config, options, end_tick=end_tick, every_ticks=every_ticks)
        for p, part_cls, sub, opts in cls.parts_of(config, options, end_tick, every_ticks):
            if part_cls is not NetChangeRelease and len({q.weight for q in sub.queries}) > 1:
                raise ValueError(
                    f"queries: weight: {p.mechanism} splits its share over its query sets ({', '.join(p.queries)}) "
                    "its own way; give them equal weights"
                )
            part_cls.check_settings(sub, opts, end_tick=end_tick, every_ticks=every_ticks)

    def _start(self) -> None:
        config = self.config
        names = [q.name for q in config.queries]
        self.parts = []
        self.columns = []  # per part: the item positions of its query sets
        at = dict(stream=self.stream, emit_nodes=self.emit_nodes, end_tick=self.end_tick, every_ticks=self.every_ticks)
        for p, (cls, sub, opts) in zip(plan(config), self._sub_configs()):
            self.parts.append(cls(sub, options=opts, **at))
            self.columns.append(tuple(names.index(n) for n in p.queries))
        self.part_names = tuple(p.mechanism for p in plan(config))

    def _sub_configs(self):
        """(class, configuration, options) of each part of the plan."""
        parts = self.parts_of(self.config, self.options, self.end_tick, self.every_ticks)
        return [(part_cls, sub, opts) for _, part_cls, sub, opts in parts]

    def ledger_parts(self) -> list:
        """Every part keeps its own ledger (its share of the configured budget)."""
        return list(self.parts)

    def _restore_config(self) -> None:
        for core, (cls, sub, opts) in zip(self.parts, self._sub_configs()):
            core.config = cls._configure(sub, opts)
            core.options = _restored_options(core, opts)

    # -- the contract --------------------------------------------------------------
    @property
    def last_tick(self) -> int:
        return max(p.last_tick for p in self.parts)

    @property
    def _next_wake(self) -> int | None:
        wakes = [p.next_wake for p in self.parts if p.next_wake is not None]
        return min(wakes) if wakes else None

    @property
    def spent(self) -> Budget:
        """The parts' spends, each stated for the configured unit (a part whose ledger charges the
        update level: group privacy; ``net_change``'s: its own), composed (sequential). Composed again
        only when a part's spend changed (every answer of every period carries it; a counter spends
        at its nodes' releases, the same total for most periods): the value of the same spends."""
        spends = [p.spent for p in self.parts]
        key = tuple(map(repr, spends))  # the exact values and their types (1 == 1.0, but not as a record's field)
        memo = getattr(self, "_spent_memo", None)
        if memo is not None and memo[0] == key:
            return memo[1]
        value = compose_sequential(type(p).group_unit(p.config).guarantee(s) for p, s in zip(self.parts, spends))
        self._spent_memo = (key, value)
        return value

    def _noise(self, noise: NoiseSource, i: int) -> NoiseSource:
        """Part ``i``'s own sub-key: the parts never share noise."""
        # the parts' sources of the last source given (a period's apply and advance, every period, get the
        # same one): a source is its key and release (it draws by coordinates, keeps no other state)
        memo = getattr(self, "_noise_memo", None)
        if memo is None or memo[0] is not noise or memo[1] != (noise.release, noise.is_disabled):
            base = noise.release.release_id if noise.release is not None else ""
            subs = [noise.for_release(ReleaseIdentity(f"{base}/auto/{name}")) for name in self.part_names]
            memo = self._noise_memo = (noise, (noise.release, noise.is_disabled), subs)
        return memo[2][i]

    def _merge(self, results: list[TickResult], res: TickResult, spent=None, order=None) -> None:
        """The parts' results of one call merged into ``res``; ``spent`` and ``order`` (:attr:`spent` and the
        query sets' order) given by a block, whose calls all merge under the same spend (``apply_block``)."""
        spent = self.spent if spent is None else spent
        order = {q.name: i for i, q in enumerate(self.config.queries)} if order is None else order
        answers = [a for r in results for a in r.answers]
        for a in answers:
            a.spent = spent
        answers.sort(key=lambda a: (a.tick, order[a.query]))
        res.answers.extend(answers)
        res.closes.extend(sorted({t for r in results for t in r.closes}))
        for r in results:
            for ev in r.events:
                if ev not in res.events:
                    res.events.append(ev)
        if all(p.finished for p in self.parts):
            self.finished_reason = self.parts[0].finished_reason

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        results = [
            core.apply(self._part_batch(batch, cols), self._noise(noise, i))
            for i, (core, cols) in enumerate(zip(self.parts, self.columns))
        ]
        self.num_updates += batch.n_updates
        self._merge(results, res)

    def _part_batch(self, batch: TickBatch, cols: tuple) -> TickBatch:
        """The batch a part with the query sets at item positions ``cols`` sees."""
        if cols == tuple(range(len(self.config.queries))):  # the projection would copy each item as it is
            return TickBatch(batch.tick, list(batch.inserts), list(batch.deletes), batch.n_updates)
        return TickBatch(
            batch.tick,
            [tuple(item[c] for c in cols) for item in batch.inserts],
            [(tuple(item[c] for c in cols), t) for item, t in batch.deletes],
            batch.n_updates,
        )

    def apply_block(self, aggregates: list, noise: NoiseSource) -> list[TickResult] | None:
        """``[apply(TickBatch.from_counts(*a), noise) for a in aggregates[:m]]`` for the first ``m >= 1``
        aggregates within every part's ``block_room``, each part's periods a block at a time
        (``ContinualCountRelease.apply_block``: the same results), merged aggregate by aggregate as :meth:`_apply`
        merges them; None, with nothing changed, unless every part takes the block (its ``block_plans``)."""
        if (
            self.finished
            or not aggregates
            or aggregates[0][0] <= self.last_tick
            or type(self)._apply is not AutoRelease._apply
        ):
            return None
        rooms = [
            core.last_tick + core.block_room(self._noise(noise, i)) if hasattr(core, "block_room") else -1
            for i, core in enumerate(self.parts)
        ]
        last = min(rooms)  # the last tick every part's block can reach
        aggregates = [a for a in aggregates if a[0] <= last]  # a prefix: the ticks increase
        if not aggregates:
            return None
        ticks = [a[0] for a in aggregates]
        plans = []
        for i, core in enumerate(self.parts):
            plan = core.block_plans(ticks, self._noise(noise, i)) if hasattr(core, "block_plans") else None
            if plan is None:
                return None
            plans.append(plan)
        self.noiseless = noise.is_disabled
        # each part reads its query sets' item positions of the items as they are (no projected copies)
        done = [
            core.apply_planned(aggregates, self._noise(noise, i), plan, cols)
            for i, (core, plan, cols) in enumerate(zip(self.parts, plans, self.columns))
        ]
        # no charge of a block changes a total (KaryTreeCounter.block_plan): every merge's spend is the block's
        spent, order = self.spent, {q.name: i for i, q in enumerate(self.config.queries)}
        out = []
        for b, agg in enumerate(aggregates):
            res = TickResult()
            self.num_updates += agg[3]
            self._merge([part[b] for part in done], res, spent, order)
            out.append(res)
        return out

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        self._merge([core.advance(tick, self._noise(noise, i)) for i, core in enumerate(self.parts)], res)

    def drain_node_outputs(self) -> list[NodeOutput]:
        out = super().drain_node_outputs()
        for p in self.parts:
            out += p.drain_node_outputs()
        return out
