"""What the CLI prints after a run: the release (its id, mechanisms, budget spent) and the operator's counts
(confidential: exact, not differentially private), a warning when many records were dead-lettered, and the
failure of a bounded run that dead-lettered too much. Counts only, never a record."""

from __future__ import annotations

import sys

from apache_beam.metrics.metric import MetricsFilter

from pipelines.outputs import (
    budget_dict,
    budget_text,
    ledger_delta,
    mechanism_plan,
    spend_in_units,
    target_dict,
    unit_statement,
)
from transforms.core.contribution.bounding import CONTRIBUTION_BOUNDED
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.spec import NAMESPACE

__all__ = [
    "summary",
    "counts_first_bundles",
    "dead_letter_failure",
    "dead_letter_warning",
    "counters",
    "DEAD_LETTER_WARNING_SHARE",
]

#: a run that dead-letters this share of the records it read or more says so on stderr, with the top reasons,
#: whatever ``source.max_dead_letter_fraction`` is (that key decides the exit status of a bounded run only)
DEAD_LETTER_WARNING_SHARE = 0.05


def counters(result) -> dict:
    """The run's counters of our namespace, summed over steps."""
    out = {}
    for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        out[c.key.metric.name] = out.get(c.key.metric.name, 0) + c.committed
    return out


def counts_first_bundles(result) -> bool:
    """Whether ``result`` is the BundleBased DirectRunner's (streaming with TestStream or Pub/Sub), whose metrics
    count only the first bundle of each step (``docs/beam.md``). The FnApiRunner (a followed file, a bounded run),
    Flink and Dataflow count every bundle."""
    return type(result).__module__.startswith("apache_beam.runners.direct")


def summary(result, written, cfg, seconds: float, release: ReleaseIdentity | None = None) -> str:
    """The run's summary (printed on stdout by the CLI); a high dead-letter share (:func:`dead_letter_warning`)
    is said at once on stderr, whatever ``source.max_dead_letter_fraction`` is."""
    warning = dead_letter_warning(result, cfg)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    counts = counters(result)
    dists = {d.key.metric.name: d.committed for d in result.metrics().query()["distributions"]}
    lines = []
    if release is not None:
        lines.append(
            f"release id:          {release.release_id}"
            + ("" if cfg.release_id else "  (a new release: it spends its own budget; budgets of releases add up)")
        )
    lines.append(f"guarantee:           {unit_statement(cfg)}")  # which unit protects whom, in one line
    if cfg.open_keys:  # streams: {keys: open} (issue 33)
        from pipelines.open_keys import open_keys_plan

        lines += [f"open keys:           {line}" for line in open_keys_plan(cfg)]
        if counts.get("open_keys_max_keys_reached"):  # public: the released keys are
            from pipelines.config.open_keys import open_settings

            o = open_settings(cfg)  # an open histogram's cap is its max_cells (on (stream, cell) pairs)
            cap, what = ("max_cells", "cells") if o.cells else ("max_keys", "keys")
            lines.append(f"open keys:           {cap} reached: {o.max_keys} {what} released, no more")
    else:
        lines += [f"mechanisms:          {line}" for line in mechanism_plan(cfg)]
    released = counts.get("releases_written", 0)
    lines.append(f"releases written:    {released}")
    spent = dists.get("budget_spent_written_micro")
    if spent is not None and spent.count:
        configured, update_level = spend_in_units(cfg, (spent.max / 1e6,) + ledger_delta(cfg))
        unit = cfg.unit_text()
        lines.append(
            f"budget spent:        {budget_text(configured)} of {budget_text(target_dict(cfg))} per stream "
            f"(privacy unit '{unit}', the configured unit and currency)"
        )
        if cfg.unit == "person" and cfg.max_streams_per_person is not None:
            n = cfg.max_streams_per_person
            lines.append(
                f"                     a person's updates reach at most {n} stream{'s' if n != 1 else ''}: "
                f"{budget_text(budget_dict(cfg.target_budget()))} per person across all streams (the configured "
                "budget)"
            )
        ledger = cfg.ledger_budget()
        if cfg.group_unit == cfg.privacy_unit:  # (the changelog releases charge the configured unit itself)
            lines.append(
                f"                     update-level equivalent (the ledger's charge): {budget_text(update_level)} of "
                f"{budget_text(budget_dict(ledger))}"
            )
    undercounts = cfg.streaming and counts_first_bundles(result)
    exactness = "may undercount on this runner (see the note below)" if undercounts else "exact"
    lines.append(
        "operator data below: exact counts, NOT differentially private (confidential; never publish them "
        f"beside the releases); counts of this run: {exactness}:"
    )
    lines += [
        f"records read:        {counts.get('records_read', 0)}  (input elements: lines, Avro records, messages)",
        f"updates accepted:    {counts.get('updates_accepted', 0)}  (an upsert counts as 2: a delete and an "
        "insert; so this can exceed the records read)",
    ]
    dead = {k[len("dead_letter_") :]: v for k, v in counts.items() if k.startswith("dead_letter_")}
    lines.append(f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""))
    if cfg.privacy_unit.kind == "person" and not cfg.open_keys:  # the person step's counters (transforms/person.py)
        lines.append(
            f"contribution bounds:  {counts.get('persons_seen', 0)} persons, {counts.get('entries_admitted', 0)} "
            f"entries admitted, {counts.get('entries_refused', 0)} refused (over max_entries_per_person: their "
            "updates are dead letters contribution_bounded"
            + (
                "; so are a person's updates in streams past max_streams_per_person)"
                if cfg.max_streams_per_person is not None
                else ")"
            )
        )
    dups = counts.get("duplicates_dropped", 0)
    if cfg.source.DEDUPLICATES or cfg.source.dedup_field:
        lines.append(f"duplicates dropped:  {dups}")
    clamped = {k[len("sum_clamped_") :]: v for k, v in counts.items() if k.startswith("sum_clamped_")}
    if any(q.type == "sum" for q in cfg.queries):
        lines.append(
            f"sum values clamped:  {sum(clamped.values())}"
            + (f"  {dict(sorted(clamped.items()))}" if clamped else "")
            + "  (outside [lower, upper])"
        )
    closed = counts.get("segments_closed", 0)
    if not cfg.open_keys:
        lines.append(
            f"segments closed:     {closed}" + ("  (not reported by this runner)" if released and not closed else "")
        )
    if undercounts:
        lines.append(
            "note: the DirectRunner's streaming mode under-reports these metrics (Beam counts only the "
            "first bundle of each step, see docs/beam.md): every count above, and the releases written, may be "
            "too low; the outputs themselves are complete"
        )
    lines.append(f"output files:        {', '.join(written)}")
    lines.append(f"wall time:           {seconds:.1f} s")
    return "\n".join(lines)


def _dead_letters(counts: dict) -> dict:
    """The dead letters by reason, without the entries refused by contribution bounding (the person unit's
    guarantee refuses a person's entries past the limit by design, not because the input is wrong)."""
    dead = {k[len("dead_letter_") :]: v for k, v in counts.items() if k.startswith("dead_letter_") and v}
    dead.pop(CONTRIBUTION_BOUNDED, None)
    return dead


def _top(dead: dict) -> str:
    return ", ".join(f"{r} {n}" for r, n in sorted(dead.items(), key=lambda kv: (-kv[1], kv[0]))[:3])


def dead_letter_warning(result, cfg) -> str | None:
    """The warning of a run that dead-lettered :data:`DEAD_LETTER_WARNING_SHARE` or more of the records it read,
    whatever ``source.max_dead_letter_fraction`` is (None: fewer, or the run fails on them anyway:
    :func:`dead_letter_failure` says it). Counts and reasons only; never a record."""
    counts = counters(result)
    read = counts.get("records_read", 0)
    dead = _dead_letters(counts)
    total = sum(dead.values())
    if not read or min(total / read, 1.0) < DEAD_LETTER_WARNING_SHARE:
        return None
    if not cfg.streaming and dead_letter_failure(result, cfg) is not None:
        return None
    return (
        f"dead letters: {total} of the {read} records read ({min(total / read, 1.0):.1%}) were rejected; top "
        f"reasons: {_top(dead)} (at or above {DEAD_LETTER_WARNING_SHARE:.0%}: check the input; the dead letters are "
        "in the sink's confidential folder, docs/pipelines.md lists the reasons)"
    )


def dead_letter_failure(result, cfg) -> str | None:
    """The message of a bounded run that dead-lettered everything it read, or
    more than ``source.max_dead_letter_fraction`` of it (None: fine), not counting
    the entries refused by contribution bounding. Counts only, with the top
    reasons; never a record."""
    counts = counters(result)
    read = counts.get("records_read", 0)
    dead = _dead_letters(counts)  # without contribution bounding's refusals (by design, not a wrong input)
    total = sum(dead.values())
    if not read or not total:
        return None
    accepted = counts.get("updates_accepted", 0)
    share = min(total / read, 1.0)
    fraction = cfg.source.max_dead_letter_fraction
    if accepted and share <= fraction:
        return None
    top = _top(dead)
    what = "every record" if not accepted else f"{share:.1%} of the records (more than "
    what += "" if not accepted else f"source.max_dead_letter_fraction = {fraction:g})"
    return (
        f"dead letters: the run rejected {what}: {total} of {read} read; top reasons: {top} (the dead letters "
        "are in the sink's confidential folder; docs/pipelines.md lists the reasons)"
    )
