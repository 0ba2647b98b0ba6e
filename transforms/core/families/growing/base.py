"""What the growing-database mechanisms share: the private growth tracker
(epochs cut by the sparse vector technique, each with a noisy count), the
release loop over epochs and periods, and the checks of their options
(``docs/growing.md``)."""

from __future__ import annotations

import numpy as np

from transforms.core.continual.partition import geometric_capped
from transforms.core.foundation.accounting import Budget, Scope
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import DeletionsRefused, TickBatch
from transforms.core.foundation.noise import NoiseSource, as_ratio_up, discrete_laplace
from transforms.core.foundation.outputs import Answer, NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease

__all__ = ["GrowthTracker", "GrowingRelease", "NOT_SUPPORTED", "check_growth_options"]

NOT_SUPPORTED = DeletionsRefused("deletion_not_supported")
state_class("registry.deletions_refused")(DeletionsRefused)

# the per-tick halting draws are skipped in chunks of this many ticks: a draw says "halt
# at tick k of the chunk" or "no halt in it" (then a fresh draw for the next chunk: the
# geometric law is memoryless, so chunks change nothing in law, and the exact sampler
# never has to resolve a halting tick 10^17 ticks away to the unit)
CHUNK = 2**20


def effective_scale(scale: float) -> float:
    """The effective (rounded-up) discrete Laplace scale the sampler uses."""
    return float(as_ratio_up(scale))


def check_fraction(name, v, lo=0.0, hi=1.0):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < v < hi:
        raise ValueError(f"{name} must be a number in ({lo}, {hi}), got {v!r}")


def check_int(name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")


def check_growth_options(n0, growth_fraction) -> None:
    """The options every growing mechanism takes: the starting size and the tracker's share."""
    check_int("n0", n0)
    check_fraction("growth_fraction", growth_fraction)


# ---------------------------------------------------------------------------
# private growth
# ---------------------------------------------------------------------------


@state_class("growing.tracker")
class GrowthTracker:
    """Private growth: AboveThreshold epochs over the insertions, each closed
    epoch releasing a noisy count of its insertions.

    Epoch ``e`` (1, 2, ...) opens at the tick after epoch ``e - 1`` closed with
    an integer threshold ``theta_e`` given by the owner as a function of public
    values (the epoch index and the released total so far). With
    ``eps_s = eps / 2``: ``Z_0 ~ DLap(2 / eps_s)`` once per epoch; at every
    tick, ``Z_t ~ DLap(4 / eps_s)``, and the epoch closes at the first tick
    with ``c_t + Z_t >= theta_e + Z_0`` (``c_t``: insertions in the epoch so
    far). At the close it releases ``c + DLap(2 / eps)`` (the other half).
    One more insertion changes one epoch's counts by 1, and the epochs are
    chosen by earlier outputs: eps-DP overall (adaptive parallel composition).
    The per-tick draws are skipped exactly over ticks without insertions
    (``partition.geometric_capped``, the partitioner's skip).

    Charges ``cost`` per epoch to one parallel scope, at ``(stream, "growth",
    e)``, before any noise of the epoch is drawn.
    """

    def __init__(self, eps: float, cost: Budget, *, coords=(), scope: Scope):
        if not eps > 0:
            raise ValueError("the growth tracker needs eps > 0")
        self.eps = float(eps)
        self.cost = cost
        self.coords = tuple(coords)
        self._par = scope.child("growth", Scope.PARALLEL)
        self.e = 0  # the open epoch (0: not started)
        self.theta = 0  # its threshold
        self.theta_hat = 0  # theta - 1 + Z_0: close iff c + Z_t > theta_hat
        self.count = 0  # insertions in the open epoch
        self.draws = 0
        self.next_close = 0
        self.chunk_end = False  # next_close ends a chunk without a halt (a new draw there)
        self.prev_close = 0
        self.last_tick = 0
        self.total_hat = 0  # the sum of the released epoch counts (public)

    # scales (public)
    @property
    def threshold_scale(self) -> float:
        return 4 / self.eps

    @property
    def query_scale(self) -> float:
        return 8 / self.eps

    @property
    def count_scale(self) -> float:
        return 2 / self.eps

    def _start(self, noise: NoiseSource, owner) -> None:
        self.e += 1
        coords = self.coords + ("growth", self.e)
        self._par.charge(self.cost, coords)
        self.theta = max(int(owner._threshold(self.e, self.total_hat)), 1)
        z0 = int(discrete_laplace(noise.stream(*coords, "threshold"), self.threshold_scale, 1)[0])
        self.theta_hat = self.theta - 1 + z0
        self.count = 0
        self.draws = 0
        self._draw_from(self.prev_close + 1, noise)

    def _draw_from(self, u: int, noise: NoiseSource) -> None:
        """The count is ``self.count`` from tick ``u`` on: the halting tick in
        the chunk of ticks from ``u``, or the chunk's end without a halt."""
        if noise.is_disabled:
            k = 1 if self.count > self.theta_hat else CHUNK + 1
        else:
            stream = noise.stream(*self.coords, "growth", self.e, "ticks", self.draws)
            self.draws += 1
            k = geometric_capped(stream, self.theta_hat - self.count + 1, self.query_scale, CHUNK + 1)
        self.chunk_end = k > CHUNK
        self.next_close = u + min(k, CHUNK) - 1

    def _close(self, noise: NoiseSource, owner) -> None:
        t = self.next_close
        owner._before_close(t, noise)  # periods up to t - 1, under the closing epoch's bound
        if owner.finished:
            return
        z = int(discrete_laplace(noise.stream(*self.coords, "growth", self.e, "count"), self.count_scale, 1)[0])
        released = self.count + z
        self.total_hat += released
        self.prev_close = t
        owner._after_close(t, released, noise)
        if not owner.finished:
            self._start(noise, owner)

    def advance(self, tick: int, noise: NoiseSource, owner) -> None:
        """No insertion in ticks ``(last_tick, tick]``: each close calls
        ``owner._before_close(t, noise)`` and ``owner._after_close(t, released,
        noise)``; the next epoch's threshold is ``owner._threshold(e, total_hat)``."""
        if self.e == 0:
            self._start(noise, owner)
        while not owner.finished and self.next_close <= tick:
            if self.chunk_end:  # no halt in this chunk: draw the next one
                self._draw_from(self.next_close + 1, noise)
            else:
                self._close(noise, owner)
        self.last_tick = max(self.last_tick, tick)

    def observe(self, tick: int, n: int, noise: NoiseSource, owner) -> None:
        """``n >= 0`` insertions at ``tick`` (> every tick before)."""
        self.advance(tick - 1, noise, owner)
        if n > 0 and not owner.finished:
            self.count += n
            self._draw_from(tick, noise)
        self.advance(tick, noise, owner)

    # public bounds
    def open_bound(self, beta: float) -> float:
        """A (1-beta) bound on the insertions of the open epoch so far: it has
        not closed, so ``c_t <= theta - 1 + (Z_0 - Z_t)``."""
        z = NoiseProfile.single("laplace", effective_scale(self.threshold_scale)) + NoiseProfile.single(
            "laplace", effective_scale(self.query_scale)
        )
        return float(max(self.theta, 1) - 1) + z.tail_bound(beta)

    def closed_bound(self, beta: float) -> float:
        """A (1-beta) bound on ``|total_hat - insertions of the closed epochs|``."""
        closed = max(self.e - 1, 0)
        if closed == 0:
            return 0.0
        return NoiseProfile.single("laplace", effective_scale(self.count_scale)).times(closed).tail_bound(beta)

    def size_upper(self, beta: float) -> float:
        """A (1-beta) public upper bound on the current database size."""
        return max(self.total_hat, 0) + self.closed_bound(beta / 2) + self.open_bound(beta / 2)


# ---------------------------------------------------------------------------
# the release loop
# ---------------------------------------------------------------------------


class GrowingRelease(ContinualRelease):
    """What the three mechanisms share: the tracker, the current histograms,
    releases at epoch closes, periods (``every_ticks``) and the end."""

    deletions_allowed = NOT_SUPPORTED
    _STATE_EXCLUDE = ContinualRelease._STATE_EXCLUDE + ("_res",)
    _res = None  # the TickResult of the call in progress (never in state)

    def _start(self) -> None:
        config = self.config
        L = self.config.ledger_budget
        f = self.options.growth_fraction
        eps_g, cost_g = L.pure_step(f)
        self.tracker = GrowthTracker(eps_g, cost_g, coords=(self.stream,), scope=self.ledger.root)
        self.rest = L.part(1 - f, 1.0)  # the re-runs' (or rounds') budget
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        self.hists = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        self.closes = 0  # epochs closed

    # -- the planned allocation (docs/growing.md) ---------------------------------
    def planned_cost(self, coordinates: tuple, nodes=()) -> Budget:
        """The growth tracker gets ``growth_fraction`` of the budget as a pure
        step (each epoch's, parallel over epochs); the rest, the re-runs' (or
        rounds'), is the subclass's (:meth:`_planned_share`), split evenly over
        the query sets."""
        c = tuple(coordinates[1:])
        f = self.options.growth_fraction
        budget = self.config.ledger_budget
        if c[0] == "growth" and len(c) == 2:
            return budget.pure_step(f)[1]
        return self._planned_share(c, budget.part(1 - f, 1.0))  # each mechanism's share of the rest

    # -- the contract ------------------------------------------------------------
    @property
    def last_tick(self) -> int:
        return self.tracker.last_tick

    @property
    def _next_wake(self) -> int | None:
        wake = max(self.tracker.next_close, 1)
        if self.end_tick is not None and self.period_tick < self.end_tick:
            wake = min(wake, self.end_tick)
        period = self.next_period_end(self.period_tick)
        return wake if period is None else min(wake, period)

    def _clamp(self, tick: int) -> int:
        # nothing is decided after the configured end: the end is public configuration
        return tick if self.end_tick is None else min(tick, self.end_tick)

    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        self._res = res
        self.tracker.advance(self._clamp(batch.tick - 1), noise, self)
        self._periods(batch.tick - 1, noise, res)
        if self.finished:
            return
        for item in batch.inserts:
            for k, v in enumerate(item):
                self.hists[k][v] += 1
        self.num_updates += batch.n_updates
        if self.end_tick is not None and batch.tick > self.end_tick:
            return
        self.tracker.observe(batch.tick, len(batch.inserts), noise, self)
        self._periods(batch.tick, noise, res)
        self._end(batch.tick, noise, res)
        self._res = None

    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        self._res = res
        tick = self._clamp(tick)
        self.tracker.advance(tick, noise, self)
        self._periods(tick, noise, res)
        self._end(tick, noise, res)
        self._res = None

    # the tracker's callbacks, one close at a time
    def _before_close(self, t: int, noise) -> None:
        self._periods(t - 1, noise, self._res)

    def _after_close(self, t: int, released: int, noise) -> None:
        res = self._res
        self.closes += 1
        coords = (self.stream, "growth", self.closes)
        self._log(t, self.closes, 0, 0, "n_hat", "", [released], self.tracker.cost, coords)
        fresh = self._on_close(t, noise)
        if self.every_ticks is None or self.next_period_end(self.period_tick) == t:
            res.answers.extend(self._answers(t, fresh))
            res.closes.append(t)
            self._released(t, res)

    def _periods(self, upto: int, noise, res) -> None:
        for t in self._period_ends(upto):
            res.answers.extend(self._answers(t, self._between(t, noise)))
            self._released(t, res)

    def _end(self, tick: int, noise, res) -> None:
        """At the configured end, a last release if none happened there."""
        if self.finished or self.end_tick is None or tick < self.end_tick or self.period_tick >= self.end_tick:
            return
        res.answers.extend(self._answers(self.end_tick, self._between(self.end_tick, noise)))
        self._released(self.end_tick, res)

    def _released(self, t: int, res) -> None:
        self.period_tick = t
        self._after_release(t, res)

    def _answers(self, t: int, pairs) -> list[Answer]:
        return [
            Answer(
                self.stream,
                t,
                self.closes,
                q.name,
                np.asarray(est, dtype=float),
                bound,
                self.config.beta,
                self.ledger.spent,
            )
            for q, (est, bound) in zip(self.config.queries, pairs)
        ]

    def _exact(self, k: int) -> np.ndarray:
        return np.asarray(self.mechanisms[k].exact(self.hists[k]), dtype=float)

    def _log(self, tick, node, level, rnd, kind, query, values, cost, coords=()):
        if self.emit_nodes:
            self.node_outputs.append(
                NodeOutput(
                    self.stream, tick, self.closes, node, level, rnd, kind, query, np.asarray(values), cost, coords
                )
            )

    # -- what subclasses implement -----------------------------------------------------
    def _threshold(self, e: int, total_hat: int) -> int:
        """Epoch ``e``'s threshold from public values (the epoch index, the
        released total): this, and the tracker's noisy test, decide when a
        re-run happens, never the data itself."""
        raise NotImplementedError

    def _on_close(self, t: int, noise) -> list:
        """An epoch closed at ``t``: [(estimate, bound)] per query set."""
        raise NotImplementedError

    def _between(self, t: int, noise) -> list:
        """A period's answers between closes: [(estimate, bound)] per query set."""
        raise NotImplementedError
