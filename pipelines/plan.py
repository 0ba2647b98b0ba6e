"""The accuracy of a release before it runs: ``python -m pipelines.plan --config FILE [--origin T]
[--release-id ID] [--json]``.

Reads the configuration only (no data, no key, no sink): for every stream and query, the mechanism that answers
it, its share of the stream's budget (and that budget), the counter, and the (1 - beta) error bound and the
standard deviation of the released estimate per period at the first period, the middle one and the last
(``time.end``); for a release without an end, at :data:`UNBOUNDED_PERIODS` periods. The numbers are those the
run's release records carry (``error_bound``): they come from the mechanism's own bound code, run on a stream
with no data (``transforms/core/forecast.py``); a mechanism whose bound depends on the data says on what instead.
Every stream of a release has the same plan (the budget is per stream). Exit status: 0; 2 a configuration error
(one line, as ``pipelines.release`` says it). ``docs/pipelines.md`` ("Plan").
"""

# ruff: noqa: E402 - the third-party warning filter goes before the imports that warn

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from pipelines.quiet import quiet_third_party_warnings

quiet_third_party_warnings()  # before the imports below: some of them warn

from pipelines.config import ConfigError, MissingTimeError, Override, load_config
from pipelines.outputs import budget_dict, budget_text, mechanism_plan, unit_statement
from transforms.core.forecast import DATA_DEPENDENT, DATA_INDEPENDENT, forecast, release_ticks
from transforms.core.foundation.accounting import stated_share

__all__ = ["main", "plan_rows", "plan_report", "UNBOUNDED_PERIODS"]

#: the periods a release without an end is planned at (its bound grows with the periods released)
UNBOUNDED_PERIODS = (1, 100, 10_000)

#: the flags that set configuration keys, as ``pipelines.release`` has them
OVERRIDES = {"--origin": "time.origin", "--release-id": "privacy.release_id"}


def plan_ticks(cfg) -> tuple[list[int], str]:
    """The ticks the plan states (release ticks: period ends) and what they are."""
    every = cfg.every_ticks or 1
    if cfg.end_tick is None:
        return [p * every for p in UNBOUNDED_PERIODS], (
            f"no time.end: at periods {', '.join(map(str, UNBOUNDED_PERIODS))} (the bound grows with the periods)"
        )
    ticks = release_ticks(cfg.end_tick, every)
    chosen = sorted({ticks[0], ticks[(len(ticks) - 1) // 2], ticks[-1]})
    return chosen, "the first period, the middle one and the last (time.end)"


def _entries(cfg) -> dict:
    """Per query name: (its plan entry, its share of the stream's budget or None: split the mechanism's way)."""
    plan = cfg.mechanism_spec.plan(
        cfg.dynamic_config(), cfg.mechanism_options(), end_tick=cfg.end_tick, every_ticks=cfg.every_ticks
    )
    out = {}
    for entry in plan:
        shares = entry.query_shares()
        for i, name in enumerate(entry.queries):
            out[name] = (entry, None if shares is None else shares[i])
    return out


def plan_rows(cfg) -> list[dict]:
    """One row per (stream, query, planned tick): what the run's record at that tick will say (``error_bound``)
    and the standard deviation of its estimate; ``depends_on`` instead of numbers for a mechanism whose bound
    depends on the data."""
    ticks, _ = plan_ticks(cfg)
    entries = _entries(cfg)
    spec = cfg.mechanism_spec
    named = getattr(cfg.mechanism_options(), "counter", None)  # a counter the options name (continual_count)
    known = {}
    if spec.name in DATA_INDEPENDENT:
        for f in forecast(
            spec.core_cls,
            cfg.dynamic_config(),
            cfg.mechanism_options(),
            ticks,
            end_tick=cfg.end_tick,
            every_ticks=cfg.every_ticks,
            consistency=cfg.consistency(),
            noise_off=cfg.disable_noise,
        ):
            known[(f.tick, f.query)] = f
    target = cfg.stream_budget()  # each stream's (the configured budget / max_streams_per_person, if set)
    ledger = cfg.ledger_budget()  # a tight Gaussian account's shares are shares of its rho (stated_share)
    rows = []
    for stream in cfg.streams:
        for q in cfg.queries:
            entry, share = entries[q.name]
            base = {
                "stream": stream,
                "query": q.name,
                "type": q.type,
                "weight": q.weight,
                "mechanism": entry.mechanism,
                "counter": entry.counter or named,
                "horizon": entry.horizon,
                "share": share,  # of the stream's budget; None: the mechanism splits its share its own way
                "mechanism_share": entry.share,
                "budget": budget_dict(stated_share(ledger, target, entry.share if share is None else share)),
                "beta": cfg.beta,
            }
            for tick in ticks:
                row = dict(base, tick=tick, as_of=_as_of(cfg, tick))
                f = known.get((tick, q.name)) if entry.mechanism in DATA_INDEPENDENT else None  # (auto's parts)
                if f is not None:
                    sd = None if f.sd is None else f.sd * q.scale * (math.sqrt(2.0) if q.signed else 1.0)
                    row.update(error_bound=q.bound(f.error_bound), sd=sd)
                    if f.plus_tau:  # the record states error_bound + |tau| (docs/consistency.md)
                        row["plus_tau"] = True
                else:
                    row.update(error_bound=None, sd=None, depends_on=_depends_on(spec.name, entry.mechanism))
                rows.append(row)
    return rows


def _depends_on(name: str, part: str) -> str:
    return DATA_DEPENDENT.get(part) or DATA_DEPENDENT.get(name) or "the data (no bound forecast)"


def _as_of(cfg, tick: int) -> float | None:
    """The event time up to which the release at ``tick`` counts (the records' ``as_of``)."""
    if cfg.ticks:
        return None
    return cfg.origin + tick * cfg.tick_seconds


def plan_report(cfg, config_path: str) -> dict:
    """The plan as data (``--json``): the release's settings, the mechanisms' plan lines and the rows."""
    if cfg.open_keys:  # streams: {keys: open} (issue 33): the selection and the answers, no table of bounds
        from pipelines.open_keys import open_keys_plan

        return {
            "config": config_path,
            "release_digest": cfg.release_digest(),
            "guarantee": unit_statement(cfg),
            "budget": budget_dict(cfg.target_budget()),
            "open_keys": open_keys_plan(cfg),
        }
    ticks, which = plan_ticks(cfg)
    return {
        "config": config_path,
        "release_digest": cfg.release_digest(),
        "guarantee": unit_statement(cfg),
        "budget_per_stream": budget_dict(cfg.stream_budget()),
        **({} if cfg.max_streams_per_person is None else {"budget_per_person": budget_dict(cfg.target_budget())}),
        "streams": list(cfg.streams),
        "mechanisms": mechanism_plan(cfg),
        "ticks": ticks,
        "ticks_are": which,
        "period_seconds": None if cfg.ticks else (cfg.every_ticks or 1) * cfg.tick_seconds,
        "rows": plan_rows(cfg),
    }


def _num(x, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def render(report: dict) -> str:
    """The human table: one block per query (every stream has the same plan), one line per planned tick."""
    if "open_keys" in report:
        lines = [f"plan of {report['config']} (read before any data)", f"guarantee:   {report['guarantee']}"]
        lines.append(f"budget:      {budget_text(report['budget'])} for the whole release, all keys")
        return "\n".join(lines + [f"open keys:   {m}" for m in report["open_keys"]])
    lines = [
        f"plan of {report['config']} (read before any data; the bounds the run's records will carry)",
        f"guarantee:   {report['guarantee']}",
        f"budget:      {budget_text(report['budget_per_stream'])} per stream; streams: "
        + ", ".join(report["streams"])
        + " (each the same plan)",
    ]
    if "budget_per_person" in report:  # privacy.max_streams_per_person: a person reaches at most n streams
        lines.append(f"             {budget_text(report['budget_per_person'])} per person across all streams")
    lines += [f"mechanisms:  {m}" for m in report["mechanisms"]]
    lines.append(f"ticks:       {', '.join(map(str, report['ticks']))}: {report['ticks_are']}")
    first = report["streams"][0]
    rows = [r for r in report["rows"] if r["stream"] == first]
    beta = rows[0]["beta"] if rows else None
    head = ("query", "mechanism", "counter", "share", "budget", "tick", f"bound(1-{beta:g})", "sd")
    table = [head]
    for r in rows:
        share = f"{r['mechanism_share']:.0%}, own split" if r["share"] is None else f"{r['share']:.1%}"
        budget = budget_text(r["budget"])
        if r["error_bound"] is None and r.get("depends_on"):
            bound, sd = "depends on data", "-"
        else:
            bound, sd = _num(r["error_bound"], 6), _num(r["sd"])
            if r.get("plus_tau"):
                bound += " + |tau|"
        table.append((r["query"], r["mechanism"], r["counter"] or "-", share, budget, str(r["tick"]), bound, sd))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    notes = sorted({r["depends_on"] for r in rows if r.get("depends_on")})
    lines += [f"note: the bound depends on {n}; the run's records state it" for n in notes]
    if any(r.get("plus_tau") for r in rows):
        lines.append(
            "note: + |tau|: the histogram is projected onto its count (cells >= 0 summing to it); its records state "
            "the bound plus |tau|, the projection's threshold, known only from the released values "
            "(docs/consistency.md)"
        )
    lines.append(
        "bound: the records' error_bound, on every value of the query at once with probability >= 1 - beta; "
        "sd: the standard deviation of each released value (in the query's units)"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.plan", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/demo.yaml", help="YAML configuration (default configs/demo.yaml)")
    ap.add_argument("--origin", type=float, default=None, help="override time.origin (epoch seconds)")
    ap.add_argument("--release-id", dest="release_id", default=None, help="override privacy.release_id")
    ap.add_argument("--json", action="store_true", help="print the plan as JSON (for machines)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    overrides = [
        Override(flag, key, getattr(args, flag.lstrip("-").replace("-", "_")))
        for flag, key in OVERRIDES.items()
        if getattr(args, flag.lstrip("-").replace("-", "_")) is not None
    ]
    try:
        cfg = load_config(args.config, overrides)
        if cfg.mechanism_spec.input_kind == "reports":
            raise ConfigError(
                f"mechanism.kind: {cfg.mechanism} collects clients' randomized reports (local DP): its accuracy "
                "depends on the number of reports; see docs/local_dp.md"
            )
        report = plan_report(cfg, args.config)
    except (ConfigError, MissingTimeError) as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    report["seconds"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(report, indent=1) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
