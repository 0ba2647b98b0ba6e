"""Pub/Sub helpers for local runs against the emulator (or a real project).

  python -m pipelines.tools.pubsub_tool emulator [--port 8085]
      run the Pub/Sub emulator (Debian package google-cloud-cli-pubsub-emulator) on 127.0.0.1
      until interrupted, on Beam's process helpers (``pipelines/tools/jvm.py``)
  python -m pipelines.tools.pubsub_tool create --config CONFIG
      create the config's source topic and subscription and its sink topics (if missing)
  python -m pipelines.tools.pubsub_tool publish --config CONFIG --input FILE.jsonl --origin EPOCH [--speedup X]
      replay a JSON-lines file: the record at file time t is published at wall time
      EPOCH + t / X, with attributes ``ts`` (that time, ms) and ``update_id``
  python -m pipelines.tools.pubsub_tool pull --config CONFIG [--what releases|nodes|dead_letters] [--max N]
      print the messages waiting on that sink topic's ``-pull`` subscription (``create``
      makes one for every sink topic); dead letters are confidential operator data

The source topic of ``projects/P/subscriptions/S`` is ``projects/P/topics/S`` with a
trailing ``-sub`` or ``-subscription`` removed. Payloads are never printed by
``publish``; ``pull`` prints releases and node outputs (already private), and dead letters
(raw records: confidential operator data) only when asked for with ``--what dead_letters``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.config import ConfigError, PipelineConfig, load_config
from pipelines.io.pubsub import source_topic

if TYPE_CHECKING:
    from pipelines.tools.jvm import Service

__all__ = [
    "WHAT",
    "create",
    "emulator_missing",
    "publish",
    "pull",
    "pull_name",
    "pull_subscription",
    "running_emulator",
    "source_topic",
    "start_emulator",
]

#: The emulator of the Debian package ``google-cloud-cli-pubsub-emulator`` (a Java 17 program).
EMULATOR = "/usr/lib/google-cloud-sdk/platform/pubsub-emulator/bin/cloud-pubsub-emulator"

WHAT = {"releases": "topic", "nodes": "nodes_topic", "dead_letters": "dead_letter_topic"}


def pull_name(topic: str) -> str:
    """The ``-pull`` subscription ``create`` makes for a sink topic."""
    return topic.replace("/topics/", "/subscriptions/") + "-pull"


def emulator_missing() -> str | None:
    """Why the emulator cannot start here (None when it can)."""
    if not Path(EMULATOR).exists():
        return f"the Pub/Sub emulator is not installed ({EMULATOR}: Debian package google-cloud-cli-pubsub-emulator)"
    if shutil.which("java") is None:
        return "the Pub/Sub emulator needs java on PATH (Java 17)"
    return None


def start_emulator(port: int | None = None) -> Service:
    """Start the emulator on 127.0.0.1:``port`` (default: a free port) and wait until its gRPC service answers;
    ``PUBSUB_EMULATOR_HOST`` is then ``127.0.0.1:PORT`` (the port of ``.address``). Raises ``RuntimeError``."""
    from apache_beam.utils.subprocess_server import pick_port

    from pipelines.tools import jvm

    missing = emulator_missing()
    if missing:
        raise RuntimeError(missing)
    (port,) = pick_port(port)
    return jvm.start([EMULATOR, "--host=127.0.0.1", f"--port={port}"], port, "the Pub/Sub emulator")


@contextlib.contextmanager
def running_emulator(port: int | None = None) -> Iterator[str]:
    """:func:`start_emulator` as a context manager; yields ``PUBSUB_EMULATOR_HOST`` (``127.0.0.1:PORT``)."""
    service = start_emulator(port)
    try:
        yield f"127.0.0.1:{service.address.rpartition(':')[2]}"
    finally:
        service.stop()


def _clients():
    from google.cloud import pubsub_v1

    return pubsub_v1.PublisherClient(), pubsub_v1.SubscriberClient()


def create(cfg: PipelineConfig) -> list[str]:
    """Create what the config names (idempotent); returns the paths created."""
    from google.api_core.exceptions import AlreadyExists

    pub, sub = _clients()
    made = []
    topics = [source_topic(cfg.subscription)] if cfg.subscription else []
    for s in cfg.sinks:
        topics += [t for t in (s.topic, s.nodes_topic, s.dead_letter_topic) if t]
    for t in dict.fromkeys(topics):
        try:
            pub.create_topic(name=t)
            made.append(t)
        except AlreadyExists:
            pass
    subs = [(cfg.subscription, source_topic(cfg.subscription))] if cfg.subscription else []
    # a subscription for every sink topic (messages published before a subscription
    # exists are not kept by Pub/Sub)
    subs += [(pull_name(t), t) for s in cfg.sinks for t in (s.topic, s.nodes_topic, s.dead_letter_topic) if t]
    subs = list(dict.fromkeys(subs))
    for name, topic in subs:
        try:
            sub.create_subscription(name=name, topic=topic)
            made.append(name)
        except AlreadyExists:
            pass
    return made


def publish(cfg: PipelineConfig, path: str, origin: float, speedup: float = 1.0, lines_per_message: int = 1) -> int:
    """Replay ``path`` onto the source topic in event-time order; returns the count.

    ``lines_per_message`` > 1 (the randomized-response collector only, whose
    parse step reads one report per line of a message): the records already due
    are sent together, up to that many lines a message, as a gateway batches
    its clients' reports. The DirectRunner's Pub/Sub reader takes 10 messages a
    pull and then moves its watermark to the wall clock, so a backlog of more
    than 10 messages makes records late (``docs/local_dp.md``)."""
    if lines_per_message < 1:
        raise ConfigError("--lines-per-message must be >= 1")
    if lines_per_message > 1 and cfg.mechanism_spec.input_kind != "reports":
        raise ConfigError(
            "--lines-per-message: only the randomized_response collector reads several records per message; "
            "the update pipeline takes one update per message (leave it at 1)"
        )
    pub, _ = _clients()
    topic = source_topic(cfg.subscription)
    records = []
    with open(path) as fh:
        for n, line in enumerate(fh):
            try:
                d = json.loads(line)
                t = float(d[cfg.time_field])
            except (ValueError, KeyError, TypeError):
                records.append((0.0, n, line.rstrip("\n").encode(), None))  # bad input is published as is
                continue
            records.append((t, n, None, d))
    records.sort(key=lambda r: (r[0], r[1]))
    if lines_per_message > 1:
        return _publish_batched(pub, topic, cfg, records, origin, speedup, lines_per_message)
    for t, n, raw, d in records:
        wall = origin + t / speedup
        delay = wall - time.time()
        if delay > 0:
            time.sleep(delay)
        if d is None:
            pub.publish(topic, raw).result()
            continue
        d[cfg.time_field] = wall
        pub.publish(topic, json.dumps(d).encode(), ts=str(int(wall * 1000)), update_id=f"{path}:{n}").result()
    return len(records)


def _publish_batched(pub, topic, cfg, records, origin, speedup, per_message) -> int:
    i = 0
    while i < len(records):
        delay = origin + records[i][0] / speedup - time.time()
        if delay > 0:
            time.sleep(delay)
        lines = []
        while i < len(records) and len(lines) < per_message and origin + records[i][0] / speedup <= time.time():
            t, _, raw, d = records[i]
            if d is not None:
                d[cfg.time_field] = origin + t / speedup
                raw = json.dumps(d).encode()
            lines.append(raw)
            i += 1
        pub.publish(topic, b"\n".join(lines)).result()
    return len(records)


def pull_subscription(subscription: str, max_messages: int = 1000) -> list[dict]:
    """Pull, acknowledge and decode the JSON messages waiting on ``subscription``."""
    from google.api_core.exceptions import DeadlineExceeded

    _, sub = _clients()
    out = []
    while len(out) < max_messages:
        try:
            resp = sub.pull(subscription=subscription, max_messages=min(100, max_messages - len(out)), timeout=5)
        except DeadlineExceeded:  # how the emulator answers a pull with nothing waiting
            break
        if not resp.received_messages:
            break
        out += [json.loads(m.message.data) for m in resp.received_messages]
        sub.acknowledge(subscription=subscription, ack_ids=[m.ack_id for m in resp.received_messages])
    return out


def pull(cfg: PipelineConfig, max_messages: int = 1000, what: str = "releases") -> list[dict]:
    """The messages waiting on the ``-pull`` subscription of the config's
    ``what`` topic (releases, nodes or dead_letters)."""
    key = WHAT[what]
    topic = next((getattr(s, key) for s in cfg.sinks if s.type == "pubsub" and getattr(s, key)), None)
    if topic is None:
        raise ConfigError(f"sinks: no pubsub sink with a {key} to pull {what} from")
    return pull_subscription(pull_name(topic), max_messages)


def _serve_emulator(port: int) -> int:
    try:
        service = start_emulator(port)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(
        f"Pub/Sub emulator on 127.0.0.1:{port} (started in {service.startup_seconds:.1f} s); log: "
        f"{service.log_path}\nexport PUBSUB_EMULATOR_HOST=127.0.0.1:{port}",
        flush=True,
    )
    return service.serve()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.tools.pubsub_tool", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("emulator", "create", "publish", "pull"))
    ap.add_argument("--config", help="the pipeline configuration (every command but emulator)")
    ap.add_argument("--port", type=int, default=8085, help="emulator: its port on 127.0.0.1 (default 8085)")
    ap.add_argument("--input", help="publish: the JSON-lines file to replay")
    ap.add_argument("--origin", type=float, help="publish: wall time (epoch s) of file time 0; default now")
    ap.add_argument("--speedup", type=float, default=1.0, help="publish: replay this many times faster")
    ap.add_argument(
        "--lines-per-message",
        type=int,
        default=1,
        help="publish: send the records already due together, up to this many per message (randomized_response "
        "reports only; default 1)",
    )
    ap.add_argument("--max", type=int, default=1000, help="pull: at most this many messages")
    ap.add_argument("--what", choices=tuple(WHAT), default="releases", help="pull: which sink topic (default releases)")
    args = ap.parse_args(argv)
    if args.command == "emulator":
        return _serve_emulator(args.port)
    if not args.config:
        ap.error(f"{args.command} needs --config CONFIG")
    try:
        cfg = load_config(args.config)
        if cfg.source_type != "pubsub" and args.command == "publish":
            raise ConfigError("source.type: must be pubsub for this tool")
        if args.command == "create":
            for path in create(cfg):
                print(f"created {path}")
        elif args.command == "publish":
            if not args.input or not args.speedup > 0:
                raise ConfigError("publish needs --input FILE and --speedup > 0")
            origin = time.time() if args.origin is None else args.origin
            n = publish(cfg, args.input, origin, args.speedup, args.lines_per_message)
            print(f"published {n} records to {source_topic(cfg.subscription)}")
        else:
            for rec in pull(cfg, args.max, args.what):
                print(json.dumps(rec))
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
