"""A ledger's releases as plain rows (``pipelines.results.read_ledger`` makes a DataFrame of them; the
``events`` view of ``python -m pipelines.ledger`` reads them too). Reading the ledger costs no privacy: it holds
budgets and identifiers, never data."""

from __future__ import annotations

from pipelines.ledger.backends import open_store
from pipelines.ledger.compose import FIELDS

__all__ = ["LEDGER_COLUMNS", "ledger_rows"]

_AMOUNTS = ("epsilon", "delta", "rho")
#: the columns of :func:`ledger_rows` and their pandas dtypes (``datetime``: a UTC timestamp)
LEDGER_COLUMNS = {
    "dataset": "string",
    "release_id": "string",
    "status": "string",
    "counted": "bool",
    "kind": "string",  # pure, approx or zcdp (compose.KINDS)
    "unit": "string",
    **{f: "float64" for f in _AMOUNTS},  # the release's charge (its budget), NaN where the kind has no such field
    **{f"cap_{f}": "float64" for f in _AMOUNTS},  # the dataset's cap at the release's last launch
    "atomic": "bool",
    "runs": "int64",
    "started": "datetime",
    "ended": "datetime",
    "config_digest": "string",
}


def ledger_rows(url: str, dataset: str | None = None) -> list[dict]:
    """One dict per release of ``dataset`` (every dataset: None), oldest first within a dataset; the amounts as
    floats of the stored decimals."""
    store = open_store(url)
    names = [dataset] if dataset is not None else [name for name, _, _ in store.datasets()]
    rows = []
    for name in names:
        for r in store.releases(name):
            fields = FIELDS[r.kind]
            rows.append(
                {
                    "dataset": r.dataset,
                    "release_id": r.release_id,
                    "status": r.status,
                    "counted": r.counted,
                    "kind": r.kind,
                    "unit": r.unit,
                    **{f: float(r.budget[f]) if f in fields else None for f in _AMOUNTS},
                    **{f"cap_{f}": float(r.cap[f]) if f in fields else None for f in _AMOUNTS},
                    "atomic": r.atomic,
                    "runs": r.runs,
                    "started": r.started,
                    "ended": r.ended,
                    "config_digest": r.config_digest,
                }
            )
    return rows
