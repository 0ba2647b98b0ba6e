"""The continual counter's contract: one batch in per step, a prefix estimate and a valid error bound out
(the counters and their privacy: ``transforms/core/counters/__init__.py``)."""

from __future__ import annotations

import math

import numpy as np

from transforms.core.foundation.accounting import Budget, Ledger, Scope
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import NoiseSource
from transforms.core.static.linear import StaticMechanism

__all__ = ["ContinualCounter", "AHEAD_MAX", "AHEAD_VALUES", "forget_noise_ahead"]

#: The most releases of one head whose noise is drawn at once (:meth:`ContinualCounter._noise_ahead`), and the
#: most noise values in one block (a block of a 16-cell histogram's nodes holds 256 of them): a block is at most
#: 32 KB of values.
AHEAD_MAX = 1024
AHEAD_VALUES = 4096
#: Blocks drawn ahead, by (source object, head): process-wide and bounded (cleared past ``_AHEAD_HEADS`` heads,
#: at most 8 MB), whatever the number of counters in memory. A block is a function of the source's key, the head,
#: the indices and the mechanism's calibration only; it is used only by the source, budget and mechanism objects
#: it was drawn for (checked on use). Emptied at the end of a bounded run (:func:`forget_noise_ahead`).
_AHEAD: dict = {}
_AHEAD_HEADS = 256


def ctz(t: int) -> int:
    """The number of trailing zero bits of ``t`` (t >= 1): the level of dyadic node ``t``, minus one."""
    return (t & -t).bit_length() - 1


class ContinualCounter:
    """Base class: state, accounting and error bounds shared by all counters.

    Args:
      mechanism: the static black box.
      budget: total budget of the counter (update-level).
      coords: release-coordinate prefix (stream, mechanism, node, ...).
      scope: ledger scope to charge; a private ledger with ``budget`` if None.
    """

    name = "counter"
    needs_horizon = False

    def __init__(
        self,
        mechanism: StaticMechanism,
        budget: Budget,
        *,
        coords: tuple = (),
        scope: Scope | None = None,
    ):
        mechanism.check_budget(budget)
        self.mechanism = mechanism
        self.budget = budget
        self.coords = tuple(coords)
        self.scope = scope if scope is not None else Ledger(budget, keep_records=False).root
        self.t = 0
        self.estimate = np.zeros(mechanism.num_queries)
        # optional list collecting (coords, cost, values) of every raw release
        self.release_log: list | None = None
        self.noiseless = False  # stepped with noise switched off: error bounds are 0
        # (budget, count, weight) of releases summed into the latest estimate
        self._terms: list[tuple[Budget, int, float]] = []

    @classmethod
    def planned_cost(cls, budget: Budget, coords: tuple, *, horizon: int | None, noise_kind: str) -> Budget:
        """The charge of the raw release at ``coords`` of a counter with total
        ``budget`` (``docs/counters.md``, written from its formulas, not from
        the code that charges): the contract tests hold the ledger to it."""
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------
    def _batch(self, batch) -> np.ndarray:
        if batch is None:
            return np.zeros(self.mechanism.domain_size, dtype=np.int64)
        return self.mechanism.validate_hist(batch).astype(np.int64)

    def _release(self, hist, budget: Budget, scope: Scope, noise: NoiseSource, *coord, ahead: int = 0) -> np.ndarray:
        """The release of ``hist`` at ``self.coords + coord`` under ``budget``, charged to ``scope``. ``ahead``
        (a counter whose releases under one head come one index after another, the k-ary tree's nodes of a
        level): how many of this head's releases, from this one on, are still to come; their noise may then be
        drawn ahead, in blocks (:meth:`_noise_ahead`), when the source is marked for it (a bounded run's:
        ``NoiseSource.drawing_ahead``). The same values either way: the noise is that of each release's own
        stream."""
        coords = self.coords + coord
        self.noiseless = noise.is_disabled
        scope.charge(self.mechanism.cost(budget), coords)
        if ahead and self.release_log is None and getattr(noise, "draws_ahead", False):
            row = self._noise_ahead(budget, noise, coords, ahead)
            if row is not None:
                return self.mechanism.answer_with_noise(hist, budget, row)
        # noise.stream(*coords), with the hash state of every coordinate but the last (the node's index) kept
        stream = noise.stream_at(coords[:-1], coords[-1]) if coords else noise.stream()
        rel = self.mechanism.release(hist, budget, stream)
        values = self.mechanism.answer(rel)
        if self.release_log is not None:
            self.release_log.append((coords, rel.cost, values))
        return values

    def _noise_ahead(self, budget: Budget, noise: NoiseSource, coords: tuple, ahead: int) -> np.ndarray | None:
        """The noise row of the release at ``coords`` from a block drawn ahead (``mechanism.noise_rows``), or
        None: draw it alone. A head's first release is drawn alone; while its releases follow one another, the
        blocks double (2, 4, ..., at most ``AHEAD_MAX`` releases and ``AHEAD_VALUES`` values, never past the
        ``ahead`` releases still to come), so a counter restored for one release draws nothing it does not use,
        and a long run draws a block per 1,024 node releases of a count. The noise of a release depends on the
        key and its coordinates only, never on the data or on when it is drawn: drawing it ahead changes no value
        (``tests/test_noise_rows.py``); the block sizes are functions of the public node indices and horizon only,
        and when a release happens is the counter's schedule, as before. Blocks are kept in memory only
        (``_AHEAD``, emptied at the end of a bounded run), never in the counter's state."""
        head, last = coords[:-1], coords[-1]
        key = (id(noise), head)
        mechanism = self.mechanism
        block = _AHEAD.get(key)
        if block is None or block[0] is not noise or block[1] is not budget or block[2] is not mechanism:
            _keep(key, (noise, budget, mechanism, last, 1, None))  # drawn alone; the next one starts a block of 2
            return None
        first, size, rows = block[3], block[4], block[5]
        if first <= last < first + size:
            return None if rows is None else rows[last - first]
        if last != first + size:  # not the next release of this head: start again
            _keep(key, (noise, budget, mechanism, last, 1, None))
            return None
        size = min(2 * size, AHEAD_MAX, max(1, AHEAD_VALUES // mechanism.num_queries), ahead)
        draw = getattr(mechanism, "noise_rows", None)  # None: a black box whose releases draw alone
        rows = draw(budget, noise, head, last, size) if size > 1 and draw is not None else None
        _keep(key, (noise, budget, mechanism, last, size, rows))
        return None if rows is None else rows[0]

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        raise NotImplementedError

    # -- error -------------------------------------------------------------------
    def noise_profile(self) -> NoiseProfile:
        """Law of the noise of each answer of the latest estimate (additive only)."""
        if not self.mechanism.additive:
            raise ValueError(f"{self.mechanism.name} is not additive: no noise profile")
        return NoiseProfile.sum(self.mechanism.noise_profile(b).scaled(w).times(c) for b, c, w in self._terms)

    def variance(self) -> float:
        """Variance of each answer of the latest estimate."""
        return self.noise_profile().variance()

    def error_bound(self, beta: float, n: float | None = None) -> float:
        """gamma(t, beta): P(max_q |estimate_q - exact_q| > gamma) <= beta.

        ``n`` bounds the size of every released batch (needed by black boxes
        whose error depends on it, such as PMW). 0 when the noise was switched
        off (no noise was added)."""
        if self.t == 0 or not self._terms or self.noiseless:
            return 0.0
        if self.mechanism.additive:
            return self.noise_profile().tail_bound(beta / self.mechanism.num_queries)
        k = sum(c for _, c, _ in self._terms)
        return math.fsum(c * abs(w) * self.mechanism.alpha(b, beta / k, n=n) for b, c, w in self._terms)


def _keep(key: tuple, block: tuple) -> None:
    """Keep ``block`` for ``key`` in ``_AHEAD`` (emptied first when it holds ``_AHEAD_HEADS`` heads: the blocks
    are drawn again on use). Each step a single dict operation: threads that share the table lose at most a
    block."""
    if key not in _AHEAD and len(_AHEAD) >= _AHEAD_HEADS:
        _AHEAD.clear()
    _AHEAD[key] = block


def forget_noise_ahead() -> None:
    """Drop every block drawn ahead (the end of a bounded run: no noise of a release that will not come stays in
    memory, nor the sources that drew it). Other runs in the process draw their next nodes alone, then again in
    blocks: the same values."""
    _AHEAD.clear()
