"""Beam throughput: the fully-dynamic count release against non-private baselines.

Both pipelines read the same JSON-lines file of updates (a sparse fully-dynamic
stream from ``workloads.py``, n_t ~ 1000, one tick per second), parse every line
into an ``UpdateRecord`` and stamp its event time. The non-private baseline then
keeps a live count in keyed state (+1 insert, -1 delete), keyed either by stream
(one key) or by (stream, entry id) (the minimal non-private way to track live
records; it pays the per-key state costs that the streaming entry registry
pays). The DP pipeline runs ``ReleaseFullyDynamic`` (tuned profile, a count
query, eps = 1). Wall time includes pipeline start-up. Batch reads the file with
ReadFromText; the streaming BundleBased runner cannot run that splittable
source, so both streaming pipelines get the same lines from Create. Peak RSS is
the benchmark process (the runners here execute in-process).

Usage: python benchmarks/bench_beam.py [--updates 100000] [--large 1000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import apache_beam as beam  # noqa: E402
from apache_beam.coders import VarIntCoder  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions  # noqa: E402
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec  # noqa: E402

from benchmarks.workloads import sparse_dynamic_stream  # noqa: E402
from transforms import NoiseKey, ReleaseFullyDynamic, StreamSpec, UpdateRecord  # noqa: E402
from transforms.core import DynamicConfig, PureDP, QuerySet  # noqa: E402


def write_input(path: Path, n: int) -> tuple[int, float]:
    count, last = 0, 0.0
    with path.open("w") as fh:
        for tick, ups in sparse_dynamic_stream(n, fields=("count",), seed=11):
            for i, u in enumerate(ups):
                fh.write(
                    json.dumps({"time": float(tick) - 0.5, "op": u.op, "id": u.entry_id, "item": u.item, "seq": i})
                    + "\n"
                )
                count += 1
            last = float(tick)
    return count, last


def parse(line: str):
    d = json.loads(line)
    item = tuple(d["item"]) if d.get("item") is not None else None
    return beam.window.TimestampedValue(UpdateRecord(d["time"], d["op"], d["id"], item, "default", d["seq"]), d["time"])


class _KeyedCount(beam.DoFn):
    COUNT = ReadModifyWriteStateSpec("count", VarIntCoder())

    def process(self, kv, count=beam.DoFn.StateParam(COUNT)):  # noqa: B008 (Beam idiom)
        _, rec = kv
        count.write((count.read() or 0) + (1 if rec.op == "insert" else -1 if rec.op == "delete" else 0))


def options(mode: str) -> PipelineOptions:
    if mode == "batch":
        return PipelineOptions(runner="FnApiRunner")
    if mode == "batch-2proc":  # two SDK worker processes, as a distributed runner runs it
        return PipelineOptions(runner="FnApiRunner", direct_num_workers=2, direct_running_mode="multi_processing")
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


def read(p, path: Path, mode: str):
    """ReadFromText in batch; the streaming BundleBased runner cannot run the
    splittable text source, so there the same lines come from Create."""
    if mode.startswith("batch"):
        return p | beam.io.ReadFromText(str(path))
    return p | beam.Create(path.read_text().splitlines())


def run_baseline(path: Path, mode: str, by: str) -> float:
    key = (lambda r: ((r.stream, r.entry_id), r)) if by == "entry" else (lambda r: (r.stream, r))
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        (
            read(p, path, mode)
            | "Parse" >> beam.Map(parse)
            | "Key" >> beam.Map(key)
            | "KeyedCount" >> beam.ParDo(_KeyedCount())
        )
    return time.perf_counter() - t0


def run_dp(path: Path, mode: str, last_time: float) -> float:
    cfg = DynamicConfig((QuerySet("active", "count"),), PureDP(1.0), profile="tuned")
    # streaming BundleBased cannot group a bounded input (the end marker of the
    # bounded mode): give the end explicitly there
    spec = StreamSpec(tick_seconds=1.0, end_time=last_time if mode == "streaming" else None)
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        out = (
            read(p, path, mode)
            | "Parse" >> beam.Map(parse)
            | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed("ab" * 32), emit_nodes=False)
        )
        out["answers"] | "Consume" >> beam.Map(lambda a: None)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=100_000)
    ap.add_argument("--large", type=int, default=1_000_000, help="updates for the bounded large run (0: skip)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "updates.jsonl"
        n, last = write_input(path, args.updates)
        print(f"# bench_beam: {n} updates, one file, eps = 1 (tuned), count query\n")
        print("| runner | mode | pipeline | seconds | updates/s |")
        print("|---|---|---|---|---|")
        for mode, runner in (
            ("batch", "FnApiRunner"),
            ("batch-2proc", "FnApiRunner, 2 worker processes"),
            ("streaming", "BundleBasedDirectRunner --streaming"),
        ):
            ts = run_baseline(path, mode, "stream")
            # the entry-keyed count takes ~1 min in batch (the SDK sizes every key's state): once is enough
            te = run_baseline(path, mode, "entry") if mode != "batch-2proc" else None
            td = run_dp(path, mode, last)
            print(f"| {runner} | {mode} | non-private count keyed by stream | {ts:.1f} | {n / ts:,.0f} |", flush=True)
            if te is not None:
                row = f"| {runner} | {mode} | non-private count keyed by entry | {te:.1f} | {n / te:,.0f} |"
                print(row, flush=True)
            vs_entry = f", {te / td:.2f}x entry-keyed" if te is not None else ""
            print(
                f"| {runner} | {mode} | ReleaseFullyDynamic | {td:.1f} | {n / td:,.0f} "
                f"({ts / td:.2f}x stream-keyed{vs_entry}) |",
                flush=True,
            )
        if args.large:
            big = Path(tmp) / "large.jsonl"
            m, last_big = write_input(big, args.large)
            td = run_dp(big, "batch", last_big)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"\nBounded run, {m} updates, FnApiRunner: {td:.0f} s ({m / td:,.0f} updates/s), peak RSS {rss:.0f} MB"
            )


if __name__ == "__main__":
    main()
