"""Synthetic dynamic streams for benchmarks and utility tests.

``sparse_dynamic_stream`` yields ``(tick, [Update, ...])`` for the ticks that
have updates: records are inserted, modified and deleted so that the live size
hovers around ``n_target`` while the number of updates grows without bound.
Each record has a 100-cell category and a value in a 1024-value domain whose
distribution drifts over time. Items are encoded as tuples of domain indices
for the query sets (count, 100-cell histogram, 1024-value PMW), selected with
``fields``.
"""

from __future__ import annotations

import numpy as np

from transforms.core.foundation.entries import Update

FIELDS = {"count": 0, "cell": 1, "value": 2}


def sparse_dynamic_stream(
    num_updates: int,
    *,
    n_target: int = 1000,
    updates_per_active_tick: float = 5.0,
    active_fraction: float = 0.2,
    fields=("count", "cell"),
    seed: int = 0,
):
    """Yield (tick, updates) for active ticks; ~``num_updates`` updates in total."""
    rng = np.random.default_rng(seed)
    idx = [FIELDS[f] for f in fields]
    live_ids: list[str] = []
    pos: dict[str, int] = {}
    next_id = 0
    produced = 0
    tick = 0
    mean_gap = 1.0 / active_fraction
    while produced < num_updates:
        tick += 1 + int(rng.geometric(1 / mean_gap) - 1)
        k = max(1, int(rng.poisson(updates_per_active_tick)))
        drift = 300 + 400 * (produced / max(num_updates, 1))
        cells = rng.integers(0, 100, k)
        values = np.clip(rng.normal(drift, 80, k), 0, 1023).astype(int)
        r = rng.random(k)
        ups = []
        for i in range(k):
            full = (0, int(cells[i]), int(values[i]))
            item = tuple(full[j] for j in idx)
            n = len(live_ids)
            p_del = 0.0 if n < n_target * 0.9 else (0.45 if n < n_target * 1.1 else 0.7)
            if n and r[i] < p_del:
                j = int(rng.integers(n))
                eid = live_ids[j]
                last = live_ids.pop()
                if j < len(live_ids):
                    live_ids[j] = last
                    pos[last] = j
                del pos[eid]
                ups.append(Update("delete", eid))
                produced += 1
            elif n and r[i] < p_del + 0.1:
                eid = live_ids[int(rng.integers(n))]
                ups.append(Update("upsert", eid, item))
                produced += 2
            else:
                eid = f"r{next_id}"
                next_id += 1
                pos[eid] = len(live_ids)
                live_ids.append(eid)
                ups.append(Update("insert", eid, item))
                produced += 1
        yield tick, ups
