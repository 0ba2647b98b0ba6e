"""Accuracy of every mechanism on generated update streams: the tracked error
of the answer a data consumer sees at every period, and the freshness of the
releases.

Streams (all generated here, seeded):

* ``dense``: one-minute ticks over ``--days`` days with a daily cycle
  (busy afternoons, quiet nights), a few hundred entries alive (~250), each
  living a few hours, some modified: N_t / n_t about 300 after a month.
  Queries: the count and a 5-cell histogram.
* ``sparse``: most ticks empty (2% of ``--sparse-ticks`` ticks have
  updates), ~100 alive. Same queries.
* ``pmw``: the PMW workload of ``bench_dynamic.py`` (all ranges of a
  1,024-value domain, n_t about 1,000) at N_t / n_t = 10, 100, 1,000
  (``--pmw-ratios``): the regime where Qiu-Yi's mechanism is meant to win.

Every registered mechanism that takes deletions runs on each stream at eps =
1 (pure: Laplace) and at (eps, delta) = (1, 1e-6) (Gaussian), releasing
every tick (``every_ticks = 1``): a partitioned mechanism carries its last
close's answer forward between closes, so its per-tick error is the error of
"the last release carried forward". Reported per stream, budget and
mechanism: the tracked count error over the ticks (mean, p95, max), the
error at fresh releases (segment closes; every tick for the counters), the
number of fresh releases and the longest stretch without one, the mean
reported (1-beta) bound, and the wall time. Plots go to ``docs/figures/``.

Usage: python benchmarks/bench_utility.py [--days 30] [--seeds 3] [--streams dense,sparse,pmw]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.workloads import sparse_dynamic_stream  # noqa: E402
from transforms.core import (  # noqa: E402
    MECHANISMS,
    ApproxDP,
    DynamicConfig,
    NoiseSource,
    PureDP,
    QuerySet,
    ReleaseIdentity,
    Update,
)

BUDGETS = {"eps=1": PureDP(1.0), "(1,1e-6)": ApproxDP(1.0, 1e-6)}
DENSE_CELLS = 5


def dense_stream(days: int = 30, seed: int = 0):
    """(tick, [Update]) over one-minute ticks with a daily cycle."""
    rng = np.random.default_rng(seed)
    ticks = days * 1440
    minute = np.arange(ticks) % 1440
    # arrivals per minute: 0.2 at night, up to 1.6 in the afternoon (mean ~0.85)
    rate = 0.2 + 1.4 * np.clip(np.sin((minute - 360) / 1440 * 2 * np.pi), 0, None) ** 2
    arrivals = rng.poisson(rate)
    ends: dict[int, list[str]] = {}
    modifies: dict[int, list[str]] = {}
    live: set[str] = set()
    k = 0
    for t in range(1, ticks + 1):
        ups = []
        for eid in ends.pop(t, []):
            if eid in live:
                live.discard(eid)
                ups.append(Update("delete", eid))
        for eid in modifies.pop(t, []):
            if eid in live:
                ups.append(Update("upsert", eid, (0, int(rng.integers(DENSE_CELLS)))))
        for _ in range(int(arrivals[t - 1])):
            eid = f"e{k}"
            k += 1
            live.add(eid)
            ups.append(Update("insert", eid, (0, int(rng.integers(DENSE_CELLS)))))
            life = 1 + int(rng.exponential(300))  # ~5 hours
            ends.setdefault(t + life, []).append(eid)
            if rng.random() < 0.3:
                modifies.setdefault(t + int(rng.integers(1, life + 1)), []).append(eid)
        if ups:
            yield t, ups


def sparse_stream(ticks: int = 100_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    live: list[str] = []
    k = 0
    for t in range(1, ticks + 1):
        if rng.random() > 0.02:
            continue
        ups = []
        for _ in range(int(rng.integers(1, 4))):
            if live and rng.random() < (0.3 if len(live) < 100 else 0.6):
                ups.append(Update("delete", live.pop(int(rng.integers(len(live))))))
            else:
                eid = f"s{k}"
                k += 1
                live.append(eid)
                ups.append(Update("insert", eid, (0, int(rng.integers(DENSE_CELLS)))))
        yield t, ups


def run(name, config, batches, last_tick, seed, options=None):
    """Drive mechanism ``name`` over the batches with a release every tick;
    returns per-tick (count estimate, bound, fresh release?) and the truth."""
    spec = MECHANISMS[name]
    core = spec.core_cls(config, stream="bench", end_tick=last_tick, every_ticks=1, options=options)
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-utility-{seed}"))
    est = np.zeros(last_tick + 1)
    bound = np.zeros(last_tick + 1)
    fresh = np.zeros(last_tick + 1, dtype=bool)
    truth = np.zeros(last_tick + 1)
    live: dict[str, int] = {}
    count_name = config.queries[0].name

    def collect(res):
        closes = set(res.closes)
        for a in res.answers:
            if a.query == count_name:
                est[a.tick] = float(a.estimate[0])
                bound[a.tick] = a.error_bound or 0.0
                fresh[a.tick] = a.tick in closes

    prev = 0
    t0 = time.perf_counter()
    for tick, ups in batches:
        truth[prev + 1 : tick] = len(live)
        for u in ups:
            if u.op == "insert":
                live[u.entry_id] = 1
            elif u.op == "delete":
                live.pop(u.entry_id, None)
        truth[tick] = len(live)
        collect(core.process_tick(tick, ups, noise))
        prev = tick
    truth[prev + 1 :] = len(live)
    for res in core.run_to_end(noise):
        collect(res)
    seconds = time.perf_counter() - t0
    return est[1:], bound[1:], fresh[1:], truth[1:], seconds


def summarise(est, bound, fresh, truth):
    err = np.abs(est - truth)
    gaps = np.diff(np.flatnonzero(np.concatenate([[True], fresh, [True]])))
    return {
        "mean": float(err.mean()),
        "p95": float(np.percentile(err, 95)),
        "max": float(err.max()),
        "at_releases": float(np.abs(est - truth)[fresh].mean()) if fresh.any() else float("nan"),
        "releases": int(fresh.sum()),
        "longest_gap": int(gaps.max()) if len(gaps) else 0,
        "bound": float(bound.mean()),
        "covered": float(np.mean(np.abs(est - truth)[bound > 0] <= bound[bound > 0])) if (bound > 0).any() else 1.0,
    }


# (label, registered mechanism, profile); auto runs net_change on these additive queries
MECHS = [
    ("auto", "auto", "tuned"),
    ("fully_dynamic", "fully_dynamic", "tuned"),
    ("fully_dynamic (tight)", "fully_dynamic", "tight"),
    ("two_stream_baseline", "two_stream_baseline", "tuned"),
]


def table(stream_name, batches_fn, last_tick, seeds, queries, out_rows, curves):
    batches = list(batches_fn())
    n_updates = sum(len(u) for _, u in batches)
    ticks_with = np.zeros(last_tick, dtype=bool)
    ticks_with[[t - 1 for t, _ in batches]] = True
    print(
        f"\n## {stream_name}: {n_updates:,} updates over {last_tick:,} ticks ({ticks_with.mean():.1%} with updates)\n"
    )
    print(
        "| budget | mechanism | tracked count error mean / p95 / max | at fresh releases | fresh releases | "
        "longest gap (ticks) | mean bound | bound held | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for bname, budget in BUDGETS.items():
        for name, kind, profile in MECHS:
            config = DynamicConfig(queries, budget, profile=profile)
            rows = []
            for seed in range(seeds):
                est, bound, fresh, truth, secs = run(kind, config, batches, last_tick, seed)
                if seed == 0:
                    curves[(stream_name, bname, name)] = (est, truth)
                rows.append((summarise(est, bound, fresh, truth), secs))
            m = {k: float(np.mean([r[0][k] for r in rows])) for k in rows[0][0]}
            secs = float(np.mean([r[1] for r in rows]))
            out_rows.append((stream_name, bname, name, m))
            errors = f"{m['mean']:.1f} / {m['p95']:.1f} / {m['max']:.1f}"
            print(
                f"| {bname} | {name} | {errors} | {m['at_releases']:.1f} | {m['releases']:,.0f} | "
                f"{m['longest_gap']:,.0f} | {m['bound']:.1f} | {m['covered']:.1%} | {secs:.1f} |",
                flush=True,
            )


PMW_MECHS = [
    ("fully_dynamic", "fully_dynamic", "tuned"),
    ("fully_dynamic (tight)", "fully_dynamic", "tight"),
    ("two_stream_baseline", "two_stream_baseline", "tuned"),
]


def pmw_table(ratios, seeds, budgets):
    """Error of the range queries (max over all ranges) at the end of streams
    with n_t ~ 1000 and growing N_t: fully_dynamic against the baseline."""
    print("\n## pmw: all ranges of 1,024 values, n_t ~ 1,000; max range error at the last release\n")
    print(
        "| budget | N_t / n_t | updates | " + " | ".join(label for label, _, _ in PMW_MECHS) + " | tight / baseline |"
    )
    print("|---|---|---|" + "---|" * len(PMW_MECHS) + "---|")
    q = QuerySet("ranges", "pmw", domain_size=1024, ranges=True)
    results = []
    for bname in budgets:
        for ratio in ratios:
            results.append((bname, ratio, _pmw_row(q, BUDGETS[bname], ratio, seeds, bname)))
    return results


def _pmw_row(q, budget, ratio, seeds, bname):
    n = 1000 * ratio
    errs, secs = {}, {}
    for label, name, profile in PMW_MECHS:
        config = DynamicConfig((q,), budget, profile=profile)
        vals = []
        t0 = time.perf_counter()
        for seed in range(seeds):
            core = MECHANISMS[name].core_cls(config, stream="pmw")
            noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-pmw-{seed}"))
            hist = np.zeros(1024)
            live: dict[str, int] = {}
            last = None
            for tick, ups in sparse_dynamic_stream(n, fields=("value",), seed=7):
                for u in ups:
                    if u.op != "insert":
                        hist[live.pop(u.entry_id)] -= 1
                    if u.op != "delete":
                        live[u.entry_id] = u.item[0]
                        hist[u.item[0]] += 1
                res = core.process_tick(tick, ups, noise)
                if res.answers:
                    last = (np.asarray(res.answers[-1].estimate, dtype=float), hist.copy())
            est, h = last
            e = np.concatenate([[0.0], np.cumsum(est - h)])
            vals.append(float(e.max() - e.min()))
        errs[label] = float(np.mean(vals))
        secs[label] = (time.perf_counter() - t0) / seeds
    cells = " | ".join(f"{errs[label]:,.0f} ({secs[label]:.0f} s)" for label, _, _ in PMW_MECHS)
    tight = errs["fully_dynamic (tight)"] / errs["two_stream_baseline"]
    print(f"| {bname} | {ratio:,} | {n:,} | {cells} | {tight:.1f} |", flush=True)
    return errs


def plot(curves, out: Path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("(matplotlib missing: pip install -e '.[bench]' for the plots)")
        return
    out.mkdir(parents=True, exist_ok=True)
    for stream in sorted({k[0] for k in curves}):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
        for ax, bname in zip(axes, BUDGETS):
            truth = None
            for (s, b, name), (est, tr) in curves.items():
                if s == stream and b == bname:
                    days = np.arange(1, len(est) + 1) / 1440
                    if name != "fully_dynamic":  # tuned: off the chart; the table has it
                        ax.plot(days, est, lw=0.6, label=name)
                    truth = tr
            if truth is not None:
                ax.plot(np.arange(1, len(truth) + 1) / 1440, truth, "k", lw=1.0, label="truth")
            ax.set_title(f"{stream}, {bname}: the count at every tick")
            ax.set_xlabel("days")
            ax.set_ylim(-100, 2.5 * float(np.max(truth)) + 50 if truth is not None else None)
        axes[0].set_ylabel("active entries")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"accuracy_{stream}.png", dpi=110)
        plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--sparse-ticks", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--streams", default="dense,sparse,pmw")
    ap.add_argument("--pmw-ratios", default="10,100,1000")
    ap.add_argument("--pmw-budgets", default="pure,approx", help="pure (eps = 1) and/or approx ((1, 1e-6))")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    args = ap.parse_args(argv)
    streams = args.streams.split(",")
    queries = (QuerySet("active", "count"), QuerySet("by_cell", "histogram", domain_size=DENSE_CELLS))
    rows, curves = [], {}
    print(f"# bench_utility: seeds {args.seeds}, every_ticks 1, beta 0.05")
    if "dense" in streams:
        table("dense", lambda: dense_stream(args.days), args.days * 1440, args.seeds, queries, rows, curves)
    if "sparse" in streams:
        table("sparse", lambda: sparse_stream(args.sparse_ticks), args.sparse_ticks, args.seeds, queries, rows, {})
    if "pmw" in streams:
        names = {"pure": "eps=1", "approx": "(1,1e-6)"}
        budgets = [names[b] for b in args.pmw_budgets.split(",")]
        pmw_table([int(r) for r in args.pmw_ratios.split(",")], max(1, args.seeds - 1), budgets)
    if curves:
        plot(curves, args.out)
    for stream in ("dense", "sparse"):
        for bname in BUDGETS:
            got = {m: r for s, b, m, r in rows if s == stream and b == bname}
            if "auto" in got and "two_stream_baseline" in got:
                ratio = got["auto"]["mean"] / got["two_stream_baseline"]["mean"]
                print(f"{stream} {bname}: auto / two_stream_baseline mean tracked count error = {ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
