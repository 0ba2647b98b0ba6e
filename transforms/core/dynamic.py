"""Continual release over dynamic data: Qiu-Yi's fully-dynamic mechanism (000 §4),
the insertion-only mechanism for infinite sparse streams (Thm 8), and the
two-stream baseline (000 §1.3).

All three share the driving API of :class:`SegmentedRelease`: feed the
updates of each tick in increasing tick order with :meth:`process_tick`, or
let time pass with :meth:`advance`; answers are released when a segment of
the private partitioning closes. Each answer carries the tick, the segment,
the estimate per query and a valid (1-beta) error bound.

Neighbouring relation: update-level (one stream has one more insertion or
deletion than the other; an upsert is a deletion plus an insertion). Every
release is charged to the stream's :class:`Ledger` before its noise is drawn.

Fully-dynamic mechanism (``docs/fully_dynamic.md`` has the layout proof and
both budget profiles):

* segments come from :class:`InfinitePartitioner` (budget share
  ``partition_fraction``);
* the online interval tree is a Fenwick layout over segments: node ``i`` is
  built when segment ``i`` closes and covers insertion segments
  ``(i - lowbit(i), i]``; the answer after segment ``j`` sums the nodes of the
  Fenwick chain ``j, j - lowbit(j), ...`` (these ranges partition (0, j], so
  every live item is counted once: Lemma 9). Only the chain is kept;
* every node runs Alg. 3: ``n_hat``, a static release ``M_Q(D(v))`` per query
  set, and two insertion-only counters over the node's deletions (one per
  query set, and a deletion count driving restarts); restart when about half
  is deleted, halt when the node is about empty;
* a node at level ``l`` gets ``w_level(l)`` of the tree budget; round ``r``
  gets ``w_round(r)`` of the node's; a round splits its budget four ways.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from .accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    BudgetExceededError,
    Ledger,
    PrivacyUnit,
    PureDP,
    Scope,
    SeriesSplit,
)
from .counters import BinaryTreeCounter, ContinualCounter, InfiniteCounter
from .errors import NoiseProfile
from .noise import NoiseSource
from .partition import InfinitePartitioner, PartitionParams
from .registry import EntryRegistry, Rejection, TickBatch
from .static import (
    CountMechanism,
    HistogramMechanism,
    LinearQueryMechanism,
    StaticMechanism,
    rho_for_approx,
)

__all__ = [
    "QuerySet",
    "BudgetProfile",
    "DynamicConfig",
    "Answer",
    "NodeOutput",
    "TickResult",
    "SegmentedRelease",
    "FullyDynamicRelease",
    "InsertionOnlyRelease",
    "TwoStreamBaseline",
    "lowbit",
    "fenwick_chain",
    "node_level",
]


def lowbit(i: int) -> int:
    return i & -i


def node_level(i: int) -> int:
    """Level of Fenwick node i: 1 + number of trailing zeros (leaves are level 1)."""
    return lowbit(i).bit_length()


def fenwick_chain(j: int) -> list[int]:
    """Nodes queried after segment j closes: j, j - lowbit(j), ... (> 0)."""
    out = []
    while j > 0:
        out.append(j)
        j -= lowbit(j)
    return out


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------

QUERY_KINDS = ("count", "histogram", "linear", "pmw")


@dataclass(frozen=True)
class QuerySet:
    """A named set of linear queries over one finite domain.

    Kinds: ``count`` (one query, domain of any size), ``histogram`` (every cell),
    ``linear`` (a matrix with entries in [0, 1], rows = queries), ``pmw``
    (private multiplicative weights for a matrix or all ranges of the domain).
    """

    name: str
    kind: str = "count"
    domain_size: int = 1
    matrix: tuple | None = None  # rows of the query matrix (linear / pmw)
    ranges: bool = False  # pmw over all ranges [a, b] of the domain
    pmw_iterations: int = 0  # 0: chosen per release from the public noisy size

    def __post_init__(self):
        if not self.name or not isinstance(self.name, str):
            raise ValueError("every query set needs a non-empty name")
        if self.kind not in QUERY_KINDS:
            raise ValueError(f"query {self.name!r}: kind must be one of {', '.join(QUERY_KINDS)}; got {self.kind!r}")
        if self.domain_size < 1:
            raise ValueError(f"query {self.name!r}: domain_size must be >= 1")
        if self.kind == "linear" and self.matrix is None:
            raise ValueError(f"query {self.name!r}: a linear query set needs a matrix")
        if self.matrix is not None:
            m = np.asarray(self.matrix, dtype=float)
            if m.ndim != 2 or m.shape[1] != self.domain_size:
                raise ValueError(f"query {self.name!r}: matrix must have domain_size = {self.domain_size} columns")

    def mechanism(self, noise: str) -> StaticMechanism:
        if self.kind == "count":
            return CountMechanism(noise, self.domain_size)
        if self.kind == "histogram":
            return HistogramMechanism(self.domain_size, noise)
        if self.kind == "linear":
            return LinearQueryMechanism(np.asarray(self.matrix, dtype=float), noise)
        from .pmw import PMWMechanism  # local: PMW is heavier

        return PMWMechanism(
            self.domain_size,
            matrix=None if self.matrix is None else np.asarray(self.matrix, dtype=float),
            ranges=self.ranges,
            iterations=self.pmw_iterations,
            noise=noise,
        )


@dataclass(frozen=True)
class BudgetProfile:
    """How the budget is split (see ``docs/fully_dynamic.md`` for validity).

    Attributes:
      partition_fraction: share of the budget for the private partitioning.
      level_split: weights of tree levels (sum <= 1 over all levels).
      round_split: weights of a node's rounds (restarts).
      round_weights: the four-way split of a round: (n_hat, static, query
        counter, deletion-count counter), summing to 1.
      delta_weights: the same split for delta under (eps, delta) budgets.
      counter: ``infinite`` (Chan-Shi-Song over later segments, as in the
        paper) or ``node_horizon`` (a tree over exactly the node's remaining
        queried segments, with Honaker's estimator for additive black boxes).
      leaf_static_only: level-1 nodes are never queried after they are built,
        so they release only ``M_Q`` with the whole node budget.
    """

    name: str
    partition_fraction: float
    level_split: SeriesSplit
    round_split: SeriesSplit
    round_weights: tuple[float, float, float, float]
    delta_weights: tuple[float, float, float, float]
    counter: str
    leaf_static_only: bool

    def __post_init__(self):
        if not 0 < self.partition_fraction < 1:
            raise ValueError("partition_fraction must be in (0, 1)")
        for name, w in (("round_weights", self.round_weights), ("delta_weights", self.delta_weights)):
            if len(w) != 4 or any(x < 0 for x in w) or sum(w) > 1 + 1e-12:
                raise ValueError(f"{name} must be 4 non-negative weights summing to <= 1")
        if self.counter not in ("infinite", "node_horizon"):
            raise ValueError("counter must be 'infinite' or 'node_horizon'")

    @classmethod
    def paper(cls) -> BudgetProfile:
        """Exactly the seed: 1/l^2 levels, 1/r^2 rounds, four equal eps shares
        (delta in thirds, n_hat is pure), Chan-Shi-Song counters; partition/tree
        split 1/2 - 1/2 (the paper leaves this split open)."""
        return cls(
            "paper",
            0.5,
            SeriesSplit("pi2"),
            SeriesSplit("pi2"),
            (0.25,) * 4,
            (0.0, 1 / 3, 1 / 3, 1 / 3),
            "infinite",
            False,
        )

    @classmethod
    def tuned(cls, max_segments: int | None = None, eta: float = 0.5) -> BudgetProfile:
        """A tighter valid allocation: uniform over the levels of a declared
        horizon of segments (else 1/l^(1+eta)), rounds 1/r^3 (restarts are
        rare: round 1 gets 83%), most of a round for the released answers,
        counters sized to each node's known lifetime, leaves release only M_Q,
        10% for partitioning. With a zCDP or (eps, delta>0) budget all noise is
        Gaussian and composes in zCDP."""
        levels = SeriesSplit("finite", horizon=max_segments.bit_length()) if max_segments else SeriesSplit("zeta", eta)
        return cls(
            "tuned",
            0.1,
            levels,
            SeriesSplit("zeta", 2.0),
            (0.1, 0.4, 0.4, 0.1),
            (0.0, 0.4, 0.4, 0.2),
            "node_horizon",
            True,
        )


@dataclass(frozen=True)
class DynamicConfig:
    """Validated configuration of one continual release.

    Args:
      queries: the query sets (each answered by its own static black box).
      budget: the total budget of one stream (PureDP, ApproxDP or ZCDP), as a
        guarantee for ``unit``.
      profile: ``paper`` or ``tuned``.
      beta: failure probability of the reported error bounds and partitioning.
      max_segments: tuned only: a declared horizon on the number of segments
        (levels are then budgeted uniformly; releases stop after it).
      unit: the privacy unit ``budget`` is stated for. ``PrivacyUnit.update()``
        (the seeds' relation) spends ``budget`` at update level;
        ``PrivacyUnit.entry(k)`` spends the update-level budget whose group
        guarantee over ``2k - 1`` updates is ``budget``, and the registry
        rejects an entry's mutations past ``k`` (``constraint_exceeded``).
    """

    queries: tuple[QuerySet, ...]
    budget: Budget
    profile: str = "tuned"
    beta: float = 0.05
    max_segments: int | None = None
    eta: float = 0.5
    unit: PrivacyUnit = PrivacyUnit()

    def __post_init__(self):
        if not self.queries:
            raise ValueError("at least one query set is needed")
        names = [q.name for q in self.queries]
        if len(set(names)) != len(names):
            raise ValueError(f"query names must be unique, got {names}")
        if self.profile not in ("paper", "tuned"):
            raise ValueError(f"profile must be 'paper' or 'tuned', got {self.profile!r}")
        if not 0 < self.beta < 1:
            raise ValueError(f"beta must be in (0, 1), got {self.beta}")
        if self.max_segments is not None and (self.profile != "tuned" or self.max_segments < 1):
            raise ValueError("max_segments is a tuned-profile horizon and must be >= 1")
        if not isinstance(self.budget, (PureDP, ApproxDP, ZCDP)):
            raise ValueError("budget must be PureDP, ApproxDP or ZCDP")
        if not isinstance(self.unit, PrivacyUnit):
            raise ValueError("unit must be a PrivacyUnit (PrivacyUnit.update() or PrivacyUnit.entry(k))")
        if self.profile == "paper" and isinstance(self.budget, ZCDP):
            raise ValueError(
                "the paper profile uses Laplace noise: give a PureDP or ApproxDP budget, or use profile tuned"
            )
        if _primary_eps(self.budget) <= 0:
            raise ValueError("the budget must be positive")

    @property
    def budget_profile(self) -> BudgetProfile:
        return BudgetProfile.paper() if self.profile == "paper" else BudgetProfile.tuned(self.max_segments, self.eta)

    @property
    def gaussian(self) -> bool:
        """Gaussian noise with zCDP composition (tuned with zCDP or delta > 0)."""
        return self.profile == "tuned" and (
            isinstance(self.budget, ZCDP) or (isinstance(self.budget, ApproxDP) and self.budget.delta > 0)
        )

    @property
    def noise_kind(self) -> str:
        return "gaussian" if self.gaussian else "laplace"

    @property
    def update_budget(self) -> Budget:
        """The update-level budget whose guarantee for ``unit`` is ``budget``."""
        return self.unit.update_level_budget(self.budget)

    @property
    def max_mutations(self) -> int | None:
        """The per-entry mutation limit the registry enforces (entry-level unit)."""
        return self.unit.max_mutations if self.unit.kind == "entry" else None

    @property
    def ledger_budget(self) -> Budget:
        """The update-level budget in the ledger's currency."""
        b = self.update_budget
        if self.gaussian:
            return b if isinstance(b, ZCDP) else ZCDP(rho_for_approx(b))
        return b

    def split(self) -> tuple[float, Budget]:
        """(partitioning epsilon, tree budget)."""
        f = self.budget_profile.partition_fraction
        b = self.ledger_budget
        if isinstance(b, ZCDP):
            return math.sqrt(2 * f * b.rho), ZCDP((1 - f) * b.rho)
        if isinstance(b, ApproxDP):
            return f * b.epsilon, ApproxDP((1 - f) * b.epsilon, b.delta)
        return f * b.epsilon, PureDP((1 - f) * b.epsilon)


def _primary_eps(b: Budget) -> float:
    return b.rho if isinstance(b, ZCDP) else b.epsilon


def _part(b: Budget, w_eps: float, w_delta: float) -> Budget:
    if isinstance(b, ZCDP):
        return ZCDP(b.rho * w_eps)
    if isinstance(b, ApproxDP):
        return ApproxDP(b.epsilon * w_eps, b.delta * w_delta)
    return PureDP(b.epsilon * w_eps)


def _pure_part(b: Budget, w: float) -> Budget:
    """The n_hat share: pure under (eps, delta) (Laplace), zCDP under zCDP."""
    if isinstance(b, ApproxDP):
        return PureDP(b.epsilon * w)
    return _part(b, w, 0.0)


# ---------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------


@dataclass
class Answer:
    """One released answer (per query set, per segment close)."""

    stream: str
    tick: int
    segment: int
    query: str
    estimate: np.ndarray
    error_bound: float | None
    beta: float
    spent: Budget


@dataclass
class NodeOutput:
    """A released piece of the DP data structure (with its coordinates and cost).

    kind: ``static`` (M_Q at a round start), ``n_hat``, ``deletion_counter``
    (a raw release of a node counter), ``node_answer`` (the node's current
    answer, post-processing: the answer of a query is the sum of the
    ``node_answer`` values of the chain nodes at that segment).
    """

    stream: str
    tick: int
    segment: int
    node: int
    level: int
    round: int
    kind: str
    query: str
    values: np.ndarray
    cost: Budget | None
    coordinates: tuple = ()


@dataclass
class TickResult:
    answers: list[Answer] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    closes: list[int] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Shared driver
# ---------------------------------------------------------------------------


class _TickDriven:
    """``process_tick`` = resolve the tick's updates with the registry, then
    ``apply_batch`` (the per-stream step the Beam transforms call directly)."""

    def process_tick(self, tick: int, updates, noise: NoiseSource) -> TickResult:
        """Apply the updates of ``tick`` (in the given, canonical order)."""
        batch, rejected = self.registry.resolve_tick(tick, updates)
        res = self.apply_batch(batch, noise)
        res.rejections = rejected
        return res


class SegmentedRelease(_TickDriven):
    """Ticks -> partitioning -> per-segment work. Subclasses do the releasing."""

    deletions_allowed = True

    def __init__(self, config: DynamicConfig, *, stream: str = "default", emit_nodes: bool = False):
        self.config = config
        self.stream = str(stream)
        self.emit_nodes = emit_nodes
        self.ledger = Ledger(config.ledger_budget, keep_records=False)
        eps_p, self.tree_budget = config.split()
        self.partitioner = InfinitePartitioner(
            PartitionParams(eps_p, config.beta), coords=(self.stream,), scope=self.ledger.root
        )
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        self.registry = EntryRegistry(
            tuple(m.domain_size for m in self.mechanisms),
            deletions_allowed=self.deletions_allowed,
            max_mutations=config.max_mutations,
        )
        self.closed = 0  # number of closed segments J
        self.noiseless = False  # noise switched off: exact answers, error bounds 0
        self.node_outputs: list[NodeOutput] = []
        self.num_updates = 0

    # -- public API --------------------------------------------------------------
    @property
    def next_close(self) -> int:
        """Tick at which the open segment closes if no update arrives."""
        return self.partitioner.next_close

    def apply_batch(self, batch: TickBatch, noise: NoiseSource) -> TickResult:
        """Apply one tick's resolved updates (the registry already accepted them).

        This is the per-stream sequential step: the Beam transforms resolve
        entries in parallel and call it once per (stream, tick) in tick order."""
        res = TickResult()
        self.noiseless = noise.is_disabled
        self._closes_until(batch.tick - 1, noise, res)
        self._absorb(batch)
        self.num_updates += batch.n_updates
        for t in self.partitioner.observe(batch.tick, batch.n_updates, noise):
            self._close(t, noise, res)
        return res

    def advance(self, tick: int, noise: NoiseSource) -> TickResult:
        """No update up to and including ``tick``."""
        res = TickResult()
        self.noiseless = noise.is_disabled
        self._closes_until(tick, noise, res)
        return res

    # -- internals ----------------------------------------------------------------
    def _closes_until(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        for t in self.partitioner.advance(tick, noise):
            self._close(t, noise, res)

    def _absorb(self, batch: TickBatch) -> None:
        raise NotImplementedError

    def _close(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        raise NotImplementedError

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


# ---------------------------------------------------------------------------
# Fully dynamic
# ---------------------------------------------------------------------------


class _Node:
    """Alg. 3 at one node of the online interval tree."""

    def __init__(self, owner: FullyDynamicRelease, index: int, content: list[np.ndarray], size: int):
        self.index = index
        self.level = node_level(index)
        self.tick_lo = 0  # node covers insertion ticks (tick_lo, tick_hi]
        self.tick_hi = 0
        self.horizon = lowbit(index) - 1  # later segments at which this node is queried
        self.content = content  # exact live items, one histogram per query set
        self.size = size
        self.steps = 0
        self.round = 0
        self.halted = False
        self.halt_nhat = 0.0
        self.halt_nhat_profile: NoiseProfile | None = None
        prof = owner.config.budget_profile
        self.budget = _part(owner.tree_budget, prof.level_split.weight(self.level), prof.level_split.weight(self.level))
        self.scope = owner.tree_scope.child(f"level{self.level}", Scope.PARALLEL).child(f"node{index}")
        self.static_answers: list[np.ndarray] = []
        self.static_budgets: list[Budget] = []
        self.static_sizes: list[tuple[float, NoiseProfile]] = []  # (n_hat, law) from PMW releases
        self.static_params: list = []  # what a non-additive release's alpha needs (PMW: its T)
        self.n_hat = 0.0
        self.n_hat_profile: NoiseProfile | None = None
        self.del_counter: ContinualCounter | None = None
        self.q_counters: list[ContinualCounter] = []

    @property
    def coords(self) -> tuple:
        return ("tree", "node", self.index, "round", self.round)

    def _round_budgets(self, owner):
        prof = owner.config.budget_profile
        b_r = _part(self.budget, prof.round_split.weight(self.round), prof.round_split.weight(self.round))
        k = len(owner.mechanisms)
        we, wd = prof.round_weights, prof.delta_weights
        if prof.leaf_static_only and self.horizon == 0:
            return None, _part(b_r, 1.0 / k, 1.0 / k), None, None
        nhat = _pure_part(b_r, we[0])
        static = _part(b_r, we[1] / k, wd[1] / k)
        qins = _part(b_r, we[2] / k, wd[2] / k)
        lapins = _part(b_r, we[3], wd[3])
        return nhat, static, qins, lapins

    def start_round(self, owner: FullyDynamicRelease, tick: int, noise: NoiseSource, gamma_end: float | None) -> None:
        """Lines 1-5 (round 1) or 19-26 (restart) of Alg. 3."""
        self.round += 1
        nhat_b, static_b, qins_b, lapins_b = self._round_budgets(owner)
        base = (owner.stream,) + self.coords
        if nhat_b is not None:
            mech = owner.control_mechanism
            self.scope.charge(nhat_b, base + ("n_hat",))
            rel = mech.release(np.array([self.size]), nhat_b, noise.stream(*base, "n_hat"))
            self.n_hat = float(rel.values[0])
            self.n_hat_profile = NoiseProfile.zero() if noise.is_disabled else rel.noise
            owner._log(tick, self.index, self.level, self.round, "n_hat", "", rel.values, nhat_b, base + ("n_hat",))
            if gamma_end is not None and self.n_hat < 2 * gamma_end:
                self.halted = True  # line 22-23: answer 0 from now on; content kept for merging
                self.halt_nhat = self.n_hat
                self.halt_nhat_profile = rel.noise
                self.del_counter = None
                self.q_counters = []
                return
        self.static_answers, self.static_budgets, self.static_sizes, self.static_params = [], [], [], []
        for k, mech in enumerate(owner.mechanisms):
            c = base + ("static", owner.config.queries[k].name)
            self.scope.charge(mech.cost(static_b), c)
            if not mech.additive and self.n_hat_profile is not None:
                # PMW reuses this round's n_hat (post-processing of a release)
                rel = mech.release(self.content[k], static_b, noise.stream(*c), self.n_hat, self.n_hat_profile)
            else:
                rel = mech.release(self.content[k], static_b, noise.stream(*c))
            ans = mech.answer(rel)
            self.static_answers.append(ans)
            self.static_budgets.append(static_b)
            if rel.n_hat is not None:
                self.static_sizes.append((rel.n_hat, rel.n_hat_noise))
            self.static_params.append(rel.alpha_params)
            owner._log(
                tick, self.index, self.level, self.round, "static", owner.config.queries[k].name, ans, static_b, c
            )
        remaining = self.horizon - self.steps
        if lapins_b is None or remaining <= 0:
            self.del_counter, self.q_counters = None, []
            return
        self.del_counter = owner._make_counter(
            owner.control_mechanism, lapins_b, remaining, base + ("del_count",), self.scope.child(f"r{self.round}-del")
        )
        self.q_counters = [
            owner._make_counter(
                owner.deletion_mechanisms[k],
                qins_b,
                remaining,
                base + ("del_query", owner.config.queries[k].name),
                self.scope.child(f"r{self.round}-q{k}"),
            )
            for k in range(len(owner.mechanisms))
        ]
        if owner.emit_nodes:
            for c in [self.del_counter] + self.q_counters:
                c.release_log = []

    def step(self, owner: FullyDynamicRelease, tick: int, del_hists, del_count: int, noise: NoiseSource) -> None:
        """Lines 6-31 for one later segment (deletions already applied to content)."""
        self.steps += 1
        if self.halted or self.del_counter is None:
            return
        beta_r = owner.config.beta / (math.pi**2 * self.round**2)
        est = float(self.del_counter.step(np.array([del_count]), noise)[0])
        gamma = self.del_counter.error_bound(beta_r)
        for k, c in enumerate(self.q_counters):
            c.step(del_hists[k], noise)
        self._flush_counter_logs(owner, tick)
        if est > self.n_hat / 2 + 2 * gamma:
            self.start_round(owner, tick, noise, gamma_end=gamma)

    def _flush_counter_logs(self, owner, tick):
        if not owner.emit_nodes:
            return
        for c in [self.del_counter] + self.q_counters:
            for coords, cost, values in c.release_log or []:
                owner._log(tick, self.index, self.level, self.round, "deletion_counter", "", values, cost, coords)
            c.release_log.clear()

    # -- answers -----------------------------------------------------------------
    def answer(self, k: int) -> np.ndarray:
        if self.halted:
            return np.zeros_like(self.static_answers[k]) if self.static_answers else np.zeros(1)
        a = self.static_answers[k]
        if self.q_counters and self.q_counters[k].t > 0:
            a = a - self.q_counters[k].estimate
        return a

    def noise_profile(self, owner, k: int) -> NoiseProfile:
        mech = owner.mechanisms[k]
        p = mech.noise_profile(self.static_budgets[k])
        if self.q_counters and self.q_counters[k].t > 0:
            p = p + self.q_counters[k].noise_profile()
        return p

    def alpha(self, owner, k: int, beta: float) -> float:
        """Non-additive black boxes (PMW): union bound over the static release and
        the deletion counter. A histogram deletion counter's error on any query
        of the set is at most the error of a sum of d cells (weights in [0, 1])."""
        mech = owner.mechanisms[k]
        has_counter = bool(self.q_counters) and self.q_counters[k].t > 0
        b = beta / 2 if has_counter else beta  # the rest goes to the counter
        n = self.size_bound(b / 2)  # |D(v)| <= n with probability 1 - b/2
        reused = self.n_hat_profile if self.n_hat_profile is not None and not self.halted else None
        params = self.static_params[k] or (None,)
        a = mech.alpha(self.static_budgets[k], b / 2, n=n, n_hat_noise=reused, iterations=params[0])
        if has_counter:
            c = self.q_counters[k]
            if c.mechanism.additive:
                d = c.mechanism.domain_size
                a += c.noise_profile().times(d).tail_bound(b / getattr(mech, "query_count", d))
            else:
                a += c.error_bound(b, n=n)
        return a

    def size_bound(self, beta: float) -> float:
        """A public (1-beta) upper bound on this node's round-start size, from
        n_hat or from a PMW release's own noisy size."""
        if self.n_hat_profile is not None:
            return max(self.n_hat, 0.0) + self.n_hat_profile.tail_bound(beta)
        if self.static_sizes:
            n_hat, law = self.static_sizes[0]
            return max(n_hat, 0.0) + law.tail_bound(beta)
        return float("inf")

    def halted_bound(self, beta: float) -> float:
        """A halted node holds at most n_hat + noise bound items (content only shrinks)."""
        return max(self.halt_nhat, 0.0) + self.halt_nhat_profile.tail_bound(beta)


class FullyDynamicRelease(SegmentedRelease):
    """Qiu-Yi's fully-dynamic mechanism for one stream (see module docstring).

    State is O(n_t + d log m_t): the registry of live entries, the live chain
    of O(log m_t) nodes, and the open segment's pending updates.
    """

    def __init__(self, config: DynamicConfig, *, stream: str = "default", emit_nodes: bool = False):
        super().__init__(config, stream=stream, emit_nodes=emit_nodes)
        self.tree_scope = self.ledger.root.child("tree")
        self.control_mechanism = CountMechanism(config.noise_kind)
        # the insertion-only mechanism over a node's deletions, per query set: the
        # set's own black box (paper), or for non-additive sets (PMW) in the tuned
        # profile a histogram counter, which answers every linear query of the set
        # by linearity with an error that does not grow with the batch size
        self.deletion_mechanisms = [
            HistogramMechanism(m.domain_size, config.noise_kind)
            if (config.profile == "tuned" and not m.additive)
            else m
            for m in self.mechanisms
        ]
        self.nodes: dict[int, _Node] = {}
        self._reset_pending()
        self.last_answers: list[Answer] = []

    def _reset_pending(self):
        # open segment: items inserted in it (a multiset; an insert and a delete in
        # the same segment cancel) and deletions of older items as (node, item);
        # histograms are built once, at the close
        self.pending_ins: Counter = Counter()
        self.pending_del: list[tuple[int, tuple[int, ...]]] = []
        self._locate_cache: dict[int, int] = {}
        chain = sorted((n.tick_lo, n.tick_hi, i) for i, n in self.nodes.items()) if hasattr(self, "nodes") else []
        self._chain = chain
        self._chain_his = [hi for _, hi, _ in chain]

    def _make_counter(self, mech, budget, horizon, coords, scope) -> ContinualCounter:
        prof = self.config.budget_profile
        if prof.counter == "infinite":
            return InfiniteCounter(mech, budget, coords=coords, scope=scope)
        return BinaryTreeCounter(mech, budget, horizon=horizon, honaker=mech.additive, coords=coords, scope=scope)

    @property
    def last_close_tick(self) -> int:
        return self.partitioner.prev_close if self.closed else 0

    def locate(self, ins_tick: int) -> int:
        """The live node whose tick range holds an insertion at ``ins_tick``
        (a tick of a closed segment)."""
        node = self._locate_cache.get(ins_tick)
        if node is not None:
            return node
        # the chain's tick ranges partition (0, last close]; bisect on their upper ends
        k = bisect.bisect_left(self._chain_his, ins_tick)
        if k == len(self._chain_his) or not self._chain[k][0] < ins_tick:
            raise AssertionError(f"insertion tick {ins_tick} is not covered by chain({self.closed})")
        i = self._chain[k][2]
        self._locate_cache[ins_tick] = i
        return i

    def _hists(self, items) -> list[np.ndarray]:
        """Per-query-set histograms of a list of items."""
        if not items:
            return [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        arr = np.asarray(items, dtype=np.int64).reshape(len(items), len(self.mechanisms))
        return [np.bincount(arr[:, k], minlength=m.domain_size).astype(np.int64) for k, m in enumerate(self.mechanisms)]

    def _counter_hists(self, counter: Counter) -> list[np.ndarray]:
        out = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        for item, c in counter.items():
            if c:
                for k, v in enumerate(item):
                    out[k][v] += c
        return out

    # -- updates -----------------------------------------------------------------
    def _absorb(self, batch: TickBatch) -> None:
        boundary = self.last_close_tick
        pend = self.pending_ins
        for item, ins_tick in batch.deletes:
            if ins_tick > boundary:  # inserted in the open segment: the pair cancels
                pend[item] -= 1
            else:
                self.pending_del.append((self.locate(ins_tick), item))
        for item in batch.inserts:
            pend[item] += 1

    # -- segment close -----------------------------------------------------------
    def _close(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        j = self.closed + 1
        if self.config.max_segments is not None and j > self.config.max_segments:
            raise BudgetExceededError(
                f"stream {self.stream!r} reached its declared horizon of {self.config.max_segments} segments"
            )
        survivors = set(fenwick_chain(j - lowbit(j)))
        # 1. group this segment's deletions by node; apply them to the exact contents
        by_node: dict[int, list] = {}
        for node_i, item in self.pending_del:
            by_node.setdefault(node_i, []).append(item)
        deletions = {i: (self._hists(items), len(items)) for i, items in by_node.items()}
        for i, (hists, cnt) in deletions.items():
            node = self.nodes[i]
            for k in range(len(self.mechanisms)):
                node.content[k] -= hists[k]
            node.size -= cnt
        # 2. merge the dying nodes (levels below l(j)) and the new insertions into node j
        content = self._counter_hists(self.pending_ins)
        size = sum(self.pending_ins.values())
        for i in list(self.nodes):
            if i not in survivors:
                dead = self.nodes.pop(i)
                for k in range(len(self.mechanisms)):
                    content[k] += dead.content[k]
                size += dead.size
                dead.scope.close()
        self.closed = j
        # 3. the surviving nodes see segment j's deletions (possibly none)
        empty = None
        for i in sorted(survivors, reverse=True):
            if i in deletions:
                hists, cnt = deletions[i]
            else:
                empty = empty or self._hists([])
                hists, cnt = empty, 0
            self.nodes[i].step(self, tick, hists, cnt, noise)
        # 4. build node j (Alg. 3, round 1); it covers ticks (t_{j - lowbit(j)}, t_j]
        node = _Node(self, j, content, size)
        left = j - lowbit(j)
        node.tick_lo = self.nodes[left].tick_hi if left else 0
        node.tick_hi = tick
        self.nodes[j] = node
        node.start_round(self, tick, noise, gamma_end=None)
        self._reset_pending()
        # 5. answers: sum over the chain
        answers = []
        chain = [self.nodes[i] for i in fenwick_chain(j)]
        for k in range(len(self.mechanisms)):
            est = np.sum([n.answer(k) for n in chain], axis=0)
            answers.append(self._answer(tick, k, est, self._error_bound(chain, k)))
            if self.emit_nodes:
                for n in chain:
                    self._log(
                        tick, n.index, n.level, n.round, "node_answer", self.config.queries[k].name, n.answer(k), None
                    )
        self.last_answers = answers
        res.answers.extend(answers)
        res.closes.append(tick)

    def _error_bound(self, chain: list[_Node], k: int) -> float:
        if self.noiseless:
            return 0.0
        beta = self.config.beta
        halted = [n for n in chain if n.halted]
        live = [n for n in chain if not n.halted]
        b_noise = beta / 2 if halted else beta
        bound = 0.0
        if halted:
            bound += math.fsum(n.halted_bound(beta / (2 * len(halted))) for n in halted)
        mech = self.mechanisms[k]
        if live:
            if mech.additive:
                prof = NoiseProfile.sum(n.noise_profile(self, k) for n in live)
                bound += prof.tail_bound(b_noise / mech.num_queries)
            else:
                bound += math.fsum(n.alpha(self, k, b_noise / len(live)) for n in live)
        return bound

    # -- introspection (tests) -------------------------------------------------------
    def check_invariants(self) -> None:
        """Lemma 9 (instrumented): between segments, every live entry inserted in a
        closed segment is in exactly one chain node, and every node's content is
        exactly the live entries of its range."""
        chain = fenwick_chain(self.closed)
        assert sorted(self.nodes) == sorted(chain), (sorted(self.nodes), chain)
        expect = {i: [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms] for i in chain}
        pend = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        boundary = self.last_close_tick
        for item, ins_tick, _ in self.registry.entries.values():
            if ins_tick > boundary:
                target = pend
            else:
                owners = [i for i in chain if self.nodes[i].tick_lo < ins_tick <= self.nodes[i].tick_hi]
                assert len(owners) == 1, (ins_tick, owners)
                target = expect[owners[0]]
            for k, v in enumerate(item):
                target[k][v] += 1
        pend_del: dict[int, list] = {}
        for node_i, item in self.pending_del:
            pend_del.setdefault(node_i, []).append(item)
        for i in chain:
            node = self.nodes[i]
            pd = self._hists(pend_del.get(i, []))
            for k in range(len(self.mechanisms)):
                assert np.array_equal(node.content[k] - pd[k], expect[i][k]), (i, k)
        have = self._counter_hists(self.pending_ins)
        for k in range(len(self.mechanisms)):
            assert np.array_equal(pend[k], have[k])

    def state_size(self) -> dict:
        """Sizes of the kept state (tests and benchmarks)."""
        return {
            "live_entries": len(self.registry),
            "nodes": len(self.nodes),
            "pending_insertions": sum(self.pending_ins.values()),
            "pending_deletions": len(self.pending_del),
        }


# ---------------------------------------------------------------------------
# Insertion-only (Thm 8) and the two-stream baseline
# ---------------------------------------------------------------------------


class InsertionOnlyRelease(SegmentedRelease):
    deletions_allowed = False

    """Thm 8: partitioning feeding the Chan-Shi-Song infinite counter (one per
    query set) with the segments as timestamps. Deletes and upserts are
    rejected (``deletion_not_allowed``). Budget: ``partition_fraction`` to the
    partitioning, the rest split evenly over the query sets."""

    def __init__(self, config: DynamicConfig, *, stream: str = "default", emit_nodes: bool = False):
        super().__init__(config, stream=stream, emit_nodes=emit_nodes)
        k = len(self.mechanisms)
        b = _part(self.tree_budget, 1.0 / k, 1.0 / k)
        self.counters = [
            InfiniteCounter(
                m,
                b,
                honaker=config.profile == "tuned" and m.additive,
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

    def _close(self, tick, noise, res):
        self.closed += 1
        for k, c in enumerate(self.counters):
            est = c.step(self.pending[k], noise)
            res.answers.append(self._answer(tick, k, est, c.error_bound(self.config.beta)))  # 0 if noiseless
        self.pending = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        res.closes.append(tick)


class TwoStreamBaseline(SegmentedRelease):
    """000 §1.3: one insertion-only counter over the insertions, one over the
    deletions (as insertions), subtracted. Both see the segments of one shared
    partitioning. One update is in exactly one of the two streams, so each
    counter gets the whole non-partitioning budget (parallel composition); the
    error grows with N_t, not n_t."""

    def __init__(self, config: DynamicConfig, *, stream: str = "default", emit_nodes: bool = False):
        super().__init__(config, stream=stream, emit_nodes=emit_nodes)
        k = len(self.mechanisms)
        b = _part(self.tree_budget, 1.0 / k, 1.0 / k)
        par = self.ledger.root.child("two_streams", Scope.PARALLEL)
        honaker = config.profile == "tuned"
        self.ins = [
            InfiniteCounter(
                m,
                b,
                honaker=honaker and m.additive,
                coords=(self.stream, "ins", config.queries[i].name),
                scope=par.child(f"ins{i}"),
            )
            for i, m in enumerate(self.mechanisms)
        ]
        self.dels = [
            InfiniteCounter(
                m,
                b,
                honaker=honaker and m.additive,
                coords=(self.stream, "del", config.queries[i].name),
                scope=par.child(f"del{i}"),
            )
            for i, m in enumerate(self.mechanisms)
        ]
        self._reset()

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


# ---------------------------------------------------------------------------
# A plain continual counter over ticks (same driving API)
# ---------------------------------------------------------------------------


class _EveryTick:
    """Stand-in for the partitioner: every tick is a timestamp (a 'segment')."""

    def __init__(self):
        self.j = 1
        self.prev_close = 0
        self.last_tick = 0

    @property
    def next_close(self) -> int:
        return self.last_tick + 1


class ContinualCountRelease(_TickDriven):
    """A continual counter (``make_counter`` by name) over ticks: every tick is
    one timestamp; the batch of a tick is its inserted items (deletes and
    upserts are rejected, ``deletion_not_allowed``). Releases at every tick,
    empty or not, so its work is O(ticks). Budget: ``config.budget`` split
    evenly over the query sets; neighbouring streams differ by one insert.

    Same driving API as :class:`SegmentedRelease` (``process_tick``,
    ``apply_batch``, ``advance``, ``next_close``)."""

    deletions_allowed = False

    def __init__(
        self,
        config: DynamicConfig,
        *,
        stream: str = "default",
        emit_nodes: bool = False,
        counter: str = "infinite_honaker",
        horizon: int | None = None,
    ):
        from .counters import make_counter

        self.config = config
        self.stream = str(stream)
        self.node_outputs: list[NodeOutput] = []
        self.ledger = Ledger(config.ledger_budget, keep_records=False)
        self.mechanisms = [q.mechanism(config.noise_kind) for q in config.queries]
        k = len(self.mechanisms)
        share = _part(config.ledger_budget, 1.0 / k, 1.0 / k)
        self.counters = [
            make_counter(
                counter,
                m,
                share,
                horizon=horizon,
                coords=(self.stream, "count", config.queries[i].name),
                scope=self.ledger.root.child(f"q{i}"),
            )
            for i, m in enumerate(self.mechanisms)
        ]
        self.registry = EntryRegistry(
            tuple(m.domain_size for m in self.mechanisms), deletions_allowed=False, max_mutations=config.max_mutations
        )
        self.partitioner = _EveryTick()
        self.closed = 0
        self.num_updates = 0

    @property
    def next_close(self) -> int:
        return self.partitioner.next_close

    def apply_batch(self, batch: TickBatch, noise: NoiseSource) -> TickResult:
        res = self.advance(batch.tick - 1, noise)
        hists = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        for item in batch.inserts:
            for k, v in enumerate(item):
                hists[k][v] += 1
        self.num_updates += batch.n_updates
        self._step(batch.tick, hists, noise, res)
        return res

    def advance(self, tick: int, noise: NoiseSource) -> TickResult:
        res = TickResult()
        for t in range(self.partitioner.last_tick + 1, tick + 1):
            self._step(t, None, noise, res)
        return res

    def _step(self, tick, hists, noise, res):
        self.partitioner.last_tick = tick
        self.partitioner.prev_close = tick
        self.closed += 1
        beta = self.config.beta
        for k, c in enumerate(self.counters):
            est = c.step(None if hists is None else hists[k], noise)
            res.answers.append(
                Answer(
                    self.stream,
                    tick,
                    self.closed,
                    self.config.queries[k].name,
                    est,
                    c.error_bound(beta),
                    beta,
                    self.ledger.spent,
                )
            )
        res.closes.append(tick)
