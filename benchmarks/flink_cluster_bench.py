"""The release on a Flink session cluster (``pipelines/tools/flink_cluster.py``: a JobManager and two TaskManagers,
separate JVMs, the SDK workers started by the TaskManagers) at parallelism 1 and 2, and on the DirectRunner:
wall time, updates/s, and whether the releases (and dead letters) are the DirectRunner's, line for line.
Issue 30 item 4; ``docs/flink.md``, "A session cluster".

    .venv/bin/python benchmarks/flink_cluster_bench.py                    # the demo input (configs/demo.yaml)
    .venv/bin/python benchmarks/flink_cluster_bench.py --records 200000   # a generated one (the demo's generator)

The configuration is the demo's, unchanged but for the input, the outputs, ``time.end`` (whole days past the
last update) and the noise key (a file, as a cluster reads it). Runs are interleaved (p1, p2, direct) ``--rounds``
times. Exit 1 when an output differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY_HEX = bytes(range(32, 64)).hex()


def _lines(folder: Path, pattern: str) -> list[str]:
    return sorted(line for f in sorted(folder.glob(pattern)) for line in f.read_text().splitlines())


def _run(config: Path, release_id: str, *beam_args: str) -> dict:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "pipelines.release", "--config", str(config), "--release-id", release_id]
    proc = subprocess.run([*cmd, *beam_args], cwd=ROOT, capture_output=True, text=True, timeout=3600)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"run failed ({' '.join(beam_args) or 'DirectRunner'}):\n{proc.stderr[-3000:]}")
    log = proc.stdout + proc.stderr
    wall = float(re.search(r"wall time:\s+([\d.]+) s", log).group(1))
    updates = int(re.search(r"updates accepted:\s+(\d+)", log).group(1))
    return {"process_s": took, "pipeline_s": wall, "updates": updates}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=0, help="generate this many records (default: data/demo.jsonl)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cluster-dir", default=None, help="use the cluster running from this directory")
    args = ap.parse_args(argv)
    from pipelines.tools import flink_cluster, flink_jobserver

    tmp = Path(tempfile.mkdtemp(prefix="flink-cluster-bench-"))
    if args.records:
        from pipelines.demo_data import generate

        lines = generate(records=args.records, seed=11)
        data = tmp / "updates.jsonl"
        data.write_text("\n".join(lines) + "\n")
    else:
        data = ROOT / "data" / "demo.jsonl"
        lines = data.read_text().splitlines()
    times = [json.loads(x)["time"] for x in lines if x.startswith("{") and '"time"' in x]
    end = 86400 * int(max(times) // 86400 + 1)
    key = tmp / "key.hex"
    key.write_text(KEY_HEX + "\n")
    demo = (ROOT / "configs" / "demo.yaml").read_text()
    assert "end: 691200" in demo and "unit: update}" in demo
    jar = flink_jobserver.fetch()
    cluster = flink_cluster.load(args.cluster_dir) if args.cluster_dir else None
    own = cluster is None
    if own:
        cluster = flink_cluster.start(tmp / "cluster", rest_port=0, jar=jar, cwd=str(ROOT))
    print(f"input: {data} ({len(lines)} lines, time.end {end}); load before: {os.getloadavg()}", flush=True)
    results: dict[str, list[dict]] = {}
    outs: dict[str, Path] = {}
    try:
        for r in range(args.rounds):
            for name in ("p1", "p2", "direct"):
                out = tmp / f"{name}-{r}" / "out"
                cfg = tmp / f"{name}-{r}.yaml"
                cfg.write_text(
                    demo.replace("data/demo.jsonl", str(data))
                    .replace("path: output/", f"path: {out}/")
                    .replace("end: 691200", f"end: {end}")
                    .replace("unit: update}", f"unit: update, noise_key: {{file: {key}}}}}")
                )
                beam = [] if name == "direct" else cluster.pipeline_args(jar, parallelism=int(name[1]))
                res = _run(cfg, "flink-cluster-bench", *beam)
                res["load"] = os.getloadavg()[0]
                if name != "direct":  # the Flink job itself, from submission to its end (no job server start)
                    newest = max(cluster.rest("/jobs/overview")["jobs"], key=lambda j: j["start-time"])
                    res["job_s"] = newest["duration"] / 1000
                results.setdefault(name, []).append(res)
                outs[f"{name}-{r}"] = out
                rate = res["updates"] / res["pipeline_s"]
                print(
                    f"round {r} {name:>6}: {res['updates']:,} updates, pipeline {res['pipeline_s']:.1f} s "
                    f"({rate:,.0f} updates/s), "
                    f"process {res['process_s']:.1f} s, Flink job {res.get('job_s', 0):.1f} s, load {res['load']:.1f}",
                    flush=True,
                )
    finally:
        if own:
            cluster.stop()
    same = True
    for pattern, sub in (("releases*.jsonl", "out"), ("dead_letters*.jsonl", "out-confidential")):
        ref = _lines(outs["direct-0"].parent / sub, pattern)
        for name, out in outs.items():
            got = _lines(out.parent / sub, pattern)
            if got != ref:
                same = False
                print(f"DIFFERENT: {name} {pattern}: {len(got)} lines against {len(ref)}")
        print(f"{pattern}: {len(ref)} lines, {'all equal' if same else 'NOT equal'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
