"""Which fields of which records differ between two versions' snapshots (``benchmarks/config_snapshot.py``).

The snapshot compares digests; this runs the named configurations under both versions (the other version's tree
given by ``--base``, e.g. ``git archive 8b5879c | tar -x -C /tmp/base``) with the snapshot's fixed noise key and
release id, pairs their records (sorted as the snapshot sorts them: by their lines' bytes, after the record's
identity: stream, query, tick and the other non-numeric fields) and prints per configuration and output kind the
number of records, of records that differ, and per field the number of records where it differs, with the
largest relative difference of a numeric field.

Usage: ``python -m benchmarks.snapshot_fields --base /tmp/base NAME ...``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("releases", "nodes", "query_answers", "estimates")
NUMERIC = (int, float)


def _run(root: Path, name: str, tmp: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from benchmarks.config_snapshot import snapshot; "
        "snapshot(None if sys.argv[1] == '(default run)' else sys.argv[1], Path(sys.argv[2]))"
    )
    subprocess.run([sys.executable, "-c", code, name, str(tmp)], cwd=root, check=True)


def _records(tmp: Path, kind: str) -> list[dict]:
    out = []
    for f in sorted(tmp.glob(f"out*/{kind}*")):
        if f.suffix == ".avro":
            import fastavro

            with f.open("rb") as fh:
                out += list(fastavro.reader(fh))
        elif f.suffix == ".jsonl":
            out += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    for r in out:
        r.pop("release_id", None)
    return sorted(out, key=_identity)


def _identity(r: dict):
    return json.dumps({k: v for k, v in r.items() if not isinstance(v, (NUMERIC, dict)) or k == "tick"}, sort_keys=True)


def _diff(a, b, path: str, out: dict) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _diff(a.get(k), b.get(k), f"{path}.{k}" if path else k, out)
        return
    if a == b and type(a) is type(b):
        return
    field = path.split(".")[0]  # a histogram's cells count under their field
    rel = 0.0
    if isinstance(a, NUMERIC) and isinstance(b, NUMERIC) and a != b:
        rel = abs(a - b) / max(abs(a), abs(b))
    n, worst, example = out.get(field, (0, 0.0, None))
    out[field] = (n + 1, rel, (path, a, b)) if rel > worst or example is None else (n + 1, worst, example)


def compare(base: Path, names: list[str]) -> dict:
    report = {}
    for name in names:
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            _run(base, name, Path(d1))
            _run(ROOT, name, Path(d2))
            for kind in KINDS:
                old, new = _records(Path(d1), kind), _records(Path(d2), kind)
                if not old and not new:
                    continue
                fields: dict = {}
                differ = 0
                for a, b in zip(old, new):
                    before = sum(v[0] for v in fields.values())
                    _diff(a, b, "", fields)
                    if sum(v[0] for v in fields.values()) > before:
                        differ += 1
                        for k, v in fields.items():
                            if v[2] is not None and len(v[2]) == 3:  # the record of the largest difference
                                fields[k] = (*v[:2], (*v[2], {x: a[x] for x in ("stream", "query", "tick") if x in a}))
                report[f"{name} {kind}"] = {
                    "records": (len(old), len(new)),
                    "differ": differ,
                    "fields": {
                        k: {"records": n, "max_rel": v, "largest": ex} for k, (n, v, ex) in sorted(fields.items())
                    },
                }
    return report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the other version's tree")
    ap.add_argument("names", nargs="+")
    args = ap.parse_args(argv)
    print(json.dumps(compare(Path(args.base), args.names), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
