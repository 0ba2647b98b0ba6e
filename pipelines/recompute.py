"""Recompute the released answers from the released data structure alone.

``python -m pipelines.recompute --config configs/demo.yaml [--nodes 'output/nodes*.jsonl'] [--out FILE]``

The answer of a query at a segment close is the sum, over the nodes of the
Fenwick chain at that close, of each node's current answer; the pipeline
publishes those as ``kind = node_answer`` node records (post-processing of the
static and deletion-counter releases, so recomputing costs no privacy). This
tool sums them and prints one JSON line per (stream, tick, segment, query) in
the release format (``estimate`` only), so a consumer can verify or rebuild the
releases from ``nodes*`` without trusting ``releases*``.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys

from pipelines.config import load_config

__all__ = ["recompute", "main"]


def recompute(cfg, node_lines) -> list[dict]:
    sums: dict[tuple, list[float]] = {}
    for line in node_lines:
        rec = json.loads(line)
        if rec.get("kind") != "node_answer":
            continue
        key = (rec["stream"], rec["tick"], rec["segment"], rec["query"])
        acc = sums.setdefault(key, [0.0] * len(rec["values"]))
        for i, v in enumerate(rec["values"]):
            acc[i] += v
    queries = {q.name: q for q in cfg.queries}
    out = []
    for (stream, tick, segment, query), values in sorted(sums.items()):
        q = queries[query]
        est = [v * q.scale for v in values]
        estimate = dict(zip(map(str, q.domain), est)) if q.type == "histogram" else est[0]
        out.append({"stream": stream, "tick": tick, "segment": segment, "query": query, "estimate": estimate})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.recompute", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/demo.yaml")
    ap.add_argument("--nodes", default="output/nodes*.jsonl", help="glob of node-output JSON-lines files")
    ap.add_argument("--out", default="-", help="output file (default: standard output)")
    args = ap.parse_args(argv)
    lines = [line for path in sorted(glob.glob(args.nodes)) for line in open(path).read().splitlines() if line]
    rows = recompute(load_config(args.config), lines)
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
