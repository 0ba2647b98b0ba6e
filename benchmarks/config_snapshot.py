"""Byte-level snapshot of what every bundled configuration releases, for before/after checks of a refactoring.

Runs ``python -m pipelines.release --config configs/NAME.yaml`` (the README's own command, as a subprocess) for
every file in ``configs/`` and for the README's default run (no ``--config``), each with a fixed noise key and a
fixed release id, into a temporary folder, and prints one JSON object: per configuration and per output kind
(``releases``, ``nodes``, ``query_answers``, ``dead_letters``, ``estimates``) the number of records and a SHA-256
of the records as written (every line of every file of that kind, sorted: the files' sharding is the runner's
choice, their lines are the release). Two snapshots of two versions of the code are equal when every record
written is byte-identical. Every record carries the run's ``release_id`` (fixed here, ``RELEASE_ID``): it is
checked and left out of the digest, so the snapshot compares with those of versions before the field.

A configuration whose source or sinks are a service (Pub/Sub, Kafka) runs here with its source replaced by the
bundled demo file and its sinks by files, and an end added (``time.end``: the demo's eight days, or 7,200 ticks
if that is less): the release logic, the configuration parsing and the record encoding are the same code; the
services' own paths are
checked record for record by ``tests/test_pubsub.py`` and ``tests/test_kafka.py`` (a streaming run's timing
follows the wall clock, so its bytes are not a function of the code alone).

Usage: ``python -m benchmarks.config_snapshot [--out FILE] [NAME ...]``; compare two outputs with ``diff``.

References: ``config_snapshot_stop57.json`` (stop 57, made on an Intel Xeon at 2.3 GHz) differs from main before it
(5845455, run on the same machine) in 13 of the 18 entries, and there only in stated bounds and spends, by at most
6e-15 relative (``snapshot_fields``): ``error_bound`` / ``bound`` in every entry with discrete Laplace noise, up to
8.1e-16 where only the log-MGF changed (now without cancellation), 3.9e-15 where the zeta weights did too;
``epsilon_spent`` / ``rho_spent`` / ``update_level_spent`` / ``cost`` of ``growing`` and ``v_fully_dynamic_zcdp``,
up to 5.7e-15 (the zeta split's weights rounded down). No estimate or dead letter changed.
``config_snapshot_stop42.json`` is stop 42's, made on an AMD EPYC: all 18 entries equal those
of main eb06d86 (stop 41) run on the same machine, but ``v_net_change_entry`` and ``v_person_net_change_approx``
differ from ``config_snapshot_stop41.json`` (made on another processor) in the last bits of their Gaussian
releases' floats: compare against a reference made on the same processor type, or against a base commit run here.
``config_snapshot_stop41.json`` (stop 41). It has an 18th entry, ``open_histogram``
(``configs/open_histogram.yaml``: a histogram whose cells are not declared, issue 33), and differs from
``config_snapshot_stop40.json`` only in the ``releases`` of ``v_net_change_entry`` and ``v_person_net_change_approx``:
(eps, delta) with Gaussian noise is now one tight Gaussian account (docs/accounting.md), 0.869x the noise variance
and the spend stated in its rho; every other entry is byte-identical.
``config_snapshot_stop40.json`` (stop 40) differs from ``config_snapshot_stop39.json``
only in the ``releases`` of ``open_keys``, and there only in ``error_bound`` (null before: every open-key record
now states its (1 - beta) bound, docs/open_keys.md; with it nulled the bytes are stop 39's).
``config_snapshot_stop39.json`` (stop 39) has a 17th entry, ``open_keys``
(``configs/open_keys.yaml``, issue 33), and differs from ``config_snapshot_stop38.json`` in 11 of the 16 others
only in bound fields (``error_bound``, and ``lower`` / ``upper`` where written): every tail bound is now the
exact (Newton) minimum, up to 2.2e-6 relative higher on lattice profiles where the golden section stated less
than the exact minimum (docs/performance.md).
``config_snapshot_stop38.json`` differs from ``config_snapshot_stop37.json``
only in the ``releases`` of ``pubsub`` and ``pubsub_local``, and there only in ``error_bound`` (7,200 periods
pass ``kary.NEWTON_FROM``: the k-ary tree's bound by the vectorised Newton minimiser, docs/performance.md;
``python -m benchmarks.snapshot_fields`` lists the fields). ``config_snapshot_stop37.json`` differs from
``config_snapshot_stop35.json`` only in the ``releases`` of the 8 configurations with a histogram under
``auto`` / ``net_change``: the histogram projection became the default post-processing
(``docs/consistency.md``); their count and sum records are the same bytes, their histogram records change
estimate and error_bound only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
RELEASE_ID = "snapshot-release-0001"
# Variants of the demo that reach the mechanisms and settings no bundled file uses (node outputs, the other
# budget kinds, the entry and person units, Avro out, the other mechanism families). Each is the demo with these keys
# replaced.
VARIANTS = {
    "v_fully_dynamic_zcdp": {"privacy": {"rho": 0.05}, "mechanism": {"kind": "fully_dynamic", "profile": "tight"}},
    "v_fully_dynamic_paper": {"mechanism": {"kind": "fully_dynamic", "profile": "paper"}, "release": {}},
    "v_two_stream_approx": {"privacy": {"epsilon": 1.0, "delta": 1e-6}, "mechanism": {"kind": "two_stream_baseline"}},
    "v_net_change_entry": {
        "privacy": {"epsilon": 1.0, "delta": 1e-6, "unit": "entry", "max_mutations_per_entry": 3},
        "mechanism": {"kind": "net_change"},
        "release": {"every_ticks": 6, "consistent": True, "round": True},
    },
    "v_auto_avro_lateness": {
        "time": {"field": "time", "tick_seconds": 600, "origin": 0, "end": 691200, "allowed_lateness": 1200},
        "sinks": [{"type": "file", "path": "output/", "format": "avro"}],
    },
    "v_dcr": {
        "privacy": {"epsilon": 1.0, "unit": "entry", "max_mutations_per_entry": 4},
        "mechanism": {"kind": "swcr"},
    },
    # the person unit (issue 28) on the person-level demo's input, where configs/demo_person.yaml does not go:
    # Gaussian noise, net_change itself, two entries per person, hourly answers
    "v_person_net_change_approx": {
        "privacy": {
            "epsilon": 1.0,
            "delta": 1e-6,
            "unit": "person",
            "person_field": "customer",
            "max_entries_per_person": 2,
            "max_mutations_per_entry": 3,
            # required over two streams since stop 60; per_stream is the earlier default (same digest and noise;
            # a checkout before stop 60 does not read the word: compare against its own copy of this file)
            "max_streams_per_person": "per_stream",
        },
        "time": {"field": "time", "tick_seconds": 600, "origin": 0, "end": 259200},
        "mechanism": {"kind": "net_change"},
        "release": {"every_ticks": 6},
        "source": {"type": "file", "path": "data/demo_person.jsonl", "format": "jsonl"},
    },
}
KINDS = ("releases", "nodes", "query_answers", "estimates", "dead_letters")


def _without_release_id(record: dict) -> dict:
    """A record without its ``release_id`` (the run's, fixed here: checked, then left out so that the snapshot
    compares with those of versions whose records did not carry it; an Avro reader of such a version fills in
    its default, None)."""
    rid = record.pop("release_id", None)
    if rid not in (None, RELEASE_ID):
        raise SystemExit(f"a record of release {rid!r}, not the snapshot's {RELEASE_ID}")
    return record


def _lines(folder: Path, prefix: str) -> list[str]:
    """Every record of the ``prefix`` files as written, without its release id (a JSON line loses its last
    field's bytes, ``, "release_id": "..."``, and nothing else)."""
    out = []
    for f in sorted(folder.glob(f"{prefix}*")):
        if f.suffix == ".avro":
            import fastavro

            with f.open("rb") as fh:
                out += [json.dumps(_without_release_id(r), sort_keys=True) for r in fastavro.reader(fh)]
        elif f.suffix == ".jsonl":
            suffix = f', "release_id": {json.dumps(RELEASE_ID)}}}'
            for line in f.read_text().splitlines():
                if line.endswith(suffix):  # the bytes before it are the record as versions before the field wrote it
                    line = line[: -len(suffix)] + "}"
                elif "release_id" in json.loads(line):
                    raise SystemExit(f"{f}: a record whose release_id is not {RELEASE_ID} or not its last field")
                out.append(line)
    return sorted(out)


def _localise(raw: dict, tmp: Path) -> dict:
    """Sinks to files under ``tmp``; a service source to the demo file (with the demo's end)."""
    src = raw.get("source") or {}
    if src.get("type") in ("pubsub", "kafka", "follow"):
        raw["source"] = {"type": "file", "path": str(ROOT / "data" / "demo.jsonl"), "format": "jsonl"}
        raw["time"] = {k: v for k, v in raw["time"].items() if k not in ("end",)}
        raw["time"]["origin"] = 0
        # the demo's eight days, or 7,200 ticks where the ticks are shorter (pubsub_local's 1 s ticks)
        raw["time"]["end"] = min(691200, 7200 * raw["time"].get("tick_seconds", 60))
        raw["privacy"].pop("noise_key", None)
    elif src.get("path") and not Path(src["path"]).is_absolute():
        src["path"] = str(ROOT / src["path"])
    qs = raw.get("queries_source")
    if qs and qs.get("path") and not Path(qs["path"]).is_absolute():
        qs["path"] = str(ROOT / qs["path"])
    sinks = []
    for i, sink in enumerate(raw.get("sinks") or [{}]):
        fmt = sink.get("format", "jsonl") if sink.get("type") == "file" else "jsonl"
        sinks.append({"type": "file", "path": str(tmp / f"out{i}"), "format": fmt})
    raw["sinks"] = sinks
    return raw


def snapshot(name: str | None, tmp: Path) -> dict:
    env = dict(os.environ, DP_NOISE_KEY=KEY)
    env.pop("PUBSUB_EMULATOR_HOST", None)
    if name is None:  # the README's run command: the default configuration
        raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    elif name in VARIANTS:
        raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
        raw.update(json.loads(json.dumps(VARIANTS[name])))
    else:
        raw = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
    raw = _localise(raw, tmp)
    cfg = tmp / "config.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    cmd = [sys.executable, "-m", "pipelines.release", "--config", str(cfg), "--release-id", RELEASE_ID]
    if os.environ.get("SNAPSHOT_VIA_IMPORT"):  # a version whose `-m` entry point crashed (local_dp, before stop 25)
        cmd[1:3] = ["-c", "import sys; from pipelines.release import main; sys.exit(main(sys.argv[1:]))"]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    result = {}
    for i, _ in enumerate(raw["sinks"]):
        out = tmp / f"out{i}"
        conf = tmp / f"out{i}-confidential"
        for kind in KINDS:
            lines = _lines(conf if kind == "dead_letters" else out, kind)
            if not lines and kind != "releases":
                continue
            digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
            result[f"sink{i}.{kind}"] = {"records": len(lines), "sha256": digest}
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="configuration names (default: every file in configs/ and the demo)")
    ap.add_argument("--out", help="write the snapshot here too")
    args = ap.parse_args(argv)
    names = args.names or ["(default run)"] + sorted(p.stem for p in (ROOT / "configs").glob("*.yaml")) + list(VARIANTS)
    snap = {}
    for name in names:
        with tempfile.TemporaryDirectory() as d:
            snap[name] = snapshot(None if name == "(default run)" else name, Path(d))
        print(f"{name}: " + ", ".join(f"{k} {v['records']}" for k, v in snap[name].items()), file=sys.stderr)
    text = json.dumps(snap, indent=1, sort_keys=True)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
