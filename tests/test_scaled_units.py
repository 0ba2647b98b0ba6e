"""benchmarks/scaled_units.py: the count's exact squared multiplier of an entry inserted and deleted once, by brute
force over every pair, for ``scaled_sqrt`` and ``sqrt_factorization`` (``docs/contribution.md``, "What
``scaled_sqrt`` would give under a unit").

The correlation loop is checked against the explicit matrix (every pair's norm computed from ``E`` itself), the
Toeplitz figure against the library's exact bound (certified to ``DEFAULT_RTOL`` above the truth), and the
product against a stated figure. Cheap: T = 64 and 256 (well under a second each).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.scaled_units import insert_delete_multiplier_sq, main
from transforms.core import QuerySet
from transforms.core.contribution import ContributionUnit, contribution_sensitivity
from transforms.core.contribution.toeplitz import DEFAULT_RTOL
from transforms.core.counters.factorization.scaled import scaled_tables


def _explicit(s: np.ndarray, k: np.ndarray) -> tuple[float, tuple[int, int | None]]:
    """The same maximum from the dense encoder diag(s) Toeplitz(k): every column, every pair's difference."""
    t = len(s)
    lag = np.subtract.outer(np.arange(t), np.arange(t))
    e = np.where(lag >= 0, k[np.clip(lag, 0, t - 1)].astype(np.float64), 0.0) * s.astype(np.float64)[:, None]
    col = (e * e).sum(axis=0)
    best, pair = col.max(), (int(col.argmax()), None)
    for a in range(t):
        diff = ((e[:, [a]] - e[:, a + 1 :]) ** 2).sum(axis=0)
        if diff.size and diff.max() > best:
            best, pair = diff.max(), (a, a + 1 + int(diff.argmax()))
    return float(best / col.max()), pair


@pytest.mark.parametrize("scaled", [True, False])
def test_the_correlation_loop_equals_the_explicit_matrix(scaled):
    tab = scaled_tables(64, scaled=scaled)
    k = tab.cint >> tab.shift
    got, pair = insert_delete_multiplier_sq(tab.s, k)
    want, want_pair = _explicit(tab.s, k)
    assert got == pytest.approx(want, rel=1e-12)
    assert pair == want_pair
    assert pair[1] is not None and got > 1.0  # a deletion adds: the pair, not one column, is the worst case


@pytest.mark.parametrize("horizon", [64, 256])
def test_the_square_roots_figure_is_the_librarys_exact_bound(horizon):
    tab = scaled_tables(horizon, scaled=False)
    got, _ = insert_delete_multiplier_sq(tab.s, tab.cint)
    bound = contribution_sensitivity(
        QuerySet("n", "count"), "sqrt_factorization", "gaussian", ContributionUnit.entry(2), horizon=horizon
    ).multiplier
    assert got <= bound**2 * (1.0 + 1e-12)  # the library's bound is never below the truth
    assert bound**2 <= got * (1.0 + DEFAULT_RTOL) ** 2 + 1e-12  # and certified to its tolerance above it


def test_the_table_states_the_scaled_products_gain(capsys):
    main(["256"])
    out = capsys.readouterr().out
    assert "| 256 | scaled_sqrt | 1.6913 (0, 215) | 3.5042 | 5.927 | 7.008 |" in out
    assert "| 256 | sqrt_factorization | 1.6036 (0, 212) | 4.0074 | 6.426 | 8.015 |" in out
    assert "at the entry unit 0.9222 in variance" in out
