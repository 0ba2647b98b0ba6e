"""The collector of continual randomized response (Pan §6): unbiased estimates
of the true histogram and of its change, per period, from the clients'
randomized mutation reports. No noise is added here: the privacy is the
clients' (``rr_client.py``, local DP); everything below is post-processing of
what they sent.

Estimator (Pan Eq. 38, 46-47). A node's reports give counts ``O`` over the
mutation space M (|M| = (z+1)^2). With the implemented symmetric response
matrix ``P = (p-q) I + q 11^T``, ``P^{-1} O = (O - q n 1) / (p - q)``
(``n = 1^T O``), and ``M_dv 1 = 0`` (every answer is the new side of z+1 pairs
and the old side of z+1), so

    dv_hat[r] = M_dv P^{-1} O [r] = (#reports with new = r - #reports with old = r) / (p - q),

an exact integer difference over one constant. Each report contributes
``f in {-1, 0, 1} / (p - q)`` with mean ``dv_x[r]`` (unbiased) and variance
``2 z q / (p-q)^2 + |dv_x[r]| (1/(p-q) - 1)`` (closed form, Pan App. C for
this matrix); reports are independent, so a sum of nodes has the sum of
their variances. ``v_hat_t`` sums the nodes that tile (0, t]: every layer-0
node (``direct``), or the c-ary decomposition of an HDCR (Pan §6.2, ``hdcr``:
``floor(t / c^(h-1))`` top nodes plus at most c - 1 nodes per lower layer).

Bounds: Bernstein's inequality for the sum of the N independent report
contributions behind an estimate, each within ``1/(p-q) + 1`` of its mean and
of variance at most ``V1 = 2zq/(p-q)^2 + 1/(p-q) - 1``: with
``L = log(2 z / beta)`` (a union bound over the z cells),
``|err| <= (b L / 3) + sqrt((b L / 3)^2 + 2 N V1 L)``, ``b = 1/(p-q) + 1``,
for every cell at once with probability >= 1 - beta, whatever the truth.
The released ``variance`` is the closed form at the unbiased estimate of
``sum_x |dv_x[r]|`` (clipped to [0, N]): an estimate, not a bound.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import NamedTuple

from transforms.core.config import DynamicConfig
from transforms.core.families.rr_client import (
    AtMostK,
    ConstraintExceeded,
    Report,
    RRClient,
    SurveyDesign,
    TimeBounded,
    fold,
    mutation_of,
    num_symbols,
    symbol_of,
)
from transforms.core.foundation.noise import config_digest
from transforms.core.foundation.state import envelope, open_envelope, restore, state_class, to_plain
from transforms.core.protocol import PlanEntry

__all__ = [
    "RROptions",
    "RRRelease",
    "RandomizedResponseCollector",
    "SurveyDesign",
    "AtMostK",
    "TimeBounded",
    "ConstraintExceeded",
    "Report",
    "RRClient",
    "fold",
    "design_for",
    "node_counts",
    "node_estimate",
    "report_variance",
    "bernstein_bound",
    "simulate",
    "Simulation",
    "CONSTRAINTS",
    "AGGREGATIONS",
]

CONSTRAINTS = ("at_most_k", "time_bounded")
AGGREGATIONS = ("direct", "hdcr")


@dataclass(frozen=True)
class RROptions:
    """Options of ``mechanism.kind: randomized_response`` (the ``mechanism:`` keys).

    Attributes:
      constraint: ``at_most_k`` (default) or ``time_bounded``.
      max_mutations: k, with ``at_most_k`` (default 1).
      bound_ticks: B in ticks (periods), with ``time_bounded`` (required there).
      aggregation: ``direct`` (sum every period's estimated change; default) or
        ``hdcr`` (Pan §6.2: clients report per layer; O(log t) nodes per estimate).
      layers: h, with ``hdcr`` (default 3).
      branching: c, with ``hdcr`` (default 2).
    """

    constraint: str = "at_most_k"
    max_mutations: int | None = None
    bound_ticks: float | None = None
    aggregation: str = "direct"
    layers: int | None = None
    branching: int | None = None

    def __post_init__(self):
        if self.constraint not in CONSTRAINTS:
            raise ValueError(f"constraint must be one of {', '.join(CONSTRAINTS)}; got {self.constraint!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {self.aggregation!r}")
        if self.constraint == "at_most_k":
            if self.bound_ticks is not None:
                raise ValueError("bound_ticks applies to constraint time_bounded only; remove it (or set constraint)")
            AtMostK(self.k)
        else:
            if self.max_mutations is not None:
                raise ValueError("max_mutations applies to constraint at_most_k only; remove it (or set constraint)")
            if self.bound_ticks is None:
                raise ValueError("bound_ticks is required with constraint time_bounded (B, in ticks)")
            TimeBounded(self.bound_ticks)
        if self.aggregation == "direct":
            for key in ("layers", "branching"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key} applies to aggregation hdcr only; remove it (or set aggregation: hdcr)")
        else:
            h, c = self.num_layers, self.num_branching
            if isinstance(h, bool) or not isinstance(h, int) or not 2 <= h <= 40:
                raise ValueError(f"layers must be an integer in [2, 40] with aggregation hdcr; got {h!r}")
            if isinstance(c, bool) or not isinstance(c, int) or not 2 <= c <= 1000:
                raise ValueError(f"branching must be an integer in [2, 1000]; got {c!r}")

    @property
    def k(self) -> int:
        return 1 if self.max_mutations is None else self.max_mutations

    @property
    def num_layers(self) -> int:
        return 1 if self.aggregation == "direct" else (3 if self.layers is None else self.layers)

    @property
    def num_branching(self) -> int:
        return 2 if self.branching is None else self.branching

    def constraint_obj(self):
        return AtMostK(self.k) if self.constraint == "at_most_k" else TimeBounded(self.bound_ticks)


def design_for(config: DynamicConfig, options: RROptions) -> SurveyDesign:
    """The survey design of a configuration: one histogram query set (the answer
    domain), the configured budget as each entry's total local guarantee."""
    if len(config.queries) != 1 or config.queries[0].kind != "histogram":
        raise ValueError(
            "randomized_response answers exactly one histogram query (the answer domain); "
            f"got {', '.join(q.kind for q in config.queries)}"
        )
    b = config.budget
    try:
        eps, delta = b.to_approx().vector()
    except ValueError:  # a zCDP budget has no (eps, delta) of its own
        raise ValueError(
            "randomized_response takes privacy.epsilon (and delta), not rho: the response is (eps, delta)"
        ) from None
    if config.unit.kind != "update":
        raise ValueError(
            "randomized_response states its guarantee per entry already: its constraint goes in "
            "mechanism.constraint / max_mutations / bound_ticks, not privacy.unit"
        )
    return SurveyDesign.from_total(
        config.queries[0].domain_size, eps, delta, options.constraint_obj(), options.num_layers, options.num_branching
    )


# ---------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------


def node_counts(symbols, domain_size: int) -> tuple[list[int], list[int], int]:
    """(diff, touch, n) of one node's reported symbols: ``diff[r]`` = #new=r -
    #old=r, ``touch[r]`` = #reports whose mutation changes cell r, n reports."""
    z = domain_size
    diff, touch, n = [0] * z, [0] * z, 0
    for s in symbols:
        old, new = mutation_of(s, z)
        n += 1
        if old == new:
            continue
        if new is not None:
            diff[new] += 1
            touch[new] += 1
        if old is not None:
            diff[old] -= 1
            touch[old] += 1
    return diff, touch, n


def _symbol_effects(domain_size: int):
    """Per symbol: (old, new) with a same-value pair as (None, None)."""
    out = []
    for s in range(num_symbols(domain_size)):
        old, new = mutation_of(s, domain_size)
        out.append((None, None) if old == new else (old, new))
    return out


def node_estimate(diff, design: SurveyDesign) -> list[float]:
    """dv_hat = diff / (p - q) (Eq. 46 for the symmetric matrix)."""
    gap = float(design.p - design.q)
    return [d / gap for d in diff]


def report_variance(design: SurveyDesign, touches: bool) -> float:
    """The variance of one report's contribution to a cell: ``2zq/(p-q)^2``
    plus ``1/(p-q) - 1`` if the entry's true mutation changes that cell."""
    p, q, z = float(design.p), float(design.q), design.domain_size
    gap = p - q
    return 2 * z * q / gap**2 + ((1 / gap - 1) if touches else 0.0)


def variance_estimate(design: SurveyDesign, n: int, touch: int) -> float:
    """The closed-form variance of a cell over ``n`` reports, at the unbiased
    estimate of how many of them truly change the cell (clipped to [0, n])."""
    p, q, z = float(design.p), float(design.q), design.domain_size
    gap = p - q
    a_hat = min(max((touch - 2 * z * q * n) / gap, 0.0), float(n))
    return n * 2 * z * q / gap**2 + a_hat * (1 / gap - 1)


def bernstein_bound(design: SurveyDesign, n: int, beta: float) -> float:
    """A (1 - beta) bound on every cell's error at once over ``n`` reports (module docstring)."""
    if n == 0:
        return 0.0
    gap = float(design.p - design.q)
    v1 = report_variance(design, True)
    b = 1 / gap + 1
    log_term = math.log(2 * design.domain_size / beta)
    a = b * log_term / 3
    return a + math.sqrt(a * a + 2 * n * v1 * log_term)


class RRRelease(NamedTuple):
    """One period's release: the histogram estimate and the estimate of its
    change over the period, each with the closed-form variance (estimated, per
    cell) and a (1 - beta) bound for all cells at once; ``reports``: the
    reports behind the histogram estimate; ``change_reports``: behind the change."""

    stream: str
    tick: int
    estimate: tuple
    variance: tuple
    error_bound: float
    change: tuple
    change_variance: tuple
    change_bound: float
    reports: int
    change_reports: int
    beta: float
    epsilon_entry: float  # the clients' per-entry local guarantee (the collector spends nothing)
    delta_entry: float


# ``partial`` is walked, not declared plain: its inner lists are added to in place, and a plain field is stored as a
# shallow copy (a state taken in memory would change as the collector goes on)
@state_class("mechanism.randomized_response")
class RandomizedResponseCollector:
    """The collector of continual randomized response (Pan §6): per period, the
    unbiased estimate ``v_hat_t`` of the true histogram and of its change,
    with variance and a (1 - beta) bound. It adds no noise and holds no
    budget: privacy is local, each entry's reports are ``fold``-fold
    (eps_r, delta_r)-DP by the clients' randomized response (Pan Thm 5.1,
    Cor. 5.1-5.3, ``docs/local_dp.md``), and everything here is
    post-processing of reports. Neighbour relation: two entries (changelogs)
    under the configured constraint; the configured budget is an entry's
    total local guarantee.

    Contract (like ``ContinualRelease``, over reports instead of updates):
    ``apply(tick, counts)`` with the node counts of the nodes ending at
    ``tick`` (``{layer: [symbol counts]}``), ``advance(tick)``, ``last_tick``,
    ``next_wake``, ``finished``, ``to_state()`` / ``from_state()``; a release
    every tick up to ``end_tick``.
    """

    name = "randomized_response"
    options_cls = RROptions
    input_kind = "reports"
    _STATE_EXCLUDE = ("config", "options", "design", "_digest", "_effects")

    def __init__(self, config: DynamicConfig, *, stream: str = "default", end_tick: int | None = None, options=None):
        options = RROptions() if options is None else options
        if not isinstance(options, RROptions):
            raise TypeError("RandomizedResponseCollector takes options of type RROptions")
        if end_tick is not None and (isinstance(end_tick, bool) or int(end_tick) < 1):
            raise ValueError(f"end_tick must be a tick >= 1 or None, got {end_tick!r}")
        self.config = config
        self.options = options
        self.design = design_for(config, options)
        self.stream = str(stream)
        self.end_tick = None if end_tick is None else int(end_tick)
        self._tick = 0
        z, h = self.design.domain_size, self.design.layers
        # per layer: (diff per cell, touch per cell, n) summed over that layer's nodes
        # counted in the current estimate (the top layer: all of its nodes; a lower
        # layer: its nodes since the last node end of the layer above)
        self.partial = [[[0] * z, [0] * z, 0] for _ in range(h)]
        self.finished_reason: str | None = None
        self._effects = _symbol_effects(z)

    # -- the contract ---------------------------------------------------------------
    @property
    def last_tick(self) -> int:
        return self._tick

    @property
    def finished(self) -> bool:
        return self.finished_reason is not None

    @property
    def next_wake(self) -> int | None:
        if self.finished or (self.end_tick is not None and self._tick >= self.end_tick):
            return None
        return self._tick + 1

    def apply(self, tick: int, counts) -> list[RRRelease]:
        """Releases for every tick up to ``tick``; ``counts``: ``{layer: symbol
        counts}`` of the nodes ending at ``tick`` (a layer whose node does not
        end there is refused)."""
        if self.finished:
            return []
        if tick <= self._tick:
            raise ValueError(f"ticks must increase: got {tick} after {self._tick}")
        out = self.advance(tick - 1)
        if self.finished:
            return out
        valid = set(self.design.layers_ending_at(tick))
        for layer in counts:
            if layer not in valid:
                raise ValueError(f"no node of layer {layer} ends at tick {tick}")
        out.append(self._release(tick, counts))
        return out

    def advance(self, tick: int) -> list[RRRelease]:
        """No reports up to and including ``tick``: the releases that fall due."""
        out = []
        while not self.finished and self._tick < tick:
            out.append(self._release(self._tick + 1, {}))
        return out

    def run_to_end(self) -> list[RRRelease]:
        if self.end_tick is None:
            raise ValueError("run_to_end needs an end_tick")
        return self.advance(self.end_tick)

    # -- the estimate ---------------------------------------------------------------
    def _node(self, symbol_counts) -> tuple[list[int], list[int], int]:
        z = self.design.domain_size
        diff, touch, n = [0] * z, [0] * z, 0
        for s, c in enumerate(symbol_counts):
            if not c:
                continue
            n += c
            old, new = self._effects[s]
            if new is not None:
                diff[new] += c
                touch[new] += c
            if old is not None:
                diff[old] -= c
                touch[old] += c
        return diff, touch, n

    def _release(self, tick: int, counts) -> RRRelease:
        d = self.design
        z, h, c = d.domain_size, d.layers, d.branching
        m = d.num_symbols
        change = None
        for i in range(h):
            if tick % c**i:
                continue
            node = self._node(counts.get(i, [0] * m) if counts else [0] * m)
            if i == 0:
                change = node
            acc = self.partial[i]
            for r in range(z):
                acc[0][r] += node[0][r]
                acc[1][r] += node[1][r]
            acc[2] += node[2]
        # nodes of layer i are now covered by the layer above's node ending at tick
        for i in range(h - 1):
            if tick % c ** (i + 1) == 0:
                self.partial[i] = [[0] * z, [0] * z, 0]
        diff, touch, n = [0] * z, [0] * z, 0
        for acc in self.partial:
            for r in range(z):
                diff[r] += acc[0][r]
                touch[r] += acc[1][r]
            n += acc[2]
        beta = self.config.beta
        eps, delta = d.entry_guarantee()
        rel = RRRelease(
            self.stream,
            tick,
            tuple(node_estimate(diff, d)),
            tuple(variance_estimate(d, n, t) for t in touch),
            bernstein_bound(d, n, beta),
            tuple(node_estimate(change[0], d)),
            tuple(variance_estimate(d, change[2], t) for t in change[1]),
            bernstein_bound(d, change[2], beta),
            n,
            change[2],
            beta,
            eps,
            delta,
        )
        self._tick = tick
        if self.end_tick is not None and tick >= self.end_tick:
            self.finished_reason = "ended"
        return rel

    # -- settings and plan (as ContinualRelease states them) -------------------------
    @classmethod
    def check_settings(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Refuse a configuration the survey cannot be designed for (``ValueError``)."""
        design_for(config, options)

    @classmethod
    def plan(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        return (PlanEntry(cls.name, tuple(q.name for q in config.queries)),)

    # -- state ----------------------------------------------------------------------
    @classmethod
    def state_digest(cls, config: DynamicConfig, options, end_tick: int | None) -> str:
        return config_digest("mechanism-state", cls.name, config, options, end_tick)

    def to_state(self) -> dict:
        digest = self.__dict__.get("_digest")
        if digest is None:
            digest = self._digest = self.state_digest(self.config, self.options, self.end_tick)
        return envelope(self.name, digest, to_plain(self))

    @classmethod
    def from_state(cls, config: DynamicConfig, state: dict, *, options=None, end_tick: int | None = None):
        options = RROptions() if options is None else options
        digest = cls.state_digest(config, options, end_tick)
        obj = restore(open_envelope(state, cls.name, digest))
        if type(obj) is not cls:
            raise TypeError(f"state holds a {type(obj).__name__}, not a {cls.__name__}")
        obj.config, obj.options, obj._digest = config, options, digest
        obj.design = design_for(config, options)
        obj._effects = _symbol_effects(obj.design.domain_size)
        return obj


state_class("options.randomized_response")(RROptions)


# ---------------------------------------------------------------------------
# the simulator's core (pipelines/rr_simulate.py is its CLI)
# ---------------------------------------------------------------------------


class Simulation(NamedTuple):
    """``reports``: (entry id, Report) in period order; ``truth``: the true
    histogram at the end of every period (index 0: period 1); ``refused``:
    mutations the clients refused (constraint)."""

    reports: list
    truth: list
    refused: int


def simulate(
    design: SurveyDesign,
    num_entries: int,
    periods: int,
    seed: int = 0,
    violate: float = 0.0,
    randbits=None,
) -> Simulation:
    """N entries whose true answers change over ``periods`` within the design's
    constraint (each entry: an insertion, changes of answer, maybe a deletion),
    reported by one :class:`RRClient` each.

    ``violate``: the share of entries that try one mutation too many (refused
    by their client, which then reports the unchanged answer: ``freeze``).
    ``randbits``: the clients' randomness; default a generator seeded from
    ``seed`` (SIMULATION ONLY: reproducible, so not private)."""
    rng = random.Random(seed)
    bits = randbits if randbits is not None else random.Random(f"rr-clients-{seed}").getrandbits
    z = design.domain_size
    c = design.constraint
    plans = []  # per entry: {period: answer at the end of that period, when it changes}
    for _ in range(num_entries):
        start = rng.randint(1, periods)
        last = periods if isinstance(c, AtMostK) else min(periods, start + c.span)
        cap = c.k if isinstance(c, AtMostK) else last - start + 1
        cap = min(cap, last - start + 1)
        over = rng.random() < violate
        n_mut = cap if over else rng.randint(1, cap)
        times = [start] + sorted(rng.sample(range(start + 1, last + 1), n_mut - 1))
        if over:  # one mutation past the constraint (refused by the client)
            free = [t for t in range(start + 1, periods + 1) if t not in times]
            if isinstance(c, TimeBounded):
                free = [t for t in free if t > last]
            if free:
                times.append(rng.choice(free))
                times.sort()
        plan, answer = {}, None
        for j, t in enumerate(times):
            if j and j == len(times) - 1 and rng.random() < 0.3:
                answer = None  # a deletion
            else:
                answer = rng.choice([a for a in range(z) if a != answer])
            plan[t] = answer
        plans.append(plan)
    clients = [RRClient(design, randbits=bits, track_loss=False) for _ in range(num_entries)]
    answers = [None] * num_entries
    reports, truth, refused = [], [], 0
    for t in range(1, periods + 1):
        hist = [0] * z
        for x, (plan, client) in enumerate(zip(plans, clients)):
            if t in plan:
                want = plan[t]
                try:
                    client.check(t, want)
                    answers[x] = want
                except ConstraintExceeded:
                    refused += 1
                    plans[x] = {k: v for k, v in plan.items() if k < t}  # the entry stays frozen
            for rep in client.report(t, answers[x]):
                reports.append((f"e{x}", rep))
            if answers[x] is not None:
                hist[answers[x]] += 1
        truth.append(hist)
    return Simulation(reports, truth, refused)


def in_memory(design_or_collector, reports, end_tick: int) -> list[RRRelease]:
    """The collector's releases over ``reports`` ((entry id, Report) pairs), in
    memory: the reference the Beam transform must equal."""
    coll = design_or_collector
    m = coll.design.num_symbols
    z = coll.design.domain_size
    by_tick: dict[int, dict[int, list[int]]] = {}
    for _, rep in reports:
        counts = by_tick.setdefault(rep.period, {}).setdefault(rep.layer, [0] * m)
        counts[symbol_of(rep.old, rep.new, z)] += 1
    out = []
    for tick in sorted(by_tick):
        if tick > end_tick:
            break
        out += coll.apply(tick, by_tick[tick])
    out += coll.advance(end_tick)
    return out
