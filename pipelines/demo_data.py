"""Generate the demo dataset: bookings that appear, change and disappear.

``python -m pipelines.demo_data [--out data/demo.jsonl] [--records 600] [--seed 7]``

Each line is an update ``{"time", "op", "id", "item", "region", "seq"}``:
bookings are inserted with a carrier and an amount, some are modified
(``upsert``: a new carrier or amount) and many are cancelled (``delete``),
over about a day of event time in two regions. A few deliberately bad lines
(unparseable, unknown op, unknown booking, undeclared region, out-of-domain
carrier) show the dead-letter path.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

CARRIERS = ("AA", "B6", "DL")


def generate(records: int = 600, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    lines, live, t, seq = [], {}, 0.0, 0
    for i in range(records):
        t += rng.expovariate(1 / 120.0)  # one update every ~2 minutes
        region = rng.choice(("eu", "us"))
        mine = [k for k, v in live.items() if v == region]
        r = rng.random()
        if mine and r < 0.3:
            bid = rng.choice(mine)
            del live[bid]
            rec = {"time": round(t, 3), "op": "delete", "id": bid, "region": region}
        elif mine and r < 0.45:
            bid = rng.choice(mine)
            item = {"carrier": rng.choice(CARRIERS), "amount": round(rng.uniform(20, 140), 2)}
            rec = {"time": round(t, 3), "op": "upsert", "id": bid, "item": item, "region": region}
        else:
            bid = f"b{i:05d}"
            live[bid] = region
            item = {"carrier": rng.choice(CARRIERS), "amount": round(rng.uniform(20, 140), 2)}
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
    ap.add_argument("--records", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(generate(args.records, args.seed)) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
