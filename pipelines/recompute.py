"""Recompute the released answers from the released data structure alone.

``python -m pipelines.recompute --config configs/demo.yaml [--nodes 'output/nodes*.jsonl'] [--out FILE]``
(node files in JSON lines or Avro)

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
from typing import NamedTuple

from pipelines.config import ConfigError, load_config
from transforms.core.continual.consistency import make_consistent

__all__ = ["recompute", "read_nodes", "main"]


def read_nodes(pattern: str) -> list[dict]:
    """The node records of every file matching ``pattern``: JSON lines
    (``.jsonl``) or Avro (``.avro``, or any file that starts with Avro's magic
    bytes). Raises ConfigError when nothing matches or a file cannot be read."""
    files = sorted(glob.glob(pattern))
    if not files:
        raise ConfigError(f"--nodes: no file matches {pattern}")
    out = []
    for path in files:
        try:
            with open(path, "rb") as fh:
                head = fh.read(4)
                fh.seek(0)
                if head == b"Obj\x01":
                    import fastavro

                    out.extend(fastavro.reader(fh))
                    continue
                for n, line in enumerate(fh.read().decode("utf-8").splitlines(), 1):
                    if line.strip():
                        try:
                            rec = json.loads(line)
                        except ValueError:
                            raise ConfigError(f"--nodes: {path} line {n} is not JSON (a node file?)") from None
                        if not isinstance(rec, dict):
                            raise ConfigError(f"--nodes: {path} line {n} is not a node record")
                        out.append(rec)
        except ConfigError:
            raise
        except UnicodeDecodeError:
            raise ConfigError(f"--nodes: {path} is neither JSON lines nor Avro") from None
        except OSError as e:
            raise ConfigError(f"--nodes: cannot read {path} ({e.strerror or type(e).__name__})") from None
        except ValueError as e:  # fastavro: a truncated or foreign file
            raise ConfigError(f"--nodes: {path} is not a complete Avro file ({type(e).__name__})") from None
    return out


class _Row(NamedTuple):
    stream: str
    tick: int
    segment: int
    query: str
    estimate: tuple
    error_bound: float | None = None  # node records carry no bound
    beta: float = 0.0


def recompute(cfg, nodes) -> list[dict]:
    """The answers at each close rebuilt from node records (dicts, or JSON lines)."""
    sums: dict[tuple, list[float]] = {}
    for rec in nodes:
        if isinstance(rec, (str, bytes)):
            rec = json.loads(rec)
        if rec.get("kind") != "node_answer":
            continue
        key = (rec["stream"], rec["tick"], rec["segment"], rec["query"])
        acc = sums.setdefault(key, [0.0] * len(rec["values"]))
        for i, v in enumerate(rec["values"]):
            acc[i] += v
    queries = {q.name: q for q in cfg.queries}
    for query in {k[3] for k in sums}:
        if query not in queries:
            raise ConfigError(f"--nodes: query {query!r} of the node files is not in the configuration (another run?)")
    consistency = cfg.consistency()
    if consistency:  # release.consistent: the same post-processing as the pipeline's, per (stream, tick)
        rows = [_Row(s, t, g, q, v) for (s, t, g, q), v in sums.items()]
        sums = {(r.stream, r.tick, r.segment, r.query): list(r.estimate) for r in make_consistent(rows, consistency)}
    out = []
    for (stream, tick, segment, query), values in sorted(sums.items()):
        q = queries[query]
        est = q.values(values)
        estimate = dict(zip(map(str, q.domain), est)) if q.type == "histogram" else est[0]
        out.append({"stream": stream, "tick": tick, "segment": segment, "query": query, "estimate": estimate})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.recompute", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/demo.yaml")
    ap.add_argument("--nodes", default="output/nodes*.jsonl", help="glob of node-output files (JSON lines or Avro)")
    ap.add_argument("--out", default="-", help="output file (default: standard output)")
    args = ap.parse_args(argv)
    try:
        rows = recompute(load_config(args.config), read_nodes(args.nodes))
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (KeyError, TypeError) as e:
        print(f"error: --nodes: a record lacks a node field ({type(e).__name__}: {e}); a node file?", file=sys.stderr)
        return 2
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
