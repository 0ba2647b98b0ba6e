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


def zipf_shares(cells: int, exponent: float) -> np.ndarray:
    """Shares ``k^-exponent / sum`` of cells ``k = 1..cells`` (the largest first)."""
    w = np.arange(1, cells + 1, dtype=float) ** -float(exponent)
    return w / w.sum()


def flights_stream(
    days: int = 30,
    *,
    cells: int = 16,
    zipf: float = 2.2,
    alive: float = 370.0,
    life_ticks: float = 15.0,
    reassign: float = 0.05,
    seed: int = 0,
):
    """A month of flights-like updates: ``(tick, [Update])`` over 10-minute ticks (144 a day).

    Flights (entries) arrive with a daily cycle (quiet nights, busy afternoons) at a mean rate that
    keeps about ``alive`` of them alive, each lives ``1 + Gamma(2, life_ticks / 2)`` ticks (hours: 2.5
    on average by default) and belongs to one of ``cells`` carriers drawn with Zipf-like shares
    (:func:`zipf_shares`; with the defaults the largest carrier has 69% of the flights and the
    smallest 0.15%, about 0.6 flights alive, the true cells averaging ``alive / cells``, about 23);
    a share ``reassign`` of the flights is moved once to another carrier (an upsert, a codeshare
    change) during its life. Items are ``(0, carrier)``: a count (index 0) and a ``cells``-cell
    histogram (index 1), as ``QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=cells)``.
    Seeded; the same arguments give the same stream."""
    rng = np.random.default_rng(seed)
    per_day = 144
    ticks = days * per_day
    phase = np.arange(ticks) % per_day
    # relative rate: 0.2 at night up to 1.6 in the afternoon, mean 0.2 + 1.4 / 4 = 0.55 (dense_stream's shape)
    shape = 0.2 + 1.4 * np.clip(np.sin((phase - per_day / 4) / per_day * 2 * np.pi), 0, None) ** 2
    arrivals = rng.poisson(shape / shape.mean() * alive / (1.0 + life_ticks))
    shares = zipf_shares(cells, zipf)
    ends: dict[int, list[str]] = {}
    moves: dict[int, list[str]] = {}
    live: set[str] = set()
    k = 0
    for t in range(1, ticks + 1):
        ups = []
        for eid in ends.pop(t, []):
            live.discard(eid)
            ups.append(Update("delete", eid))
        for eid in moves.pop(t, []):
            if eid in live:
                ups.append(Update("upsert", eid, (0, int(rng.choice(cells, p=shares)))))
        for _ in range(int(arrivals[t - 1])):
            eid = f"f{k}"
            k += 1
            live.add(eid)
            ups.append(Update("insert", eid, (0, int(rng.choice(cells, p=shares)))))
            life = 1 + int(rng.gamma(2.0, life_ticks / 2.0))
            ends.setdefault(t + life, []).append(eid)
            if life > 1 and rng.random() < reassign:
                moves.setdefault(t + int(rng.integers(1, life)), []).append(eid)
        if ups:
            yield t, ups
