"""Streamed linear queries for ``mechanism.kind: pmwg`` (``docs/growing.md``).

  python -m pipelines.submit_queries submit --config CONFIG --id ID --time T [--stream S] --weights JSON
      append one query to the config's ``queries_source`` file, or publish it to
      the topic of its subscription (``queries_source: {type: pubsub, ...}``)
  python -m pipelines.submit_queries demo [--out data/] [--seed 3]
      regenerate the bundled growing insertion stream (``data/growing.jsonl``)
      and its queries (``data/growing_queries.jsonl``)

A query is one JSON object: ``{"id": ..., <time field>: event time, <stream
field>: stream, "weights": {domain value: weight in [0, 1]}}`` (values left
out weigh 0) or ``"row": [one weight per domain value]``, over the domain of
the configuration's first query (a histogram). It asks for the weighted count
``sum_v weight(v) * #{live entries with value v}`` as of its time; the
answers (``query_answers*.jsonl`` in a file sink's folder, or a pubsub sink's
``answers_topic``) carry the id, the estimate, a (1-beta) bound and the spend
of the release so far.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import apache_beam as beam

from pipelines.config import ConfigError, PipelineConfig, load_config
from transforms.queries import QueryAnswerRecord, QueryRecord
from transforms.records import DeadLetter

__all__ = ["parse_query", "answer_dict", "generate_demo", "main"]


def parse_query(cfg: PipelineConfig, data) -> tuple[str | None, QueryRecord | None]:
    """``(reason, QueryRecord)`` for one query (bytes, text or a dict); the
    reason is a key of ``transforms.core.foundation.entries.REASONS`` (the stream, time
    range and weights are checked again by ``AnswerQueries``)."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            return "unparseable", None
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return "unparseable", None
    if not isinstance(data, dict):
        return "unparseable", None
    qid, tm = data.get("id"), data.get(cfg.time_field)
    if qid is None or tm is None or ("weights" not in data and "row" not in data):
        return "missing_field", None
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
        return "malformed", None
    if isinstance(tm, bool) or not isinstance(tm, (int, float)) or not math.isfinite(tm):
        return "bad_time", None
    stream = "default"
    if cfg.stream_field:
        stream = data.get(cfg.stream_field)
        if not isinstance(stream, str):
            return "missing_field", None
    domain = cfg.queries[0].domain
    if "row" in data:
        row = data["row"]
        if not isinstance(row, list) or len(row) != len(domain):
            return "malformed", None
    else:
        weights = data["weights"]
        if not isinstance(weights, dict):
            return "malformed", None
        names = {str(v): i for i, v in enumerate(domain)}
        if any(str(k) not in names for k in weights):
            return "not_in_domain", None
        row = [0.0] * len(domain)
        for k, w in weights.items():
            row[names[str(k)]] = w
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in row):
        return "malformed", None
    if not all(math.isfinite(w) and 0 <= w <= 1 for w in row):
        return "malformed", None
    return None, QueryRecord(str(qid), float(tm), tuple(float(w) for w in row), stream)


def answer_dict(cfg: PipelineConfig, a: QueryAnswerRecord) -> dict:
    """An answer as written (JSON): the query id, the estimate and its bound."""
    return {
        "query_id": a.query_id,
        "stream": a.stream,
        "tick": a.tick,
        "as_of": a.as_of,
        "answer": a.answer,
        "bound": a.bound,
        "beta": a.beta,
        "hard": a.hard,
        "epsilon_spent": a.epsilon_spent,
    }


def submit(cfg: PipelineConfig, query: dict) -> str:
    """Append (file) or publish (pubsub) one query; returns where it went."""
    reason, _ = parse_query(cfg, query)
    if reason:
        raise ValueError(f"the query is not valid: {reason}")
    if cfg.queries_source is None:
        raise ValueError("the configuration has no queries_source")
    return cfg.queries_source.submit(json.dumps(query))


# ---------------------------------------------------------------------------
# the bundled example: an insertion-only stream that grows, and its queries
# ---------------------------------------------------------------------------

CATEGORIES = ("books", "music", "games", "toys", "garden", "tools", "food", "sport")
DEMO_TICK = 60.0  # configs/growing.yaml: one-minute ticks
DEMO_TICKS = 720  # twelve hours
DATA_START = 30 * DEMO_TICK  # the first insertion: queries before it are answered too


def generate_demo(seed: int = 3, total: int = 30_000, queries: int = 300) -> tuple[list[str], list[str]]:
    """Insertions whose rate grows linearly over twelve hours (total
    ``total``), whose mix of categories drifts (the popular category changes
    every three hours), and ``queries`` queries at random times over the whole
    run (some before the data), each a random subset of categories."""
    rng = random.Random(seed)
    span = DEMO_TICKS * DEMO_TICK - DATA_START
    lines = []
    for i in range(total):
        # inverse of a linearly growing rate: time ~ sqrt(uniform)
        t = DATA_START + span * math.sqrt((i + rng.random()) / total)
        phase = int((t // (3 * 3600)) % len(CATEGORIES))
        cat = CATEGORIES[(phase + min(int(rng.expovariate(1.2)), 7)) % len(CATEGORIES)]
        lines.append((t, {"time": round(t, 3), "op": "insert", "id": f"o{i:06d}", "item": {"category": cat}}))
    lines.sort(key=lambda x: x[0])
    out = [json.dumps(d) for _, d in lines]
    # a few updates the mechanism refuses (dead letters): its model has insertions only
    out.append(json.dumps({"time": 7200.0, "op": "delete", "id": "o000010"}))
    out.append(json.dumps({"time": 7260.0, "op": "upsert", "id": "o000011", "item": {"category": "food"}}))
    qs = []
    for j in range(queries):
        t = rng.uniform(0, DEMO_TICKS * DEMO_TICK - 1)
        chosen = [c for c in CATEGORIES if rng.random() < 0.4] or [CATEGORIES[j % len(CATEGORIES)]]
        qs.append((t, {"id": f"q{j:04d}", "time": round(t, 3), "weights": {c: 1 for c in chosen}}))
    qs.sort(key=lambda x: x[0])
    return out, [json.dumps(d) for _, d in qs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.submit_queries", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit", help="submit one query")
    s.add_argument("--config", required=True)
    s.add_argument("--id", required=True)
    s.add_argument("--time", required=True, type=float, help="event time of the query (epoch seconds)")
    s.add_argument("--stream", help="the stream asked about (with streams.field)")
    s.add_argument("--weights", required=True, help='JSON: {"value": weight, ...} over the first query\'s domain')
    d = sub.add_parser("demo", help="regenerate data/growing.jsonl and data/growing_queries.jsonl")
    d.add_argument("--out", default="data")
    d.add_argument("--seed", type=int, default=3)
    args = ap.parse_args(argv)
    if args.cmd == "demo":
        data, queries = generate_demo(args.seed)
        out = Path(args.out)
        (out / "growing.jsonl").write_text("\n".join(data) + "\n")
        (out / "growing_queries.jsonl").write_text("\n".join(queries) + "\n")
        print(f"wrote {out / 'growing.jsonl'} ({len(data)} lines), {out / 'growing_queries.jsonl'} ({len(queries)})")
        return 0
    try:
        cfg = load_config(args.config)
        query = {"id": args.id, cfg.time_field: args.time, "weights": json.loads(args.weights)}
        if cfg.stream_field:
            query[cfg.stream_field] = args.stream
        where = submit(cfg, query)
    except (ConfigError, ValueError) as e:
        print(f"submit_queries: {e}", file=sys.stderr)
        return 2
    print(f"query {args.id} submitted to {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ---------------------------------------------------------------------------
# in the pipeline (pipelines.wiring): read and parse the queries
# ---------------------------------------------------------------------------


def read_queries(p, cfg: PipelineConfig):
    """The configured ``queries_source`` as (QueryRecords timestamped at their
    event time, dead letters of the queries that do not parse)."""
    lines = cfg.queries_source.read(p)  # the registry's queries source (pipelines.io)
    parsed = lines | "ParseQueries" >> beam.ParDo(_ParseQueriesFn(cfg)).with_outputs("dead_letters", main="queries")
    return parsed.queries, parsed.dead_letters


class _ParseQueriesFn(beam.DoFn):
    """A query line -> QueryRecord (timestamped) or a dead letter (stage parse)."""

    def __init__(self, cfg: PipelineConfig):
        self.cfg = cfg

    def process(self, data):
        reason, q = parse_query(self.cfg, data)
        if reason:
            yield beam.pvalue.TaggedOutput("dead_letters", DeadLetter(reason, data, "parse", None))
            return
        yield beam.window.TimestampedValue(q, q.event_time)
