"""The ``queries`` section: one model per query (``count``, ``histogram`` over a declared domain, ``sum`` of a
field clamped to ``[lower, upper]``), and how each becomes a core ``QuerySet`` and its released values. How a
record is encoded for a query is the parse step's business (``pipelines.parse``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import WithJsonSchema
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from pipelines.config.sections import check_open_domain, refuse_open_cell_settings
from pipelines.model import Section, choice, in_range, issue, not_applicable, number, text
from transforms.core.config import QuerySet

__all__ = ["QueryConfig", "SUM_BUCKETS", "QUERY_TYPES"]

QUERY_TYPES = ("count", "histogram", "sum")
SUM_BUCKETS = 101  # a sum's values are rounded to 101 evenly spaced levels in [lower, upper]
_DOMAIN_SCHEMA = {
    "anyOf": [
        {"type": "array", "minItems": 1, "items": {"type": ["string", "number", "boolean"]}},
        {"const": "open"},  # issue 33: cells not declared (docs/open_keys.md "Open histogram cells")
    ]
}


def _required(data: dict, key: str):
    if key not in data:
        raise issue("missing (required)", key)
    return data[key]


def _at(key: str, check, *args, **kwargs):
    """``check(*args)``, its message moved to ``key``."""
    try:
        return check(*args, **kwargs)
    except PydanticCustomError as e:
        raise issue(e.context["message"], key) from None


class QueryConfig(Section):
    """One query: ``{name, type: count}``, ``{name, type: histogram, field, domain}`` or ``{name, type: sum,
    field, lower, upper}``."""

    NONE_IS_EMPTY: ClassVar[bool] = False

    name: str
    type: Literal["count", "histogram", "sum"]
    field: str | None = None
    domain: Annotated[tuple[Any, ...], WithJsonSchema(_DOMAIN_SCHEMA)] = ()
    lower: float = 0.0
    upper: float = 0.0
    weight: float = 1.0
    # domain: open (issue 33): set by check_open_domain, never in the legacy repr (the digest takes them through
    # pipelines/config/open_keys.py::open_keys_digest, only when the domain is open)
    open_domain: SkipJsonSchema[bool] = False
    max_cells: int | None = None
    max_cells_per_person: int | None = None
    selection_share: float | None = None
    failure: float | None = None

    @classmethod
    def check_raw(cls, q: dict) -> dict:
        refuse_open_cell_settings(q)
        out = cls._check_query(q)
        if "weight" in q:  # its share of the stream's budget, against the other queries' (default 1: equal)
            w = _at("weight", number, q["weight"], positive=True)
            out["weight"] = _at("weight", in_range, w, 1e-6, 1e6, "a ratio to the other queries' weights")
        return out

    @classmethod
    def _check_query(cls, q: dict) -> dict:
        name = _required(q, "name")
        if not isinstance(name, str) or not name:
            raise issue("must be a non-empty string", "name")
        qtype = _at("type", choice, q.get("type"), QUERY_TYPES)
        if qtype == "count":
            not_applicable(q, ("field", "domain", "lower", "upper"), "to a count query")
            return {"name": name, "type": qtype}
        fld = _at("field", text, _required(q, "field"), "the name of an item field (a string)")
        if qtype == "histogram":
            not_applicable(q, ("lower", "upper"), "to a histogram query (it has a domain)")
            dom = q.get("domain")
            if dom == "open":  # issue 33: the cells are selected privately (pipelines/config/open_keys.py)
                settings = {k: q[k] for k in ("max_cells", "max_cells_per_person") if k in q}
                return {"name": name, "type": qtype, "field": fld, **settings, **check_open_domain(q)}
            if not isinstance(dom, list) or not dom or len(set(map(repr, dom))) != len(dom):
                raise issue("must be a non-empty list of distinct values", "domain")
            for v in dom:
                if isinstance(v, (dict, list)) or (isinstance(v, float) and not math.isfinite(v)):
                    raise issue(f"values must be strings, numbers or booleans; got {v!r}", "domain")
            if len({str(v) for v in dom}) != len(dom):
                raise issue("values must be distinct as text (CSV input matches them by text)", "domain")
            return {"name": name, "type": qtype, "field": fld, "domain": tuple(dom)}
        not_applicable(q, ("domain",), "to a sum query (it has lower and upper)")
        lo = _at("lower", number, _required(q, "lower"))
        hi = _at("upper", number, _required(q, "upper"))
        if hi <= 0 and lo >= 0:
            raise issue(f"must be > 0; got {hi}", "upper")
        if not hi > lo:
            raise issue(f"must be > lower ({lo}); got {hi}", "upper")
        for key, v in (("lower", lo), ("upper", hi)):
            _at(key, in_range, abs(v), 0, 1e15, "its absolute value; a larger clamp range has no useful sum")
        return {"name": name, "type": qtype, "field": fld, "lower": lo, "upper": hi}

    def legacy_repr(self) -> str:
        """The ``repr`` this query had as a frozen dataclass: part of the release digest, which keys the noise,
        so it never changes (``weight`` shows only when it is not the default)."""
        return (
            f"QueryConfig(name={self.name!r}, type={self.type!r}, field={self.field!r}, domain={self.domain!r}, "
            f"lower={self.lower!r}, upper={self.upper!r}"
            + ("" if self.weight == 1.0 else f", weight={self.weight!r}")
            + ")"
        )

    def query_set(self) -> QuerySet:
        return dataclasses.replace(self._query_set(), weight=self.weight)

    def _query_set(self) -> QuerySet:
        if self.type == "count":
            return QuerySet(self.name, "count")
        if self.type == "histogram" and self.open_domain:  # issue 33: each released cell is a count (a key)
            return QuerySet(self.name, "count")
        if self.type == "histogram":
            return QuerySet(self.name, "histogram", domain_size=len(self.domain))
        # sum of a value clamped to [lower, upper], rounded to SUM_BUCKETS levels:
        # a linear query whose entries (level / scale) lie in [0, 1]
        levels = [self.lower + b * (self.upper - self.lower) / (SUM_BUCKETS - 1) for b in range(SUM_BUCKETS)]
        if self.lower >= 0:
            return QuerySet(
                self.name, "linear", domain_size=SUM_BUCKETS, matrix=(tuple(v / self.upper for v in levels),)
            )
        # signed values: two rows, the positive and the negative part (each level
        # has one non-zero entry, in [0, 1]: the same sensitivity as one row of
        # |level| / scale); the released sum is scale * (row 0 - row 1)
        s = self.scale
        pos = tuple(max(v, 0.0) / s for v in levels)
        neg = tuple(max(-v, 0.0) / s for v in levels)
        return QuerySet(self.name, "linear", domain_size=SUM_BUCKETS, matrix=(pos, neg))

    @property
    def scale(self) -> float:
        """Multiply released estimates by this (sum queries are released in units
        of ``upper``, or of ``max(-lower, upper)`` for signed sums)."""
        if self.type != "sum":
            return 1.0
        return self.upper if self.lower >= 0 else max(-self.lower, self.upper)

    @property
    def signed(self) -> bool:
        return self.type == "sum" and self.lower < 0

    def values(self, estimate) -> list[float]:
        """Released (or recomputed) row values -> the query's answers in the
        field's units (post-processing)."""
        est = [float(x) * self.scale for x in estimate]
        return [est[0] - est[1]] if self.signed else est

    def bound(self, error_bound: float | None) -> float | None:
        """The error bound of :meth:`values` (a signed sum is a difference of two
        rows, each within the bound)."""
        if error_bound is None:
            return None
        return error_bound * self.scale * (2.0 if self.signed else 1.0)
