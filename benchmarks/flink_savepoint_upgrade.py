"""A savepoint written by an older version of this library, restored by the current one, on Flink.

The scenario (``tests/test_flink.py::test_savepoint_of_the_previous_version_restores_in_the_current_one``
runs it against the session's job server; this script runs it on its own, e.g. against another commit):

1. a followed file holds the first part of an update stream (event times < 60 s);
2. job 1, built and run by a child process whose ``transforms`` and ``pipelines`` come from the old
   version's tree (``git worktree add``), releases from it; it is stopped with a savepoint (Flink's REST
   API) once its first releases are out;
3. the rest of the stream is appended (with ``#END``); job 2, the same pipeline built by the current
   version, is restored from that savepoint (``execution.savepoint.path`` in the job server's Flink
   configuration) and runs until every release is out, then is cancelled;
4. the releases of both jobs together are the current in-memory core's, values and spend, each once.

Both jobs are built by the same driver code (``job`` below), so only the library differs. The state a
savepoint holds: the source's restriction (a file offset), the entry registry's per-entry state
(``FastPrimitivesCoder``), the per-tick merge's buffers and the mechanisms' versioned state
(``transforms.core.foundation.state``, schema 1 in both versions), plus the runner's timers.

Usage::

    python benchmarks/flink_savepoint_upgrade.py [--old a8f9837]   # needs DP_DYNAMIC_FLINK_JAR or mvn
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The commit whose library writes the savepoint by default: the one that added the Flink tier and the
#: followed-file source (the state format, schema 1, is the contract issue's; tests/golden/state_v1.json).
OLD_COMMIT = "a8f9837"
KEY_HEX = bytes(range(32, 64)).hex()
SPLIT = 60.0
END = 150.0


def workload(n=160, seed=13):
    """The update stream (as tests/test_beam_releases.workload): two streams, times out of order by < 1 s."""
    import numpy as np

    rng = np.random.default_rng(seed)
    recs, live = [], {"a": [], "b": []}
    for i in range(n):
        s = ("a", "b")[int(rng.integers(2))]
        t = float(i) * 0.7 + float(rng.random())
        if live[s] and rng.random() < 0.35:
            eid = live[s].pop(int(rng.integers(len(live[s]))))
            recs.append({"time": t, "op": "delete", "id": eid, "item": None, "stream": s, "seq": i})
        elif live[s] and rng.random() < 0.15:
            eid = live[s][int(rng.integers(len(live[s])))]
            recs.append(
                {"time": t, "op": "upsert", "id": eid, "item": [0, int(rng.integers(4))], "stream": s, "seq": i}
            )
        else:
            eid = f"{s}{i}"
            live[s].append(eid)
            recs.append(
                {"time": t, "op": "insert", "id": eid, "item": [0, int(rng.integers(4))], "stream": s, "seq": i}
            )
    return recs


def _config():
    from transforms.core import DynamicConfig, PureDP, QuerySet
    from transforms.releases import StreamSpec

    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(2.0))
    return cfg, StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=END, every_ticks=2)


def expected(recs, release_id):
    """The current in-memory core's releases (stream, tick, segment, query, estimate, spend), sorted."""
    from transforms.core import FullyDynamicRelease, NoiseSource, ReleaseIdentity, Update
    from transforms.core.foundation.accounting import as_vector
    from transforms.records import NoiseKey
    from transforms.releases import ReleaseFullyDynamic

    cfg, spec = _config()
    release = ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed(KEY_HEX), release=ReleaseIdentity(release_id)).release
    source = NoiseSource.from_hex(KEY_HEX).for_release(release)
    out = []
    for s in spec.streams:
        core = FullyDynamicRelease(cfg, stream=s, end_tick=spec.end_tick, every_ticks=spec.every_ticks)
        by_tick = {}
        for r in sorted((r for r in recs if r["stream"] == s), key=lambda r: (spec.tick_of(r["time"]), r["seq"])):
            item = tuple(r["item"]) if r["item"] is not None else None
            by_tick.setdefault(spec.tick_of(r["time"]), []).append(Update(r["op"], r["id"], item))
        results = [core.process_tick(t, ups, source) for t, ups in sorted(by_tick.items())]
        results += core.run_to_end(source)
        for res in results:
            out += [
                (a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate), as_vector(a.spent))
                for a in res.answers
            ]
    return sorted(out)


def same_releases(got: list, expect: list, rel: float = 1e-12) -> bool:
    """``got`` (sorted) is ``expect``: every field equal, but the spend within ``rel`` (relative). The spend of
    an old version's release is that version's ledger total: since stop 57 ``zeta`` is rounded up, so a zeta
    split's weights (the fully dynamic tree's levels) are up to ~6e-15 relative below the old version's; the
    ledger compares with 1e-12 (``docs/accounting.md``)."""
    if len(got) != len(expect):
        return False
    for g, e in zip(got, expect):
        if g[:5] != e[:5] or len(g[5]) != len(e[5]):
            return False
        if any(abs(a - b) > rel * max(abs(a), abs(b)) for a, b in zip(g[5], e[5])):
            return False
    return True


def read_releases(path: Path) -> list:
    if not path.exists():
        return []
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return sorted((s, t, g, q, tuple(e), tuple(c)) for s, t, g, q, e, c in rows)


# --- the job (run in a child process whose sys.path starts with the library's tree) ---------------------


def _to_update(line):
    import apache_beam as beam

    from transforms.records import UpdateRecord

    d = json.loads(line)
    item = tuple(d["item"]) if d["item"] is not None else None
    return beam.window.TimestampedValue(
        UpdateRecord(d["time"], d["op"], d["id"], item, d["stream"], d["seq"]), d["time"]
    )


def _append_release(r, path):
    line = json.dumps([r.stream, r.tick, r.segment, r.query, list(r.estimate), list(r.spent)])
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def job(endpoint: str, data: str, sink: str, release_id: str) -> str:
    """Build and run the checkpointed followed-file job; returns its final state."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

    try:  # this library (the followed-file source in the IO registry)
        from pipelines.io.follow import ReadFollowing
    except ImportError:  # the previous version, in its worktree
        from pipelines.follow_source import ReadFollowing
    from transforms.core import ReleaseIdentity
    from transforms.records import NoiseKey
    from transforms.releases import ReleaseContinually, ReleaseFullyDynamic

    cfg, spec = _config()
    # The previous version's savepoint holds the per-entry registry (``ResolveEntries``); the current library keys
    # it by hash shard on Flink (``transforms/sharded.py``) unless told to keep the per-entry layout, which is
    # what a job restored from an older savepoint must do (``streams.registry_shards: 0``).
    layout = {"registry_shards": 0} if "registry_shards" in inspect.signature(ReleaseContinually).parameters else {}
    opts = PipelineOptions(
        [
            "--runner=PortableRunner",
            f"--job_endpoint={endpoint}",
            "--environment_type=LOOPBACK",
            "--parallelism=2",
            "--checkpointing_interval=500",
            "--finish_bundle_before_checkpointing",
        ]
    )
    opts.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=opts)
    out = (
        p
        | ReadFollowing(data, poll_seconds=0.2, max_disorder_seconds=1.0)
        | "ToUpdates" >> beam.Map(_to_update)
        | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed(KEY_HEX), release=ReleaseIdentity(release_id), **layout)
    )
    out["answers"] | "Sink" >> beam.Map(_append_release, sink)
    try:
        return p.run().wait_until_finish()
    except RuntimeError as e:
        if "JobCancellationException: Job was cancelled" in str(e):
            return "CANCELLED"
        raise


# --- the scenario ----------------------------------------------------------------------------------------


def _wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        time.sleep(0.2)


def _spawn(code: Path, server, data: Path, sink: Path, release_id: str, log: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(code))
    cmd = [sys.executable, str(Path(__file__).resolve()), "job", "--code", str(code), "--endpoint", server.endpoint]
    cmd += ["--data", str(data), "--sink", str(sink), "--release-id", release_id]
    return subprocess.Popen(cmd, cwd=code, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)


def upgrade_scenario(server, old_tree: Path, tmp: Path, release_id: str = "flink-upgrade-0001") -> dict:
    """Run the scenario on ``server`` (started with ``rest=True``); return what it saw. Raises on a step
    that fails (with the job's output)."""
    recs = workload()
    expect = expected(recs, release_id)
    data = tmp / "updates.jsonl"
    sinks = [tmp / "old.jsonl", tmp / "new.jsonl"]
    logs = [tmp / "old-job.log", tmp / "new-job.log"]
    data.write_text("".join(json.dumps(r) + "\n" for r in recs if r["time"] < SPLIT))
    t0 = time.perf_counter()
    first = _spawn(old_tree, server, data, sinks[0], release_id, logs[0])
    try:
        job1 = server.wait_for_running_job()
        _wait_for(lambda: any(r[1] >= 8 for r in read_releases(sinks[0])), 120, "the old version's first releases")
        _wait_for(lambda: server.checkpoint_counts(job1).get("completed", 0) >= 1, 60, "a checkpoint")
        savepoint = server.stop_with_savepoint(job1, tmp / "savepoints")
        first.wait(60)
    finally:
        if first.poll() is None:
            first.kill()
    if first.returncode != 0 or f"library: {old_tree.resolve()}" not in logs[0].read_text():
        raise RuntimeError(f"the old version's job failed:\n{logs[0].read_text()[-3000:]}")
    released_old = read_releases(sinks[0])
    with data.open("a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs if r["time"] >= SPLIT) + "#END\n")
    server.restore_next_job_from(savepoint)
    second = _spawn(ROOT, server, data, sinks[1], release_id, logs[1])
    try:
        try:
            job2 = server.wait_for_running_job(exclude=(job1,))
        finally:
            server.restore_next_job_from(None)
        restored = server.checkpoint_counts(job2).get("restored", 0)
        _wait_for(lambda: len(set(read_releases(sinks[1]))) >= len(expect) - len(released_old), 180, "all releases")
        time.sleep(2.0)  # anything further would be an extra release
        server.rest("PATCH", f"/jobs/{job2}?mode=cancel")
        second.wait(60)
    finally:
        if second.poll() is None:
            second.kill()
    if f"library: {ROOT}" not in logs[1].read_text():
        raise RuntimeError(f"the current version's job did not run:\n{logs[1].read_text()[-3000:]}")
    released_new = read_releases(sinks[1])
    return {
        "expected": expect,
        "old": released_old,
        "new": released_new,
        "restored": restored,
        "savepoint": savepoint,
        "seconds": time.perf_counter() - t0,
    }


def old_worktree(commit: str, where: Path) -> Path:
    """``git worktree add --detach where commit`` of this repository (raises when git cannot)."""
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), commit], check=True, capture_output=True
    )
    return where


def remove_worktree(where: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], capture_output=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command")
    j = sub.add_parser("job", help=argparse.SUPPRESS)
    for arg in ("--code", "--endpoint", "--data", "--sink", "--release-id"):
        j.add_argument(arg, required=True)
    ap.add_argument("--old", default=OLD_COMMIT, help="the commit that writes the savepoint")
    args = ap.parse_args(argv)
    if args.command == "job":
        sys.path.insert(0, args.code)  # the library of this job: the old tree or the current one
        import transforms

        print(f"library: {Path(transforms.__file__).resolve().parents[1]}", flush=True)
        print(job(args.endpoint, args.data, args.sink, args.release_id))
        return 0
    sys.path.insert(0, str(ROOT))
    from pipelines.tools import flink_jobserver

    jar = os.environ.get("DP_DYNAMIC_FLINK_JAR")
    server = flink_jobserver.start(Path(jar) if jar else flink_jobserver.fetch(), parallelism=2, rest=True)
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-upgrade-") as tmp:
        tree = old_worktree(args.old, Path(tmp) / "old")
        try:
            seen = upgrade_scenario(server, tree, Path(tmp))
        finally:
            server.stop()
            remove_worktree(tree)
    both = sorted(seen["old"] + seen["new"])
    ok = same_releases(both, seen["expected"]) and not {r[:4] for r in seen["old"]} & {r[:4] for r in seen["new"]}
    print(
        f"old version {args.old}: {len(seen['old'])} releases before the savepoint; current version restored "
        f"({seen['restored']} restore), {len(seen['new'])} releases after; expected {len(seen['expected'])}; "
        f"equal to the core, each once: {ok}; {seen['seconds']:.1f} s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
