"""Coefficients of the Toeplitz factorizations: the square root of the prefix-sum
matrix, the buffered linear Toeplitz (BLT) closed forms, the lattice snap and
the series inverse (``docs/counters.md``).

Every function is deterministic IEEE arithmetic in a fixed order, so the
snapped lattice coefficients, hence the releases, are the same on every
IEEE-754 platform. Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = [
    "LATTICE_BITS",
    "sqrt_coefficients",
    "snap_coefficients",
    "series_inverse",
    "blt_omega",
    "blt_coefficients",
    "blt_sensitivity_squared",
    "blt_max_error",
]

LATTICE_BITS = 20  # coefficients live on 2^-20 Z: y = K d with K integer

# ---------------------------------------------------------------------------
# Coefficients
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def sqrt_coefficients(n: int) -> np.ndarray:
    """c_k, k < n, of C = S^(1/2): c_0 = 1, c_k = c_{k-1} (2k-1)/(2k) = binom(2k, k) / 4^k.

    Computed as a sequential product of correctly rounded IEEE quotients, so the
    result is the same on every IEEE-754 platform (the snapped lattice
    coefficients, hence the releases, do not depend on the machine).
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    k = np.arange(1, n, dtype=np.float64)
    out = np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2 * k))])
    out.setflags(write=False)
    return out


def snap_coefficients(c: np.ndarray, bits: int = LATTICE_BITS) -> np.ndarray:
    """round(c_k 2^bits) as int64 (round half to even), cut after the last non-zero."""
    ci = np.rint(np.asarray(c, dtype=np.float64) * float(1 << bits)).astype(np.int64)
    nz = np.flatnonzero(ci)
    return ci[: nz[-1] + 1] if len(nz) else ci[:1]


def _conv(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    size = len(a) + len(b) - 1
    nfft = 1 << max(size - 1, 1).bit_length()
    return np.fft.irfft(np.fft.rfft(a, nfft) * np.fft.rfft(b, nfft), nfft)[:n]


def series_inverse(c: np.ndarray, n: int) -> np.ndarray:
    """The first n coefficients of 1 / c(x) (float64, Newton iteration with FFT
    products: h <- h (2 - c h) mod x^2m). Used only for post-processing weights."""
    c = np.asarray(c, dtype=np.float64)
    h = np.array([1.0 / c[0]])
    m = 1
    while m < n:
        m = min(2 * m, n)
        e = -_conv(c[:m], h, m)
        e[0] += 2.0
        h = _conv(h, e, m)
    return h[:n]


# ---------------------------------------------------------------------------
# BLT closed forms (Dvijotham et al. 2024, Lemmas 5.2-5.4; our derivation)
# ---------------------------------------------------------------------------


def blt_omega(theta, theta_hat) -> np.ndarray:
    """Output scales of the BLT C(x) = prod(1 - theta_hat_i x) / prod(1 - theta_i x)
    = 1 + sum_i omega_i x / (1 - theta_i x) (partial fractions); swap the arguments
    for C^-1."""
    theta = np.asarray(theta, dtype=np.float64)
    theta_hat = np.asarray(theta_hat, dtype=np.float64)
    num = np.prod(theta[:, None] - theta_hat[None, :], axis=1)
    diff = theta[:, None] - theta[None, :]
    np.fill_diagonal(diff, 1.0)
    return num / np.prod(diff, axis=1)


def blt_coefficients(theta, omega, n: int) -> np.ndarray:
    """c_0 = 1, c_k = sum_i omega_i theta_i^(k-1): sequential IEEE products and a
    fixed summation order, so the same on every IEEE-754 platform."""
    theta = np.asarray(theta, dtype=np.float64)
    omega = np.asarray(omega, dtype=np.float64)
    out = np.zeros(n, dtype=np.float64)
    out[0] = 1.0
    if n > 1:
        for th, om in zip(theta, omega):
            pw = np.cumprod(np.concatenate([[1.0], np.full(n - 2, th)]))
            out[1:] = out[1:] + om * pw
    return out


def _geo(x, n: int):
    """sum_{k<n} x^k for 0 < x < 1 (array)."""
    x = np.asarray(x, dtype=np.float64)
    return -np.expm1(n * np.log(x)) / (1.0 - x)


def blt_sensitivity_squared(theta, theta_hat) -> float:
    """sum_k c_k^2 over the whole (infinite) column: 1 + sum_ij w_i w_j / (1 - t_i t_j)."""
    theta = np.asarray(theta, dtype=np.float64)
    w = blt_omega(theta, theta_hat)
    return float(1.0 + np.sum(np.outer(w, w) / (1.0 - np.outer(theta, theta))))


def blt_max_error(theta, theta_hat, n: int) -> float:
    """max_{t <= n} ||row_t(S C^-1)||^2 = sum_{k<n} r_k^2 (rows grow with t), with
    r_k = A - sum_i a_i theta_hat_i^k, a_i = w^_i / (1 - theta_hat_i), A = 1 + sum a_i."""
    th = np.asarray(theta_hat, dtype=np.float64)
    a = blt_omega(th, theta) / (1.0 - th)
    big_a = 1.0 + a.sum()
    return float(
        n * big_a * big_a - 2 * big_a * np.sum(a * _geo(th, n)) + np.sum(np.outer(a, a) * _geo(np.outer(th, th), n))
    )
