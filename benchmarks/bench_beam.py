"""Beam throughput: the default release against a non-private pipeline that computes the same answers.

Every pipeline reads the same JSON-lines file of demo-like updates (``pipelines.demo_data.generate``: two
regions, bookings inserted, modified and cancelled, a few bad lines; ten-minute periods up to the last
update). The pipelines:

* ``default``: the default release (``configs/demo.yaml`` with this input and end: ``mechanism: auto``, a count,
  a 3-carrier histogram and a sum, an answer every period), through the release CLI's own wiring
  (``pipelines.cli.main``, as ``python -m pipelines.release`` runs it, the picture included);
* ``reference``: the fair reference of issue 30 (``benchmarks/reference.py``): the same answers without
  privacy (read, parse, resolve each entry's upserts and deletes, per-period changes, summed per (stream,
  period), running totals of every period written as JSON lines). ``tests/test_bench_reference.py`` checks
  that its answers are the release's with the noise off;
* ``stream`` / ``entry``: a non-private live count in keyed state (+1 insert, -1 delete), keyed by stream or
  by (stream, entry) (the per-key state costs the streaming entry registry pays); they do not compute what
  the release computes;
* ``fd`` (only when named in ``--pipelines``): ``ReleaseFullyDynamic`` (tuned, count query), the benchmark's
  earlier DP pipeline.

Wall time includes pipeline start-up. Batch reads the file with ReadFromText; the streaming BundleBased runner
cannot run that splittable source, so there the keyed counts and the reference get the same lines from Create
(the release CLI reads its file source as a bounded source: ``default`` runs in batch only). Peak memory is
the peak of the summed RSS of the run's process tree (sampled every 0.2 s: the run's process and the SDK
worker processes it starts). CPU seconds: user + sys of the run's process and the child processes it waited for
(the figure to compare when the machine is shared: wall time follows the load).

Every run is a fresh interpreter (an earlier pipeline's garbage, caches and threads would otherwise slow the
later ones); each pipeline runs ``--repeat`` times, interleaved with the others, and the table gives the
median, the range, and the ratio run by run (reference seconds / release seconds: >= 0.8 is issue 30's
target). ``--state`` prints the bytes of streaming state per live entry (the registry's ``meta`` cell) and per
open period (a pending tick aggregate), encoded by the coders the steps use.

``--runner flink``: the same pipelines on Beam's Flink job server with an embedded Flink
(``pipelines/tools/flink_jobserver.py``, started once by this script; LOOPBACK SDK worker, parallelism 2),
batch and ``--streaming``, both reading the file with ReadFromText; one run of each pipeline after a
warm-up job (the first job on a fresh job server pays the JVM's warm-up). Peak RSS there is the Python
processes' only (the SDK worker); the JVM is not counted.

Usage: python benchmarks/bench_beam.py [--updates 200000] [--repeat 3] [--modes batch,streaming]
                                       [--pipelines default,reference,stream,entry] [--state]
       python benchmarks/bench_beam.py --runner flink [--updates 100000] [--modes flink-batch,flink-streaming]
"""

from __future__ import annotations

import argparse
import contextlib
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
from apache_beam.coders import FastPrimitivesCoder, VarIntCoder  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec  # noqa: E402

from benchmarks.reference import Demo, demo_yaml, parse_update, reference_pipeline  # noqa: E402
from pipelines.demo_data import generate  # noqa: E402
from transforms import NoiseKey, ReleaseFullyDynamic, StreamSpec, UpdateRecord  # noqa: E402
from transforms.core import DynamicConfig, PureDP, QuerySet  # noqa: E402

TICK_SECONDS = 600.0


def write_input(path: Path, n: int) -> tuple[int, float]:
    """``n`` demo-like updates (and the generator's five bad lines); (number of lines, the configured end: the
    end of the period of the last update)."""
    lines = generate(n)
    path.write_text("\n".join(lines) + "\n")
    last = max(json.loads(x)["time"] for x in lines[-10:-5])  # the updates are in time order
    return len(lines), (int(last // TICK_SECONDS) + 1) * TICK_SECONDS


def parse(line: str):
    try:
        d = json.loads(line)
        item = d.get("item")
        rec = UpdateRecord(d["time"], d["op"], d["id"], tuple(item.values()) if item else None, d["region"], d["seq"])
    except (ValueError, KeyError, TypeError):
        return
    yield beam.window.TimestampedValue(rec, d["time"])


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
    return PipelineOptions(beam_args(mode))


def beam_args(mode: str) -> list[str]:
    if mode.startswith("flink"):
        args = [
            "--runner=PortableRunner",
            f"--job_endpoint={os.environ[FLINK_ENDPOINT_ENV]}",
            "--environment_type=LOOPBACK",
            "--parallelism=2",
        ]
        return args + (["--streaming"] if mode == "flink-streaming" else [])
    if mode == "batch":
        return [f"--runner={FNAPI_RUNNER}"]
    if mode == "batch-2proc":  # two SDK worker processes, as a distributed runner runs it
        return [f"--runner={FNAPI_RUNNER}", "--direct_num_workers=2", "--direct_running_mode=multi_processing"]
    return ["--runner=BundleBasedDirectRunner", "--streaming"]


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
            | "Parse" >> beam.FlatMap(parse)
            | "Key" >> beam.Map(key)
            | "KeyedCount" >> beam.ParDo(_KeyedCount())
        )
    return time.perf_counter() - t0


def run_reference(path: Path, mode: str, end: float) -> float:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        with beam.Pipeline(options=options(mode)) as p:
            reference_pipeline(read(p, path, mode), Demo(end=end), str(Path(out) / "answers"))
        return time.perf_counter() - t0


def run_default(path: Path, mode: str, end: float) -> float:
    """The default release through the CLI's wiring (``python -m pipelines.release --config ...``)."""
    from pipelines.cli import main as release_main

    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "demo.yaml"
        cfg.write_text(demo_yaml(Demo(end=end), str(path), str(Path(tmp) / "output") + "/"))
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):
            code = release_main(["--config", str(cfg), *beam_args(mode)])
        if code not in (0, None):
            raise SystemExit(f"the release failed ({code})")
        return time.perf_counter() - t0


def run_fd(path: Path, mode: str, end: float) -> float:
    cfg = DynamicConfig((QuerySet("active", "count"),), PureDP(1.0), profile="tuned")
    # the end of the release is configuration: the benchmark knows where its generated data ends
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=TICK_SECONDS, end_time=end)
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        out = (
            read(p, path, mode)
            | "Parse" >> beam.FlatMap(parse)
            | "NoItem" >> beam.Map(lambda r: r._replace(item=None if r.op == "delete" else (0,)))
            | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed("ab" * 32), emit_nodes=False)
        )
        out["answers"] | "Consume" >> beam.Map(lambda a: None)
    return time.perf_counter() - t0


PIPELINES = {
    "stream": "non-private count keyed by stream",
    "entry": "non-private count keyed by entry",
    "reference": "non-private reference (same answers)",
    "default": "default release (auto, 3 query sets)",
    "fd": "ReleaseFullyDynamic (tuned, count)",
}
MODES = {
    "batch": "FnApiRunner",
    "batch-2proc": "FnApiRunner, 2 worker processes",
    "streaming": "BundleBasedDirectRunner --streaming",
    "flink-batch": "Flink 1.19 (embedded, Beam 2.62 job server)",
    "flink-streaming": "Flink 1.19 (embedded, Beam 2.62 job server) --streaming",
}


def run_one(path: Path, mode: str, pipeline: str, end: float) -> float:
    if pipeline == "warmup":
        return run_warmup(mode)
    runs = {"reference": run_reference, "default": run_default, "fd": run_fd}
    if pipeline in runs:
        return runs[pipeline](path, mode, end)
    return run_baseline(path, mode, pipeline)


def run_warmup(mode: str) -> float:
    """A tiny job (the first job on a fresh job server pays the JVM's warm-up, 25 s against 13 s)."""
    t0 = time.perf_counter()
    with beam.Pipeline(options=options(mode)) as p:
        p | beam.Create(range(100)) | beam.Map(lambda x: (x % 3, x)) | beam.GroupByKey()
    return time.perf_counter() - t0


def _tree_rss_kb(root: int) -> int:
    """The summed RSS (kB) of ``root`` and its descendants, from /proc (0 where /proc is missing)."""
    parent, rss = {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            parent[int(d.name)] = int(fields[1])
            rss[int(d.name)] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
        except (OSError, IndexError, ValueError):
            continue
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo.extend(c for c, pp in parent.items() if pp == pid and c not in tree)
    return sum(rss.get(pid, 0) for pid in tree)


def measure(
    path: Path, mode: str, pipeline: str, end: float, timeout: float | None = None
) -> tuple[float, float, float]:
    """One run in a fresh interpreter (no garbage, caches or threads left by an
    earlier pipeline): (seconds, peak summed RSS in MB of its process tree, CPU seconds: user + sys of the run's
    process and the processes it waited for). Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds (the run is killed)."""
    cmd = [sys.executable, __file__, "--one", mode, pipeline, str(path), repr(end)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        t0, peak = time.monotonic(), 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss_kb(proc.pid))
            if timeout is not None and time.monotonic() - t0 > timeout:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
            time.sleep(0.2)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, cmd, out.read(), err.read()[-3000:])
        words = out.read().split()
    return float(words[-3]), max(float(words[-2]), peak / 1024), float(words[-1])


def state_bytes(path: Path, end: float) -> tuple[float, float, float]:
    """(bytes per live entry of the per-entry registry's ``meta`` cell (the DirectRunner's streaming graph), bytes
    per live entry of the sharded registry's ``shard`` values (Flink, Dataflow: ``transforms/sharded.py``, its
    default shards, nothing pending), bytes per open period of a pending tick aggregate), averaged over the input,
    encoded with the FastPrimitivesCoder the steps use (the keys and the runner's own bookkeeping not counted)."""
    from transforms.common import resolve_updates, update_order
    from transforms.core.foundation.aggregates import in_tick_order
    from transforms.sharded import DEFAULT_SHARDS, shard_of

    demo = Demo(end=end)
    updates: dict = {}
    for line in path.read_text().splitlines():
        for key, (tick, seq, op, carrier, level) in parse_update(line, demo):
            item = None if op == "delete" else (0, carrier, level)
            updates.setdefault(key, []).append((tick, seq, op, item, 0.0))
    coder = FastPrimitivesCoder()
    live, entry_bytes, per_stream, shards = 0, 0, {}, {}
    for key, ups in updates.items():
        acc = per_stream.setdefault(key[0], {})
        state, _, _, _ = resolve_updates(None, key[1], sorted(ups, key=update_order), (1, 3, 101), True, None, acc)
        if state is not None and state[0] is not None:
            live += 1
            entry_bytes += len(coder.encode((state, ups[-1][0], None, ())))
            shard = shards.setdefault((key[0], shard_of(key[1], DEFAULT_SHARDS)), {})
            shard[key[1]] = (state, ups[-1][0], 0)
    shard_bytes = sum(len(coder.encode((DEFAULT_SHARDS, entries, {}))) for entries in shards.values())
    aggs = [a for acc in per_stream.values() for a in in_tick_order(acc)]
    period = sum(len(coder.encode(a)) for a in aggs) / max(len(aggs), 1)
    return entry_bytes / max(live, 1), shard_bytes / max(live, 1), period


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each pipeline, interleaved (median reported)")
    ap.add_argument("--modes", default=None, help="comma-separated subset of " + ", ".join(MODES))
    ap.add_argument("--pipelines", default="reference,stream,entry,default", help="of " + ", ".join(PIPELINES))
    ap.add_argument("--state", action="store_true", help="print the bytes of streaming state per entry and period")
    ap.add_argument(
        "--runner",
        choices=("local", "flink"),
        default="local",
        help="local: the in-process runners; flink: an embedded Flink through Beam's job server (one run each)",
    )
    ap.add_argument("--flink-timeout", type=float, default=1800.0, help="seconds before a Flink run is stopped")
    ap.add_argument("--one", nargs=4, metavar=("MODE", "PIPELINE", "PATH", "END"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        mode, pipeline, path, end = args.one
        t = run_one(Path(path), mode, pipeline, float(end))
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        print(f"{t:.4f} {me.ru_maxrss / 1024:.0f} {cpu:.2f}")
        return
    if args.runner == "flink":
        return main_flink(args)
    modes = (args.modes or "batch,streaming").split(",")
    chosen = args.pipelines.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "updates.jsonl"
        n, end = write_input(path, args.updates)
        print(f"# bench_beam: {n} lines of demo-like updates, {int(end // TICK_SECONDS)} ten-minute periods")
        print(f"# each pipeline {args.repeat}x, interleaved, each run in a fresh process; median (min-max)")
        print(f"# load before: {os.getloadavg()[0]:.2f} (1-min average; 2 cores)\n")
        if args.state:
            entry, sharded, period = state_bytes(path, end)
            print(
                f"# streaming state: {entry:.0f} bytes per live entry (per-entry meta), {sharded:.0f} in the sharded"
                f" registry's shard values, {period:.0f} per open period\n"
            )
        print("| mode | pipeline | seconds | CPU seconds | updates/s | peak RSS (MB) |")
        print("|---|---|---|---|---|---|")
        for mode in modes:
            pipelines = [p for p in chosen if not (p == "default" and mode == "streaming")]
            times: dict[str, list[float]] = {p: [] for p in pipelines}
            rss: dict[str, list[float]] = {p: [] for p in pipelines}
            cpus: dict[str, list[float]] = {p: [] for p in pipelines}
            for r in range(args.repeat):
                for pipeline in pipelines:
                    if pipeline == "entry" and r:  # 1-1.5 min in batch (the SDK sizes every key's state): once
                        continue
                    load = os.getloadavg()[0]
                    t, m, c = measure(path, mode, pipeline, end)
                    times[pipeline].append(t)
                    rss[pipeline].append(m)
                    cpus[pipeline].append(c)
                    print(
                        f"# run {r + 1} {mode} {pipeline}: {t:.1f} s, {c:.1f} s CPU, peak {m:.0f} MB; "
                        f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after",
                        flush=True,
                    )
            for p in pipelines:
                ts = times[p]
                med = statistics.median(ts)
                spread = f" ({min(ts):.1f}-{max(ts):.1f})" if len(ts) > 1 else ""
                extra = ""
                if p in ("default", "fd") and "reference" in times:
                    per_run = "/".join(f"{a / b:.2f}" for a, b in zip(times["reference"], ts))
                    per_cpu = "/".join(f"{a / b:.2f}" for a, b in zip(cpus["reference"], cpus[p]))
                    extra = f"; reference/release run by run: {per_run} (CPU: {per_cpu})"
                cpu = statistics.median(cpus[p])
                print(
                    f"| {MODES[mode]} | {PIPELINES[p]} | {med:.1f}{spread} | {cpu:.1f} | {n / med:,.0f}{extra} "
                    f"| {max(rss[p]):.0f} |",
                    flush=True,
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
            print(f"# bench_beam --runner flink: {n} lines of demo-like updates")
            print(f"# job server {flink_jobserver.RUNNER_ARTIFACT} listening after {server.startup_seconds:.1f} s")
            print("# one run of each pipeline, each in a fresh process, after a warm-up job; wall time incl. submit\n")
            print("| runner | mode | pipeline | seconds | updates/s | peak RSS of the Python process (MB) |")
            print("|---|---|---|---|---|---|")
            for mode in modes:
                runner = MODES[mode]
                warm, _, _ = measure(path, mode, "warmup", last)
                print(f"| {runner} | {mode} | warm-up job (100 elements, GroupByKey) | {warm:.1f} | - | - |")
                times = {}
                for pipeline in args.pipelines.split(","):
                    name = PIPELINES[pipeline]
                    try:
                        t, rss, _ = measure(path, mode, pipeline, last, timeout=args.flink_timeout)
                    except subprocess.TimeoutExpired:
                        for job in server.flink_jobs():  # the killed run's job would go on in the job server
                            server.rest("PATCH", f"/jobs/{job['jid']}?mode=cancel")
                        stopped = f"> {args.flink_timeout:.0f} (stopped)"
                        print(f"| {runner} | {mode} | {name} | {stopped} | - | - |", flush=True)
                        continue
                    times[pipeline] = t
                    extra = ""
                    if pipeline in ("default", "fd"):
                        ratios = [f"{times[p] / t:.2f}x {p}" for p in ("reference", "stream", "entry") if p in times]
                        extra = f" ({', '.join(ratios)})"
                    print(f"| {runner} | {mode} | {name} | {t:.1f} | {n / t:,.0f}{extra} | {rss:.0f} |", flush=True)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
