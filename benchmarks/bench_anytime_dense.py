"""The dense stream (a) of ``bench_utility``, ``auto``, (1, 1e-6), the count: mean tracked count error of
the run with ``time.end`` and of the run without it (``docs/accuracy.md``, "Counters at the limit").

``bench_utility.run``'s loop, except that the run without an end builds the core with ``end_tick=None``
(``auto`` then picks its counter for a run with no end) and steps the empty ticks after the last batch
itself. Same release identities (``bench-utility-<seed>``) and key as ``bench_utility``.

Usage: python -m benchmarks.bench_anytime_dense end|noend SEED [SEED ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_utility as bu  # noqa: E402
from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, QuerySet, ReleaseIdentity  # noqa: E402

DAYS = 30


def run(seed: int, end: bool) -> float:
    """Mean over the ticks of |estimate - true count| of the ``active`` count."""
    queries = (QuerySet("active", "count"), QuerySet("by_cell", "histogram", domain_size=bu.DENSE_CELLS))
    config = DynamicConfig(queries, bu.BUDGETS["(1,1e-6)"], profile="tuned")
    last = DAYS * 1440
    core = MECHANISMS["auto"].core_cls(config, stream="bench", end_tick=last if end else None, every_ticks=1)
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-utility-{seed}"))
    est, truth, live = np.zeros(last + 1), np.zeros(last + 1), {}

    def collect(res):
        for a in res.answers:
            if a.query == "active":
                est[a.tick] = float(a.estimate[0])

    prev = 0
    for tick, ups in bu.dense_stream(DAYS):
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
    if end:
        for res in core.run_to_end(noise):
            collect(res)
    else:
        for tick in range(prev + 1, last + 1):
            collect(core.process_tick(tick, [], noise))
    return float(np.abs(est[1:] - truth[1:]).mean())


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    end = argv[0] == "end"
    for s in argv[1:]:
        t0 = time.time()
        print(argv[0], s, round(run(int(s), end), 3), f"{time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
