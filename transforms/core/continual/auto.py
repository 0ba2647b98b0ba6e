"""``mechanism: auto``: per query set, the mechanism whose error is smallest.

Additive query sets (count, histogram, linear; a ``sum`` is linear) go to the
signed continual release (``net_change``): one counter per set over the
signed change of each period, whose error depends on neither the data size
nor the stream length. Query sets answered by private multiplicative weights
(``pmw``) go to Qiu-Yi's ``fully_dynamic`` mechanism, the one construction
whose error follows the data size for a non-additive black box (000 §4).
Each part is the registered mechanism itself, run on its query sets.

Budget: split explicitly between the parts in proportion to their number of
query sets (``plan``); both parts see every update, so their guarantees add
up (sequential composition) to the configured budget, for the configured
unit. Noise: each part draws from its own sub-key (the release's key and
the part's name), so the parts never share noise. The run summary prints the
plan: which mechanism each query set got, its share, and why.

Neighbours: those of the parts (update level, or the configured entry unit):
``docs/net_change.md``, ``docs/fully_dynamic.md``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from transforms.core.config import DynamicConfig
from transforms.core.continual.fully_dynamic import FullyDynamicOptions, FullyDynamicRelease
from transforms.core.continual.net_change import AUTO, NetChangeOptions, NetChangeRelease
from transforms.core.foundation.accounting import Budget, compose_sequential
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity
from transforms.core.foundation.outputs import NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease, PlanEntry

__all__ = ["AutoRelease", "AutoOptions", "plan"]

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
    k = len(config.queries)
    parts = []
    if additive:
        parts.append(
            Part(
                "net_change",
                additive,
                len(additive) / k,
                "additive queries: one counter over the signed change per period; error independent of the data "
                "size and the stream length",
            )
        )
    if other:
        parts.append(
            Part(
                "fully_dynamic",
                other,
                len(other) / k,
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
    deletions_allowed = True
    options_cls = AutoOptions
    horizon_unit = "periods"

    @classmethod
    def plan(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Per part of :func:`plan`: its mechanism, query sets, share and reason
        (and the additive part's counter)."""
        out = []
        for p in plan(config):
            counter = horizon = None
            if p.mechanism == NetChangeRelease.name:
                sub = NetChangeOptions(options.counter, options.horizon)
                counter, horizon = NetChangeRelease.counter_choice(config, sub, end_tick, every_ticks)
            out.append(PlanEntry(p.mechanism, p.queries, p.share, p.reason, counter, horizon))
        return tuple(out)

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
        out = []
        for p in plan(self.config):
            sub = dataclasses.replace(
                self.config,
                queries=tuple(q for q in self.config.queries if q.name in p.queries),
                budget=_share(self.config.budget, p.share),
            )
            if p.mechanism == "net_change":
                out.append((NetChangeRelease, sub, NetChangeOptions(self.options.counter, self.options.horizon)))
            else:
                out.append((FullyDynamicRelease, sub, FullyDynamicOptions()))
        return out

    def ledger_parts(self) -> list:
        """Every part keeps its own ledger (its share of the configured budget)."""
        return list(self.parts)

    def _restore_config(self) -> None:
        for core, (cls, sub, opts) in zip(self.parts, self._sub_configs()):
            core.config, core.options = cls._configure(sub, opts), opts

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
        return compose_sequential(p.spent for p in self.parts)

    def _noise(self, noise: NoiseSource, i: int) -> NoiseSource:
        """Part ``i``'s own sub-key: the parts never share noise."""
        base = noise.release.release_id if noise.release is not None else ""
        return noise.for_release(ReleaseIdentity(f"{base}/auto/{self.part_names[i]}"))

    def _merge(self, results: list[TickResult], res: TickResult) -> None:
        spent = self.spent
        order = {q.name: i for i, q in enumerate(self.config.queries)}
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
        results = []
        for i, (core, cols) in enumerate(zip(self.parts, self.columns)):
            sub = TickBatch(
                batch.tick,
                [tuple(item[c] for c in cols) for item in batch.inserts],
                [(tuple(item[c] for c in cols), t) for item, t in batch.deletes],
                batch.n_updates,
            )
            results.append(core.apply(sub, self._noise(noise, i)))
        self.num_updates += batch.n_updates
        self._merge(results, res)

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        self._merge([core.advance(tick, self._noise(noise, i)) for i, core in enumerate(self.parts)], res)

    def drain_node_outputs(self) -> list[NodeOutput]:
        out = super().drain_node_outputs()
        for p in self.parts:
            out += p.drain_node_outputs()
        return out
