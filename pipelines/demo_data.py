"""Generate the demo dataset: bookings that appear, change and disappear.

``python -m pipelines.demo_data [--out data/demo.jsonl] [--records 40000] [--seed 7] [--customers N]``

Each line is an update ``{"time", "op", "id", "item", "region", "seq"}``:
bookings are inserted with a carrier and an amount, some are modified
(``upsert``: a new carrier or amount) and many are cancelled (``delete``),
over a week of event time in two regions, with a daily cycle (busy days,
quiet nights). With the defaults a few thousand bookings are alive per region
at the end: the scale at which differentially private counts carry a signal.
A few deliberately bad lines (unparseable, unknown op, unknown booking,
undeclared region, out-of-domain carrier) show the dead-letter path.

``--customers N`` (the person-level demo, ``configs/demo_person.yaml``; default file
``data/demo_person.jsonl``): the same bookings, each made by a customer (an integer
``customer`` field on every update of the booking), drawn from N regular customers per
region and, for one booking in ten, from 20 frequent ones per region, so that a customer
has several bookings and the frequent ones many more than a person-level limit admits
(the bundled file: ``--records 11000 --customers 2000``, about two days of bookings). The
customers come from their own random stream: without the option, and with the same
``--records``, the output is byte-identical to ``data/demo.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

CARRIERS = ("AA", "B6", "DL")
MEAN_GAP = 15.0  # seconds between updates on average (over a day)
FREQUENT = (0.1, 20)  # the share of bookings made by frequent customers, and how many there are per region
CUSTOMER_BASE = {"eu": 100_000, "us": 500_000}  # customer numbers by region (the frequent ones from base + 300,000)


def _customer(crng: random.Random, region: str, customers: int) -> int:
    share, frequent = FREQUENT
    if crng.random() < share:
        return CUSTOMER_BASE[region] + 300_000 + crng.randrange(frequent)
    return CUSTOMER_BASE[region] + crng.randrange(customers)


def generate(records: int = 40_000, seed: int = 7, customers: int | None = None) -> list[str]:
    """The demo's lines; ``customers``: add a ``customer`` field (module docstring)."""
    rng = random.Random(seed)
    crng = random.Random(f"customers-{seed}")  # its own stream: the bookings are the same with or without
    owner = {}  # booking id -> customer
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
            if customers is not None:
                owner[bid] = _customer(crng, region, customers)
        if customers is not None:
            rec["customer"] = owner[rec["id"]]
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
    if customers is not None:  # the bad lines with a customer (each keeps its reason), and one without
        lines[-5:] = [lines[-5]] + [json.dumps({**json.loads(x), "customer": 1}) for x in lines[-4:]]
        lines.append(
            json.dumps(
                {"time": 14.0, "op": "insert", "id": "w", "item": {"carrier": "AA", "amount": 5}, "region": "eu"}
            )
        )
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="default data/demo.jsonl (data/demo_person.jsonl with --customers)")
    ap.add_argument("--records", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--customers", type=int, default=None, help="regular customers per region (person-level demo)")
    args = ap.parse_args(argv)
    if args.customers is not None and args.customers < 1:
        ap.error("--customers must be >= 1")
    out = Path(args.out or ("data/demo.jsonl" if args.customers is None else "data/demo_person.jsonl"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(generate(args.records, args.seed, args.customers)) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
