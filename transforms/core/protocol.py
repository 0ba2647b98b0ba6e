"""The contract every continual-release mechanism implements.

A mechanism is a small, single-threaded state machine per stream. The Beam
layer (streaming and bounded) and the in-memory API drive every mechanism
through this class and nothing else, so adding a mechanism means writing one
module, one registry entry (``mechanisms.py``) and its proof note in ``docs/``.

Call order (in the manner of Bytewax's ``StatefulLogic``)::

    m = Mechanism(config, stream=..., emit_nodes=..., end_tick=..., every_ticks=..., options=...)
          # or Mechanism.from_state(config, state, options=..., end_tick=..., every_ticks=...)
    repeat, in strictly increasing tick order:
        m.apply(batch, noise)     # one tick's resolved updates (a TickBatch, tick > m.last_tick)
        m.advance(tick, noise)    # time passes without data, up to and including tick
        # both return a TickResult: the answers released, and events
    between calls, read:
        m.last_tick               # the last tick processed
        m.next_wake               # the next tick at which m must be advanced even without data
                                  # (None: never again)
        m.finished                # no more releases, ever (end reached, horizon or budget used up)
        m.drain_node_outputs()    # released pieces of the data structure since the last drain
        m.spent                   # budget spent so far (update level, ledger currency)
        m.to_state()              # versioned plain data (``state.py``)

``process_tick(tick, updates, noise)`` is the in-memory convenience: it
resolves raw updates against the mechanism's own entry registry, then
``apply``. A finished mechanism ignores later data and time (its
``next_wake`` is None); the reason is in ``finished_reason`` and was
reported once as an event. A ledger refusal (``BudgetExceededError``) during
a call finishes the mechanism with ``budget_exhausted`` instead of raising:
a stream whose budget is used up stops releasing cleanly and the others go
on.

Privacy: each mechanism states its neighbour relation and cost in its
docstring and its registry entry, charges every release to its ledger before
drawing noise, and draws noise only from the ``NoiseSource`` it is given, at
coordinates that name the stream, the query by name and every scope.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from transforms.core.config import DynamicConfig
from transforms.core.contribution.bounding import PersonBounder, PersonLimit
from transforms.core.contribution.sensitivity import group_noise_multiplier
from transforms.core.counters import FINITE_COUNTERS, UNBOUNDED_COUNTERS
from transforms.core.foundation import accounting
from transforms.core.foundation.accounting import Budget, BudgetExceededError, Ledger, PrivacyUnit, stated_spend
from transforms.core.foundation.entries import EntryRegistry, Rejection, TickBatch, static_reason, valid_owner
from transforms.core.foundation.noise import NoiseSource, config_digest
from transforms.core.foundation.outputs import NodeOutput, TickResult
from transforms.core.foundation.state import envelope, open_envelope, restore, state_class, to_plain
from transforms.core.plans import Calibration, PlanEntry

__all__ = ["ContinualRelease", "NoOptions", "PlanEntry", "Calibration", "ContractParams", "CONTRACT_BUDGETS"]

# The accounting values a mechanism's state holds, under their stable state names (the
# accounting package itself stays free of numpy and of the state module: a client device
# embeds it beside families/rr_client.py). A name is part of the state format.
state_class("budget.pure")(accounting.PureDP)
state_class("budget.approx")(accounting.ApproxDP)
state_class("budget.zcdp")(accounting.ZCDP)
state_class("budget.tight_gaussian")(accounting.TightGaussian)  # the tight Gaussian account (net_change)
state_class("ledger")(accounting.Ledger)
state_class("ledger.scope")(accounting.Scope)
state_class("ledger.record")(accounting.Record)

# The budgets the contract tests (tests/test_contract.py) run mechanisms under, by name:
# (budget, profile). A registry entry's ContractParams names the ones that apply to it.
CONTRACT_BUDGETS = {
    "pure-tuned": (accounting.PureDP(4.0), "tuned"),
    "pure-paper": (accounting.PureDP(4.0), "paper"),
    "zcdp": (accounting.ZCDP(2.0), "tuned"),
    "approx": (accounting.ApproxDP(4.0, 1e-6), "tuned"),
    "restarts": (accounting.PureDP(200.0), "tuned"),  # noise small enough that nodes restart (a long workload)
    "pure-tight": (accounting.PureDP(4.0), "tight"),
    "zcdp-tight": (accounting.ZCDP(2.0), "tight"),
    "restarts-tight": (accounting.PureDP(200.0), "tight"),
}


@dataclass(frozen=True)
class ContractParams:
    """What the contract tests run one registry entry with (river's per-estimator
    test parameters): the tests iterate the registry and never name a mechanism.

    Attributes:
      options: the option values of the tests (short workloads: small sizes).
      budgets: the :data:`CONTRACT_BUDGETS` every check runs under.
      stress_budgets: further budgets for the ledger plan and the noise
        coordinates only (e.g. nodes that restart).
      golden: the golden state's budgets (``tests/golden/``): the first under
        the mechanism's name, the others as ``name@budget``.
      settle_tick: where the plan checks advance to after the workload (a
        segmented mechanism's public deadlines lie far out); None: 40 ticks on.
      variants: option sets of a report collector's checks.
    """

    options: dict = field(default_factory=dict, hash=False)
    budgets: tuple[str, ...] = ("pure-tuned", "pure-paper", "zcdp", "approx")
    stress_budgets: tuple[str, ...] = ()
    golden: tuple[str, ...] = ("pure-tuned",)
    settle_tick: int | None = None
    variants: tuple = field(default=(), hash=False)

    def __post_init__(self):
        unknown = sorted(set(self.budgets + self.stress_budgets + self.golden) - set(CONTRACT_BUDGETS))
        if unknown:
            raise ValueError(f"unknown contract budgets {unknown}; choose from {', '.join(CONTRACT_BUDGETS)}")


@state_class("options.none")
class NoOptions:
    """Options of a mechanism that has none beyond :class:`DynamicConfig`."""

    def __eq__(self, other):
        return type(other) is NoOptions

    def __hash__(self):
        return 0

    def __repr__(self):
        return "NoOptions()"


class ContinualRelease(abc.ABC):
    """Base class of the mechanisms (see the module docstring for the contract).

    Args:
      config: the release's configuration (queries, budget, unit, beta, profile).
      stream: the stream key (it is part of every noise coordinate).
      emit_nodes: keep the released pieces of the data structure for
        :meth:`drain_node_outputs`.
      end_tick: the configured, public last tick. Without ``every_ticks`` the
        mechanism finishes after its first release at or after it; with
        ``every_ticks`` its last release is at ``end_tick`` exactly. None: it
        runs for ever.
      every_ticks: the release period (public configuration): the mechanism
        releases every query's current answer at every tick that is a
        multiple of it (and at ``end_tick``), whatever its own schedule; None:
        it releases on its own schedule only (a partitioned mechanism at its
        segment closes).
      options: the mechanism's options dataclass (its registry entry's
        ``options_cls``); None for the defaults.
    """

    name: ClassVar[str] = ""  # the registry name
    # defaults for state written before these attributes existed (no migration needed)
    every_ticks: int | None = None
    period_tick: int = 0
    deletions_allowed: ClassVar[bool] = True
    options_cls: ClassVar[type] = NoOptions
    # what the ledger charges: "update" (the update-level budget; group privacy
    # gives the configured unit's guarantee) or "configured" (the configured
    # guarantee itself: the changelog releases account by the enforced constraint)
    ledger_unit: ClassVar[str] = "update"
    # what ``options.horizon`` counts when it is planned against the configured
    # end: "ticks" or "periods" (of ``every_ticks``); None: it is not (the
    # mechanism's options then have no ``counter`` / ``horizon`` to check)
    horizon_unit: ClassVar[str | None] = None
    # each answer is the change over this many ticks (a sliding window), or None:
    # the current value (what the contract tests compare the answers with)
    window_ticks: int | None = None
    _STATE_EXCLUDE = ("config", "options", "_digest")

    def __init__(
        self,
        config: DynamicConfig,
        *,
        stream: str = "default",
        emit_nodes: bool = False,
        end_tick: int | None = None,
        every_ticks: int | None = None,
        options=None,
    ):
        if not isinstance(config, DynamicConfig):
            raise TypeError("config must be a transforms.core.DynamicConfig")
        if end_tick is not None and (isinstance(end_tick, bool) or int(end_tick) < 1):
            raise ValueError(f"end_tick must be a tick >= 1 or None, got {end_tick!r}")
        if every_ticks is not None and (isinstance(every_ticks, bool) or int(every_ticks) < 1):
            raise ValueError(f"every_ticks must be an integer >= 1 or None, got {every_ticks!r}")
        options = self.options_cls() if options is None else options
        if not isinstance(options, self.options_cls):
            raise TypeError(f"{type(self).__name__} takes options of type {self.options_cls.__name__}")
        config = self._configure(config, options)
        self.config = config
        self.options = options
        self.stream = str(stream)
        self.emit_nodes = emit_nodes
        self.end_tick = None if end_tick is None else int(end_tick)
        self.every_ticks = None if every_ticks is None else int(every_ticks)
        self.period_tick = 0  # the last period end released (every_ticks)
        self.ledger = Ledger(self.ledger_cap(config), keep_records=False)
        self.node_outputs: list[NodeOutput] = []
        self.num_updates = 0
        self.finished_reason: str | None = None
        self.noiseless = False  # noise switched off: exact answers, error bounds 0
        self._start()

    def _start(self) -> None:
        """Build the mechanism's own structure (called at the end of ``__init__``,
        with ``config``, ``options``, ``stream``, ``ledger`` ... set; a restored
        mechanism does not run it)."""
        return None

    @classmethod
    def ledger_cap(cls, config: DynamicConfig) -> Budget:
        """The ledger's total: the update-level budget (group privacy gives the
        entry-level one); the changelog mechanisms account by constraint instead."""
        return config.ledger_budget

    # -- what the mechanism states about its spend, its settings and its plan --------
    @classmethod
    def group_unit(cls, config: DynamicConfig) -> PrivacyUnit:
        """The unit whose group privacy turns the ledger's spend into the
        configured guarantee: the configured unit, or the update unit (the
        identity) when the ledger charges the configured guarantee itself."""
        return config.unit if cls.ledger_unit == "update" else PrivacyUnit.update()

    @classmethod
    def stated_spend(cls, config: DynamicConfig, spent: tuple[float, ...]) -> tuple[dict, dict]:
        """``(configured, charged)``: the ledger's spend vector as the guarantee
        for the configured unit in the configured currency, and as charged
        (:func:`~transforms.core.foundation.accounting.stated_spend`)."""
        return stated_spend(spent, ledger=cls.ledger_cap(config), unit=cls.group_unit(config), target=config.budget)

    @classmethod
    def spend_fields(cls, config: DynamicConfig, spent: tuple[float, ...]) -> dict:
        """A release record's spend fields: ``epsilon_spent`` / ``delta_spent`` /
        ``rho_spent`` for the configured unit and currency, and
        ``update_level_spent`` (the ledger's update-level charge; None when the
        ledger charges an entry-level guarantee itself, which has no
        update-level figure)."""
        configured, charged = cls.stated_spend(config, spent)
        out = {f"{k}_spent": v for k, v in configured.items()}
        out["update_level_spent"] = charged if cls.group_unit(config) == config.unit else None
        return out

    @classmethod
    def stated_total(cls, config: DynamicConfig) -> dict:
        """The configured budget's numbers, and for a zCDP ledger under an
        (epsilon, delta) target also the rho the ledger's total states."""
        out = asdict(config.budget)
        stated = cls.group_unit(config).guarantee(cls.ledger_cap(config))
        if stated.rank > config.budget.rank:
            out["rho"] = stated.primary
        return out

    @classmethod
    def check_settings(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Refuse settings the mechanism cannot run (``ValueError``, naming the
        configuration key): its options against the configuration, an entry
        unit without a mutation limit where group privacy needs one, a horizon
        against the configured end (``end_tick``) and period (``every_ticks``)."""
        cls._configure(config, options)
        unit = config.unit
        if unit.kind == "person" and unit.per_window is not None and cls.ledger_unit == "update":
            raise ValueError(
                f"privacy.unit: a person limit per window is served by net_change and auto (additive query sets) "
                f"only, not by mechanism.kind {cls.name} (its group privacy over a person's updates needs a limit "
                "over the whole release)"
            )
        if config.unit.kind == "entry" and config.unit.max_mutations is None:
            try:
                cls.ledger_cap(config)
                cls.calibrations(config, options, end_tick=end_tick, every_ticks=every_ticks)
            except ValueError:
                raise ValueError(
                    f"privacy.max_mutations_per_entry: required with mechanism.kind {cls.name} (its entry-level "
                    "guarantee counts k mutations: group privacy or sensitivity by contribution); "
                    "privacy.mutation_window alone bounds the loss "
                    "only for the changelog mechanisms dcr, hdcr and swcr (docs/changelog.md)"
                ) from None
        if cls.horizon_unit is not None:
            cls._check_horizon(options.counter, options.horizon, end_tick, every_ticks)

    @classmethod
    def _check_horizon(cls, counter: str, horizon: int | None, end_tick: int | None, every_ticks: int) -> None:
        if horizon is None and end_tick is None and counter in FINITE_COUNTERS:
            raise ValueError(
                f"mechanism.counter: {counter} needs a horizon (a finite number of releases): set mechanism.horizon, "
                f"or time.end, or choose an unbounded counter ({', '.join(sorted(UNBOUNDED_COUNTERS))})"
            )
        if horizon is None or end_tick is None:
            return
        if cls.horizon_unit == "ticks":
            need, what = end_tick, f"{end_tick} ticks"
        else:
            need = math.ceil(end_tick / every_ticks)
            what = f"{need} periods of release.every_ticks = {every_ticks} ticks"
        if horizon < need:
            raise ValueError(
                f"mechanism.horizon: {horizon} runs out before time.end (the release has {what}); "
                f"set it to at least {need}, or omit it (the end gives it)"
            )

    @classmethod
    def plan(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """Which mechanism answers which query sets (a tuple of :class:`PlanEntry`)."""
        cal = cls.calibrations(config, options, end_tick=end_tick, every_ticks=every_ticks)
        return (PlanEntry(cls.name, tuple(q.name for q in config.queries), calibrations=cal),)

    @classmethod
    def calibrations(cls, config: DynamicConfig, options, *, end_tick: int | None = None, every_ticks: int = 1):
        """How each query set's noise is calibrated for the configured unit (a tuple of
        :class:`Calibration`; empty at update level and for a ledger that charges the
        configured guarantee by its own accounting). Here: group privacy over the
        unit's ``g`` updates, the noise scale of the update-level budget
        ``PrivacyUnit.update_level_budget`` gives (``g`` for Laplace noise and
        zCDP budgets)."""
        unit = config.unit
        if unit.kind == "update" or cls.ledger_unit != "update":
            return ()
        g = unit.group_size
        m = group_noise_multiplier(config.budget, g, config.noise_kind)
        detail = f"group privacy over {g} updates"
        return tuple(Calibration(q.name, "group", m, False, detail) for q in config.queries)

    # -- what the contract tests hold the mechanism to ----------------------------------
    def planned_cost(self, coordinates: tuple, nodes=()) -> Budget:
        """The planned charge of the release at ``coordinates`` (a ledger
        record's), in the ledger's currency: the allocation of the mechanism's
        docs page written out as formulas, apart from the code that charges.
        ``nodes``: the node outputs released so far (a mechanism whose plan
        depends on when a node's round started reads it there)."""
        raise NotImplementedError(f"{type(self).__name__} states no planned allocation")

    def ledger_parts(self) -> list:
        """The mechanisms whose ledgers hold this one's charges (itself; the
        parts of a composite mechanism such as ``auto``)."""
        return [self]

    # -- what subclasses implement ------------------------------------------------
    @property
    @abc.abstractmethod
    def last_tick(self) -> int:
        """The last tick processed (0 before the first call)."""

    @property
    @abc.abstractmethod
    def _next_wake(self) -> int | None:
        """The next tick with work to do without data (ignoring ``finished``)."""

    @abc.abstractmethod
    def _apply(self, batch: TickBatch, noise: NoiseSource, res: TickResult) -> None:
        """Apply one tick's batch (releases into ``res``)."""

    @abc.abstractmethod
    def _advance(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        """No update up to and including ``tick``."""

    def _after_release(self, tick: int, res: TickResult) -> None:
        """Called by subclasses after each release at ``tick``: finish at the end."""
        if self.end_tick is not None and tick >= self.end_tick:
            self._finish(tick, "ended", res)

    def _period_ends(self, upto: int):
        """The period ends in (``period_tick``, ``upto``] still due, one at a time:
        the caller releases each and moves ``period_tick`` on before the next."""
        if self.every_ticks is None:
            return
        while not self.finished:
            t = self.next_period_end(self.period_tick)
            if t is None or t > upto:
                return
            yield t

    def next_period_end(self, after: int) -> int | None:
        """The first period end (a multiple of ``every_ticks``, or the end tick)
        after tick ``after``; None without periods or past the end."""
        if self.every_ticks is None or (self.end_tick is not None and after >= self.end_tick):
            return None
        nxt = (after // self.every_ticks + 1) * self.every_ticks
        return nxt if self.end_tick is None else min(nxt, self.end_tick)

    # -- the contract --------------------------------------------------------------
    @property
    def next_wake(self) -> int | None:
        return None if self.finished else self._next_wake

    @property
    def finished(self) -> bool:
        return self.finished_reason is not None

    @property
    def spent(self) -> Budget:
        return self.ledger.spent

    def apply(self, batch: TickBatch, noise: NoiseSource) -> TickResult:
        """Apply the resolved updates of ``batch.tick`` (> :attr:`last_tick`)."""
        res = TickResult()
        if self.finished:
            return res
        if batch.tick <= self.last_tick:
            raise ValueError(f"ticks must increase: got {batch.tick} after {self.last_tick}")
        self.noiseless = noise.is_disabled
        try:
            self._apply(batch, noise, res)
        except BudgetExceededError:
            self._finish(batch.tick, "budget_exhausted", res)
        return res

    def advance(self, tick: int, noise: NoiseSource) -> TickResult:
        """No update up to and including ``tick``: releases that fall due happen."""
        res = TickResult()
        if self.finished or tick < self.last_tick:
            return res
        self.noiseless = noise.is_disabled
        try:
            self._advance(tick, noise, res)
        except BudgetExceededError:
            self._finish(tick, "budget_exhausted", res)
        return res

    def run_to_end(self, noise: NoiseSource) -> list[TickResult]:
        """Advance through the configured end until finished (bounded runs)."""
        return list(self.iter_run_to_end(noise))

    def iter_run_to_end(self, noise: NoiseSource, step: int | None = None) -> Iterator[TickResult]:
        """:meth:`run_to_end`'s results, each as it is computed; with ``step``, the ticks before the end are
        advanced through at most ``step`` at a time (:meth:`advance_in_steps`): a run whose input stops long
        before its end then never holds more than ``step`` ticks of releases at once."""
        if self.end_tick is None:
            raise ValueError("run_to_end needs an end_tick")
        if step is not None:
            yield from self.advance_in_steps(self.end_tick, noise, step)
        yield self.advance(self.end_tick, noise)
        while not self.finished and self.next_wake is not None:
            yield self.advance(self.next_wake, noise)

    def advance_in_steps(self, upto: int, noise: NoiseSource, step: int) -> Iterator[TickResult]:
        """:meth:`advance` towards ``upto``, ``step`` ticks a call, while more than ``step`` ticks remain; the
        rest is the caller's (``advance(upto)``, or ``apply`` of the batch of tick ``upto + 1``).

        The same releases as one call: an advance releases what falls due up to its tick, and a mechanism
        releases on its schedule whichever calls bring it there (the streaming steps' wakes advance a tick, or
        a catch-up grid of ticks, at a time; ``tests/test_bounded_lazy.py`` compares the records of every
        mechanism both ways). ``step`` is a count of ticks: public, never the data."""
        if step < 1:
            raise ValueError(f"step must be >= 1, got {step}")
        t = self.last_tick
        while not self.finished and upto - t > step:
            t += step
            yield self.advance(t, noise)

    def process_tick(self, tick: int, updates, noise: NoiseSource) -> TickResult:
        """In-memory use: resolve ``updates`` (in the given, canonical order)
        against this mechanism's entry registry, then :meth:`apply`.

        Under a person unit each update carries its person: ``updates`` are
        ``(person, Update)`` pairs (a person id is a non-empty string or an
        integer; it is never released). The person rule
        (:func:`~transforms.core.contribution.bounding.bound_person`: whole
        entries, in the total order on the person's own updates) admits at most
        ``max_entries`` of a person's entries (per window) before the registry,
        which keys entries by (person, entry id). ``res.rejections`` then hold
        the pairs as given, with their reason (``contribution_bounded``,
        ``unknown_entry``, or the registry's). This core is one stream's: under
        ``unit.max_streams`` the caller decides across streams first
        (:class:`~transforms.core.contribution.bounding.PersonStreamsBounder`)."""
        if self.config.unit.kind == "person":
            batch, rejected = self._resolve_persons(tick, updates)
        else:
            batch, rejected = self.registry.resolve_tick(tick, updates)
        res = self.apply(batch, noise)
        res.rejections = rejected
        return res

    def _resolve_persons(self, tick: int, pairs) -> tuple[TickBatch, list[Rejection]]:
        """The person path of :meth:`process_tick`: well-formed pairs through the person rule, the admitted
        ones through the registry keyed by person."""
        reg = self.registry
        clean, rejected = [], []
        for pair in pairs:
            ok = type(pair) is tuple and len(pair) == 2 and valid_owner(pair[0])
            reason = static_reason(pair[1], reg.domain_sizes, reg.deletions_allowed) if ok else "malformed"
            if reason is None:
                clean.append(pair)
            else:
                rejected.append(Rejection(pair, reason))
        admitted, refused = self.person_bounder.bound_tick(tick, clean)
        batch, later = reg.resolve_keyed(tick, admitted)
        return batch, rejected + [Rejection(pair, reason) for pair, reason in refused] + later

    @property
    def person_bounder(self):
        """The in-memory person rule (a person unit only): one versioned plain-data state per person."""
        bounder = self.__dict__.get("_bounder")
        if bounder is None:
            unit = self.config.unit
            bounder = self._bounder = PersonBounder(PersonLimit(unit.max_entries, unit.per_window))
        return bounder

    def apply_batch(self, batch: TickBatch, noise: NoiseSource) -> TickResult:
        """Alias of :meth:`apply` (kept for callers of the earlier API)."""
        return self.apply(batch, noise)

    def drain_node_outputs(self) -> list[NodeOutput]:
        out, self.node_outputs = self.node_outputs, []
        return out

    # -- the in-memory registry ------------------------------------------------------
    @property
    def registry(self) -> EntryRegistry:
        reg = self.__dict__.get("_registry")
        if reg is None:
            reg = self._registry = EntryRegistry(
                tuple(q.mechanism(self.config.noise_kind).domain_size for q in self.config.queries),
                deletions_allowed=self.deletions_allowed,
                max_mutations=self.config.max_mutations,
            )
        return reg

    # -- state ----------------------------------------------------------------------
    @classmethod
    def state_digest(cls, config: DynamicConfig, options, end_tick: int | None, every_ticks: int | None = None) -> str:
        """What a state was written under: restoring it elsewhere is refused."""
        if every_ticks is None:
            return config_digest("mechanism-state", cls.name, config, options, end_tick)
        return config_digest("mechanism-state", cls.name, config, options, end_tick, ("every_ticks", every_ticks))

    def to_state(self) -> dict:
        """Versioned plain data (``transforms.core.foundation.state``): everything needed to
        continue exactly as this object would."""
        digest = self.__dict__.get("_digest")
        if digest is None:
            digest = self._digest = self.state_digest(self.config, self.options, self.end_tick, self.every_ticks)
        return envelope(self.name, digest, to_plain(self))

    @classmethod
    def from_state(
        cls,
        config: DynamicConfig,
        state: dict,
        *,
        options=None,
        end_tick: int | None = None,
        every_ticks: int | None = None,
    ):
        """Restore a mechanism from :meth:`to_state` output, given the same
        configuration, options and end (a different one is a new release)."""
        options = cls.options_cls() if options is None else options
        config = cls._configure(config, options)
        digest = cls.state_digest(config, options, end_tick, every_ticks)
        body = open_envelope(state, cls.name, digest)
        obj = restore(body)
        if type(obj) is not cls:
            raise TypeError(f"state holds a {type(obj).__name__}, not a {cls.__name__}")
        obj.config = config
        obj.options = options
        obj._digest = digest
        obj._restore_config()
        return obj

    def _restore_config(self) -> None:
        """After :meth:`from_state`: give objects inside the state that hold
        configuration (excluded from state) their configuration back."""
        return None

    @classmethod
    def _configure(cls, config: DynamicConfig, options) -> DynamicConfig:
        """The configuration the mechanism runs under, given its options."""
        return config

    def _finish(self, tick: int, reason: str, res: TickResult) -> None:
        if self.finished_reason is None:
            self.finished_reason = reason
            res.events.append((tick, reason))
