"""The client side of continual randomized response (Pan §5-6): what a device embeds.

Standard library only on the reporting path (no numpy, no Beam): a device or a
service can copy this file (and the ``accounting`` package folder beside it, for
the loss ledger, which is also standard library only) and run it as it is.

The protocol (``docs/local_dp.md``):

* Time is cut into public *periods* 1, 2, ... (ticks of ``time.tick_seconds``).
  An entry's *answer* at the end of each period is a value of the public answer
  domain ``{0, ..., z-1}`` or ``None`` (not in the survey population: before
  its insertion, after its deletion).
* With ``layers = h`` (``h = 1``: direct summation; ``h >= 2``: the HDCR of
  Pan §6.2 with branching ``c``), layer ``i`` has nodes of ``c^i`` periods. At
  the end of every node (period ``j`` with ``j % c^i == 0``) the entry reports
  its *mutation* over the node, ``m = (answer at the node's start, answer at
  its end)``, or ``(None, None)`` if the answer did not change (Pan §6.2). Every
  enrolled entry reports at every node end, changed or not: whether a report
  is sent must not depend on the data.
* The mutation is randomized by the symmetric z'-ary randomized response over
  the mutation space ``M = (R + {None})^2`` (``z' = (z+1)^2``): the true symbol
  with probability ``p``, each other symbol with probability ``q``.
  ``(eps, 0)``: Pan Eq. 34, ``p = e^eps / (z'-1+e^eps)``, ``q = 1 / (z'-1+e^eps)``.
  ``(eps, delta)``: ``q = (1-delta) / (z'-1+e^eps)`` (Thm 6.1's condition is
  tightest on the single-symbol set ``S = {a}``: ``p - e^eps q <= delta``).
  The probabilities are implemented exactly as integer weights out of 2^64
  (``q`` rounded *up*, so the implemented matrix satisfies the guarantee
  exactly, checked in exact arithmetic); the collector inverts the implemented
  matrix, so its estimate is exactly unbiased.
* The entry's constraint is enforced here, before anything is sent: at most
  ``k`` mutations (changes of its period-end answer, insertion and deletion
  included), or all mutations within ``B`` periods of the first one. A report
  that would break it is refused (:class:`ConstraintExceeded`); the caller may
  then report the unchanged answer instead (``on_exceed="freeze"``).
* Loss per entry (Pan Thm 5.1 and Corollaries 5.1-5.3): each mutation lands in
  one node per layer, and the neighbouring entry's mutations in others, so an
  entry with at most ``k`` mutations is ``2hk``-fold ``(eps_r, delta_r)``-DP
  (Cor. 5.1 for h = 1, Cor. 5.3), and a ``B``-time-bounded one
  ``2 sum_{i<h} (ceil(b / c^i) + 1)``-fold, ``b = ceil(B)`` periods (Cor. 5.2
  with Cor. 4.1 for h = 1; Cor. 5.3 writes the layer terms as
  ``ceil(B/W)/c^i + 1``, which is not an integer and can be smaller than the
  number of nodes a window of length B meets: we use the node count). The
  configured budget is the entry's total; each report spends
  ``total / fold`` (:meth:`SurveyDesign.from_total`). The client charges its
  ledger (``transforms.core.foundation.accounting.Ledger``) twice the per-report cost for
  every node that holds one of its mutations (Thm 5.1's doubling), so the
  ledger reaches the corollary's bound exactly when the entry uses its whole
  constraint, and refuses beyond it.

Randomness: the response must come from a cryptographically secure generator
(``secrets.randbits``, i.e. the OS CSPRNG, by default). A seeded or otherwise
predictable generator (``random.Random``: the Mersenne Twister's state is
recovered from 624 outputs) would let whoever can predict or replay it undo
the randomization and read the true answer; a generator shared or restarted
with a fixed seed would also repeat the same draws. The source is injectable
(``randbits``) for tests and simulations only.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

__all__ = [
    "WEIGHT_BITS",
    "ConstraintExceeded",
    "AtMostK",
    "TimeBounded",
    "SurveyDesign",
    "Report",
    "RRClient",
    "num_symbols",
    "symbol_of",
    "mutation_of",
    "fold",
    "exp_decimal",
]

WEIGHT_BITS = 64  # the response probabilities are integer weights out of 2^64
_ONE = 1 << WEIGHT_BITS


class ConstraintExceeded(ValueError):
    """A report refused: it would break the entry's constraint (at most k
    mutations, or B-time-bounded), and with it the entry's loss bound."""


@dataclass(frozen=True)
class AtMostK:
    """At most ``k`` mutations per entry (its insertion and deletion included)."""

    k: int

    def __post_init__(self):
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"max_mutations must be an integer >= 1, got {self.k!r}")


@dataclass(frozen=True)
class TimeBounded:
    """Every mutation within ``periods`` periods (B / W) of the entry's first one."""

    periods: float

    def __post_init__(self):
        if isinstance(self.periods, bool) or not isinstance(self.periods, (int, float)) or not self.periods >= 0:
            raise ValueError(f"bound_ticks must be a number >= 0, got {self.periods!r}")
        if not math.isfinite(self.periods):
            raise ValueError("bound_ticks must be finite")

    @property
    def span(self) -> int:
        """How many periods after the first mutation's a mutation may fall in: ``b = ceil(B / W)``."""
        return math.ceil(self.periods)


def fold(constraint, layers: int = 1, branching: int = 2) -> int:
    """The number of (eps_r, delta_r) reports one entry's guarantee composes
    (Pan Cor. 5.1-5.3): ``2hk`` or ``2 sum_{i<h} (ceil(b / c^i) + 1)``.

    TODO(dedup): transforms/core/families/changelog.py (issue 16) holds the database-level
    k-fold and MostSpan accounting; these are the entry-level (local) versions."""
    if layers < 1 or branching < 2:
        raise ValueError("layers must be >= 1 and branching >= 2")
    if isinstance(constraint, AtMostK):
        return 2 * layers * constraint.k
    if isinstance(constraint, TimeBounded):
        b = constraint.span
        return 2 * sum(-(-b // branching**i) + 1 for i in range(layers))
    raise TypeError(f"unknown constraint {constraint!r}")


def num_symbols(domain_size: int) -> int:
    """|M| = (z + 1)^2: mutations (old, new) over the answers and None."""
    return (domain_size + 1) ** 2


def symbol_of(old: int | None, new: int | None, domain_size: int) -> int:
    """The index in M of the mutation (old, new); None is index 0 of each side."""
    z1 = domain_size + 1
    return (0 if old is None else old + 1) * z1 + (0 if new is None else new + 1)


def mutation_of(symbol: int, domain_size: int) -> tuple[int | None, int | None]:
    z1 = domain_size + 1
    a, b = divmod(symbol, z1)
    return (None if a == 0 else a - 1, None if b == 0 else b - 1)


def exp_decimal(epsilon: float, digits: int = 60) -> Decimal:
    """e^eps to ``digits`` significant digits (exact verification of the weights)."""
    with localcontext() as ctx:
        ctx.prec = digits
        return Decimal(epsilon).exp()


@dataclass(frozen=True)
class SurveyDesign:
    """The public parameters every client and the collector share.

    Attributes:
      domain_size: z, the number of answers.
      epsilon, delta: one report's guarantee (eps_r, delta_r).
      constraint: :class:`AtMostK` or :class:`TimeBounded`.
      layers, branching: h and c (h = 1: direct summation).
      keep_weight, other_weight: the implemented response probabilities
        p = keep_weight / 2^64 and q = other_weight / 2^64.
    """

    domain_size: int
    epsilon: float
    delta: float
    constraint: object
    layers: int = 1
    branching: int = 2
    keep_weight: int = 0
    other_weight: int = 0

    def __post_init__(self):
        z = self.domain_size
        if isinstance(z, bool) or not isinstance(z, int) or z < 2:
            raise ValueError(f"the answer domain needs at least 2 values, got {z!r}")
        if not (isinstance(self.epsilon, (int, float)) and math.isfinite(self.epsilon) and 0 < self.epsilon <= 700):
            raise ValueError(f"a report's epsilon must be in (0, 700], got {self.epsilon!r}")
        if not (isinstance(self.delta, (int, float)) and 0 <= self.delta < 1):
            raise ValueError(f"a report's delta must be in [0, 1), got {self.delta!r}")
        if not isinstance(self.constraint, (AtMostK, TimeBounded)):
            raise TypeError("constraint must be AtMostK or TimeBounded")
        if isinstance(self.layers, bool) or not isinstance(self.layers, int) or self.layers < 1:
            raise ValueError(f"layers must be an integer >= 1, got {self.layers!r}")
        if isinstance(self.branching, bool) or not isinstance(self.branching, int) or self.branching < 2:
            raise ValueError(f"branching must be an integer >= 2, got {self.branching!r}")
        if self.keep_weight == 0:  # derive the implemented weights
            keep, other = _weights(num_symbols(z), float(self.epsilon), float(self.delta))
            object.__setattr__(self, "keep_weight", keep)
            object.__setattr__(self, "other_weight", other)
        m = num_symbols(z)
        if self.keep_weight + (m - 1) * self.other_weight != _ONE or self.keep_weight <= self.other_weight:
            raise ValueError("inconsistent response weights")

    @classmethod
    def from_total(
        cls, domain_size: int, epsilon: float, delta: float, constraint, layers: int = 1, branching: int = 2
    ) -> SurveyDesign:
        """The design whose per-entry guarantee over the whole survey is
        ``(epsilon, delta)``: each report gets ``1 / fold`` of it."""
        f = fold(constraint, layers, branching)
        return cls(domain_size, epsilon / f, delta / f, constraint, layers, branching)

    @property
    def num_symbols(self) -> int:
        return num_symbols(self.domain_size)

    @property
    def fold(self) -> int:
        return fold(self.constraint, self.layers, self.branching)

    @property
    def p(self) -> Fraction:
        """The implemented probability of reporting the true mutation."""
        return Fraction(self.keep_weight, _ONE)

    @property
    def q(self) -> Fraction:
        """The implemented probability of each other mutation."""
        return Fraction(self.other_weight, _ONE)

    def entry_guarantee(self) -> tuple[float, float]:
        """(eps, delta) per entry over the whole survey: fold x (eps_r, delta_r)."""
        return (self.fold * self.epsilon, self.fold * self.delta)

    def node_period(self, layer: int) -> int:
        """Periods per node of ``layer``."""
        return self.branching**layer

    def layers_ending_at(self, period: int) -> tuple[int, ...]:
        """The layers with a node ending at ``period`` (0 always)."""
        return tuple(i for i in range(self.layers) if period % self.branching**i == 0)


def _weights(m: int, epsilon: float, delta: float) -> tuple[int, int]:
    """Integer weights (P, Q), P + (m-1) Q = 2^64, with the local guarantee
    ``P - e^eps Q <= delta 2^64`` verified in 60-digit arithmetic (Q is rounded
    up from its float value plus a margin, so the check passes)."""
    e = exp_decimal(epsilon)
    with localcontext() as ctx:
        ctx.prec = 60
        q_exact = (Decimal(1) - Decimal(delta)) / (Decimal(m - 1) + e)
        other = int((q_exact * _ONE).to_integral_value(rounding="ROUND_CEILING"))
        while True:
            keep = _ONE - (m - 1) * other
            if Decimal(keep) - e * Decimal(other) <= Decimal(delta) * _ONE:
                break
            other += 1
    if keep <= other:
        raise ValueError("epsilon too small for a useful response at this weight resolution")
    return keep, other


class Report(NamedTuple):
    """One randomized report: the node (its last period and layer) and the
    randomized mutation (old, new), each an answer index or None."""

    period: int
    layer: int
    old: int | None
    new: int | None


def randomize(symbol: int, design: SurveyDesign, randbits: Callable[[int], int] = secrets.randbits) -> int:
    """The randomized response to the mutation ``symbol``: one uniform 64-bit
    word; below P the true symbol, else one of the others by Q-sized bins."""
    u = randbits(WEIGHT_BITS)
    if u < design.keep_weight:
        return symbol
    j = (u - design.keep_weight) // design.other_weight
    return j if j < symbol else j + 1


class RRClient:
    """One entry's reporting state: the answers at each layer's last node end,
    its mutations so far, and its loss ledger.

    Call :meth:`report` once for every period 1, 2, 3, ... with the entry's
    answer at the end of that period (None: not in the population); it returns
    the reports to send (one per layer whose node ends then; every period at
    least one). Privacy: the reports of an entry with at most ``k`` mutations
    (or ``B``-time-bounded mutations) are ``fold``-fold (eps_r, delta_r) local
    DP (module docstring); the client refuses any report beyond its
    constraint.

    Args:
      design: the survey's public parameters.
      randbits: the randomness, ``randbits(64) -> int``. Default
        ``secrets.randbits`` (the OS CSPRNG): never use a predictable source
        in production (module docstring); injectable for tests.
      track_loss: keep the loss ledger (imports ``accounting``).
    """

    def __init__(
        self, design: SurveyDesign, randbits: Callable[[int], int] = secrets.randbits, track_loss: bool = True
    ):
        self.design = design
        self._randbits = randbits
        self.period = 0  # the last period reported
        self.current: int | None = None  # the answer at the end of the last period
        self.node_start = [None] * design.layers  # per layer: the answer at the start of its open node
        self.charged = [0] * design.layers  # per layer: the last node (index) charged to the ledger
        self.mutations = 0
        self.first_mutation: int | None = None  # the period of the first mutation
        self.ledger = None
        if track_loss:
            try:  # copied beside the accounting package, as a device embeds them
                from .accounting import ApproxDP, Ledger, PureDP
            except ImportError:  # in this project
                from transforms.core.foundation.accounting import ApproxDP, Ledger, PureDP

            f = design.fold
            total = PureDP(f * design.epsilon) if design.delta == 0 else ApproxDP(f * design.epsilon, f * design.delta)
            self.ledger = Ledger(total, keep_records=True)
            self._cost = (
                PureDP(2 * design.epsilon) if design.delta == 0 else ApproxDP(2 * design.epsilon, 2 * design.delta)
            )

    def check(self, period: int, answer: int | None) -> None:
        """Raise unless ``answer`` may be reported at ``period``."""
        if isinstance(period, bool) or not isinstance(period, int) or period != self.period + 1:
            raise ValueError(
                f"report every period in order: expected period {self.period + 1}, got {period!r} "
                "(a missed period would bias the collector's sum by this entry's unreported mutation)"
            )
        if answer is not None and (
            isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < self.design.domain_size
        ):
            raise ValueError(f"answer must be None or an index in [0, {self.design.domain_size}), got {answer!r}")
        if answer == self.current:
            return
        c = self.design.constraint
        if isinstance(c, AtMostK) and self.mutations + 1 > c.k:
            raise ConstraintExceeded(f"mutation {self.mutations + 1} refused: at most {c.k} per entry")
        if isinstance(c, TimeBounded) and self.first_mutation is not None and period - self.first_mutation > c.span:
            raise ConstraintExceeded(
                f"mutation at period {period} refused: mutations must lie within {c.periods:g} periods of the "
                f"first one (period {self.first_mutation})"
            )

    def report(self, period: int, answer: int | None, on_exceed: str = "raise") -> list[Report]:
        """The randomized reports for ``period`` given the answer at its end.

        ``on_exceed``: ``raise`` (:class:`ConstraintExceeded`, nothing sent, the
        state unchanged) or ``freeze`` (report the last accepted answer
        instead: the true change is never sent)."""
        try:
            self.check(period, answer)
        except ConstraintExceeded:
            if on_exceed != "freeze":
                raise
            answer = self.current
        d = self.design
        if answer != self.current:
            if self.ledger is not None:  # Thm 5.1: twice the cost for each node holding a mutation
                for i in range(d.layers):
                    node = (period - 1) // d.branching**i + 1
                    if node != self.charged[i]:
                        self.ledger.charge(self._cost, ("layer", i, "node", node))
                        self.charged[i] = node
            self.mutations += 1
            if self.first_mutation is None:
                self.first_mutation = period
            self.current = answer
        self.period = period
        out = []
        for i in d.layers_ending_at(period):
            old = self.node_start[i]
            m = (None, None) if old == answer else (old, answer)
            s = randomize(symbol_of(*m, d.domain_size), d, self._randbits)
            out.append(Report(period, i, *mutation_of(s, d.domain_size)))
            self.node_start[i] = answer
        return out

    @property
    def spent(self):
        """The ledger's total: 2 x (eps_r, delta_r) per node holding a mutation."""
        return None if self.ledger is None else self.ledger.spent
