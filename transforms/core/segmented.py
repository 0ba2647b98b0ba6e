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
"""

from __future__ import annotations

import numpy as np

from .config import DynamicConfig
from .noise import NoiseSource
from .outputs import Answer, NodeOutput, TickResult
from .partition import InfinitePartitioner, PartitionParams
from .protocol import ContinualRelease
from .registry import TickBatch

__all__ = ["SegmentedRelease"]


class SegmentedRelease(ContinualRelease):
    """Ticks -> partitioning -> per-segment work. Subclasses do the releasing
    (``_absorb`` a tick's batch, ``_close`` a segment)."""

    def __init__(
        self,
        config: DynamicConfig,
        *,
        stream: str = "default",
        emit_nodes: bool = False,
        end_tick: int | None = None,
        options=None,
    ):
        super().__init__(config, stream=stream, emit_nodes=emit_nodes, end_tick=end_tick, options=options)
        eps_p, self.tree_budget = config.split()
        self.partitioner = InfinitePartitioner(
            PartitionParams(eps_p, config.beta), coords=(self.stream,), scope=self.ledger.root
        )
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        self.closed = 0  # number of closed segments J

    # -- the contract --------------------------------------------------------------
    @property
    def last_tick(self) -> int:
        return self.partitioner.last_tick

    @property
    def _next_wake(self) -> int | None:
        return max(self.partitioner.next_close, 1)  # 0 before the first segment starts

    @property
    def next_close(self) -> int:
        """Tick at which the open segment closes if no update arrives."""
        return self.partitioner.next_close

    @property
    def last_close_tick(self) -> int:
        """The tick of the latest segment close (0 before the first)."""
        return self.partitioner.prev_close if self.closed else 0

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        self._closes(self.partitioner.advance(batch.tick - 1, noise), noise, res)
        if self.finished:
            return
        self._absorb(batch)
        self.num_updates += batch.n_updates
        self._closes(self.partitioner.observe(batch.tick, batch.n_updates, noise), noise, res)

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        self._closes(self.partitioner.advance(tick, noise), noise, res)

    def _closes(self, ticks: list[int], noise: NoiseSource, res: TickResult) -> None:
        for t in ticks:
            if self.finished:  # the partitioner may have scheduled closes past the end
                return
            self._close(t, noise, res)
            self._after_release(t, res)

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
