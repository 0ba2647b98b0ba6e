"""Generate the demo dataset: bookings that appear, change and disappear.

``python -m pipelines.demo_data [--out data/demo.jsonl] [--records 40000] [--seed 7]``

Each line is an update ``{"time", "op", "id", "item", "region", "seq"}``:
bookings are inserted with a carrier and an amount, some are modified
(``upsert``: a new carrier or amount) and many are cancelled (``delete``),
over a week of event time in two regions, with a daily cycle (busy days,
quiet nights). With the defaults a few thousand bookings are alive per region
at the end: the scale at which differentially private counts carry a signal.
A few deliberately bad lines (unparseable, unknown op, unknown booking,
undeclared region, out-of-domain carrier) show the dead-letter path.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

CARRIERS = ("AA", "B6", "DL")
MEAN_GAP = 15.0  # seconds between updates on average (over a day)


def generate(records: int = 40_000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    lines, t, seq = [], 0.0, 0
    live = {"eu": [], "us": []}  # live booking ids per region (swap-removal keeps it O(1))
    for i in range(records):
        # a daily cycle: updates come 4x faster at mid-day than at night
        hour = (t / 3600.0) % 24
        speed = 0.4 + 1.6 * max(math.sin((hour - 6) / 24 * 2 * math.pi), 0.0)
        t += rng.expovariate(speed / MEAN_GAP)
        region = rng.choice(("eu", "us"))
        mine = live[region]
        r = rng.random()
        if mine and r < 0.27:
            j = rng.randrange(len(mine))
            bid = mine[j]
            mine[j] = mine[-1]
            mine.pop()
            rec = {"time": round(t, 3), "op": "delete", "id": bid, "region": region}
        elif mine and r < 0.45:
            bid = rng.choice(mine)
            item = {"carrier": rng.choice(CARRIERS), "amount": round(rng.uniform(20, 140), 2)}
            rec = {"time": round(t, 3), "op": "upsert", "id": bid, "item": item, "region": region}
        else:
            bid = f"b{i:06d}"
            mine.append(bid)
            carrier = rng.choices(CARRIERS, weights=(5, 2, 3))[0]
            item = {"carrier": carrier, "amount": round(rng.uniform(20, 140), 2)}
            rec = {"time": round(t, 3), "op": "insert", "id": bid, "item": item, "region": region}
        rec["seq"] = seq
        seq += 1
        lines.append(json.dumps(rec))
    lines += [
        "{not json",
        json.dumps({"time": 10.0, "op": "truncate", "id": "x", "region": "eu"}),
        json.dumps({"time": 11.0, "op": "delete", "id": "never-inserted", "region": "eu"}),
        json.dumps({"time": 12.0, "op": "insert", "id": "y", "item": {"carrier": "AA", "amount": 5}, "region": "mars"}),
        json.dumps({"time": 13.0, "op": "insert", "id": "z", "item": {"carrier": "UA", "amount": 5}, "region": "us"}),
    ]
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="data/demo.jsonl")
    ap.add_argument("--records", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(generate(args.records, args.seed)) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
