"""Batch on Flink at scale: a generated stream of 10^5 updates (plus bad lines) through
``python -m pipelines.release`` on the DirectRunner and on the embedded Flink (the README's FlinkRunner
options), with the same noise key and release id; releases, node outputs and dead letters compared line
for line (as sorted sets of lines: Flink writes 2 shards). Issue 15 item 2; ``tests/test_flink.py`` runs
the same comparison on the demo's first 3 days in CI, this runs the large one once (about 3 min here).

    DP_DYNAMIC_FLINK_JAR=$(python3 -m pipelines.tools.flink_jobserver fetch) python benchmarks/flink_equality.py

Prints the counts, whether each output is identical, and both wall times. Exit 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEY_HEX = bytes(range(32)).hex()


def _run(config: Path, *beam_args: str) -> float:
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX, MPLBACKEND="Agg")
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "pipelines.release", "--config", str(config), "--release-id", "flink-eq-1e5"]
    proc = subprocess.run([*cmd, *beam_args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"run failed ({' '.join(beam_args) or 'DirectRunner'}):\n{proc.stderr[-3000:]}")
    return took


def _lines(folder: Path, pattern: str) -> list[str]:
    return sorted(line for f in sorted(folder.glob(pattern)) for line in f.read_text().splitlines())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000, help="updates to generate (default 10^5)")
    ap.add_argument("--jar", default=os.environ.get("DP_DYNAMIC_FLINK_JAR"), help="the job server launcher jar")
    args = ap.parse_args(argv)
    if not args.jar:
        sys.exit("give --jar or DP_DYNAMIC_FLINK_JAR (python3 -m pipelines.tools.flink_jobserver fetch)")
    from pipelines.demo_data import generate

    tmp = Path(tempfile.mkdtemp(prefix="flink-eq-"))
    data = tmp / "updates.jsonl"
    lines = generate(records=args.records, seed=11)  # the demo's generator (5 bad lines at its end)
    data.write_text("\n".join(lines) + "\n")
    last = max(json.loads(x)["time"] for x in lines[:-5])
    end = 86400 * int(last // 86400 + 1)  # whole days, past the last update
    demo = (ROOT / "configs" / "demo.yaml").read_text()
    assert "end: 691200" in demo
    outs, took = {}, {}
    for runner in ("direct", "flink"):
        out = tmp / runner / "out"
        cfg = tmp / f"{runner}.yaml"
        cfg.write_text(
            demo.replace("data/demo.jsonl", str(data))
            .replace("path: output/", f"path: {out}/")
            .replace("end: 691200", f"end: {end}")
            .replace("kind: auto", "kind: fully_dynamic")  # node outputs too
        )
        beam = []
        if runner == "flink":
            beam = [
                "--runner=FlinkRunner",
                "--flink_master=[local]",
                f"--flink_job_server_jar={args.jar}",
                "--environment_type=LOOPBACK",
                "--parallelism=2",
            ]
        took[runner] = _run(cfg, *beam)
        outs[runner] = out
    same = True
    print(f"input: {args.records:,} generated updates + 5 bad lines over {end // 86400} days ({data})")
    for pattern, sub in (("releases*.jsonl", "out"), ("nodes*.jsonl", "out"), ("dead_letters*.jsonl", "conf")):
        got = {r: _lines(o if sub == "out" else o.parent / "out-confidential", pattern) for r, o in outs.items()}
        ok = got["flink"] == got["direct"] and bool(got["direct"])
        same &= ok
        print(f"{pattern:22s} direct {len(got['direct']):>7,}  flink {len(got['flink']):>7,}  identical: {ok}")
    print(f"wall time (process, incl. start-up): DirectRunner {took['direct']:.1f} s, Flink {took['flink']:.1f} s")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
