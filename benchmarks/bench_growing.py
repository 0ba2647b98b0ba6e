"""Growing databases: error over time of BBScheduler, BBImprover and PMWG
against the insertion-only mechanism (000 Thm 8), with adaptive queries.

The stream: ``--ticks`` ticks (default 1,000) whose insertions grow linearly
(tick t brings about 2 t N / T^2 entries, N = ``--entries``, default 10^6)
over a ``--domain``-value domain (default 16) whose popular values drift
(every T/8 ticks the mass moves to other values). One adaptive query per tick
(10^3 in all): a 0/1 row over the domain chosen by an adversary who knows the
data, the row of a fixed pool of 200 on which PMWG's public histogram is
furthest from the truth at that moment. Every mechanism answers it from what
it has released: PMWG online (``answer_query``), the others from their
current histogram release (``every_ticks = 1``; a linear query of a released
histogram is post-processing). Error: |answer - truth| / n_t.

All at eps = ``--eps`` (default 1) per stream, pure DP; the histogram is the
static black box of BBScheduler / BBImprover (re-runs as the private size
grows) and the insertion-only mechanism's counter.

Writes ``--out/growing_error.png`` and prints a markdown table (median
relative error in four windows of the run, and the share of answers within
their stated bound). Usage:
``python benchmarks/bench_growing.py [--entries 1000000] [--ticks 1000] [--eps 1.0] [--out docs/figures]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transforms.core import DynamicConfig, NoiseSource, PureDP, QuerySet, ReleaseIdentity  # noqa: E402
from transforms.core.continual.baselines import InsertionOnlyRelease  # noqa: E402
from transforms.core.families.growing import (  # noqa: E402
    BBImproverOptions,
    BBImproverRelease,
    BBSchedulerOptions,
    BBSchedulerRelease,
    PMWGOptions,
    PMWGRelease,
)
from transforms.core.foundation.entries import TickBatch  # noqa: E402


def stream(entries: int, ticks: int, d: int, seed: int):
    """(tick, items) with linearly growing insertions and a drifting mix."""
    rng = np.random.default_rng(seed)
    total = 0
    for t in range(1, ticks + 1):
        want = int(round(entries * (t / ticks) ** 2)) - total
        total += want
        center = 3 * (t // max(ticks // 8, 1))
        cells = (center + np.minimum(rng.geometric(0.45, want) - 1, d - 1)) % d
        yield t, cells


def run(args):
    d, T = args.domain, args.ticks
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=d),), PureDP(args.eps))
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity("bench-growing"))
    mechs = {
        "bb_scheduler": BBSchedulerRelease(cfg, stream="s", every_ticks=1, options=BBSchedulerOptions(n0=args.n0)),
        "bb_improver": BBImproverRelease(
            cfg, stream="s", every_ticks=1, options=BBImproverOptions(n0=args.n0, step=args.entries // 100)
        ),
        "pmwg": PMWGRelease(cfg, stream="s", options=PMWGOptions(n0=args.n0, alpha=args.alpha, hard_per_phase=32)),
        "insertion_only": InsertionOnlyRelease(cfg, stream="s", every_ticks=1),
    }
    rng = np.random.default_rng(5)
    pool = (rng.random((200, d)) < 0.5).astype(float)
    hist = np.zeros(d, dtype=np.int64)
    current = {name: None for name in mechs}  # latest released histogram (estimate, bound)
    rows = []  # (tick, n, name, rel error, within bound)
    busy = dict.fromkeys(mechs, 0.0)
    for t, cells in stream(args.entries, T, d, seed=1):
        hist += np.bincount(cells, minlength=d)
        items = [(int(c),) for c in cells]
        for name, m in mechs.items():
            t0 = time.perf_counter()
            res = m.apply(TickBatch(t, list(items), [], len(items)), noise)
            busy[name] += time.perf_counter() - t0
            for a in res.answers:
                current[name] = (np.asarray(a.estimate), a.error_bound)
        n = int(hist.sum())
        p = mechs["pmwg"].pmw[0]
        j = int(np.argmax(np.abs(p.n_hat * (pool @ p.y) - pool @ hist)))
        row, truth = pool[j], float(pool[j] @ hist)
        t0 = time.perf_counter()
        qa = mechs["pmwg"].answer_query(t, f"q{t}", row, noise)
        busy["pmwg"] += time.perf_counter() - t0
        rows.append((t, n, "pmwg", abs(qa.answer - truth) / max(n, 1), abs(qa.answer - truth) <= qa.bound))
        for name in ("bb_scheduler", "bb_improver", "insertion_only"):
            if current[name] is None:
                est, bound = np.zeros(d), float("inf")
            else:
                est, cell_bound = current[name]
                bound = cell_bound * row.sum()  # each cell within its bound: the row's sum of them
            err = abs(float(row @ est) - truth)
            rows.append((t, n, name, err / max(n, 1), err <= bound))
    return rows, busy, {name: m.spent.epsilon for name, m in mechs.items()}


def report(rows, busy, spent, T, out: Path):
    names = ("bb_scheduler", "bb_improver", "pmwg", "insertion_only")
    windows = [(1, T // 4), (T // 4 + 1, T // 2), (T // 2 + 1, 3 * T // 4), (3 * T // 4 + 1, T)]
    print(
        "\n| mechanism | " + " | ".join(f"ticks {a}-{b}" for a, b in windows) + " | within bound | eps spent | core s |"
    )
    print("|---|" + "---|" * (len(windows) + 3))
    for name in names:
        cells = []
        for a, b in windows:
            errs = [r[3] for r in rows if r[2] == name and a <= r[0] <= b]
            cells.append(f"{np.median(errs):.4f}")
        within = np.mean([r[4] for r in rows if r[2] == name])
        print(f"| {name} | " + " | ".join(cells) + f" | {within:.3f} | {spent[name]:.3f} | {busy[name]:.1f} |")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name in names:
        r = [x for x in rows if x[2] == name]
        ns = np.array([x[1] for x in r], dtype=float)
        errs = np.array([x[3] for x in r])
        k = 25  # a running median over 25 queries
        med = np.array([np.median(errs[max(0, i - k) : i + 1]) for i in range(len(errs))])
        ax.plot(ns, med, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("database size n_t (entries)")
    ax.set_ylabel("|error| / n_t (running median of 25 queries)")
    ax.set_title("Adaptive linear queries on a growing database (eps = 1)")
    ax.legend()
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "growing_error.png", dpi=110)
    print(f"\nplot: {out / 'growing_error.png'}")


def example(out: Path):
    """The worked example of docs/growing.md: configs/growing.yaml's stream
    and queries, run through the core exactly as the pipeline runs them
    (``run_with_queries``, a fixed key), against the truth."""
    import json

    import yaml

    from pipelines.config import parse_config
    from pipelines.submit_queries import parse_query
    from transforms.core import Update
    from transforms.core.families.growing import run_with_queries

    cfg = parse_config(yaml.safe_load((ROOT / "configs" / "growing.yaml").read_text()), ROOT)
    domain = [str(v) for v in cfg.queries[0].domain]
    tick = lambda t: int((t - cfg.origin) // cfg.tick_seconds) + 1  # noqa: E731
    end = tick(cfg.end - 1e-9)
    by_tick, inserts = {}, []
    for line in Path(cfg.source_path).read_text().splitlines():
        d = json.loads(line)
        if d["op"] == "insert":
            t = tick(d["time"])
            by_tick.setdefault(t, []).append(Update("insert", d["id"], (domain.index(d["item"]["category"]),)))
            inserts.append((t, domain.index(d["item"]["category"])))
        else:
            by_tick.setdefault(tick(d["time"]), []).append(Update(d["op"], d["id"], None))
    queries = []
    for line in Path(cfg.queries_source.path).read_text().splitlines():
        _, q = parse_query(cfg, line)
        queries.append((tick(q.event_time), q.event_time, q.query_id, q.row))
    core = PMWGRelease(
        cfg.dynamic_config(),
        stream="default",
        end_tick=end,
        every_ticks=cfg.every_ticks,
        options=cfg.mechanism_options(),
    )
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity("growing-example"))
    _, answered = run_with_queries(core, by_tick, queries, noise)
    rows = {q[2]: np.asarray(q[3]) for q in queries}
    ticks_arr = np.array([t for t, _ in inserts])
    cells = np.array([c for _, c in inserts])
    pts = []
    for a in answered:
        h = np.bincount(cells[ticks_arr <= a.tick], minlength=len(domain))
        pts.append((a.tick, float(rows[a.query_id] @ h), a.answer, a.bound, a.hard, int(h.sum())))
    pts.sort()
    within = np.mean([abs(e - tr) <= b for _, tr, e, b, _, _ in pts])
    late = [abs(e - tr) / n for t, tr, e, _, _, n in pts if n >= 4 * cfg.mechanism_options().n0]
    print(
        f"\nexample: {len(pts)} queries, {sum(p[4] for p in pts)} hard, {within:.3f} within their bound, "
        f"median |error| / n once n >= 4 n0: {np.median(late):.3f}; spent {core.spent.epsilon:.3f} of {cfg.epsilon}"
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    t = np.array([p[0] for p in pts]) / 60
    ax.errorbar(t, [p[2] for p in pts], yerr=[p[3] for p in pts], fmt="none", ecolor="0.8", label="(1-beta) bound")
    ax.scatter(t, [p[1] for p in pts], s=8, c="k", label="truth")
    ax.scatter(t, [p[2] for p in pts], s=8, c=["tab:red" if p[4] else "tab:blue" for p in pts], label="answer")
    ax.set_xlabel("hours (tick of the query)")
    ax.set_ylabel("weighted count")
    ax.set_title("PMWG on configs/growing.yaml: 300 streamed queries (red: hard)")
    ax.set_ylim(-2000, max(p[1] for p in pts) * 1.5)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out / "growing_example.png", dpi=110)
    print(f"plot: {out / 'growing_example.png'}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--ticks", type=int, default=1000)
    ap.add_argument("--domain", type=int, default=16)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--n0", type=int, default=1000)
    ap.add_argument("--out", default=str(ROOT / "docs" / "figures"))
    ap.add_argument("--example", action="store_true", help="only the worked example of docs/growing.md")
    args = ap.parse_args(argv)
    t0 = time.time()
    if args.example:
        example(Path(args.out))
        return
    rows, busy, spent = run(args)
    report(rows, busy, spent, args.ticks, Path(args.out))
    print(f"wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
