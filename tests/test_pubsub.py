"""Pub/Sub for real: updates published to the Google Cloud Pub/Sub emulator, the
streaming pipeline on the (BundleBased) DirectRunner, releases read back.

The emulator comes from the Debian package ``google-cloud-cli-pubsub-emulator``
(Java 17). ``.ci/run`` starts it and sets ``PUBSUB_EMULATOR_HOST``; without the
variable these tests start it themselves, and skip, naming the package, when it
is not installed. The DirectRunner's Pub/Sub watermark is the wall clock, so
ticks are real seconds.

How these tests avoid wall-clock luck. The DirectRunner does not hold a stage's
output watermark for its pending timers, and its reader sets the watermark to
the wall clock after each pull (10 messages at most; a pull on an idle
subscription waits up to 30 s): an update is applied at a later tick when the
pipeline reads it more than the allowed lateness plus one tick after its event
time, and a dead letter read later than its window's end is dropped by the
windowed file sink (docs/beam.md). So: (1) the allowed lateness is 4 ticks
(8 s), and each update is published 6 s before its event time: the reader may
fall 16 s behind before an update counts late; (2) the traffic is light (one
update a second, 15 to 25 fuzzed messages), well below what the reader takes
even with both cores busy elsewhere (docs/testing.md); (3) the updates start
once the pipeline has read the junk published before it started (its dead
letters are out), so a slow start leaves no backlog; (4) the publisher keeps
the traffic, and so the watermark, moving in small steps until the test has
seen what it waits for, and the run is then stopped with Ctrl-C (SIGINT):
never after a guessed duration (``--duration`` is only a cap). Dataflow and
Flink hold the watermark, so there the lag does not matter. (5) What the wall
clock used to do on the DirectRunner, a starved process (a CPU hog) making
its watermark jump several ticks at once, deferred the last whole ticks' batches
to a later release (the registry step's closes and the per-stream release fired
in one round; the DirectRunner holds no watermark for pending timers): the
per-stream step now waits on the registry step's per-tick update counts as
well (``transforms.streaming.counts_gate``), and the noise-off test is exact. (6)
The bundled configurations run with topics and subscriptions of their own.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml
from hypothesis import strategies as st

from pipelines.release import main
from transforms.core.foundation.entries import REASONS

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
PROJECT = "dp-dynamic-local"  # Beam checks project ids against GCP's pattern
LATENESS = 4  # ticks of allowed lateness in the tests' configurations (the module's docstring)
LEAD = 6.0  # seconds: updates are published this long before their event time (the module's docstring)
EVERY = 1.0  # seconds of event time between two updates (the module's docstring)
CARRIERS = ("AA", "B6", "DL")

# one worker runs every Pub/Sub test (pyproject.toml: --dist loadgroup), after the Flink and Kafka tests of the same
# group (tests/test_flink.py says why): they mostly wait on the wall clock (real time streaming), so the other worker
# computes meanwhile, instead of both workers waiting at once
pytestmark = [pytest.mark.pubsub, pytest.mark.xdist_group("services")]


def _reachable(hostport: str) -> bool:
    host, port = hostport.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def emulator():
    """``PUBSUB_EMULATOR_HOST`` when it answers (``.ci/run`` starts one), else an emulator of the module's own
    (``pubsub_tool.running_emulator``, on Beam's process helpers); skips when it is not installed."""
    pubsub = pytest.importorskip("google.cloud.pubsub_v1", reason="google-cloud-pubsub (apache-beam[gcp]) missing")
    from pipelines.tools import pubsub_tool

    host = os.environ.get("PUBSUB_EMULATOR_HOST")
    with contextlib.ExitStack() as stack:
        if not host or not _reachable(host):
            missing = pubsub_tool.emulator_missing()
            if missing:
                pytest.skip(f"{missing}; or set PUBSUB_EMULATOR_HOST")
            host = stack.enter_context(pubsub_tool.running_emulator())
        stack.enter_context(_environment("PUBSUB_EMULATOR_HOST", host))
        yield pubsub


@contextlib.contextmanager
def _environment(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _topic(pubsub, name):
    pub = pubsub.PublisherClient()
    path = pub.topic_path(PROJECT, f"{name}-{uuid.uuid4().hex[:8]}")
    pub.create_topic(name=path)
    return path


def _subscribe(pubsub, topic):
    sub = pubsub.SubscriberClient()
    path = sub.subscription_path(PROJECT, topic.rsplit("/", 1)[1] + "-sub")
    sub.create_subscription(name=path, topic=topic)
    return path


def _workload(origin: float, tick: float, start: float, seconds: float, every: float):
    """Updates with event times spread over [start, start + seconds): inserts,
    upserts and deletes of bookings; (payload dict, update id) in order."""
    updates = []
    live = []
    t = start
    i = 0
    while t < start + seconds:
        i += 1
        if live and i % 5 == 0:
            eid = live.pop(0)
            d = {"op": "delete", "id": eid}
        elif live and i % 7 == 0:
            d = {"op": "upsert", "id": live[-1], "item": {"carrier": "DL", "amount": 99.5}}
        else:
            eid = f"b{i}"
            live.append(eid)
            d = {"op": "insert", "id": eid, "item": {"carrier": ("AA", "B6", "DL")[i % 3], "amount": 10.0 + i}}
        d["time"] = t
        d["seq"] = i  # order within a tick
        d["region"] = "eu" if int(d["id"][1:]) % 4 else "us"  # an entry stays in its stream
        updates.append((d, f"u{i}"))
        t += every
    return updates


def _expected(updates, origin, tick_seconds, stream, tick):
    live = {}
    for d, _ in sorted(updates, key=lambda x: x[0]["time"]):
        if math.floor((d["time"] - origin) / tick_seconds) + 1 > tick:
            break
        if d["region"] != stream:
            continue
        if d["op"] == "delete":
            live.pop(d["id"], None)
        else:
            live[d["id"]] = d["item"]
    return live


def _publisher(pubsub, topic, updates, *, attrs, payload=dict, extra=(), stop=None, lead=LEAD):
    """Publish each update (``payload(d)``, with ``attrs(d, uid)``) ``lead`` seconds before the wall clock
    reaches its event time, after the extra raw payloads, until ``stop`` (a threading.Event) is set; returns
    the thread."""
    pub = pubsub.PublisherClient()
    stop = stop or threading.Event()

    def run():
        for data in extra:
            data, attributes = data if isinstance(data, tuple) else (data, {})
            pub.publish(topic, data, **attributes).result()
        for d, uid in updates:
            if stop.wait(max(0.0, d["time"] - lead - time.time())):
                return
            kwargs = attrs(d, uid)
            data = json.dumps(payload(d)).encode()
            pub.publish(topic, data, **kwargs).result()
            if uid.endswith("3"):  # at-least-once delivery: some updates arrive twice
                pub.publish(topic, data, **kwargs).result()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th


@contextlib.contextmanager
def _running(tmp_path, raw, *, cap: float = 120.0):
    """``python -m pipelines.release --config CFG`` running as a subprocess (as a user runs it) for the body of
    the ``with``, then stopped with Ctrl-C (SIGINT; ``cap`` seconds at most, passed as ``--duration``). Yields
    ``(proc, output)``: ``output()`` is what the run printed so far (stdout and stderr)."""
    command = [sys.executable, "-m", "pipelines.release", "--config", _config(tmp_path, raw)]
    command += ["--runner=DirectRunner", "--duration", str(cap)]
    log = tmp_path / "run.log"
    env = dict(os.environ, MPLBACKEND="Agg", DP_NOISE_KEY=bytes(range(32)).hex())
    with log.open("w") as out:
        proc = _popen(command, ROOT, env, out)
        try:
            yield proc, lambda: log.read_text(errors="replace")
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)  # Ctrl-C: the CLI cancels the streaming job, prints its summary
            _stop_wait(proc)


def _popen(command, cwd, env, out):
    """The CLI as a user starts it from a terminal: SIGINT at its default (a test run started in the background
    of a non-interactive shell inherits SIGINT ignored, and Ctrl-C would then be lost until the CLI installs its
    handler)."""
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _stop_wait(proc, timeout: float = 120.0) -> None:
    """Wait for a stopped CLI (it ends within ``runner.STOP_GRACE_SECONDS`` of handling the stop; the rest is
    margin for a loaded machine); past ``timeout`` its threads' stacks go to its log (SIGUSR1, ``faulthandler``)
    before it is killed, so that a hang says where it was."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(3)
        proc.kill()
        proc.wait(10)


def _wait_for(proc, output, done, what: str, timeout: float) -> None:
    """Poll ``done()`` every quarter second until it is true; fails (with the run's output) when the run ends first or
    ``timeout`` seconds pass: the tests wait on the data, and the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while not done():
        assert proc.poll() is None, f"the run ended before {what}: " + output()[-3000:]
        assert time.monotonic() < deadline, f"no {what} after {timeout:.0f} s: " + output()[-3000:]
        time.sleep(0.25)


def _pull_once(subscription: str) -> list[dict]:
    """One pull (what is waiting now, up to 1000 messages; an empty answer after 2 s at most), acknowledged and
    decoded: polls while a run publishes (``pubsub_tool.pull_subscription`` drains until the topic is quiet)."""
    from google.api_core.exceptions import DeadlineExceeded
    from google.cloud import pubsub_v1

    sub = pubsub_v1.SubscriberClient()
    try:
        resp = sub.pull(subscription=subscription, max_messages=1000, timeout=2)
    except DeadlineExceeded:
        return []
    finally:
        sub.close()
    if resp.received_messages:
        sub = pubsub_v1.SubscriberClient()
        sub.acknowledge(subscription=subscription, ack_ids=[m.ack_id for m in resp.received_messages])
        sub.close()
    return [json.loads(m.message.data) for m in resp.received_messages]


def _caught_up(folder: Path, origin: float, tick: float) -> bool:
    """Whether the releases on file reach within ``LATENESS`` + 10 ticks of the wall clock (a tick is released
    ``LATENESS`` + 1 ticks after it ends, the file sink writes a 5 s window once it closes: about 4 ticks; the rest
    is slack for a loaded machine)."""
    ticks = [r["tick"] for r in _jsonl(folder, "releases*.jsonl")]
    return bool(ticks) and max(ticks) >= math.floor((time.time() - origin) / tick) - (LATENESS + 10)


def _same(answers: dict, exact: dict) -> bool:
    """Whether noise-off ``answers`` (query -> estimate: a number, or a dict of cells) equal ``exact`` on every query
    that ``answers`` has (to float rounding)."""

    def close(a, b):
        if isinstance(b, dict):
            return isinstance(a, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in b)
        return abs(a - b) <= 1e-6

    return all(close(v, exact[q]) for q, v in answers.items())


def _jsonl(folder: Path, pattern: str) -> list[dict]:
    """The records of the JSON lines files ``folder/pattern`` (a file being written may end mid-line)."""
    out = []
    for f in folder.glob(pattern):
        for line in f.read_text().splitlines():
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def _config(tmp_path, raw):
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


def _pubsub_config(subscription, origin, tick_seconds, **source):
    raw = copy.deepcopy(DEMO)
    # the DirectRunner's Pub/Sub watermark is the wall clock at its last pull: LATENESS ticks of allowed
    # lateness let the pipeline run that far behind the publisher with every release still exact (docstring)
    raw["time"] = {
        "field": "time",
        "tick_seconds": tick_seconds,
        "origin": origin,
        "allowed_lateness": LATENESS * tick_seconds,
    }
    raw["source"] = {"type": "pubsub", "subscription": subscription, **source}
    return raw


_BAD_TS = ["", "noon", "nan", "1e400", "-99999999999999999999", "2026-13-01T00:00:00Z", "9" * 70, "12:00"]
_junk_payload = st.one_of(
    st.binary(min_size=1, max_size=20).map(lambda b: b"\xff" + b),  # never UTF-8
    st.lists(st.integers() | st.floats(allow_nan=True) | st.text(max_size=4), max_size=3).map(json.dumps),
    st.dictionaries(st.sampled_from(["time", "id", "item", "region"]), st.integers() | st.text(max_size=4)).map(
        json.dumps  # no op
    ),
    st.builds(
        lambda op, t: json.dumps({"op": op, "id": "j", "region": "eu", "time": t, "item": {"carrier": "AA"}}),
        st.sampled_from(["insert", "upsert"]),
        st.sampled_from([float("nan"), float("inf"), 1e20, "noon"]),
    ),
)


def _draw(strategy):
    """A random example of a hypothesis strategy: one pipeline run (about 30 s)
    with many fuzzed messages at once, rather than hypothesis' search (whose
    first example is the simplest)."""
    import warnings

    from hypothesis.errors import NonInteractiveExampleWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        return strategy.example()


def test_pubsub_to_files_noise_off_is_exact(emulator, tmp_path):
    """Event time from an attribute, dedup by the payload's update id, file
    sinks written per window: every release equals the exact answer. Fuzzed
    messages (payloads that are not UTF-8, not objects, without op, with a bad
    time; timestamp attributes absent, not a time or far in the future) are
    published first: each is a dead letter (valid JSON, a documented reason,
    its attributes kept), and the releases are still exact."""
    junk = _draw(
        st.lists(
            st.tuples(_junk_payload, st.sampled_from(["absent", "bad", "good"]), st.sampled_from(_BAD_TS)),
            min_size=15,
            max_size=25,
        )
    )
    topic = _topic(emulator, "updates")
    subscription = _subscribe(emulator, topic)
    tick = 2.0
    origin = math.floor(time.time()) - 12 * tick
    raw = _pubsub_config(subscription, origin, tick, timestamp_attribute="ts")
    raw["privacy"]["disable_noise"] = True
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl", "window_seconds": 5}]
    bad_item = {"op": "insert", "id": "x", "region": "eu", "item": {"carrier": "ZZ", "amount": 1}}
    now = time.time()
    good_ts = {"ts": str(int(now * 1000))}
    fuzz = []
    for n, (payload, ts_kind, bad_ts) in enumerate(junk):
        data = (payload if isinstance(payload, bytes) else f"{n:04d}{payload}".encode()) + b"#%d" % n  # distinct
        attrs = {"absent": {"x": "1"}, "bad": {"ts": bad_ts}, "good": {"ts": str(int(now * 1000))}}[ts_kind]
        fuzz.append((data, attrs))
    far = {"op": "insert", "id": "f", "region": "eu", "item": {"carrier": "AA", "amount": 1}}
    fuzz.append((json.dumps(far).encode(), {"ts": str(int((now + 10 * 86400) * 1000))}))  # too_far_in_future
    junk_messages = [(b"{not json", good_ts), (json.dumps(bad_item).encode(), good_ts), *fuzz]
    pub = emulator.PublisherClient()
    for data, attributes in junk_messages:  # waiting for the pipeline
        pub.publish(topic, data, **attributes).result()
    stop = threading.Event()
    updates: list = []
    with _running(tmp_path, raw) as (proc, output):
        # the updates start once the pipeline has read the junk (its dead letters are written): a run that
        # starts slowly never finds a backlog behind its watermark
        confidential = tmp_path / "out-confidential"
        _wait_for(proc, output, lambda: _jsonl(confidential, "dead_letters*.jsonl"), "dead letters", 90)
        # ... and once its releases have caught up with the wall clock (origin is 12 ticks back, and a slow start
        # leaves it further behind): while the DirectRunner walks a backlog of ticks, timers fire in every round
        # and it schedules no read (executor.py, _add_work_if_necessary), then its watermark jumps to the wall
        # clock at the next pull of at most 10 messages, and updates published meanwhile count late
        _wait_for(proc, output, lambda: _caught_up(tmp_path / "out", origin, tick), "releases caught up", 90)
        start = time.time() + LEAD + 1
        updates += _workload(origin, tick, start, 150, EVERY)  # until the test has its releases
        for d, uid in updates:
            d["update_id"] = uid
        th = _publisher(
            emulator,
            topic,
            updates,
            attrs=lambda d, uid: {"ts": str(int(d["time"] * 1000))},
            payload=lambda d: {k: v for k, v in d.items() if k != "time"},  # the time travels in the attribute only
            stop=stop,
        )
        target = max(16, math.floor((start - origin) / tick) + 1 + 3)  # 16: a scheduled close; 3 ticks of traffic
        try:
            _wait_for(
                proc,
                output,
                lambda: (
                    {("eu", target), ("us", target)}
                    <= {(r["stream"], r["tick"]) for r in _jsonl(tmp_path / "out", "releases*.jsonl")}
                ),
                f"releases of tick {target}",
                90,
            )
        finally:
            stop.set()
            th.join(5)
    out = output()
    assert proc.returncode == 0, out[-3000:]
    releases = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    dead = [
        json.loads(x)
        for f in (tmp_path / "out-confidential").glob("dead_letters*.jsonl")
        for x in f.read_text().splitlines()
    ]
    planted = ("{not json", json.dumps(bad_item))
    fuzz_dead = [d for d in dead if d["record"] not in planted]
    assert len(fuzz_dead) == len(fuzz) and all(d["reason"] in REASONS for d in fuzz_dead)
    assert {d["reason"] for d in fuzz_dead if d["attributes"] == {"x": "1"}} <= {"missing_field", "unparseable"}
    assert [d["reason"] for d in fuzz_dead if d["record"] == json.dumps(far)] == ["too_far_in_future"]
    dead = [d for d in dead if d["record"] in planted]
    assert sorted(d["reason"] for d in dead) == ["not_in_domain", "unparseable"], dead
    released = {(r["stream"], r["tick"]) for r in releases}
    assert released >= {("eu", target), ("us", target)}, sorted(released)
    # every tick released, none lost in the windowed file sink (several late
    # firings of one window used to overwrite each other's file): each stream's ticks run from 1 without a gap.
    # The streams' last ticks may differ by the one being written when the run stopped (seen under load: eu's
    # tick 36 on file, us's not yet), so each stream is checked up to its own last tick.
    for stream in ("eu", "us"):
        ticks = sorted(t for s, t in released if s == stream)
        assert ticks == list(range(1, len(ticks) + 1)), (stream, ticks)
    queries = [q["name"] for q in raw["queries"]]
    assert sorted((r["stream"], r["tick"], r["query"]) for r in releases) == sorted(
        (s, t, q) for s, t in released for q in queries
    )  # each query exactly once per stream and tick

    # Exact at every (stream, tick), over all of its queries. Under a CPU hog the DirectRunner's wall-clock
    # watermark jumps several ticks at once, and it holds no watermark for the registry step's pending timers: the
    # release of tick t used to fire in the same round as the close of t and miss the updates still being resolved
    # (1 to 4 ticks late). The per-stream step now also waits on the data (the registry step's per-tick update
    # counts: transforms.streaming.counts_gate; tests/test_streaming_jumps.py makes the jump deterministic).
    def truth(stream, t):
        live = _expected(updates, origin, tick, stream, t)
        return {"active": len(live), "by_carrier": {c: sum(v["carrier"] == c for v in live.values()) for c in CARRIERS}}

    got: dict = {}  # (stream, tick) -> {query: estimate}
    for r in releases:
        if r["query"] in ("active", "by_carrier"):
            got.setdefault((r["stream"], r["tick"]), {})[r["query"]] = r["estimate"]
    wrong = [((s, t), a, truth(s, t)) for (s, t), a in sorted(got.items()) if not _same(a, truth(s, t))]
    assert not wrong, wrong[:5]
    checked = sum(a.get("active", 0) > 0 for a in got.values())
    assert checked >= 2
    assert "records read:" in out and "duplicates dropped:" in out  # the streaming summary


def test_pubsub_round_trip_with_noise(emulator, tmp_path):
    """Event time from a field, dedup by an id attribute, releases and dead
    letters to their own topics, read back: schema, bounds, budget."""
    topic = _topic(emulator, "updates")
    subscription = _subscribe(emulator, topic)
    out_topic = _topic(emulator, "releases")
    out_sub = _subscribe(emulator, out_topic)
    dead_topic = _topic(emulator, "dead")
    dead_sub = _subscribe(emulator, dead_topic)
    tick = 2.0
    origin = math.floor(time.time()) - 12 * tick
    raw = _pubsub_config(subscription, origin, tick, id_attribute="update_id")
    raw["mechanism"]["beta"] = 1e-6
    raw["sinks"] = [{"type": "pubsub", "topic": out_topic, "dead_letter_topic": dead_topic}]
    emulator.PublisherClient().publish(topic, b"\xff\xfe").result()  # waiting for the pipeline
    stop = threading.Event()
    releases: list[dict] = []
    dead: list[dict] = []
    updates: list = []
    with _running(tmp_path, raw) as (proc, output):
        # the updates start once the pipeline has read the junk (its dead letter is on the topic)
        _wait_for(proc, output, lambda: dead.extend(_pull_once(dead_sub)) or dead, "dead letter", 90)
        start = time.time() + LEAD + 1
        updates += _workload(origin, tick, start, 150, EVERY)  # until the test has its releases
        th = _publisher(emulator, topic, updates, attrs=lambda d, uid: {"update_id": uid}, stop=stop)
        target = max(16, math.floor((start - origin) / tick) + 1 + 3)
        try:
            _wait_for(
                proc,
                output,
                lambda: (
                    releases.extend(_pull_once(out_sub))
                    or {("eu", target), ("us", target)} <= {(r["stream"], r["tick"]) for r in releases}
                ),
                f"releases of tick {target}",
                90,
            )
        finally:
            stop.set()
            th.join(5)
    out = output()
    assert proc.returncode == 0, out[-3000:]
    from pipelines.tools.pubsub_tool import pull_subscription

    releases += pull_subscription(out_sub)
    dead += pull_subscription(dead_sub)
    assert [d["reason"] for d in dead] == ["unparseable"], dead  # duplicates were dropped, not dead-lettered
    ticks = {(r["stream"], r["tick"]) for r in releases}
    assert {("eu", target), ("us", target)} <= ticks, sorted(ticks)
    for r in releases:
        assert set(r) == {
            "stream",
            "tick",
            "segment",
            "query",
            "estimate",
            "error_bound",
            "beta",
            "epsilon_spent",
            "as_of",
            "update_level_spent",
            "release_id",
        }
        assert r["update_level_spent"] == {"epsilon": pytest.approx(r["epsilon_spent"])}  # unit update
        assert r["beta"] == 1e-6 and r["error_bound"] > 0
        assert 0 < r["epsilon_spent"] <= 1.0 + 1e-9
        live = _expected(updates, origin, tick, r["stream"], r["tick"])
        if r["query"] == "active":
            assert abs(r["estimate"] - len(live)) <= r["error_bound"], r
    assert "records read:" in out


def test_pubsub_tool_creates_replays_and_pulls(emulator, tmp_path):
    from pipelines.config import load_config
    from pipelines.tools import pubsub_tool

    tag = uuid.uuid4().hex[:8]
    raw = _pubsub_config(f"projects/{PROJECT}/subscriptions/upd-{tag}-sub", 0, 1)
    raw["sinks"] = [
        {
            "type": "pubsub",
            "topic": f"projects/{PROJECT}/topics/rel-{tag}",
            "nodes_topic": f"projects/{PROJECT}/topics/nodes-{tag}",
            "dead_letter_topic": f"projects/{PROJECT}/topics/dead-{tag}",
        }
    ]
    raw["sinks"].append({"type": "file", "path": str(tmp_path / "out")})
    cfg = load_config(_config(tmp_path, raw))
    made = pubsub_tool.create(cfg)
    assert f"projects/{PROJECT}/topics/upd-{tag}" in made and f"projects/{PROJECT}/topics/rel-{tag}" in made
    for name in ("rel", "nodes", "dead"):  # a subscription for every topic it creates
        assert f"projects/{PROJECT}/subscriptions/{name}-{tag}-pull" in made
    assert pubsub_tool.create(cfg) == []  # idempotent
    data = tmp_path / "in.jsonl"
    data.write_text('{"time": 600, "op": "delete", "id": "a", "region": "eu"}\nnot json\n')
    origin = time.time()
    assert pubsub_tool.publish(cfg, str(data), origin, speedup=600) == 2
    sub = emulator.SubscriberClient()
    resp = sub.pull(subscription=cfg.subscription, max_messages=10, timeout=10)
    msgs = {m.message.data: dict(m.message.attributes) for m in resp.received_messages}
    assert msgs.pop(b"not json") == {}  # bad input is replayed as is, to be dead-lettered
    ((payload, attrs),) = msgs.items()
    assert json.loads(payload)["time"] == pytest.approx(origin + 1) and attrs["ts"] == str(int((origin + 1) * 1000))
    assert attrs["update_id"].endswith(":0")
    emulator.PublisherClient().publish(raw["sinks"][0]["topic"], b'{"tick": 2}').result()
    emulator.PublisherClient().publish(raw["sinks"][0]["nodes_topic"], b'{"kind": "n"}').result()
    emulator.PublisherClient().publish(raw["sinks"][0]["dead_letter_topic"], b'{"reason": "late"}').result()
    assert pubsub_tool.pull(cfg) == [{"tick": 2}]
    assert pubsub_tool.pull(cfg, 1, what="nodes") == [{"kind": "n"}]  # max 1: no wait for more
    assert pubsub_tool.pull(cfg, 1, what="dead_letters") == [{"reason": "late"}]


def test_local_dp_collector_from_pubsub_equals_in_memory(emulator, tmp_path, capsys):
    """The randomized-response collector (``configs/local_dp.yaml``'s pipeline)
    on Pub/Sub: clients' reports published as their periods pass, most in
    batches (one JSON object per line, as a gateway sends them), some singly.
    Every period released equals the in-memory collector over the same reports
    exactly; a bad line inside a batch is dead-lettered alone (``unparseable``);
    a batch delivered twice is dropped whole (message dedup); a report repeated
    in another message is a ``duplicate_report``; nothing is ``late``. Batching
    is what keeps the DirectRunner's reader (10 messages a pull, watermark =
    wall clock) ahead of the traffic: docs/local_dp.md."""
    from transforms.core import DynamicConfig, PureDP, QuerySet
    from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions, in_memory, simulate

    tick, periods, domain = 2.0, 12, ["A", "B", "C"]
    config = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(16.0))
    coll = RandomizedResponseCollector(config, options=RROptions(max_mutations=2), end_tick=periods)
    sim = simulate(coll.design, 120, periods, seed=7)
    # the reader pulls at most 10 messages and then sets the watermark to the
    # wall clock, so a backlog of more than 10 (3 periods here) makes reports
    # late: the first period starts 12 s from now, by when the pipeline reads
    origin = math.floor(time.time()) + 12
    lines: dict[int, list[bytes]] = {}
    for entry, rep in sim.reports:
        d = {"time": origin + (rep.period - 0.5) * tick, "id": entry, "layer": rep.layer}
        d.update({k: None if v is None else domain[v] for k, v in (("old", rep.old), ("new", rep.new))})
        lines.setdefault(rep.period, []).append(json.dumps(d).encode())
    messages = []  # (publish at, payload), each period's reports as it ends
    for t, ls in sorted(lines.items()):
        at = origin + t * tick
        messages.append((at, ls[0]))
        batches = [b"\n".join(ls[i : i + 60]) for i in range(1, len(ls), 60)]
        if t == 2:
            batches[0] = batches[0] + b"\n{not json"
        messages += [(at, b) for b in batches]
        if t == 3:
            messages.append((at, batches[0]))  # redelivered whole
        if t == 4:
            messages.append((at, ls[5]))  # a report of a batch, again, alone
    topic = _topic(emulator, "reports")
    subscription = _subscribe(emulator, topic)
    pub = emulator.PublisherClient()

    def publish():
        for at, data in messages:
            if at > time.time():
                time.sleep(at - time.time())
            pub.publish(topic, data).result()

    th = threading.Thread(target=publish, daemon=True)
    th.start()
    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["time"] = {
        "field": "time",
        "tick_seconds": tick,
        "origin": origin,
        "end": origin + periods * tick,
        "allowed_lateness": 2 * tick,
    }
    raw["source"] = {"type": "pubsub", "subscription": subscription}
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl", "window_seconds": 2}]
    # the watermark follows the traffic, which runs to the end of period 12:
    # tick t is released at the end of tick t + 3 and written when its 2 s
    # window closes, so at least ticks 1-7 are written before the run stops
    duration = origin + periods * tick + 4 - time.time()
    assert main(["--config", _config(tmp_path, raw), "--duration", f"{duration:.1f}", "--runner=DirectRunner"]) == 0
    th.join(5)
    assert "reports read:" in capsys.readouterr().out
    releases = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    dead = [
        json.loads(x)
        for f in (tmp_path / "out-confidential").glob("dead_letters*.jsonl")
        for x in f.read_text().splitlines()
    ]
    assert sorted(d["reason"] for d in dead) == ["duplicate_report", "unparseable"], [d["reason"] for d in dead]
    ticks = sorted(r["tick"] for r in releases)
    assert ticks == list(range(1, len(ticks) + 1)) and len(ticks) >= 7, ticks  # every period up to the watermark
    want = {r.tick: r for r in in_memory(coll, sim.reports, periods)}
    for r in releases:
        w = want[r["tick"]]
        assert (r["reports"], r["change_reports"]) == (w.reports, w.change_reports), r["tick"]
        assert [r["estimate"][v] for v in domain] == pytest.approx(list(w.estimate), abs=1e-9)
        assert [r["change"][v] for v in domain] == pytest.approx(list(w.change), abs=1e-9)
        assert r["error_bound"] == pytest.approx(w.error_bound, rel=1e-12)


def _demo_head(tmp_path, seconds: float) -> str:
    """The demo's first ``seconds`` of event time (a file to publish; its bad lines, at time 0, too)."""

    def early(line: str) -> bool:
        try:
            return float(json.loads(line)["time"]) < seconds
        except (ValueError, KeyError, TypeError):
            return True

    lines = [ln for ln in (ROOT / "data" / "demo.jsonl").read_text().splitlines() if early(ln)]
    path = tmp_path / "demo_head.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _own_copy(tmp_path, name: str) -> Path:
    """``configs/NAME`` written to ``tmp_path/NAME`` with topics and subscriptions of this test's own (the names
    with a unique suffix): a run of one bundled configuration never reads what another run left on the shared
    ``bookings-*`` subscriptions, nor drains another run's releases (the two parametrizations, and a CLI run of a
    previous test that outlived its stop, used the same names)."""
    raw = yaml.safe_load((ROOT / "configs" / name).read_text())
    tag = uuid.uuid4().hex[:8]
    raw["source"]["subscription"] += f"-{tag}"  # its topic: the same name (pubsub.source_topic)
    for sink in raw["sinks"]:
        for key in ("topic", "nodes_topic", "dead_letter_topic"):
            if sink.get(key):
                sink[key] += f"-{tag}"
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "name,tick,speedup",
    [("pubsub_local.yaml", 1.0, 600.0), ("pubsub.yaml", 60.0, 60.0)],
)
def test_bundled_pubsub_config_runs_through_the_readme_command(emulator, tmp_path, name, tick, speedup):
    """``python -m pipelines.release --config NAME.yaml`` (as a subprocess, the README's command) with a bundled
    configuration (a copy with topics and subscriptions of its own) against the emulator: the topics and
    subscriptions made by ``pipelines.tools.pubsub_tool``, some of the demo published first with event times over
    the last few ticks (``--origin`` sets the configuration's ``time.origin`` to their start, through the
    configuration's checks), the run stopped with Ctrl-C once tick 1 of every stream and query is on the releases
    topic: exit 0, the summary printed, tick 1 of every stream and query released (each stream's start marker
    schedules it, whatever the data: ``transforms/per_stream.py``)."""
    from pipelines.config import load_config
    from pipelines.tools import pubsub_tool

    path = _own_copy(tmp_path, name)
    cfg = load_config(path)
    pubsub_tool.create(cfg)
    releases_topic = next(s.topic for s in cfg.sinks if s.type == "pubsub")
    # a second subscription to the releases topic, read only after the run: tells a release that was never
    # published from one that the polling subscription did not deliver
    witness = pubsub_tool.pull_name(releases_topic) + "-witness"
    emulator.SubscriberClient().create_subscription(name=witness, topic=releases_topic)
    origin = math.floor(time.time()) - 6 * tick
    # event times origin + t / speedup for the demo's first 6 ticks' worth: all in the past, published at once
    n = pubsub_tool.publish(cfg, _demo_head(tmp_path, 6 * tick * speedup), origin, speedup=speedup)
    assert n > 0
    for folder in ("configs", "data"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    env = dict(os.environ, DP_NOISE_KEY=bytes(range(32)).hex(), MPLBACKEND="Agg")
    command = [sys.executable, "-m", "pipelines.release", "--config", name, "--origin", str(origin)]
    # --duration is only a cap: the test stops the run with Ctrl-C (SIGINT) as soon as tick 1 is on the topic, so
    # it waits on the data and not on a guessed time
    command += ["--project=" + PROJECT, "--duration", "150"]
    log = tmp_path / "run.log"
    with log.open("w") as out:
        proc = _popen(command, tmp_path, env, out)
        releases = _until_released(proc, cfg, {"eu", "us"}, deadline=time.monotonic() + 150)
        stopped_by_test = proc.poll() is None
        if stopped_by_test:
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the CLI cancels the streaming job and prints its summary
        _stop_wait(proc)
    text = log.read_text(errors="replace")
    assert stopped_by_test, "the run ended by itself before its releases reached the topic: " + text[-3000:]
    assert proc.returncode == 0, text[-3000:]
    assert "releases written:" in text and "Traceback" not in text, text[-3000:]
    releases += pubsub_tool.pull(cfg, 100_000)  # what was published between the last poll and the stop
    assert {r["stream"] for r in releases} == {"eu", "us"}, len(releases)
    assert {r["query"] for r in releases} == {"active", "by_carrier", "total_amount"}
    want = {(s, q.name) for s in ("eu", "us") for q in cfg.queries}
    first = {(r["stream"], r["query"]) for r in releases if r["tick"] == 1}
    if first != want:  # which layer lost it: published (on the witness subscription) but not delivered, or neither
        published = {
            (r["stream"], r["query"]) for r in pubsub_tool.pull_subscription(witness, 100_000) if r["tick"] == 1
        }
        seen = sorted({(r["stream"], r["query"], r["tick"]) for r in releases})
        layer = "published but not delivered to the polled subscription" if published >= want else "not published"
        raise AssertionError(
            f"tick 1 missing ({layer}): {sorted(want - first)}; first releases {seen[:12]}; run: {text[-2000:]}"
        )


def _until_released(proc, cfg, streams: set, deadline: float) -> list[dict]:
    """The releases on ``cfg``'s releases topic, pulled every second until tick 1 of every query of every
    stream in ``streams`` is there (or the run ends, or the deadline passes)."""
    from pipelines.tools import pubsub_tool

    want = {(s, q.name) for s in streams for q in cfg.queries}
    got: list[dict] = []
    while proc.poll() is None and time.monotonic() < deadline:
        got += _pull_once(pubsub_tool.pull_name(next(s.topic for s in cfg.sinks if s.type == "pubsub")))
        if want <= {(r["stream"], r["query"]) for r in got if r["tick"] == 1}:
            break
        if want <= {(r["stream"], r["query"]) for r in got if r["tick"] >= 3}:
            # a stream's ticks are released in order: tick 1 is not coming (the test then says which layer lost
            # it); 15 s more for a message whose pull timed out to be delivered again (ack deadline 10 s), then stop
            deadline = min(deadline, time.monotonic() + 15)
        time.sleep(1)
    return got
