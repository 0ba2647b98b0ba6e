"""The input of ``configs/open_histogram.yaml`` (issue 33: a histogram whose cells are not declared), generated
deterministically: ``python -m benchmarks.bench_open_histogram --write-demo data/open_histogram.jsonl``.

Page views on two declared devices (``dev``: ``app``, ``web``): each of 2,000 readers uses one device, follows
2 pages (drawn from a Zipf tail over 40 pages, ``page-00`` the most followed) and views them 1 to 3 times over
one day; a view is inserted, sometimes moved to another page (upsert, to any page) and sometimes deleted. The
histogram's cells (the pages) are not declared: a (device, page) pair is released from the hour at which a
noisy count of its readers crosses the selection's threshold. With ``max_cells_per_person: 2`` a reader's view
moved to a third page is refused (a dead letter ``contribution_bounded``)."""

from __future__ import annotations

import argparse
import json
import random

__all__ = ["demo_records"]


def demo_records(persons: int = 2000, pages: int = 40, seed: int = 3333) -> list[dict]:
    """The records, sorted by time (then by generation order)."""
    rnd = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(pages)]
    out, order, seq = [], [], 0
    for r in range(persons):
        device = "app" if rnd.random() < 0.6 else "web"
        follows = [f"page-{i:02d}" for i in rnd.choices(range(pages), weights, k=2)]
        for v in range(rnd.randint(1, 3)):
            t = rnd.uniform(0, 86400 * 0.8)
            page = rnd.choice(follows)
            ev = [(t, "insert", page)]
            x = rnd.random()
            if x < 0.2:
                ev.append((rnd.uniform(t, 86400), "upsert", f"page-{rnd.choices(range(pages), weights)[0]:02d}"))
            elif x < 0.4:
                ev.append((rnd.uniform(t, 86400), "delete", page))
            for when, op, where in ev:
                rec = {"t": round(when), "op": op, "id": f"{r}-{v}", "dev": device, "reader": r}
                if op != "delete":
                    rec["item"] = {"page": where}
                out.append(rec)
                order.append(seq)
                seq += 1
    return [rec for _, _, rec in sorted(zip((x["t"] for x in out), order, out), key=lambda z: z[:2])]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-demo", metavar="PATH", required=True, help="write the input and stop")
    a = ap.parse_args(argv)
    with open(a.write_demo, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in demo_records())


if __name__ == "__main__":
    main()
