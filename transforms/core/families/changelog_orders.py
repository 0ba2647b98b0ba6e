"""A synthetic orders changelog: the bundled input of ``configs/changelog.yaml``
and the workload of ``benchmarks/bench_changelog.py``.

``python -m transforms.core.families.changelog_orders [--out data/changelog_orders.jsonl] [--orders 6000] [--days 90]``

An order is created (``insert``: status ``placed`` and an amount), then may be
modified (``upsert``: shipped, delivered, returned; the amount of a return is
refunded) or cancelled (``delete``), every mutation within ``window_days`` of
its creation and at most ``k`` mutations in all: the constraint the release
enforces (``privacy: {unit: entry, max_mutations_per_entry: k,
mutation_window: B}``). A few orders break it on purpose (a late change after
the window, one mutation too many): the release dead-letters those mutations
(``constraint_exceeded``). Pure Python; deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

__all__ = ["STATUSES", "generate", "to_lines", "main"]

STATUSES = ("placed", "shipped", "delivered", "returned")
DAY = 86400.0


def generate(
    orders: int = 6000,
    days: float = 90.0,
    seed: int = 16,
    k: int = 4,
    window_days: float = 30.0,
    violations: float = 0.01,
) -> list[dict]:
    """The changelog's records, in time order: ``{"time", "op", "id",
    "item"}`` (item ``{"status", "amount"}`` for insert and upsert). About
    ``violations`` of the orders break the constraint once (their last
    mutation is one too many or comes after the window)."""
    rng = random.Random(seed)
    out = []
    span = days * DAY
    w = window_days * DAY
    for n in range(orders):
        oid = f"o{n:07d}"
        t0 = rng.uniform(0.0, span * 0.97)
        amount = round(rng.uniform(5.0, 200.0), 2)
        muts = [(t0, "insert", {"status": "placed", "amount": amount})]
        t = t0
        r = rng.random()
        if r < 0.12:  # cancelled before shipping
            muts.append((t0 + rng.uniform(0.02, 0.4) * min(w, 3 * DAY), "delete", None))
        else:
            t = t0 + rng.uniform(0.3, 3.0) * DAY
            muts.append((t, "upsert", {"status": "shipped", "amount": amount}))
            if rng.random() < 0.85:
                t += rng.uniform(1.0, 7.0) * DAY
                muts.append((t, "upsert", {"status": "delivered", "amount": amount}))
                if rng.random() < 0.08:  # returned and refunded
                    t += rng.uniform(0.5, 12.0) * DAY
                    muts.append((t, "upsert", {"status": "returned", "amount": 0.0}))
        muts = [m for m in muts if m[0] - t0 <= w][:k]
        if rng.random() < violations:
            last = muts[-1]
            if last[1] != "delete":
                if rng.random() < 0.5:  # a late change, after the window
                    muts.append((t0 + w + rng.uniform(1.0, 5.0) * DAY, "upsert", {"status": "returned", "amount": 0.0}))
                else:  # too many mutations: pad to k, then one more
                    while len(muts) <= k:
                        tt = min(muts[-1][0] + rng.uniform(0.01, 0.5) * DAY, t0 + w)
                        muts.append((tt, "upsert", {"status": "delivered", "amount": amount}))
        for tm, op, item in muts:
            if tm < span:
                out.append({"time": round(tm, 3), "op": op, "id": oid, **({"item": item} if item else {})})
    out.sort(key=lambda rec: (rec["time"], rec["id"]))
    for i, rec in enumerate(out):
        rec["seq"] = i
    return out


def to_lines(records: list[dict]) -> list[str]:
    return [json.dumps(r, separators=(", ", ": ")) for r in records]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m transforms.core.families.changelog_orders", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--out", default="data/changelog_orders.jsonl")
    ap.add_argument("--orders", type=int, default=6000)
    ap.add_argument("--days", type=float, default=90.0)
    ap.add_argument("--seed", type=int, default=16)
    args = ap.parse_args(argv)
    lines = to_lines(generate(args.orders, args.days, args.seed))
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} mutations to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
