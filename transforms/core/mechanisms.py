"""The registry of continual-release mechanisms: one entry per mechanism.

The pipelines' configuration, the CLI, the Beam transforms, the docs and the
contract tests read this table and nothing else: adding a mechanism is one
module implementing :class:`~transforms.core.protocol.ContinualRelease`, one
:class:`MechanismSpec` below, and its proof note under ``docs/``.

Each entry states the mechanism's neighbour relation and the query kinds it
answers; its options dataclass validates its own settings in
``__post_init__`` (so a bad setting fails before a pipeline starts), and its
fields are the mechanism-specific keys of a pipeline's ``mechanism:`` block.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from transforms.core.continual.auto import AutoOptions, AutoRelease
from transforms.core.continual.baselines import (
    ContinualCountOptions,
    ContinualCountRelease,
    InsertionOnlyRelease,
    TwoStreamBaseline,
)
from transforms.core.continual.fully_dynamic import FullyDynamicOptions, FullyDynamicRelease
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.families.changelog import (
    DCROptions,
    DCRRelease,
    HDCROptions,
    HDCRRelease,
    SWCROptions,
    SWCRRelease,
)
from transforms.core.families.growing import (
    BBImproverOptions,
    BBImproverRelease,
    BBSchedulerOptions,
    BBSchedulerRelease,
    PMWGOptions,
    PMWGRelease,
)
from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions
from transforms.core.protocol import ContinualRelease, ContractParams, NoOptions

__all__ = ["MechanismSpec", "MECHANISMS", "get", "names", "option_fields", "update_names"]


@dataclass(frozen=True)
class MechanismSpec:
    """One registered mechanism.

    Attributes:
      name: the registry name (``mechanism.kind`` in a pipeline config).
      core_cls: the :class:`ContinualRelease` subclass (pure core, no Beam).
      options_cls: its options dataclass (validated at construction); its
        fields are the config keys the mechanism accepts besides ``kind``,
        ``profile`` and ``beta``.
      neighbours: the neighbour relation its guarantee is stated for.
      query_kinds: the ``QuerySet`` kinds it answers.
      proof: the docs page with its privacy proof and budget allocation.
      summary: one line for error messages and the docs.
      input_kind: ``updates`` (a :class:`ContinualRelease` over resolved
        update batches) or ``reports`` (a collector of clients' randomized
        reports, e.g. ``randomized_response``: its own contract, no entry
        registry, driven by ``transforms/local_dp.py``).
      trust: ``central`` (the mechanism sees raw data and adds the noise) or
        ``local`` (the clients randomize; the mechanism adds no noise).
      units: the privacy units (``PrivacyUnit.kind``) the mechanism states a
        guarantee for; a configuration with another unit is refused
        (:meth:`check`). Every mechanism whose ledger charges the update level
        serves the person unit by group privacy (``g = L (2k - 1)``, a limit
        over the whole release); ``net_change`` and ``auto`` by sensitivity by
        contribution; the changelog releases account per entry by their
        constraint (update and entry only); ``randomized_response`` states its
        guarantee per entry in its own constraint (update only).
      checks: the contract tests' parameters for this entry
        (:class:`~transforms.core.protocol.ContractParams`); an entry without
        them fails ``tests/test_contract.py``.
    """

    name: str
    core_cls: type
    options_cls: type
    neighbours: str
    query_kinds: tuple[str, ...]
    proof: str
    summary: str
    input_kind: str = "updates"
    trust: str = "central"
    checks: ContractParams | None = None
    units: tuple[str, ...] = ("update", "entry", "person")

    def __post_init__(self):
        if (self.input_kind, self.trust) not in (("updates", "central"), ("reports", "local")):
            raise ValueError(
                f"input_kind/trust must be updates/central or reports/local, got {self.input_kind}/{self.trust}"
            )
        if self.input_kind == "reports":
            for attr in ("apply", "advance", "to_state", "from_state", "next_wake", "last_tick"):
                if not hasattr(self.core_cls, attr):
                    raise TypeError(f"{self.core_cls.__name__} lacks {attr} (the report collector contract)")
        elif not issubclass(self.core_cls, ContinualRelease):
            raise TypeError(f"{self.core_cls.__name__} does not implement ContinualRelease")
        if self.core_cls.name != self.name:
            raise ValueError(f"{self.core_cls.__name__}.name is {self.core_cls.name!r}, registered as {self.name!r}")
        if self.core_cls.options_cls is not self.options_cls:
            raise ValueError(f"{self.core_cls.__name__}.options_cls differs from the registry's")

    @property
    def deletions_allowed(self) -> bool:
        return self.core_cls.deletions_allowed

    def options(self, **values):
        """The options dataclass from ``values`` (unknown keys: ``ValueError``)."""
        allowed = option_fields(self)
        extra = sorted(set(values) - set(allowed))
        if extra:
            raise ValueError(
                f"mechanism {self.name!r} takes no option(s) {', '.join(extra)}; "
                f"its options: {', '.join(allowed) or 'none'}"
            )
        return self.options_cls(**values)

    # -- what the pipelines ask (they never branch on a mechanism's name) ----------
    def check(self, config, options, *, end_tick: int | None = None, every_ticks: int = 1) -> None:
        """Refuse settings the mechanism cannot run, before a pipeline starts
        (``ValueError``, one line naming the configuration key): its options
        against the configuration, a privacy unit it does not serve
        (:attr:`units`), an entry unit without a mutation limit where
        group privacy needs one, a finite counter without a horizon, a horizon
        that runs out before ``end_tick`` (periods of ``every_ticks``), and
        query kinds it does not answer. ``end_tick``: the release's last tick
        (``StreamSpec.end_tick``), None for an unbounded one."""
        unit = config.unit.kind
        if unit not in self.units:
            serving = ", ".join(n for n, spec in MECHANISMS.items() if unit in spec.units)
            raise ValueError(
                f"privacy.unit: {unit} is not served by mechanism.kind {self.name} (it states its guarantee for "
                f"{' and '.join(self.units)}); mechanisms that serve it: {serving}"
            )
        self.core_cls.check_settings(config, options, end_tick=end_tick, every_ticks=every_ticks)
        unsupported = sorted({q.kind for q in config.queries} - set(self.query_kinds))
        if unsupported:
            raise ValueError(
                f"mechanism.kind: {self.name} does not answer {', '.join(unsupported)} queries "
                f"(sum queries are linear); it answers {', '.join(self.query_kinds)}"
            )

    def plan(self, config, options, *, end_tick: int | None = None, every_ticks: int = 1) -> tuple:
        """Which mechanism answers which query sets, with what share and why (a
        tuple of :class:`~transforms.core.protocol.PlanEntry`; ``.text()`` is
        the line printed and recorded)."""
        return self.core_cls.plan(config, options, end_tick=end_tick, every_ticks=every_ticks)

    def ledger_budget(self, config):
        """The ledger's total per stream, in its currency."""
        return self.core_cls.ledger_cap(config)

    def group_unit(self, config):
        """The unit that turns the ledger's spend into the configured guarantee."""
        return self.core_cls.group_unit(config)

    def stated_spend(self, config, spent: tuple) -> tuple[dict, dict]:
        """``(configured, charged)`` of a ledger spend vector (``ContinualRelease.stated_spend``)."""
        return self.core_cls.stated_spend(config, spent)

    def spend_fields(self, config, spent: tuple) -> dict:
        """A release record's spend fields (``ContinualRelease.spend_fields``)."""
        return self.core_cls.spend_fields(config, spent)

    def stated_total(self, config) -> dict:
        """The configured budget as stated (``ContinualRelease.stated_total``)."""
        return self.core_cls.stated_total(config)


def option_fields(spec: MechanismSpec) -> tuple[str, ...]:
    if spec.options_cls is NoOptions:
        return ()
    return tuple(f.name for f in dataclasses.fields(spec.options_cls))


_UPDATE = (
    "update level: neighbouring inputs differ by one update (insertion or deletion of one item; an upsert is a "
    "deletion plus an insertion), or by one entry's <= k mutations under privacy unit entry(k), or by one "
    "person's <= L admitted entries under privacy unit person(L, k) (group privacy, the limits enforced)"
)
_SIGNED = (
    "update level: neighbouring inputs differ by one update (insertion or deletion of one item; an upsert is a "
    "deletion plus an insertion), or by one entry's <= k mutations under privacy unit entry(k), or by one "
    "person's <= L admitted entries under privacy unit person(L, k) (sensitivity by contribution per counter, "
    "group privacy where the counter has none; the limits enforced)"
)
_INSERT = (
    "update level on insertion-only input: neighbouring inputs differ by one insertion (deletes and upserts are "
    "dead-lettered), or by one entry's insertion under privacy unit entry(k), or by one person's <= L entries "
    "under privacy unit person(L, k) (group privacy)"
)

_GROWING = (
    "update level on insertion-only input: neighbouring inputs differ by one insertion (deletes and upserts are "
    "dead-lettered, deletion_not_supported), or by one entry's insertion under privacy unit entry(k), or by one "
    "person's <= L entries under privacy unit person(L, k) (group privacy)"
)

_CHANGELOG = (
    "changelog (Pan 004 §4): neighbouring changelogs differ by one entry's mutations, under the enforced "
    "constraint (at most k mutations and/or all within mutation_window of the first insertion; one mutation "
    "under privacy unit update); the loss is the fold count of nodes one entry can affect"
)

# the changelog releases account per entry by the enforced constraint (docs/changelog.md): no person unit
_ENTRY_UNITS = ("update", "entry")

MECHANISMS: dict[str, MechanismSpec] = {
    spec.name: spec
    for spec in (
        MechanismSpec(
            "auto",
            AutoRelease,
            AutoOptions,
            _SIGNED,
            ("count", "histogram", "linear", "pmw"),
            "docs/auto.md",
            "per query set the smallest error: net_change for additive sets, fully_dynamic for PMW",
            checks=ContractParams(),
        ),
        MechanismSpec(
            "fully_dynamic",
            FullyDynamicRelease,
            FullyDynamicOptions,
            _UPDATE,
            ("count", "histogram", "linear", "pmw"),
            "docs/fully_dynamic.md",
            "Qiu-Yi's fully-dynamic mechanism: error in the data size n_t, not the stream length",
            checks=ContractParams(
                budgets=("pure-tuned", "pure-paper", "zcdp", "approx", "pure-tight", "zcdp-tight"),
                stress_budgets=("restarts", "restarts-tight"),
                golden=("pure-tuned", "zcdp-tight"),
                settle_tick=70_000,
            ),
        ),
        MechanismSpec(
            "insertion_only",
            InsertionOnlyRelease,
            NoOptions,
            _INSERT,
            ("count", "histogram", "linear", "pmw"),
            "docs/fully_dynamic.md",
            "Qiu-Yi Thm 8: partitioning feeding the infinite counter; insertions only",
            checks=ContractParams(settle_tick=70_000),
        ),
        MechanismSpec(
            "two_stream_baseline",
            TwoStreamBaseline,
            NoOptions,
            _UPDATE,
            ("count", "histogram", "linear", "pmw"),
            "docs/fully_dynamic.md",
            "two insertion-only counters (insertions, deletions) subtracted",
            checks=ContractParams(golden=("pure-paper",), settle_tick=70_000),
        ),
        MechanismSpec(
            "net_change",
            NetChangeRelease,
            NetChangeOptions,
            _SIGNED,
            ("count", "histogram", "linear"),
            "docs/net_change.md",
            "one continual counter per additive query set over the signed change of each period",
            checks=ContractParams(),
        ),
        MechanismSpec(
            "continual_count",
            ContinualCountRelease,
            ContinualCountOptions,
            _INSERT,
            ("count", "histogram", "linear"),
            "docs/continual_count.md",
            "a continual counter over ticks (a release every tick); insertions only",
            checks=ContractParams(
                {"counter": "honaker", "horizon": 200}, budgets=("pure-tuned", "zcdp", "approx"), golden=("zcdp",)
            ),
        ),
        MechanismSpec(
            "dcr",
            DCRRelease,
            DCROptions,
            _CHANGELOG,
            ("count", "histogram", "linear"),
            "docs/changelog.md",
            "Pan's disjoint continual release: one node per window; entry-level by the enforced constraint",
            checks=ContractParams(),
            units=_ENTRY_UNITS,
        ),
        MechanismSpec(
            "hdcr",
            HDCRRelease,
            HDCROptions,
            _CHANGELOG,
            ("count", "histogram", "linear"),
            "docs/changelog.md",
            "Pan's hierarchical DCR: h layers of DCRs with branching c; current values from <= (c-1) nodes a layer",
            checks=ContractParams({"branching": 3, "height": 4}),
            units=_ENTRY_UNITS,
        ),
        MechanismSpec(
            "swcr",
            SWCRRelease,
            SWCROptions,
            _CHANGELOG,
            ("count", "histogram", "linear"),
            "docs/changelog.md",
            "Pan's sliding-window release: the change over the last W periods every P periods (direct or via HDCR)",
            checks=ContractParams(
                {"window": 5, "method": "hdcr", "branching": 2}
            ),  # the direct one: test_changelog.py,
            units=_ENTRY_UNITS,
        ),
        MechanismSpec(
            "bb_scheduler",
            BBSchedulerRelease,
            BBSchedulerOptions,
            _GROWING,
            ("count", "histogram", "linear", "pmw"),
            "docs/growing.md",
            "Cummings et al. BBScheduler: any static black box re-run as the private size grows by 1 + eta",
            checks=ContractParams({"n0": 40, "eta": 0.25}),  # small sizes: short workloads re-run often,
        ),
        MechanismSpec(
            "bb_improver",
            BBImproverRelease,
            BBImproverOptions,
            _GROWING,
            ("count", "histogram", "linear", "pmw"),
            "docs/growing.md",
            "Cummings et al. BBImprover: any static black box re-run at every growth step, shrinking budget",
            checks=ContractParams({"n0": 40, "step": 40}),
        ),
        MechanismSpec(
            "pmwg",
            PMWGRelease,
            PMWGOptions,
            _GROWING,
            ("count", "histogram", "linear"),  # each row a query of its own (PMW is what it runs)
            "docs/growing.md",
            "Cummings et al. PMWG: online private multiplicative weights on a growing database; streamed queries",
            checks=ContractParams({"n0": 40, "eta": 0.1}),
        ),
        MechanismSpec(
            "randomized_response",
            RandomizedResponseCollector,
            RROptions,
            "local, per entry: two entries' changelogs under the configured constraint (at most k mutations or "
            "B-time-bounded); each client's reports are fold-fold (eps_r, delta_r) randomized response "
            "(Pan Cor. 5.1-5.3)",
            ("histogram",),
            "docs/local_dp.md",
            "continual randomized response (Pan §6): the unbiased histogram from the clients' randomized mutations",
            input_kind="reports",
            trust="local",
            checks=ContractParams(variants=({"max_mutations": 2}, {"aggregation": "hdcr", "layers": 3})),
            units=("update",),
        ),
    )
}


def update_names() -> tuple[str, ...]:
    """The mechanisms over update streams (``ContinualRelease``)."""
    return tuple(n for n, s in MECHANISMS.items() if s.input_kind == "updates")


def names() -> tuple[str, ...]:
    return tuple(MECHANISMS)


def get(name: str) -> MechanismSpec:
    spec = MECHANISMS.get(name)
    if spec is None:
        raise ValueError(f"unknown mechanism {name!r}; choose one of {', '.join(MECHANISMS)}")
    return spec
