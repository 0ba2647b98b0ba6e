"""What ``scaled_sqrt`` would give a bounded run under the entry unit (``docs/contribution.md``, "Integration").

``auto`` picks ``scaled_sqrt`` for a bounded Gaussian run at update level only: under the entry and person units
the sensitivity by contribution is computed for the Toeplitz counters (``contribution/toeplitz.py``), and the
scaled square root's encoder ``diag(s) K`` is not Toeplitz, so those runs keep ``sqrt_factorization``. This
script measures what that costs on the simplest case, the count of an entry inserted once and deleted once
(``ContributionUnit.entry(2)``): the change stream is ``e_a - e_b`` (``b`` = never: ``e_a``), and the squared
sensitivity is ``max_{a < b} ||E (e_a - e_b)||^2`` over every pair, by brute force (``O(T^2)`` correlations,
float64: a figure, not a calibration). For each counter it prints that multiplier (squared, over one update's
``n2``), the counter's max variance (count, rho = 1) and their product, the variance a release would have at
the same budget; the Toeplitz counter's multiplier is checked against the library's exact bound
(``contribution_sensitivity``). Lemma A1's premises hold for ``diag(s) K`` (rows scaled by ``s_t > 0`` keep
every row non-decreasing towards the diagonal), but its bound (twice ``n2`` for two changes) is loose here: the
product with it is printed too.

    python benchmarks/scaled_units.py [T ...]          # default 256 1024 2048 (with 4096: about 10 s in all)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from transforms.core import QuerySet  # noqa: E402
from transforms.core.contribution import ContributionUnit, contribution_sensitivity  # noqa: E402
from transforms.core.counters.factorization.lattice import toeplitz_variance_path  # noqa: E402
from transforms.core.counters.factorization.scaled import lattice_max_variance, scaled_tables  # noqa: E402


def insert_delete_multiplier_sq(s: np.ndarray, k: np.ndarray) -> tuple[float, tuple[int, int | None]]:
    """Max over a < b <= T of ||E (e_a - e_b)||^2 / max_j ||E e_j||^2 for E = diag(s) Toeplitz(k) (T x T), with
    the pair that reaches it (b None: never deleted)."""
    t = len(s)
    s2 = s.astype(np.float64) ** 2
    kf = k[:t].astype(np.float64)
    col = np.array([np.dot(s2[j:], kf[: t - j] ** 2) for j in range(t)])  # ||E e_j||^2
    best, pair = float(col.max()), (int(col.argmax()), None)
    for delta in range(1, t):
        p = kf[delta:] * kf[: t - delta]  # p[u] = k[u + delta] k[u]
        c = np.correlate(s2, p, mode="full")
        b = np.arange(delta, t)
        cross = c[b + len(p) - 1]  # sum_u s2[b + u] p[u] = <E e_{b - delta}, E e_b>
        f = col[b - delta] + col[b] - 2.0 * cross
        i = int(f.argmax())
        if f[i] > best:
            best, pair = float(f[i]), (int(b[i] - delta), int(b[i]))
    return best / float(col.max()), pair


def main(argv=None) -> None:
    horizons = [int(x) for x in (argv if argv is not None else sys.argv[1:])] or [256, 1024, 2048]
    print("| T | counter | multiplier^2 (pair) | max variance | product | with Lemma A1 (2 n2) |")
    print("|---|---|---|---|---|---|")
    for t in horizons:
        scaled = scaled_tables(t)
        plain = scaled_tables(t, scaled=False)  # the square root itself, on the same lattice
        m_sc, pair_sc = insert_delete_multiplier_sq(scaled.s, scaled.cint >> scaled.shift)
        m_sq, pair_sq = insert_delete_multiplier_sq(plain.s, plain.cint)
        library = contribution_sensitivity(
            QuerySet("n", "count"), "sqrt_factorization", "gaussian", ContributionUnit.entry(2), horizon=t
        ).multiplier
        v_sc = lattice_max_variance(t)
        v_sq = float(toeplitz_variance_path("sqrt_factorization", t).max())
        for name, m, pair, v in (("scaled_sqrt", m_sc, pair_sc, v_sc), ("sqrt_factorization", m_sq, pair_sq, v_sq)):
            print(f"| {t} | {name} | {m:.4f} {pair} | {v:.4f} | {m * v:.3f} | {2 * v:.3f} |")
        print(
            f"# T = {t}: scaled / square root at the entry unit {m_sc * v_sc / (m_sq * v_sq):.4f} in variance; "
            f"the library's exact multiplier for sqrt_factorization {library:.4f} (squared {library**2:.4f})"
        )


if __name__ == "__main__":
    main()
