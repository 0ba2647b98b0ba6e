"""Memory per candidate key of the open-key Beam step (issue 33, ``transforms/open_keys.py``).

``n`` persons each insert one entry into a key of their own at tick 1: ``n`` candidate keys with one
contributor, which a threshold of 10^6 never selects, so all ``n`` stay in keyed state (a cell
``open_key`` per key, a cell ``open_person`` per person) and are tested at every period. Two figures:

* the stored bytes of one candidate's cell (FastPrimitivesCoder, what a state backend keeps), and of
  one person's cell: exact, runner-independent;
* the peak resident memory of a streaming run on the BundleBasedDirectRunner (TestStream) holding ``n``
  candidates, measured in a fresh process per ``n``: the slope between two sizes is the memory per
  candidate key (state + timers + the runner's own bookkeeping).

Run: ``python -m benchmarks.bench_open_keys_beam --sizes 20000 100000`` (a few minutes).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

TICK = 10.0
PERIODS = 3


def _stamp(kv):
    import apache_beam as beam

    return beam.window.TimestampedValue(kv, TICK / 2)


def cell_bytes() -> dict:
    from apache_beam.coders import FastPrimitivesCoder

    from transforms.core.foundation.entries import Update
    from transforms.core.selection import KeyLimit, PersonKeys, apply_event
    from transforms.open_keys import OPEN_KEYS_CELL_VERSION

    coder = FastPrimitivesCoder()
    cand = apply_event(None, 1, 1)
    key_cell = (OPEN_KEYS_CELL_VERSION, cand, 1, 2, ())
    keys = PersonKeys(KeyLimit(2, 3, 3))
    state, *_ = keys.decide_person(None, 1, [("person-000001", Update("insert", "e1", ("key-000001",)))])
    person_cell = (OPEN_KEYS_CELL_VERSION, state, 1, None, ())
    return {"key_cell_bytes": len(coder.encode(key_cell)), "person_cell_bytes": len(coder.encode(person_cell))}


def _hwm_kib(pid: int) -> int:
    """A process's peak resident memory (VmHWM, KiB)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))


def run(n: int, flink: bool = False) -> dict:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
    from apache_beam.testing.test_stream import TestStream

    from transforms.core.foundation.accounting import ApproxDP
    from transforms.core.foundation.entries import Update
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.selection import KeyLimit, SelectionParams
    from transforms.open_keys import ReleaseOpenKeys
    from transforms.spec import StreamSpec

    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=PERIODS, threshold=1e6)
    spec = StreamSpec(tick_seconds=TICK, end_time=PERIODS * TICK)
    elems = [
        beam.window.TimestampedValue((f"p{i}", (1, Update("insert", "e1", (f"k{i}",)))), TICK / 2) for i in range(n)
    ]
    ts, wm = TestStream().add_elements(elems), 0.0
    while wm < (PERIODS + 2) * TICK:
        wm += TICK / 4
        ts = ts.advance_watermark_to(wm)
    ts = ts.advance_watermark_to_infinity()
    server = None
    if flink:  # a fresh embedded Flink per size (its JVM's peak memory is the figure); docs/flink.md
        import os
        from pathlib import Path

        from pipelines.tools import flink_jobserver

        jar = Path(os.environ.get("DP_DYNAMIC_FLINK_JAR") or flink_jobserver.fetch())
        server = flink_jobserver.start(jar, parallelism=1)
        opts = PipelineOptions(server.options("--parallelism=1"))
        elems = [e.value for e in elems]  # bounded Create + streaming: the stateful path (as tests/test_flink.py)
    else:
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with beam.Pipeline(options=opts) as p:
        src = p | ts if server is None else p | beam.Create(elems) | beam.Map(_stamp)
        out = src | ReleaseOpenKeys(params, KeyLimit(2, 3, 3), NoiseSource(bytes(32)), spec, bounded=False)
        out["answers"] | beam.Map(lambda a: (_ for _ in ()).throw(AssertionError("a key was selected")))
    row = {"n": n, "runner": "flink" if flink else "direct"}
    if server is not None:
        row["jvm_peak_rss_kib"] = _hwm_kib(server.service.process.pid)
        server.stop()
    return {
        **row,
        "seconds": round(time.perf_counter() - t0, 1),
        "base_rss_kib": base,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def demo_records(persons: int = 3000, keys: int = 60, seed: int = 33) -> list[dict]:
    """The input of ``configs/open_keys.yaml``: visits of ``persons`` customers to ``keys`` cities (a Zipf
    tail: city-000 most visited) over one day; a visit is inserted, sometimes moved to another city
    (upsert) and sometimes deleted; a customer visits up to 4 cities (the third and later are refused
    with max_keys_per_person 2)."""
    import random

    rnd = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(keys)]
    out, seq = [], 0
    for c in range(persons):
        for v in range(rnd.randint(1, 4)):
            t = rnd.uniform(0, 86400 * 0.8)
            city = f"city-{rnd.choices(range(keys), weights)[0]:03d}"
            ev = [(t, "insert", city)]
            r = rnd.random()
            if r < 0.2:
                ev.append((rnd.uniform(t, 86400), "upsert", f"city-{rnd.choices(range(keys), weights)[0]:03d}"))
            elif r < 0.4:
                ev.append((rnd.uniform(t, 86400), "delete", city))
            for when, op, where in ev:
                rec = {
                    "time": round(when, 3),
                    "op": op,
                    "id": f"v{c:04d}-{v}",
                    "city": where,
                    "customer": c,
                    "seq": seq,
                }
                if op != "delete":
                    rec["item"] = {}
                out.append(rec)
                seq += 1
    return sorted(out, key=lambda r: (r["time"], r["seq"]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process: one size
    ap.add_argument("--flink", action="store_true", help="on an embedded Flink (docs/flink.md) instead")
    ap.add_argument("--write-demo", metavar="PATH", help="write the input of configs/open_keys.yaml and stop")
    a = ap.parse_args(argv)
    if a.write_demo:
        with open(a.write_demo, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in demo_records())
        return
    if a.one:
        print(json.dumps(run(a.one, a.flink)))
        return
    rows = []
    for n in a.sizes:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchmarks.bench_open_keys_beam",
                "--one",
                str(n),
                *(["--flink"] if a.flink else []),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    figures = cell_bytes()
    if len(rows) >= 2:
        lo, hi = rows[0], rows[-1]
        field = "jvm_peak_rss_kib" if a.flink else "peak_rss_kib"
        figures[f"{'flink_jvm' if a.flink else 'direct_runner'}_bytes_per_key"] = round(
            (hi[field] - lo[field]) * 1024 / (hi["n"] - lo["n"])
        )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
