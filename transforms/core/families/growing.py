"""Growing databases (Cummings, Krehbiel, Lai, Tantipongpipat 2018, seed 001):
BBScheduler and BBImprover over any static black box, and PMWG.

The paper's model: one insertion per time step, so the database size is the
(public) time. Ours: insertions arrive in ticks, any number per tick, and the
size is private. Every mechanism here therefore runs a :class:`GrowthTracker`
(private growth): the stream of insertions is cut into *epochs* by the sparse
vector technique (an epoch closes at the first tick where its insertion count,
plus noise, reaches a threshold computed from public values only), and each
closed epoch releases a noisy count of its insertions. The epochs hold
disjoint insertions, so the tracker is ``eps_g``-DP for an unbounded number of
epochs (adaptive parallel composition, as the partitioning of 000 Thm 6). The
released counts add up to the public size estimate ``N_hat``.

* :class:`BBSchedulerRelease` (``bb_scheduler``, Thm 27): re-run ``i = 0, 1,
  ...`` of every query set's static black box when the estimated size reaches
  ``s_i = ceil(n0 (1 + eta)^i)``, with ``eps_i = eps_r (q - 1) / q^(i+1)``
  (``q = 1 + eta``; ``(1 + eta)^2`` for rho under zCDP), which sums to
  ``eps_r``; answers between re-runs come from the latest one.
* :class:`BBImproverRelease` (``bb_improver``, Thm 29): a re-run at every
  growth step (``step`` insertions, estimated), re-run ``j`` with
  ``eps_r / (zeta(1 + decay) j^(1 + decay))`` (rho under zCDP).
* :class:`PMWGRelease` (``pmwg``): online private multiplicative weights with
  a uniform mix-in as the database grows, an easy/hard test (AboveThreshold
  in rounds; each doubling of the estimated size is a phase with its share of
  an infinite series, split into at most ``hard_per_phase`` rounds), and a
  Laplace answer and multiplicative-weights update on hard queries. Besides its configured query
  sets it answers linear queries one at a time (:meth:`PMWGRelease.answer_query`,
  the query stream of ``transforms/queries.py``).

Deletions are outside the paper's model: these mechanisms refuse deletes and
upserts with the reason ``deletion_not_supported``.

Proofs, parameters and the noise-scale derivation of PMWG: ``docs/growing.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from transforms.core.continual.partition import geometric_capped
from transforms.core.foundation.accounting import Budget, Scope, SeriesSplit
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import DeletionsRefused, TickBatch
from transforms.core.foundation.noise import NoiseSource, as_ratio_up, discrete_laplace
from transforms.core.foundation.outputs import Answer, NodeOutput, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.protocol import ContinualRelease
from transforms.core.static.linear import LATTICE_BITS

__all__ = [
    "GrowthTracker",
    "BBSchedulerOptions",
    "BBSchedulerRelease",
    "BBImproverOptions",
    "BBImproverRelease",
    "PMWGOptions",
    "PMWGRelease",
    "OnlinePMW",
    "QueryAnswer",
    "scheduler_eta",
    "scheduler_weight",
    "run_with_queries",
]

NOT_SUPPORTED = DeletionsRefused("deletion_not_supported")
state_class("registry.deletions_refused")(DeletionsRefused)

# the per-tick halting draws are skipped in chunks of this many ticks: a draw says "halt
# at tick k of the chunk" or "no halt in it" (then a fresh draw for the next chunk: the
# geometric law is memoryless, so chunks change nothing in law, and the exact sampler
# never has to resolve a halting tick 10^17 ticks away to the unit)
_CHUNK = 2**20


def _eff(scale: float) -> float:
    """The effective (rounded-up) discrete Laplace scale the sampler uses."""
    return float(as_ratio_up(scale))


def _check_fraction(name, v, lo=0.0, hi=1.0):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < v < hi:
        raise ValueError(f"{name} must be a number in ({lo}, {hi}), got {v!r}")


def _check_int(name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")


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
            k = 1 if self.count > self.theta_hat else _CHUNK + 1
        else:
            stream = noise.stream(*self.coords, "growth", self.e, "ticks", self.draws)
            self.draws += 1
            k = geometric_capped(stream, self.theta_hat - self.count + 1, self.query_scale, _CHUNK + 1)
        self.chunk_end = k > _CHUNK
        self.next_close = u + min(k, _CHUNK) - 1

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
        z = NoiseProfile.single("laplace", _eff(self.threshold_scale)) + NoiseProfile.single(
            "laplace", _eff(self.query_scale)
        )
        return float(max(self.theta, 1) - 1) + z.tail_bound(beta)

    def closed_bound(self, beta: float) -> float:
        """A (1-beta) bound on ``|total_hat - insertions of the closed epochs|``."""
        closed = max(self.e - 1, 0)
        if closed == 0:
            return 0.0
        return NoiseProfile.single("laplace", _eff(self.count_scale)).times(closed).tail_bound(beta)

    def size_upper(self, beta: float) -> float:
        """A (1-beta) public upper bound on the current database size."""
        return max(self.total_hat, 0) + self.closed_bound(beta / 2) + self.open_bound(beta / 2)


# ---------------------------------------------------------------------------
# the black-box schedulers
# ---------------------------------------------------------------------------


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


@dataclass(frozen=True)
class _CommonOptions:
    n0: int = 100
    growth_fraction: float = 0.1

    def __post_init__(self):
        _check_int("n0", self.n0)
        _check_fraction("growth_fraction", self.growth_fraction)


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
        _CommonOptions(self.n0, self.growth_fraction)
        if self.eta is not None:
            _check_fraction("eta", self.eta, 0.0, 10.0)


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
        _CommonOptions(self.n0, self.growth_fraction)
        if self.step is not None:
            _check_int("step", self.step)
        _check_fraction("decay", self.decay, 0.0, 10.0)


class _GrowingRelease(ContinualRelease):
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
        if self.every_ticks is None:
            return
        while not self.finished:
            t = self.next_period_end(self.period_tick)
            if t is None or t > upto:
                return
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


class _BlackBoxRelease(_GrowingRelease):
    """A re-run of every query set's static black box at each epoch close."""

    def _start(self) -> None:
        super()._start()
        self.runs = 0
        self.carried = None  # [(estimate, bound at beta / 2)] of the latest re-run

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


# ---------------------------------------------------------------------------
# PMWG
# ---------------------------------------------------------------------------

_UNIT = 2.0**-LATTICE_BITS
_DELTA = 2**LATTICE_BITS  # a row with entries in [0, 1] moves by at most this many lattice units


@state_class("growing.query_answer")
@dataclass
class QueryAnswer:
    """The answer to one streamed linear query: its id, the estimate of
    ``sum_x f(x) h_t(x)`` at its tick, a (1-beta) bound, whether it was hard,
    and the spend of the release so far (ledger currency: eps, or rho)."""

    query_id: str
    stream: str
    tick: int
    answer: float
    bound: float
    hard: bool
    epsilon_spent: float


@state_class("growing.online_pmw")
class OnlinePMW:
    """PMWG over one domain: a public histogram ``y`` (a distribution), the
    easy/hard test in rounds, multiplicative-weights updates.

    Budget: *phase* ``p = 0, 1, ...`` is the doubling level of the public size
    estimate, ``p = floor(log2(max(n_hat, n0) / n0))`` (never decreasing); it
    gets ``w(p + 1) = 1 / (zeta(1 + decay) (p + 1)^(1 + decay))`` of the
    instance's budget, split into at most ``hard_per_phase`` rounds. A round is
    one AboveThreshold instance that ends at its first hard query; its
    ``eps_r`` is half for the test and half for the hard query's answer, and is
    charged when the round opens. Once a phase's rounds are used up, queries
    get the public histogram's answer with the trivial bound (the size bound)
    until the next phase. Scales, in 2^-20 lattice units (a row moves by at
    most ``Delta = 2^20`` units when one insertion is added): threshold noise
    ``DLap(2 Delta / eps_a)``, test noise ``DLap(4 Delta / eps_a)``, ``eps_a =
    eps_r / 2``; the hard answer ``DLap(1 / eps_b)`` (integer rows) or
    ``DLap(Delta / eps_b)`` lattice units. Derivation: ``docs/growing.md``.
    """

    def __init__(
        self,
        domain_size: int,
        budget: Budget,
        *,
        decay: float,
        alpha: float,
        rate: float,
        n0: int,
        hard_per_phase: int,
        coords,
        scope,
    ):
        self.d = int(domain_size)
        self.budget = budget
        self.decay = float(decay)
        self.alpha = float(alpha)
        self.rate = float(rate)
        self.n0 = int(n0)
        self.hard_per_phase = int(hard_per_phase)
        self.coords = tuple(coords)
        self.scope = scope
        self.y = np.full(self.d, 1.0 / self.d)
        self.n_hat = 0.0  # the public size estimate the answers scale y by
        self.phase = -1  # the current phase (-1: none yet)
        self.phase_rounds = 0  # rounds opened in the current phase
        self.open = False  # a round is open (its threshold noise drawn)
        self.rho_u = 0  # the open round's threshold noise (lattice units)
        self.eps_r = 0.0
        self.queries = 0
        self.hard = 0

    def mix(self, n_new: float) -> None:
        """The size estimate grew to ``n_new``: mix in the uniform distribution
        with weight ``(n_new - n_old) / n_new`` (001 §3.1, many entries at once)."""
        n_new = max(float(n_new), 0.0)
        if self.n_hat > 0 and n_new > self.n_hat:
            lam = (n_new - self.n_hat) / n_new
            self.y = (1 - lam) * self.y + lam / self.d
        self.n_hat = n_new

    def phase_of(self, n_hat: float) -> int:
        """The doubling level of a public size estimate."""
        return int(math.floor(math.log2(max(n_hat, self.n0) / self.n0)))

    def round_weight(self, phase: int) -> float:
        """A round's share of the instance budget in ``phase``."""
        return SeriesSplit("zeta", self.decay).weight(phase + 1) / self.hard_per_phase

    def _open_round(self, noise: NoiseSource) -> bool:
        """Open a round (charging it first); False if the phase's rounds are used up."""
        p = max(self.phase, self.phase_of(self.n_hat))
        if p > self.phase:
            self.phase, self.phase_rounds = p, 0
        if self.phase_rounds >= self.hard_per_phase:
            return False
        self.phase_rounds += 1
        eps, cost = self.budget.pure_step(self.round_weight(p))
        coords = self.coords + ("phase", p, "round", self.phase_rounds)
        self.scope.charge(cost, coords)  # before the round's noise
        self.eps_r = eps
        self.rho_u = int(discrete_laplace(noise.stream(*coords, "threshold"), self.threshold_scale, 1)[0])
        self.open = True
        return True

    @property
    def threshold_scale(self) -> float:
        return 2 * _DELTA / (self.eps_r / 2)

    @property
    def test_scale(self) -> float:
        return 4 * _DELTA / (self.eps_r / 2)

    def threshold(self) -> float:
        """The test's threshold T = (2 alpha / 3) n_hat (count units, public)."""
        return 2 * self.alpha * self.n_hat / 3

    def answer(
        self, row: np.ndarray, hist: np.ndarray, beta: float, noise: NoiseSource, fallback: float
    ) -> tuple[float, float, bool]:
        """(estimate, (1-beta) bound, hard) of the linear query ``row`` on
        ``hist``; ``fallback``: a (1-beta) size bound, the bound of an answer
        given once the phase's rounds are used up."""
        noiseless = noise.is_disabled
        row_u = np.rint(np.asarray(row, dtype=float) / _UNIT).astype(np.int64)
        true_u = int(row_u @ hist)
        syn_u = int(np.rint(self.n_hat * float(row_u @ self.y)))
        if not self.open and not self._open_round(noise):  # the phase's rounds are used up
            if noiseless:  # tests: exact answers with noise off
                return true_u * _UNIT, 0.0, False
            return syn_u * _UNIT, float(fallback), False
        qidx = self.queries
        self.queries += 1
        d_u = true_u - syn_u
        t_u = 1 if noiseless else int(np.rint(self.threshold() / _UNIT))
        coords = self.coords + ("query", qidx)
        nu = int(discrete_laplace(noise.stream(*coords, "test"), self.test_scale, 1)[0])
        if abs(d_u) + nu < t_u + self.rho_u:  # easy: the public histogram's answer
            bound = 0.0
            if not noiseless:
                z = NoiseProfile.single("laplace", _eff(self.threshold_scale), _UNIT) + NoiseProfile.single(
                    "laplace", _eff(self.test_scale), _UNIT
                )
                bound = t_u * _UNIT + z.tail_bound(beta)
            return syn_u * _UNIT, bound, False
        # hard: a noisy answer, and a multiplicative-weights update; the round ends
        self.open = False
        self.hard += 1
        eps_b = self.eps_r / 2
        stream = noise.stream(*coords, "answer")
        if np.all(row_u % _DELTA == 0):  # an integer row: integer noise
            scale, unit = 1 / eps_b, 1.0
            est = true_u // _DELTA + int(discrete_laplace(stream, scale, 1)[0])
        else:
            scale, unit = _DELTA / eps_b, _UNIT
            est = (true_u + int(discrete_laplace(stream, scale, 1)[0])) * _UNIT
        bound = 0.0 if noiseless else NoiseProfile.single("laplace", _eff(scale), unit).tail_bound(beta)
        f = row_u * _UNIT
        gap = est - self.n_hat * float(f @ self.y)  # the noisy answer minus the histogram's
        if self.rate > 0:  # the paper's step: alpha / 6 in the direction of the noisy answer
            step = self.rate * float(np.sign(gap))
        else:  # MWEM's step (Hardt-Ligett-McSherry): half the normalised gap, at most 1
            step = float(np.clip(gap / (2 * max(self.n_hat, 1.0)), -1.0, 1.0))
        if step != 0:
            self.y = self.y * np.exp(step * f)
            self.y /= self.y.sum()
        return float(est), bound, True


@state_class("options.pmwg")
@dataclass(frozen=True)
class PMWGOptions:
    """Options of ``pmwg``.

    Attributes:
      alpha: the target accuracy as a fraction of the size: the test's
        threshold is (2 alpha / 3) n_hat and the learning rate alpha / 6.
      n0: the starting size (the first epoch closes when it is reached;
        queries before are answered 0 with the size bound) and the size of
        phase 0 (phase p: the estimated size in [n0 2^p, n0 2^(p+1))).
      eta: the growth factor of the epochs (the histogram mixes in the uniform
        distribution at each close); None: alpha / 4.
      decay: phase p gets 1 / (zeta(1 + decay) (p + 1)^(1 + decay)) of the
        budget of the test and the hard answers.
      hard_per_phase: the rounds (hard queries) a phase's budget is split into.
      update: the multiplicative-weights step on a hard query: ``adaptive``
        (MWEM's: half the normalised gap between the noisy answer and the
        histogram's) or ``paper`` (001: alpha / 6 towards the noisy answer).
      growth_fraction: the share of the budget of the private growth tracker.
    """

    alpha: float = 0.1
    n0: int = 100
    eta: float | None = None
    decay: float = 0.5
    hard_per_phase: int = 16
    update: str = "adaptive"
    growth_fraction: float = 0.1

    def __post_init__(self):
        _CommonOptions(self.n0, self.growth_fraction)
        _check_fraction("alpha", self.alpha)
        if self.eta is not None:
            _check_fraction("eta", self.eta, 0.0, 10.0)
        _check_fraction("decay", self.decay, 0.0, 10.0)
        _check_int("hard_per_phase", self.hard_per_phase)
        if self.update not in ("adaptive", "paper"):
            raise ValueError(f"update must be 'adaptive' or 'paper', got {self.update!r}")


def _rows(q, m) -> np.ndarray:
    """The linear queries of a configured query set, as rows over its domain."""
    d = m.domain_size
    if q.kind == "count":
        return np.ones((1, d))
    if q.kind == "histogram":
        return np.eye(d)
    if q.matrix is not None:
        return np.asarray(q.matrix, dtype=float)
    rows = []
    for a in range(d):  # all ranges, in the PMW black box's order
        for b in range(a, d):
            r = np.zeros(d)
            r[a : b + 1] = 1.0
            rows.append(r)
    return np.asarray(rows)


@state_class("mechanism.pmwg")
class PMWGRelease(_GrowingRelease):
    """PMWG (001 §3, Alg. 1) with private growth: online private
    multiplicative weights per query set over a public histogram that mixes in
    the uniform distribution as the (estimated) size grows, an easy/hard
    AboveThreshold test in rounds whose budget shrinks with the phase (the
    doubling level of the estimated size: an infinite series, so the total
    stays within the budget for ever; at most ``hard_per_phase`` rounds per
    phase), and a noisy answer with a multiplicative-weights update on each
    hard query.
    Answers the configured query sets at each epoch close (and period), and
    single linear queries as they arrive (:meth:`answer_query`). Deletes and
    upserts are refused (``deletion_not_supported``).

    Neighbours: one more insertion (update level) or one entry's insertion.
    Privacy: the growth tracker plus, per query set, the rounds of the test
    (sequential composition; the noise scales are derived in
    ``docs/growing.md``)."""

    name = "pmwg"
    options_cls = PMWGOptions

    def _start(self) -> None:
        super()._start()
        config = self.config
        o = self.options
        self.eta = float(o.eta) if o.eta is not None else o.alpha / 4  # public configuration
        k = len(self.mechanisms)
        scope = self.ledger.root.child("pmwg")
        self.pmw = [
            OnlinePMW(
                m.domain_size,
                self.rest.part(1 / k, 1 / k),
                decay=o.decay,
                alpha=o.alpha,
                rate=o.alpha / 6 if o.update == "paper" else 0.0,
                n0=o.n0,
                hard_per_phase=o.hard_per_phase,
                coords=(self.stream, "pmwg", q.name),
                scope=scope.child(q.name),
            )
            for q, m in zip(config.queries, self.mechanisms)
        ]
        self.started = False  # the first epoch closed

    def _threshold(self, e, total_hat):
        if e == 1:
            return self.options.n0
        return max(math.ceil(self.eta * max(total_hat, 1)), 1)

    def _standing(self, noise) -> list:
        beta = self.config.beta
        out = []
        for k, (q, m) in enumerate(zip(self.config.queries, self.mechanisms)):
            rows = _rows(q, m)
            size = self.tracker.size_upper(beta / len(rows))
            res = [self.pmw[k].answer(r, self.hists[k], beta / len(rows), noise, size) for r in rows]
            est = np.array([r[0] for r in res])
            out.append((est, max(r[1] for r in res)))
        return out

    def _on_close(self, t, noise):
        for p in self.pmw:
            p.mix(self.tracker.total_hat)
        self.started = True
        return self._standing(noise)

    def _between(self, t, noise):
        if self.noiseless:
            return [
                (np.asarray(_rows(q, m) @ h, dtype=float), 0.0)
                for q, m, h in zip(self.config.queries, self.mechanisms, self.hists)
            ]
        if not self.started:
            size = self.tracker.size_upper(self.config.beta)
            return [(np.zeros(len(_rows(q, m))), size) for q, m in zip(self.config.queries, self.mechanisms)]
        return self._standing(noise)

    def answer_query(self, tick: int, query_id: str, row, noise: NoiseSource) -> QueryAnswer:
        """Answer the linear query ``row`` (entries in [0, 1] over the first
        query set's domain) against the current database: the caller applies
        the data of ticks <= ``tick`` and advances to ``tick`` first (so that
        the standing releases due are not lost); a query whose tick has passed
        is answered against the current database."""
        row = np.asarray(row, dtype=float)
        m = self.mechanisms[0]
        if row.shape != (m.domain_size,) or np.any(row < 0) or np.any(row > 1) or not np.all(np.isfinite(row)):
            raise ValueError(f"a query is a row of {m.domain_size} numbers in [0, 1]")
        if tick > self.last_tick and not self.finished:
            raise ValueError(f"advance to tick {tick} before answering its queries (at {self.last_tick})")
        tick = max(int(tick), self.last_tick)
        self.noiseless = noise.is_disabled
        beta = self.config.beta
        if self.noiseless:
            est, bound, hard = float(np.rint(row / _UNIT).astype(np.int64) @ self.hists[0]) * _UNIT, 0.0, False
        elif not self.started or self.finished:
            est, bound, hard = 0.0, self.tracker.size_upper(beta), False
        else:
            est, bound, hard = self.pmw[0].answer(row, self.hists[0], beta, noise, self.tracker.size_upper(beta))
        spent = self.ledger.spent
        first = spent.primary
        return QueryAnswer(str(query_id), self.stream, int(tick), float(est), float(bound), bool(hard), float(first))


def run_with_queries(core: PMWGRelease, updates_by_tick: dict, queries, noise: NoiseSource):
    """The in-memory reference of ``transforms.queries.AnswerQueries`` for one
    stream: ``updates_by_tick`` {tick: [Update]}, ``queries`` [(tick, time, id,
    row)]; each tick's updates are applied, then its queries answered in
    (time, id) order; then the release runs to its end. Returns (the
    TickResults, the QueryAnswers)."""
    asked: dict = {}
    for q in sorted(queries, key=lambda q: (q[0], q[1], q[2])):
        asked.setdefault(q[0], []).append(q)
    results, answered = [], []
    for t in sorted(set(updates_by_tick) | set(asked)):
        if t in updates_by_tick:
            results.append(core.process_tick(t, updates_by_tick[t], noise))
        if t in asked:
            if t > core.last_tick:
                results.append(core.advance(t, noise))
            answered += [core.answer_query(t, qid, row, noise) for _, _, qid, row in asked[t]]
    if core.end_tick is not None:
        results += core.run_to_end(noise)
    return results, answered
