"""benchmarks/anytime_merge.py: the merged-start anytime counter model (``docs/counters.md``, "Anytime
square root", "Merged start"). Its certified parts, on a dense 40-step model: the encoder and the
decoder the closed form assumes are a counter (noise off = prefix sums), the closed-form variance is
the decoder's row norms (a decoder that forgets the handover's variance is caught), the privacy claim
(every column no heavier than the damped Toeplitz column: a phase 1 heavier by 5% is caught), and the
model's worst ratio is never below the certified lower bound of any counter. Well under a second."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.anytime_floor import general_optimum, sqrt_coefficients_f, sqrt_row_norms
from benchmarks.anytime_merge import (
    closed_form_variances,
    decoder_sq,
    dense_decoder,
    dense_merged,
    merged_ratio_path,
)

N, T1 = 40, 8


def parts(scale1: float = 1.0):
    c = sqrt_coefficients_f(N)
    e = c * (1.0 + np.arange(N) / 4.0) ** -0.3  # a damped square root, e_0 = 1
    p1 = scale1 * c[:T1] / np.sqrt(np.sum(c[:T1] ** 2))  # phase 1: column norm^2 1 = e_0^2
    return e, p1


def test_noise_off_is_the_prefix_sum():
    e, p1 = parts()
    enc, dec = dense_merged(N, T1, e, p1), dense_decoder(N, T1, e, p1)
    np.testing.assert_allclose(dec @ enc, np.tril(np.ones((N, N))), atol=1e-12)


def test_closed_form_variance_is_the_decoder_rows():
    e, p1 = parts()
    dec = dense_decoder(N, T1, e, p1)
    rows = (dec * dec).sum(axis=1)
    cf = closed_form_variances(N, T1, e, p1)
    np.testing.assert_allclose(cf, rows, rtol=1e-12)
    # broken twin: the handover's variance (phase 1's at T1) taken as a fresh release's (1)
    b2, bsq = decoder_sq(e[: N - T1 + 1])
    tau = np.arange(1, N - T1 + 1)
    twin = np.concatenate([cf[:T1], b2[tau] + bsq[tau - 1]])
    assert np.abs(twin - rows).max() > 1e-3


@pytest.mark.parametrize("scale1, ok", [(1.0, True), (1.05, False)])
def test_columns_bounded_by_the_toeplitz_column(scale1, ok):
    """Sensitivity: every item's column (phase 1 + the merged item's phase-2 entries, or a later
    item's Toeplitz column) has squared norm at most sum_k e_k^2 over the merged stream's horizon
    (the infinite column bounds it for ever); the first item's column attains it."""
    e, p1 = parts(scale1)
    enc = dense_merged(N, T1, e, p1)
    cols = (enc * enc).sum(axis=0)
    bound = float(np.sum(e[: N - T1 + 1] ** 2))
    assert bool(cols.max() <= bound * (1 + 1e-12)) is ok
    if ok:
        np.testing.assert_allclose(cols[0], bound, rtol=1e-12)  # item 1: the whole phase-1 column


def test_path_matches_the_closed_form_and_the_lower_bound():
    """merged_ratio_path's ratios (n = 64, T1 = 4, profile 2's damping) are M/2 times the closed-form
    variances over s(t)^2 / 2, and over [4, 64] never below the certified bound of any counter."""
    n, t1 = 64, 4
    path = merged_ratio_path(t1=t1, n=n)
    from benchmarks.anytime_merge import PROFILE2, damped

    e = damped(n, *PROFILE2)
    c = sqrt_coefficients_f(t1)
    cf = closed_form_variances(n, t1, e, c / np.sqrt(np.sum(c * c)))
    s = sqrt_row_norms(n)
    np.testing.assert_allclose(path["ratio"], path["M"] * cf / s**2, rtol=1e-9)
    # the model's column on the 64 steps is at most M (its infinite column), so its true worst ratio
    # on [4, 64] is at most the reported one and at least the certified lower bound
    col = float(np.sum(e[: n - t1 + 1] ** 2))
    assert col <= path["M"]
    lower = general_optimum(n, t1, iters=40)["lower"]
    assert lower <= (col * cf / s**2)[t1 - 1 :].max()


@pytest.mark.parametrize("profile", [3, 4])
def test_the_knot_model_is_the_built_counter(profile):
    """``knot_ratio`` (the design tool of profiles 3 and 4) models the counter ``anytime_sqrt`` builds: the same
    floored coefficients, bit for bit, and the same decoder rows after the hand-over (to 1e-4: the model's
    phase 1 is the unfloored scaled square root) at every t of (T1, 2^13]; its M covers the counter's
    exact column over 2^13 steps."""
    from benchmarks.anytime_merge import knot_ratio
    from transforms.core.counters.factorization import LATTICE_BITS, sqrt_coefficients
    from transforms.core.counters.factorization.anytime import (
        MERGE_T1,
        anytime_coefficients,
        anytime_sensitivity_sq,
        anytime_variance_path,
        knot_profile,
    )

    n = 1 << 13
    knots, values, b, q = knot_profile(profile)
    v, kn = np.array(values[1:]), np.array(knots)
    ratio, m = knot_ratio(v, kn, MERGE_T1, n, tailc=1.0 / (b * (q - 1.0)))
    c = sqrt_coefficients(n)
    lh2 = np.interp(np.log2(1.0 + np.arange(n, dtype=np.float64)), kn, np.concatenate([[0.0], v]))
    model_k = np.minimum.accumulate(np.floor(c * np.exp(0.5 * lh2) * 2.0**LATTICE_BITS)).astype(np.int64)
    assert np.array_equal(model_k, anytime_coefficients(n, profile))
    s = np.cumsum(c * c)
    model_rows = ratio * s[MERGE_T1:] ** 2 / m
    sigma2 = float(anytime_sensitivity_sq(profile)) / 2.0 ** (2 * LATTICE_BITS) / 2  # rho = 1, g^2 folded in
    counter_rows = anytime_variance_path(n, profile=profile)[MERGE_T1:] / sigma2
    np.testing.assert_allclose(model_rows, counter_rows, rtol=1e-4)
    assert m * 2.0 ** (2 * LATTICE_BITS) >= float(np.sum(model_k.astype(np.float64) ** 2))
