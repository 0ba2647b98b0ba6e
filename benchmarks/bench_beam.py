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
that of the run's process (the runners here execute in-process).

Every run is a fresh interpreter (an earlier pipeline's garbage, caches and
threads would otherwise slow the later ones: the DP pipeline ran last and paid
for them); each pipeline runs ``--repeat`` times, interleaved with the others,
and the table gives the median, the range, and the ratio run by run.

``--runner flink``: the same pipelines on Beam's Flink job server with an embedded Flink
(``pipelines/tools/flink_jobserver.py``, started once by this script; LOOPBACK SDK worker, parallelism 2),
batch and ``--streaming``, both reading the file with ReadFromText; one run of each pipeline after a
warm-up job (the first job on a fresh job server pays the JVM's warm-up). Peak RSS there is the Python
process's only (the SDK worker); the JVM is not counted.

Usage: python benchmarks/bench_beam.py [--updates 100000] [--large 1000000] [--repeat 3] [--modes batch,streaming]
       python benchmarks/bench_beam.py --runner flink [--updates 100000] [--modes flink-batch,flink-streaming]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
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


#: The job endpoint of the Flink job server the parent started (``--runner flink``), for the child runs.
FLINK_ENDPOINT_ENV = "BENCH_FLINK_JOB_ENDPOINT"
# The class path, not the short name "FnApiRunner": apache-beam 2.62 (the Flink runner's release) knows no short name.
FNAPI_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"


def options(mode: str) -> PipelineOptions:
    if mode.startswith("flink"):
        opts = PipelineOptions(
            runner="PortableRunner",
            job_endpoint=os.environ[FLINK_ENDPOINT_ENV],
            environment_type="LOOPBACK",
            parallelism=2,
        )
        opts.view_as(StandardOptions).streaming = mode == "flink-streaming"
        return opts
    if mode == "batch":
        return PipelineOptions(runner=FNAPI_RUNNER)
    if mode == "batch-2proc":  # two SDK worker processes, as a distributed runner runs it
        return PipelineOptions(runner=FNAPI_RUNNER, direct_num_workers=2, direct_running_mode="multi_processing")
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


def read(p, path: Path, mode: str):
    """ReadFromText in batch; the streaming BundleBased runner cannot run the
    splittable text source, so there the same lines come from Create."""
    if mode.startswith(("batch", "flink")):  # Flink runs the splittable text source in streaming too
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
    # the end of the release is configuration: the benchmark knows where its generated data ends
    spec = StreamSpec(tick_seconds=1.0, end_time=last_time + 1.0)
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        out = (
            read(p, path, mode)
            | "Parse" >> beam.Map(parse)
            | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed("ab" * 32), emit_nodes=False)
        )
        out["answers"] | "Consume" >> beam.Map(lambda a: None)
    return time.perf_counter() - t0


PIPELINES = {"stream": "non-private count keyed by stream", "entry": "non-private count keyed by entry"}
MODES = {
    "batch": "FnApiRunner",
    "batch-2proc": "FnApiRunner, 2 worker processes",
    "streaming": "BundleBasedDirectRunner --streaming",
    "flink-batch": "Flink 1.19 (embedded, Beam 2.62 job server)",
    "flink-streaming": "Flink 1.19 (embedded, Beam 2.62 job server) --streaming",
}


def run_one(path: Path, mode: str, pipeline: str, last: float) -> float:
    if pipeline == "warmup":
        return run_warmup(mode)
    return run_dp(path, mode, last) if pipeline == "dp" else run_baseline(path, mode, pipeline)


def run_warmup(mode: str) -> float:
    """A tiny job (the first job on a fresh job server pays the JVM's warm-up, 25 s against 13 s)."""
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        p | beam.Create(range(100)) | beam.Map(lambda x: (x % 3, x)) | beam.GroupByKey()
    return time.perf_counter() - t0


def measure(path: Path, mode: str, pipeline: str, last: float, timeout: float | None = None) -> tuple[float, float]:
    """One run in a fresh interpreter (no garbage, caches or threads left by an
    earlier pipeline): (seconds, peak RSS in MB of that process). Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the run is killed)."""
    out = subprocess.run(
        [sys.executable, __file__, "--one", mode, pipeline, str(path), repr(last)],
        check=True,
        capture_output=True,
        text=True,
        timeout=timeout,
    ).stdout.split()
    return float(out[-2]), float(out[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=100_000)
    ap.add_argument("--large", type=int, default=1_000_000, help="updates for the bounded large run (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each pipeline, interleaved (median reported)")
    ap.add_argument("--modes", default=None, help="comma-separated subset of " + ", ".join(MODES))
    ap.add_argument(
        "--runner",
        choices=("local", "flink"),
        default="local",
        help="local: the in-process runners; flink: an embedded Flink through Beam's job server (one run each)",
    )
    ap.add_argument("--flink-timeout", type=float, default=1800.0, help="seconds before a Flink run is stopped")
    ap.add_argument("--one", nargs=4, metavar=("MODE", "PIPELINE", "PATH", "LAST"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        mode, pipeline, path, last = args.one
        t = run_one(Path(path), mode, pipeline, float(last))
        print(f"{t:.4f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}")
        return
    if args.runner == "flink":
        return main_flink(args)
    args.modes = args.modes or "batch,batch-2proc,streaming"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "updates.jsonl"
        n, last = write_input(path, args.updates)
        print(f"# bench_beam: {n} updates, one file, eps = 1 (tuned), count query")
        print(f"# each pipeline {args.repeat}x, interleaved, each run in a fresh process; median (min-max)\n")
        print("| runner | mode | pipeline | seconds | updates/s |")
        print("|---|---|---|---|---|")
        for mode in args.modes.split(","):
            runner = MODES[mode]
            # the entry-keyed count takes 1-1.5 min in batch (the SDK sizes every key's state): once is enough
            pipelines = ["stream", "dp"] + ([] if mode == "batch-2proc" else ["entry"])
            times: dict[str, list[float]] = {p: [] for p in pipelines}
            for r in range(args.repeat):
                for pipeline in pipelines:
                    if pipeline == "entry" and r:
                        continue
                    times[pipeline].append(measure(path, mode, pipeline, last)[0])
            med = {p: statistics.median(ts) for p, ts in times.items()}

            def cell(ts):
                m = statistics.median(ts)
                spread = f" ({min(ts):.1f}-{max(ts):.1f})" if len(ts) > 1 else ""
                return f"{m:.1f}{spread}"

            for p in ("stream", "entry"):
                if p in times:
                    print(f"| {runner} | {mode} | {PIPELINES[p]} | {cell(times[p])} | {n / med[p]:,.0f} |")
            ratios = ", ".join(f"{med[p] / med['dp']:.2f}x {p}-keyed" for p in ("stream", "entry") if p in med)
            per_run = "/".join(f"{s / d:.2f}" for s, d in zip(times["stream"], times["dp"]))
            print(
                f"| {runner} | {mode} | ReleaseFullyDynamic | {cell(times['dp'])} | {n / med['dp']:,.0f} "
                f"({ratios}; per run vs stream-keyed: {per_run}) |",
                flush=True,
            )
        if args.large:
            big = Path(tmp) / "large.jsonl"
            m, last_big = write_input(big, args.large)
            td, rss = measure(big, "batch", "dp", last_big)
            print(
                f"\nBounded run, {m} updates, FnApiRunner: {td:.0f} s ({m / td:,.0f} updates/s), peak RSS {rss:.0f} MB"
            )


def main_flink(args) -> None:
    """DP against the non-private keyed counts on an embedded Flink: same input, one run each."""
    from pipelines.tools import flink_jobserver

    modes = (args.modes or "flink-batch,flink-streaming").split(",")
    jar = Path(os.environ["DP_DYNAMIC_FLINK_JAR"]) if os.environ.get("DP_DYNAMIC_FLINK_JAR") else None
    server = flink_jobserver.start(jar or flink_jobserver.fetch(), parallelism=2, rest=True)
    os.environ[FLINK_ENDPOINT_ENV] = server.endpoint
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "updates.jsonl"
            n, last = write_input(path, args.updates)
            print(f"# bench_beam --runner flink: {n} updates, one file, eps = 1 (tuned), count query")
            print(f"# job server {flink_jobserver.RUNNER_ARTIFACT} listening after {server.startup_seconds:.1f} s")
            print("# one run of each pipeline, each in a fresh process, after a warm-up job; wall time incl. submit\n")
            print("| runner | mode | pipeline | seconds | updates/s | peak RSS of the Python process (MB) |")
            print("|---|---|---|---|---|---|")
            for mode in modes:
                runner = MODES[mode]
                warm, _ = measure(path, mode, "warmup", last)
                print(f"| {runner} | {mode} | warm-up job (100 elements, GroupByKey) | {warm:.1f} | - | - |")
                times = {}
                for pipeline in ("stream", "entry", "dp"):
                    name = PIPELINES.get(pipeline, "ReleaseFullyDynamic")
                    try:
                        t, rss = measure(path, mode, pipeline, last, timeout=args.flink_timeout)
                    except subprocess.TimeoutExpired:
                        for job in server.flink_jobs():  # the killed run's job would go on in the job server
                            server.rest("PATCH", f"/jobs/{job['jid']}?mode=cancel")
                        stopped = f"> {args.flink_timeout:.0f} (stopped)"
                        print(f"| {runner} | {mode} | {name} | {stopped} | - | - |", flush=True)
                        continue
                    times[pipeline] = t
                    extra = ""
                    if pipeline == "dp":
                        ratios = [f"{times[p] / t:.2f}x {p}-keyed" for p in ("stream", "entry") if p in times]
                        extra = f" ({', '.join(ratios)})"
                    print(f"| {runner} | {mode} | {name} | {t:.1f} | {n / t:,.0f}{extra} | {rss:.0f} |", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
