"""The year's core without Beam (issue 30): two Honaker k-ary counters (a count and a 16-cell histogram, horizon
525,600, eps 0.5 each) stepped N periods with their node releases, noise, ledger charges and stated bounds; prints
the wall and CPU time and a digest of every estimate and bound (equal digests: the same releases, bit for bit).

Usage: python benchmarks/bench_node_releases.py [ROOT] [N]
  ROOT: the tree to import (default: this one), e.g. a ``git archive`` of another commit, to compare two trees
  run after run (interleaved; the minimum CPU time is the steadiest figure on a loaded machine).
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from transforms.core.counters.factorization.kary import KaryTreeCounter  # noqa: E402
from transforms.core.foundation.accounting import Ledger, PureDP  # noqa: E402
from transforms.core.foundation.noise import NoiseSource  # noqa: E402
from transforms.core.static.linear import CountMechanism, HistogramMechanism  # noqa: E402


def main(n: int) -> None:
    noise = NoiseSource(b"k" * 32)
    if hasattr(noise, "drawing_ahead"):  # a bounded run's source (stop 63): node noise drawn ahead, the same values
        noise = noise.drawing_ahead()
    ledger = Ledger(PureDP(1.0), keep_records=False)
    counters = [
        KaryTreeCounter(
            CountMechanism(16), PureDP(0.5), horizon=525_600, coords=("s", "count"), scope=ledger.root.child("a")
        ),
        KaryTreeCounter(
            HistogramMechanism(16), PureDP(0.5), horizon=525_600, coords=("s", "hist"), scope=ledger.root.child("b")
        ),
    ]
    batches = np.random.default_rng(1).integers(-1, 2, size=(n, 16))
    digest = hashlib.sha256()
    t0, c0 = time.perf_counter(), time.process_time()
    for t in range(n):
        for c in counters:
            digest.update(c.step(batches[t], noise).tobytes())
            digest.update(np.float64(c.error_bound(0.05)).tobytes())
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"{n} periods: {dt:.2f} s, {cpu:.2f} s of CPU; digest {digest.hexdigest()[:16]}; "
        f"{ledger.num_releases} node releases"
    )


if __name__ == "__main__":
    main(int(sys.argv[2]) if len(sys.argv) > 2 else 20_000)
