"""Matrix-factorization counters with exact lattice noise, and the k-ary tree.

Three continual counters (``make_counter`` names), proofs in ``docs/counters.md``:

* ``sqrt_factorization``: the square-root Toeplitz factorization S = C C for a
  declared horizon T (c_0 = 1, c_k = c_{k-1} (2k-1)/(2k)), snapped to the
  dyadic lattice g Z (g = 2^-LATTICE_BITS). The encoder computes
  y = K d with K = C~ / g an *integer* Toeplitz matrix, exactly; discrete
  Gaussian (or discrete Laplace) noise is added in lattice units with its scale
  calibrated to the exact column L2 (L1) norm of K, computed in integer
  arithmetic; answers are the post-processing S K^{-1} (y + z), decoded by
  forward substitution. Refuses past T.
* ``blt``: the coefficients of a buffered linear Toeplitz (BLT) matrix optimised
  for a design horizon n (Dvijotham, McMahan, Pillutla, Steinke, Thakurta
  2024), snapped to the lattice and cut to a finite window of
  ``window`` x n coefficients. Valid on unbounded streams: every column of a
  Toeplitz matrix with finite support has the same (exact) norm. The window is
  the price of exact noise: an integer-valued square-summable impulse response
  has finite support K, and a time-invariant encoder of such a response needs
  K numbers of state (the Hankel rank), so the O(buffers) state of the float
  BLT is out of reach (``docs/counters.md`` has the argument and the cost).
* ``kary_tree``: a mixed-radix k-ary tree (radices chosen for the horizon and
  the noise kind) with Honaker's bottom-up inverse-variance estimate: the best
  pure-DP counter here.

Neighbouring relation: as in :mod:`.counters` (one item more in one batch).
Noise: :func:`~transforms.core.foundation.noise.discrete_gaussian` /
:func:`~transforms.core.foundation.noise.discrete_laplace` only, from
``noise.stream(*coords, name, "noise", block)``; no floating-point noise.

The package by concern (as jax_privacy's ``matrix_factorization``):
``coefficients`` (the square root, the BLT closed forms, the lattice snap),
``blt`` (the offline optimiser and its table, ``blt_table.json``),
``lattice`` (the two lattice Toeplitz counters) and ``kary`` (the k-ary
tree). The tight (eps, delta) calibration of the discrete Gaussian is in
:mod:`transforms.core.foundation.accounting` (``gaussian_rho_for_approx_tight``).

Nothing here imports Apache Beam.
"""

from transforms.core.counters.factorization.blt import BLT_TABLE, blt_params, optimize_blt
from transforms.core.counters.factorization.coefficients import (
    LATTICE_BITS,
    blt_coefficients,
    blt_max_error,
    blt_omega,
    blt_sensitivity_squared,
    series_inverse,
    snap_coefficients,
    sqrt_coefficients,
)
from transforms.core.counters.factorization.kary import KaryTreeCounter, kary_radices, kary_variance_path
from transforms.core.counters.factorization.lattice import (
    BLTCounter,
    SqrtFactorizationCounter,
    toeplitz_variance_path,
)

__all__ = [
    "blt_coefficients",
    "blt_max_error",
    "blt_omega",
    "blt_params",
    "blt_sensitivity_squared",
    "BLT_TABLE",
    "BLTCounter",
    "kary_radices",
    "kary_variance_path",
    "KaryTreeCounter",
    "LATTICE_BITS",
    "optimize_blt",
    "series_inverse",
    "snap_coefficients",
    "sqrt_coefficients",
    "SqrtFactorizationCounter",
    "toeplitz_variance_path",
]
