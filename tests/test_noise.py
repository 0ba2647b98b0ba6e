"""Samplers: exactness (goodness of fit), replay safety, uniform integers.

Statistical tests use a fixed key, so they are deterministic; the stated
false-failure rate is the rate at which a *random* key would fail a correct
sampler (the p-value threshold). Each has a negative control showing the same
test rejects a wrong distribution.
"""

import decimal
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from transforms.core.foundation.noise import (
    NoiseSource,
    ReleaseIdentity,
    as_ratio_up,
    bernoulli_exp,
    config_digest,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_laplace,
    discrete_laplace_pmf,
    discrete_laplace_variance,
    encode_coordinates,
    lattice_granularity,
)
from transforms.core.foundation.samplers import geometric_inversion

P_THRESHOLD = 1e-4  # false-failure rate of each goodness-of-fit test


def chi2_pvalue(samples, pmf_fn):
    """Chi-square goodness of fit with tails pooled so every bin expects >= 20."""
    n = len(samples)
    values, counts = np.unique(samples, return_counts=True)
    lo, hi = int(values.min()), int(values.max())
    support = np.arange(lo - 1, hi + 2)
    probs = pmf_fn(support)
    # pool outer bins until each expected count >= 20
    keep = probs * n >= 20
    idx = np.nonzero(keep)[0]
    a, b = support[idx[0]], support[idx[-1]]
    observed, expected = [], []
    obs_map = dict(zip(values.tolist(), counts.tolist()))
    for z in range(a, b + 1):
        observed.append(obs_map.get(z, 0))
        expected.append(pmf_fn(np.array([z]))[0] * n)
    # tails: everything outside [a, b]
    left_obs = sum(c for v, c in obs_map.items() if v < a)
    right_obs = sum(c for v, c in obs_map.items() if v > b)
    inside = sum(expected) / n
    # split the tail mass by symmetry of the (symmetric) pmfs
    tail = max(1 - inside, 0.0)
    observed += [left_obs + right_obs]
    expected += [tail * n]
    observed, expected = np.array(observed, float), np.array(expected, float)
    mask = expected > 0
    stat = np.sum((observed[mask] - expected[mask]) ** 2 / expected[mask])
    dof = mask.sum() - 1
    return stats.chi2.sf(stat, dof)


@pytest.mark.statistical
@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 17.0])
def test_discrete_laplace_goodness_of_fit(noise, scale):
    x = discrete_laplace(noise.stream("gof-dlap", str(scale)), scale, 60_000)
    assert x.dtype == np.int64
    assert chi2_pvalue(x, lambda z: discrete_laplace_pmf(z, float(as_ratio_up(scale)))) > P_THRESHOLD


@pytest.mark.statistical
@pytest.mark.parametrize("sigma2", [0.5, 4.0, 30.0])
def test_discrete_gaussian_goodness_of_fit(noise, sigma2):
    x = discrete_gaussian(noise.stream("gof-dg", str(sigma2)), sigma2, 40_000)
    assert x.dtype == np.int64
    assert chi2_pvalue(x, lambda z: discrete_gaussian_pmf(z, float(as_ratio_up(sigma2)))) > P_THRESHOLD


@pytest.mark.statistical
def test_goodness_of_fit_rejects_wrong_scale(noise):
    """Negative control: the same test has the power to see a 10% scale error."""
    x = discrete_laplace(noise.stream("gof-neg"), 2.2, 60_000)
    assert chi2_pvalue(x, lambda z: discrete_laplace_pmf(z, 2.0)) < P_THRESHOLD
    y = discrete_gaussian(noise.stream("gof-neg-g"), 4.4, 40_000)
    assert chi2_pvalue(y, lambda z: discrete_gaussian_pmf(z, 4.0)) < P_THRESHOLD


@pytest.mark.statistical
def test_discrete_gaussian_large_sigma_moments(noise):
    """Big parameters go through the arbitrary-precision path; check the variance.

    Var estimate of n=4000 normal-ish samples has relative sd sqrt(2/n) = 2.2%;
    the 5-sd band fails a correct sampler with probability < 1e-6."""
    s2 = 2.5e11
    x = discrete_gaussian(noise.stream("big"), s2, 4000).astype(float)
    assert abs(x.var() / s2 - 1) < 5 * math.sqrt(2 / 4000)
    assert abs(x.mean()) < 5 * math.sqrt(s2 / 4000)


@pytest.mark.statistical
def test_bernoulli_exp_rates(noise):
    """Bernoulli(exp(-g)) for g in {0.3, 1, 2.7}: binomial test, 1e-4 each."""
    s = noise.stream("bexp")
    n = 40_000
    for num, den in [(3, 10), (1, 1), (27, 10)]:
        got = bernoulli_exp(s, np.full(n, num), np.full(n, den)).sum()
        p = math.exp(-num / den)
        assert stats.binomtest(int(got), n, p).pvalue > P_THRESHOLD


@pytest.mark.statistical
def test_uniform_below_is_uniform(noise):
    s = noise.stream("unif")
    for bound in (3, 7, 10**12 + 39, 2**70 + 5):
        x = s.uniform_below(np.full(30_000, bound, dtype=object if bound >= 2**63 else np.int64))
        vals = np.array([int(v) for v in x], dtype=object)
        assert all(0 <= v < bound for v in vals)
        # bucket into nb equal ranges and chi-square against the exact bucket sizes
        nb = min(6, bound)
        buckets = np.array([int(v) * nb // bound for v in vals])
        counts = np.bincount(buckets, minlength=nb)
        exp = np.array([-(-(k + 1) * bound // nb) - (-(-k * bound // nb)) for k in range(nb)], float)
        exp = exp / exp.sum() * len(vals)
        assert stats.chisquare(counts, exp).pvalue > P_THRESHOLD


def test_replay_same_coordinates_identical(noise):
    a = discrete_laplace(noise.stream("s", "m", 3, 7), 4.0, 50)
    b = discrete_laplace(noise.stream("s", "m", 3, 7), 4.0, 50)
    np.testing.assert_array_equal(a, b)
    g1 = discrete_gaussian(noise.stream("s", "g", 1), 9.0, 50)
    g2 = discrete_gaussian(noise.stream("s", "g", 1), 9.0, 50)
    np.testing.assert_array_equal(g1, g2)
    # a different source object with the same key gives the same bytes
    other = NoiseSource(bytes(range(32)))
    np.testing.assert_array_equal(a, discrete_laplace(other.stream("s", "m", 3, 7), 4.0, 50))


def test_different_coordinates_or_keys_differ(noise):
    a = discrete_laplace(noise.stream("s", "m", 3, 7), 4.0, 200)
    for coords in [("s", "m", 3, 8), ("s", "m", 37), ("s", "m3", 7), ("t", "m", 3, 7)]:
        assert not np.array_equal(a, discrete_laplace(noise.stream(*coords), 4.0, 200)), coords
    other = NoiseSource(b"\x01" * 32)
    assert not np.array_equal(a, discrete_laplace(other.stream("s", "m", 3, 7), 4.0, 200))


def test_coordinate_encoding_is_injective():
    seen = set()
    for c in [("a", 1), ("a1",), ("a", "1"), (1, "a"), ("a", 1, ""), (b"a", 1), ("", "a", 1)]:
        e = encode_coordinates(c)
        assert e not in seen
        seen.add(e)
    with pytest.raises(TypeError):
        encode_coordinates([1.5])
    with pytest.raises(TypeError):
        encode_coordinates([True])


def test_disabled_source_gives_zeros():
    s = NoiseSource.disabled().stream("x")
    assert not discrete_laplace(s, 3.0, 10).any()
    assert not discrete_gaussian(s, 3.0, 10).any()


def test_key_is_never_shown():
    key = bytes(range(100, 132))
    src = NoiseSource(key)
    assert key.hex() not in repr(src) and key.hex()[:16] not in repr(src)
    assert src.fingerprint in repr(src)
    with pytest.raises(ValueError):
        NoiseSource(b"short")


def test_generated_keys_are_fresh():
    assert NoiseSource.generate() != NoiseSource.generate()


def test_key_from_file(tmp_path):
    p = tmp_path / "key.hex"
    p.write_text(bytes(range(32)).hex() + "\n")
    assert NoiseSource.from_file(str(p)) == NoiseSource(bytes(range(32)))


@pytest.mark.parametrize("x", [0.1, 1.0, 1 / 3, 17.0, 1e6 / 7, 2.0**-30, Fraction(7, 3)])
def test_as_ratio_up_never_decreases(x):
    r = as_ratio_up(x)
    assert r >= Fraction(x)
    assert r - Fraction(x) <= Fraction(x) * Fraction(1, 2**40)
    assert r.denominator & (r.denominator - 1) == 0 or isinstance(x, Fraction)


@pytest.mark.parametrize("x", [0, 0.0, -1.0, Fraction(-1, 3), Fraction(0), Fraction(-1, 2**70)])
def test_as_ratio_up_refuses_a_scale_that_is_not_positive(x):
    """Also a small Fraction (its terms fit 62 bits), which once took the exact fast path unchecked."""
    with pytest.raises(ValueError, match="must be positive"):
        as_ratio_up(x)


def test_platform_exp_within_the_exact_band():
    """bernoulli_exp relies on numpy's exp being accurate to far better than 2**-40
    on the arguments it sees; check the platform against correctly rounded decimal."""
    import decimal

    from transforms.core.foundation.samplers import EXACT_BAND

    xs = np.concatenate([np.linspace(0, 1, 2001), np.linspace(1, 60, 2001), [1e-12, 1 / 3, 700.0]])
    approx = np.exp(-xs)
    with decimal.localcontext() as ctx:
        ctx.prec = 50
        worst = max(abs(decimal.Decimal(float(a)) - (-decimal.Decimal(float(x))).exp()) for a, x in zip(approx, xs))
    assert worst < decimal.Decimal(EXACT_BAND) / 2**10


@pytest.mark.statistical
@pytest.mark.parametrize("num,den", [(0, 1), (1, 3), (1, 1), (5, 2), (123456789, 10**8)])
def test_bernoulli_exp_matches_reference_and_exact_path(noise, monkeypatch, num, den):
    """The fast path, the exact-resolution path (forced by a huge band) and the
    integer-only CKS loop all give Bernoulli(exp(-num/den)) (binomial tests at 1e-4)."""
    import transforms.core.foundation.samplers as nz

    n = 20_000
    p = math.exp(-num / den)
    fast = nz.bernoulli_exp(noise.stream("fast", num), np.full(n, num), np.full(n, den)).sum()
    assert stats.binomtest(int(fast), n, p).pvalue > P_THRESHOLD
    if num <= den:
        ref = nz.cks_bernoulli_exp_loop(noise.stream("ref", num), np.full(n, num), np.full(n, den)).sum()
        assert stats.binomtest(int(ref), n, p).pvalue > P_THRESHOLD
    monkeypatch.setattr(nz, "EXACT_BAND", 1.0)  # every draw goes through resolve_exactly
    m = 3000
    exact = nz.bernoulli_exp(noise.stream("exact", num), np.full(m, num), np.full(m, den)).sum()
    assert stats.binomtest(int(exact), m, p).pvalue > P_THRESHOLD


def test_exact_resolution_decides_boundary_cases(noise):
    from transforms.core.foundation.samplers import resolve_exactly

    # w far below / above exp(-1) * 2**63 is decided by the first comparison
    t = int(math.exp(-1) * 2**63)
    assert resolve_exactly(noise.stream("r"), t - 2**20, 1, 1) is True
    assert resolve_exactly(noise.stream("r"), t + 2**20, 1, 1) is False


@pytest.mark.statistical
@pytest.mark.parametrize("scale", [0.7, 3.0])
def test_discrete_laplace_exact_fallback_path(noise, monkeypatch, scale):
    """Force every geometric draw through the exact decimal path: same law."""
    import transforms.core.foundation.samplers as nz

    monkeypatch.setattr(nz, "INVERSION_MARGIN", 10.0)
    x = nz.discrete_laplace(noise.stream("fallback", str(scale)), scale, 3000)
    assert chi2_pvalue(x, lambda z: discrete_laplace_pmf(z, float(as_ratio_up(scale)))) > P_THRESHOLD


@pytest.mark.statistical
def test_cks_reference_sampler_matches_pmf(noise):
    """The integer-only CKS Algorithm 2 (kept as the reference) has the same law."""
    from transforms.core.foundation.samplers import dlap_integer_ratio

    r = as_ratio_up(2.5)
    x = dlap_integer_ratio(noise.stream("cks-ref"), r.numerator, r.denominator, 30_000)
    assert chi2_pvalue(x, lambda z: discrete_laplace_pmf(z, float(r))) > P_THRESHOLD


# ---------------------------------------------------------------------------
# keys, derivations, coordinate encoding and the exact samplers at their boundaries
# (each test names the mutants of the mutation benchmark it kills, benchmarks/mutation_config.py;
# the numbers are those of the last run, docs/testing.md)
# ---------------------------------------------------------------------------

KEY = bytes(range(32))


def test_noise_key_length_and_release_digest_are_pinned():
    """A 16-byte key is accepted (the documented minimum), 15 bytes are not; a
    release's digest derivation is pinned by a golden value (a change would
    give a continued release other noise than the one it started with).
    Kills noise.NoiseSource.__init____mutmut_5 (17 bytes) and
    ReleaseIdentity.with_digest__mutmut_11 (33 hex digits)."""
    assert NoiseSource(bytes(range(16))).fingerprint == "827b0c8951fd"
    with pytest.raises(ValueError):
        NoiseSource(bytes(15))
    d = ReleaseIdentity("r1", "abc").with_digest("x", 3)
    assert d == ReleaseIdentity("r1", "111d7bfa0f1652ee237fd0fc39747b3a")


class WordStream:
    """A stream of chosen 64-bit words: the first ones, then the last one
    repeated; refuses to give more than ``limit`` words (a mutant that never
    decides fails instead of hanging)."""

    def __init__(self, words, limit=16):
        self.ws = list(words)
        self.given = 0
        self.limit = limit

    def words(self, n):
        out = []
        for _ in range(n):
            self.given += 1
            if self.given > self.limit:
                raise RuntimeError("the sampler asked for too many words")
            out.append(self.ws.pop(0) if len(self.ws) > 1 else self.ws[0])
        return np.array(out, dtype=np.uint64)


def _exact_q_power(t: int, s: int, k: int) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = 120
        return (-decimal.Decimal(s) / decimal.Decimal(t) * k).exp()


@pytest.mark.parametrize("t, s", [(5, 2), (3, 1)])
@pytest.mark.parametrize("k", [1, 2, 4, 9])
def test_geometric_inversion_exact_path_at_the_boundary(t, s, k):
    """X = max{j: U <= q^j}, q = exp(-s/t), when U is within 2^-64 of q^k: the
    float guess is refused (relative band 2^-30) and the exact path refines U
    with more words. U just below q^k gives X = k, just above gives X = k - 1.
    Kills samplers._geometric_exact__mutmut_89 (the refined U misscaled) and
    geometric_inversion (was _geometric_inversion__mutmut_53) (the band test accepting a float guess
    that is off by one at the boundary)."""
    qk = _exact_q_power(t, s, k)
    w = int(qk * 2**64)  # w / 2^64 < q^k < (w + 1) / 2^64
    assert 0 < qk * 2**64 - w < 1
    lo_stream, hi_stream = WordStream([w, 0]), WordStream([w, 2**64 - 1])
    below = int(geometric_inversion(lo_stream, t, s, 1)[0])  # U = w / 2^64
    above = int(geometric_inversion(hi_stream, t, s, 1)[0])  # U = (w + 1) / 2^64
    assert (below, above) == (k, k - 1)
    assert lo_stream.given > 1 and hi_stream.given > 1  # the exact path drew more words


class TaggedStr(str):
    """A str subclass (a coordinate from an enum-like or a library type)."""


def test_coordinates_encode_by_value_whatever_their_int_or_str_type():
    """numpy integers and str subclasses encode exactly like ints and strs (a
    coordinate's type must not change the noise of a release); the encoding is
    pinned by a golden value.
    Kills random_stream.encode_coordinates mutants 46, 47 (numpy ints), 64, 67, 68, 72
    (str subclasses)."""
    golden = "730000000161690000000131620000000178"
    assert encode_coordinates(("a", 1, b"x")).hex() == golden
    assert encode_coordinates((TaggedStr("a"), np.int64(1), b"x")).hex() == golden
    assert encode_coordinates((np.uint8(7), TaggedStr("node"))) == encode_coordinates((7, "node"))


def test_release_derivations_are_pinned():
    """The digests and sub-keys a release's noise depends on are pinned by
    golden values; a new release id is 128 random bits.
    Kills noise.config_digest mutants 1, 4, NoiseSource.for_release__mutmut_10
    (the personalisation dropped), ReleaseIdentity.with_digest__mutmut_3 and
    ReleaseIdentity.new__mutmut_6 (all no tests)."""
    assert config_digest("a", 1, (2, 3)) == "8df64b66136f410986cdf77ffa666c83"
    sub = NoiseSource(KEY).for_release(ReleaseIdentity("r1", "d"))
    assert sub.fingerprint == "b95feef0b60f" and sub.release == ReleaseIdentity("r1", "d")
    a, b = ReleaseIdentity.new("d"), ReleaseIdentity.new("d")
    assert len(a.release_id) == 32 and int(a.release_id, 16) >= 0 and a.release_id != b.release_id
    assert a.config_digest == "d"


def test_config_digest_refuses_a_repr_with_a_memory_address():
    """A part without its own repr would key the noise differently in every process (seen: the open-key step's
    KeyLimit): a replay of a release must draw the same noise, so such a part is refused."""

    class NoRepr:
        pass

    with pytest.raises(ValueError, match="memory address"):
        config_digest("open-keys-transform-v1", NoRepr())
    from transforms.core.selection import KeyLimit

    assert repr(KeyLimit(2, 4, 3)) == "KeyLimit(max_keys=2, max_entries=4, max_mutations=3)"
    assert config_digest(KeyLimit(2, 4, 3)) == config_digest(KeyLimit(2, 4, 3)) != config_digest(KeyLimit(2, 4, 2))


def test_noise_helpers_validate_and_compute():
    """Input validation of the samplers (negative exponent, non-positive bound),
    the ratio rounding (a Fraction whose terms do not fit 62 bits is rounded up
    to a power-of-two denominator), the lattice spacing and the discrete
    Laplace variance 2q / (1 - q)^2.
    Kills samplers.bernoulli_exp__mutmut_43, random_stream.RandomStream.uniform_below__mutmut_20,
    samplers._as_ratio_up__mutmut_5, lattice_granularity__mutmut_8 and
    discrete_laplace_variance__mutmut_3 (no tests)."""
    stream = NoiseSource(KEY).stream("v")
    with pytest.raises(ValueError):
        bernoulli_exp(stream, np.array([-1]), np.array([1]))
    for bad in ([0], [-3], [5, 0]):
        with pytest.raises(ValueError):
            stream.uniform_below(np.array(bad))
    x = Fraction(3, 2**62 + 1)
    r = as_ratio_up(x)
    assert r >= x and r.denominator & (r.denominator - 1) == 0
    assert as_ratio_up(Fraction(3, 2**61 + 1)) == Fraction(3, 2**61 + 1)  # terms fit: exact
    assert lattice_granularity(1.0) == 2.0**-20 and lattice_granularity(3.0, bits=4) == 0.125
    q = math.exp(-1 / 2.0)
    assert discrete_laplace_variance(2.0) == pytest.approx(2 * q / (1 - q) ** 2, rel=1e-12)


def test_bernoulli_exp_decides_a_word_next_to_the_boundary_exactly():
    """Words w (63 bits) next to exp(-1) * 2^63, inside the exact band, whose
    float64 copy rounds to the other side of the boundary: w / 2^63 < exp(-1)
    gives True, above gives False; the decision uses w as an integer.
    Kills samplers.bernoulli_exp__mutmut_50 (the words as float64)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        target = decimal.Decimal(-1).exp() * 2**63  # exp(-1) * 2^63
    edge = int(target)  # w <= edge  <=>  w / 2^63 < exp(-1)
    # words whose float64 copy lies on the other side of the boundary
    near = [w for w in range(edge - 600, edge + 600) if (w <= edge) != (int(float(w)) <= edge)]
    assert near
    for w in near[:6] + [edge - 2**30, edge + 2**30]:
        out = bernoulli_exp(WordStream([w << 1, 0]), np.array([1]), np.array([1]))
        assert bool(out[0]) is (w <= edge)


# ---------------------------------------------------------------------------
# issue 27: the reference samplers, pmfs and big-bound draws the fast tier did not run (exact properties, no
# statistics: the reference pmfs against their closed forms; the samplers' logic against scripted draws; the
# big-bound path against the documented rejection reading of a twin stream)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 40.0])
def test_discrete_laplace_pmf_and_variance_are_the_closed_forms(scale):
    from transforms.core.foundation.samplers import discrete_laplace_pmf, discrete_laplace_variance

    q = math.exp(-1.0 / scale)
    z = np.arange(-int(60 * scale) - 60, int(60 * scale) + 61)
    p = discrete_laplace_pmf(z, scale)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p, p[::-1], rtol=1e-15)  # symmetric
    np.testing.assert_allclose(p[1:][z[1:] > 0] / p[:-1][z[1:] > 0], q, rtol=1e-12)  # geometric tails
    assert p[z == 0][0] == pytest.approx((1 - q) / (1 + q), rel=1e-15)
    assert discrete_laplace_variance(scale) == pytest.approx(float(np.sum(p * z.astype(float) ** 2)), rel=1e-9)


@pytest.mark.parametrize("sigma2", [0.04, 0.5, 1.0, 9.0, 400.0])
def test_discrete_gaussian_pmf_and_variance_are_the_normalised_kernel(sigma2):
    from transforms.core.foundation.samplers import discrete_gaussian_pmf, discrete_gaussian_variance

    lim = int(math.ceil(math.sqrt(sigma2) * 40)) + 10
    z = np.arange(-lim - 3, lim + 4)
    p = discrete_gaussian_pmf(z, sigma2)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(p[np.abs(z) > lim], 0.0)  # outside the table: 0 (mass below 1e-300)
    inside = np.abs(z) <= lim
    kernel = np.exp(-(z[inside].astype(float) ** 2) / (2 * sigma2))
    np.testing.assert_allclose(p[inside], kernel / kernel.sum(), rtol=1e-12, atol=1e-300)
    var = discrete_gaussian_variance(sigma2)
    assert var == pytest.approx(float(np.sum(p * z.astype(float) ** 2)), rel=1e-12)
    assert var <= sigma2 * (1 + 1e-12)  # CKS Prop. 19
    if sigma2 >= 9:
        assert var == pytest.approx(sigma2, rel=1e-9)  # the gap is about 4 pi^2 sigma2 exp(-2 pi^2 sigma2)
    assert discrete_gaussian_pmf(np.array([0, 1]), sigma2)[1] / discrete_gaussian_pmf(np.array([0]), sigma2)[
        0
    ] == pytest.approx(math.exp(-1 / (2 * sigma2)), rel=1e-12)


class _Scripted:
    """A stream whose ``bernoulli`` answers from a script (one bool list per call)."""

    def __init__(self, script):
        self.script = list(script)
        self.calls = []

    def bernoulli(self, num, den):
        self.calls.append((np.asarray(num).tolist(), np.asarray(den).tolist()))
        return np.array(self.script.pop(0), dtype=bool)


def test_cks_bernoulli_exp_loop_is_the_parity_of_the_first_failed_round():
    """CKS Algorithm 1: round k draws Bernoulli(gamma) AND Bernoulli(1/k) for the still active entries; the result
    is True iff the first failed round's k is odd."""
    from transforms.core.foundation.samplers import cks_bernoulli_exp_loop

    # entries 0, 1, 2: fail in round 1; pass round 1, fail in round 2 (by the 1/k draw); pass rounds 1 and 2
    script = [[False, True, True], [True, True, True], [True, True], [False, True], [True], [False]]
    s = _Scripted(script)
    out = cks_bernoulli_exp_loop(s, [1, 2, 3], [4, 4, 4])
    assert out.tolist() == [True, False, True]
    assert s.calls == [
        ([1, 2, 3], [4, 4, 4]),
        ([1, 1, 1], [1, 1, 1]),
        ([2, 3], [4, 4]),
        ([1, 1], [2, 2]),
        ([3], [4]),
        ([1], [3]),
    ]
    assert cks_bernoulli_exp_loop(_Scripted([[False, False], [True, True]]), [0, 0], [1, 1]).tolist() == [True, True]


def test_geometric_e_counts_the_successes_before_the_first_failure(monkeypatch):
    from transforms.core.foundation import samplers

    rounds = iter([[True, False, True], [True, False], [False]])
    seen = []

    def scripted(stream, num, den):
        seen.append((list(num), list(den)))
        return np.array(next(rounds), dtype=bool)

    monkeypatch.setattr(samplers, "bernoulli_exp", scripted)
    assert samplers._geometric_e(None, 3).tolist() == [2, 0, 1]
    assert seen == [([1, 1, 1], [1, 1, 1]), ([1, 1], [1, 1]), ([1], [1])]  # Bernoulli(exp(-1)) each round


class _Words:
    def __init__(self, top_bits):
        self.top = list(top_bits)

    def words(self, m):
        out = np.array([(1 << 63) if self.top.pop(0) else 1 for _ in range(m)], dtype=np.uint64)
        return out

    def uniform_below(self, tt):
        return np.arange(len(tt), dtype=np.int64) % np.asarray(tt)


def test_dlap_integer_ratio_keeps_the_accepted_candidates_in_order(monkeypatch):
    """CKS Algorithm 2 on scripted parts: x = u + t v, y = x // s, the sign from the word's top bit, a candidate
    rejected when the Bernoulli(exp(-u/t)) fails or when it is a negative zero; the first accepted ones kept in
    index order, with another batch of 1.8 x need + 4 candidates while too few were accepted."""
    from transforms.core.foundation import samplers

    t, s = 3, 2
    batches = iter(
        [
            # batch 1: m = int(2 * 1.8) + 4 = 7 candidates; u = 0, 1, 2, 0, 1, 2, 0
            ([True, False, True, True, True, True, True], [0, 5, 1, 0, 2, 0, 1]),
            # batch 2: need 1: m = int(1.8) + 4 = 5
            ([True, True, True, True, True], [1, 0, 0, 0, 0]),
        ]
    )
    sizes = []

    def bern(stream, u, tt):
        d, v = current[0]
        sizes.append(len(u))
        assert list(tt) == [t] * len(u)
        return np.array(d)

    def geo(stream, m):
        return np.array(current[0][1])

    current = [None]

    def bern_and_next(stream, u, tt):
        current[0] = next(batches)
        return bern(stream, u, tt)

    monkeypatch.setattr(samplers, "bernoulli_exp", bern_and_next)
    monkeypatch.setattr(samplers, "_geometric_e", geo)
    # signs: batch 1 candidates 0..6 (top bit 1 = negative), batch 2 candidates 0..4
    w = _Words([True, False, True, False, True, True, False] + [False, True, False, False, False])
    z = samplers.dlap_integer_ratio(w, t, s, 2)
    # batch 1: x = u + 3 v = [0, 16, 5, 0, 7, 2, 3]; y = x // 2 = [0, 8, 2, 0, 3, 1, 1]
    # candidate 0: negative zero, rejected; 1: Bernoulli failed; 2: -2 accepted; 3: +0 accepted (enough: 2)
    assert z.tolist() == [-2, 0]
    assert sizes == [7]
    sizes.clear()
    batches = iter(
        [
            ([True, False, True, True, True, False, True], [0, 0, 1, 0, 0, 0, 0]),
            ([True, True, True, True, True], [1, 0, 0, 0, 0]),
        ]
    )
    w = _Words([True] * 7 + [False] * 5)
    z = samplers.dlap_integer_ratio(w, t, s, 2)
    # batch 1: x = [0, 1, 5, 0, 1, 2, 0], y = [0, 0, 2, 0, 0, 1, 0], all negative: the zeros rejected, 1 and 5
    # failed: only -2; batch 2 (need 1: m = 5): x = [3, 1, 2, 0, 1], y = [1, 0, 1, 0, 0], positive: +1 first
    assert z.tolist() == [-2, 1]
    assert sizes == [7, 5]


def test_uniform_below_big_bounds_are_the_masked_words_of_a_twin_stream():
    """Bounds from 2^63 take the Python-integer path: ``ceil(bits / 64)`` words, big-endian, masked to the bound's
    bit length, rejected until below the bound; checked against a twin stream read by hand."""
    from transforms.core.foundation.random_stream import RandomStream

    for bound in (2**63, 2**64 + 1, 3 * 2**70 + 5, 2**128 - 1):
        a, b = RandomStream(b"big" + bytes(str(bound), "ascii")), RandomStream(b"big" + bytes(str(bound), "ascii"))
        got = a.uniform_below(np.array([bound, bound, bound], dtype=object))
        bits = bound.bit_length()
        want = []
        for _ in range(3):
            while True:
                v = 0
                for w in b.words((bits + 63) // 64):
                    v = (v << 64) | int(w)
                v &= (1 << bits) - 1
                if v < bound:
                    want.append(v)
                    break
        assert got.tolist() == want
        assert all(type(x) is int and 0 <= x < bound for x in got)
        assert a.words(1) == b.words(1)  # the same number of words consumed
    mixed = RandomStream(b"mixed").uniform_below([5, 2**65])  # a list with one big bound: the big path
    assert mixed.dtype == object and 0 <= mixed[0] < 5 and 0 <= mixed[1] < 2**65
    small = RandomStream(b"mixed").uniform_below([5, 2**63 - 1])  # below 2^63: the uint64 path
    assert small.dtype == np.int64
    with pytest.raises(ValueError, match="positive"):
        RandomStream(b"x").uniform_below(np.array([2**64, 0], dtype=object))


def test_big_path_only_from_2_63_and_bernoulli_is_exact():
    from transforms.core.foundation.random_stream import RandomStream

    r = RandomStream(b"path")
    assert r.uniform_below([]).dtype == np.int64 and len(r.uniform_below([])) == 0
    assert r.uniform_below([2**63 - 1, 3]).dtype == np.int64
    assert r.uniform_below([3, 2**63]).dtype == object
    assert r.uniform_below(np.array([3, 2**63 - 1], dtype=object)).dtype == np.int64
    one = r.uniform_below([2**64])  # a single big bound (a size-1 input) takes the big path too
    assert one.dtype == object and 0 <= one[0] < 2**64
    s = RandomStream(b"bern")
    assert not s.bernoulli(np.zeros(50, np.int64), np.full(50, 7)).any()
    assert s.bernoulli(np.full(50, 7), np.full(50, 7)).all()
    a, b = RandomStream(b"b2"), RandomStream(b"b2")
    num, den = np.arange(20) % 5, np.full(20, 5)
    got = a.bernoulli(num, den)
    assert got.dtype == bool and got.tolist() == (b.uniform_below(den) < num).tolist()
