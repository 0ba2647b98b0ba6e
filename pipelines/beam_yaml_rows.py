"""The schema'd Rows of the Beam YAML transforms (``pipelines/beam_yaml.py``): one Row per released number, and the
converters from the CLI's output records to them (the tests compare a YAML run with the CLI's through these).

No ``from __future__ import annotations``, and ``typing.Optional`` rather than ``X | None``: Beam infers the Rows'
schemas from these annotations at run time (Beam 2.62 maps typing.Optional).
"""

# ruff: noqa: UP045 - typing.Optional, for Beam's schema inference (the module's docstring)

import json
from typing import NamedTuple, Optional

import apache_beam as beam

__all__ = [
    "ReleaseRow",
    "DeadLetterRow",
    "NodeRow",
    "EstimateRow",
    "QueryAnswerRow",
    "release_rows",
    "estimate_rows",
    "dead_letter_row",
    "node_row",
    "query_answer_row",
]


class ReleaseRow(NamedTuple):
    """One released number (a count, a sum, or one histogram cell) as a schema'd Row."""

    stream: str
    tick: int
    segment: int
    query: str
    cell: Optional[str]  # the histogram cell (its domain value as text); null for a count or a sum
    estimate: float
    error_bound: Optional[float]
    lower: Optional[float]  # estimate - error_bound (null without a bound)
    upper: Optional[float]  # estimate + error_bound
    beta: float
    epsilon_spent: Optional[float]
    delta_spent: Optional[float]
    rho_spent: Optional[float]
    update_level_spent: Optional[str]  # JSON text of the record's map (null where the record has none)
    as_of: Optional[str]
    release_id: str


class DeadLetterRow(NamedTuple):
    """A rejected input (confidential operator data: the record as received)."""

    reason: str
    record: str
    encoding: str
    stage: str
    stream: Optional[str]
    attributes: Optional[str]  # JSON text
    format: Optional[str]
    release_id: str


class NodeRow(NamedTuple):
    """A node output (``node.avsc``), its lists as JSON text."""

    stream: str
    query: str
    level: int
    index: int
    values: str
    cost: Optional[str]
    coordinates: str
    release_id: str


class EstimateRow(NamedTuple):
    """One cell of a local-DP collector's estimate (``transforms.local_dp.release_dict``, per cell)."""

    stream: str
    tick: int
    as_of: Optional[str]
    query: str
    cell: str
    estimate: float
    variance: float
    error_bound: Optional[float]  # for all cells at once (1 - beta)
    change: float
    change_variance: float
    change_bound: Optional[float]
    reports: int
    change_reports: int
    beta: float
    epsilon_entry: float  # the clients' guarantee per entry (the collector spends nothing)
    delta_entry: float
    trust: str
    release_id: str


class QueryAnswerRow(NamedTuple):
    """The answer to one streamed linear query (``query_answer.avsc``; mechanism pmwg, ``docs/growing.md``)."""

    query_id: str
    stream: str
    tick: int
    as_of: Optional[str]
    answer: float
    bound: float
    beta: float
    hard: bool
    epsilon_spent: float
    release_id: str


for _row in (ReleaseRow, DeadLetterRow, NodeRow, EstimateRow, QueryAnswerRow):
    beam.coders.registry.register_coder(_row, beam.coders.RowCoder)


def release_rows(record: dict) -> list[ReleaseRow]:
    """The Rows of one release record as the CLI writes it (``pipelines.outputs.release_dict`` with its
    ``release_id``): one per number, histogram cells in the record's order."""
    est = record["estimate"]
    cells = list(est.items()) if isinstance(est, dict) else [(None, est)]
    bound = record.get("error_bound")
    uls = record.get("update_level_spent")
    rows = []
    for cell, value in cells:
        value = float(value)
        rows.append(
            ReleaseRow(
                stream=record["stream"],
                tick=int(record["tick"]),
                segment=int(record["segment"]),
                query=record["query"],
                cell=cell,
                estimate=value,
                error_bound=bound,
                lower=None if bound is None else value - bound,
                upper=None if bound is None else value + bound,
                beta=float(record["beta"]),
                epsilon_spent=record.get("epsilon_spent"),
                delta_spent=record.get("delta_spent"),
                rho_spent=record.get("rho_spent"),
                update_level_spent=None if uls is None else json.dumps(uls, sort_keys=True),
                as_of=record.get("as_of"),
                release_id=record["release_id"],
            )
        )
    return rows


def estimate_rows(record: dict) -> list[EstimateRow]:
    """The Rows of one local-DP estimate record as the CLI's collector writes it (with its ``release_id``): one per
    cell."""
    bound, change_bound = record.get("error_bound"), record.get("change_bound")
    return [
        EstimateRow(
            stream=record["stream"],
            tick=int(record["tick"]),
            as_of=record.get("as_of"),
            query=record["query"],
            cell=cell,
            estimate=float(value),
            variance=float(record["variance"][cell]),
            error_bound=None if bound is None else float(bound),
            change=float(record["change"][cell]),
            change_variance=float(record["change_variance"][cell]),
            change_bound=None if change_bound is None else float(change_bound),
            reports=int(record["reports"]),
            change_reports=int(record["change_reports"]),
            beta=float(record["beta"]),
            epsilon_entry=float(record["epsilon_entry"]),
            delta_entry=float(record["delta_entry"]),
            trust=record["trust"],
            release_id=record["release_id"],
        )
        for cell, value in record["estimate"].items()
    ]


def dead_letter_row(record: dict) -> DeadLetterRow:
    """A dead letter as the CLI writes it (``dead_dict`` with its ``release_id``) as a Row."""
    attrs = record.get("attributes")
    return DeadLetterRow(
        reason=record["reason"],
        record=record["record"],
        encoding=record.get("encoding") or "text",
        stage=record.get("stage") or "",
        stream=record.get("stream"),
        attributes=None if attrs is None else json.dumps(attrs, sort_keys=True),
        format=record.get("format"),
        release_id=record["release_id"],
    )


def node_row(record: dict) -> NodeRow:
    cost = record.get("cost")
    return NodeRow(
        stream=record["stream"],
        query=record["query"],
        level=int(record["level"]),
        index=int(record["index"]),
        values=json.dumps(record["values"]),
        cost=None if cost is None else json.dumps(cost),
        coordinates=json.dumps(record["coordinates"]),
        release_id=record["release_id"],
    )


def query_answer_row(record: dict) -> QueryAnswerRow:
    """A query answer as the CLI writes it (``answer_dict`` with its ``release_id``) as a Row."""
    return QueryAnswerRow(**{f: record.get(f) for f in QueryAnswerRow._fields})
