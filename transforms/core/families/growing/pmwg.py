"""PMWG (Cummings et al. 2018): online private multiplicative weights on a
growing database, with streamed queries (``docs/growing.md``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from transforms.core.families.growing.base import (
    GrowingRelease,
    check_fraction,
    check_growth_options,
    check_int,
    effective_scale,
)
from transforms.core.foundation.accounting import Budget, SeriesSplit, zeta
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import NoiseSource, discrete_laplace
from transforms.core.foundation.state import state_class
from transforms.core.static.linear import LATTICE_BITS

__all__ = ["PMWGOptions", "PMWGRelease", "OnlinePMW", "QueryAnswer", "run_with_queries"]

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
                z = NoiseProfile.single("laplace", effective_scale(self.threshold_scale), _UNIT) + NoiseProfile.single(
                    "laplace", effective_scale(self.test_scale), _UNIT
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
        bound = 0.0 if noiseless else NoiseProfile.single("laplace", effective_scale(scale), unit).tail_bound(beta)
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
        check_growth_options(self.n0, self.growth_fraction)
        check_fraction("alpha", self.alpha)
        if self.eta is not None:
            check_fraction("eta", self.eta, 0.0, 10.0)
        check_fraction("decay", self.decay, 0.0, 10.0)
        check_int("hard_per_phase", self.hard_per_phase)
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
class PMWGRelease(GrowingRelease):
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

    def _planned_share(self, c, rest):
        """Round ``r`` of phase ``p`` of a query set: 1 / (zeta(1 + decay)
        (p + 1)^(1 + decay)) / hard_per_phase of the rest, over k sets, as a
        pure step (the easy/hard test and the Laplace answer)."""
        o = self.options
        if not (
            len(c) == 6 and c[0] == "pmwg" and c[2] == "phase" and c[4] == "round" and 1 <= c[5] <= o.hard_per_phase
        ):
            raise ValueError(f"no planned release at {c}")
        if c[1] not in {q.name for q in self.config.queries}:
            raise ValueError(f"no planned release at {c}")
        w = 1 / (zeta(1 + o.decay) * (c[3] + 1) ** (1 + o.decay)) / o.hard_per_phase / len(self.config.queries)
        return rest.pure_step(w)[1]

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
