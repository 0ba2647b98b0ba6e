"""Tests written for the crash-killed mutants of group a that the differential trace showed returning a wrong value
(issue 27, 2026-11-27, fourth session, helper h45ta: ``transforms/core/foundation/`` and ``limits.py``;
``benchmarks/mutation_trace.py``, judgements in ``benchmarks/mutation_trace_45a.py``).

Each mutant named here was killed in round 44 by a crash of its first failing test, while on some input it returns
a wrong value without raising; each test asserts the property the wrong value breaks (a stated moment, ...), never a
pinned golden value, so that the mutant now fails by an assertion (checked with ``python -m benchmarks.mutation_fast
confirm NAME TEST``: passes unmutated, fails on the mutant by an ``AssertionError``). Fast: in memory, no Beam."""

from __future__ import annotations

import hashlib
import math
import struct

import numpy as np
import pytest

from transforms.core import limits
from transforms.core.foundation import samplers
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.random_stream import RandomStream


@pytest.mark.parametrize("sigma2", [0.04, 1.0, 9.0, 400.0])
def test_discrete_gaussian_variance_is_at_most_sigma2_and_close_to_it(sigma2):
    """Kills ``samplers._dgauss_normaliser__mutmut_16`` (the support ``arange(+lim, lim + 1)``: one point, ``lim``,
    for ``-lim..lim``): ``discrete_gaussian_variance`` then returns ``lim^2`` (about 1,600 sigma2) without raising;
    only the pmf raised (an index past its one-point table). The reference variance of N_Z(0, sigma2) is at most
    sigma2 (CKS 2020, Prop. 19), equal to it within 1e-9 relative for sigma2 >= 9 (the gap is of the order of
    sigma2 exp(-2 pi^2 sigma2)), and it is the second moment of the pmf the same table gives at each integer."""
    var = samplers.discrete_gaussian_variance(sigma2)
    assert 0 < var <= sigma2 * (1 + 1e-12), (sigma2, var)
    if sigma2 >= 9:
        assert var == pytest.approx(sigma2, rel=1e-9)
    lim = int(math.ceil(math.sqrt(sigma2) * 40)) + 10
    z = np.arange(-lim, lim + 1)
    assert var == pytest.approx(float(np.sum(samplers.discrete_gaussian_pmf(z, sigma2) * z.astype(float) ** 2)))


@pytest.mark.parametrize("size", [0, 1, 7])
def test_noise_off_draws_int64_zeros_of_the_asked_size(size):
    """Kills ``samplers.discrete_laplace__mutmut_2`` (noise off: ``np.zeros(None)``, one 0-d zero for any size). The
    0-d zero broadcasts where it is added to an answer, so ``not x.any()`` (``test_noise.py``) holds; it changes the
    shape of anything the noise vector is multiplied by (a factorization's decoder times its noise) and fails only
    where a length is read. Noise switched off is the exactness check of every release: each sampler returns exactly
    ``size`` int64 zeros, as it returns ``size`` values with the noise on."""
    stream = NoiseSource.disabled().stream("off")
    for draw in (samplers.discrete_laplace(stream, 3.0, size), samplers.discrete_gaussian(stream, 3.0, size)):
        assert isinstance(draw, np.ndarray) and draw.dtype == np.int64
        assert draw.shape == (size,)
        assert not draw.any()
    on = NoiseSource(bytes(range(32))).stream("on")
    assert samplers.discrete_laplace(on, 3.0, size).shape == samplers.discrete_gaussian(on, 3.0, size).shape == (size,)


def _blocks(seed: bytes, sizes) -> np.ndarray:
    """docs/noise.md: block_i = SHAKE-256(seed || i as 8 bytes), little-endian uint64 words, concatenated."""
    return np.concatenate(
        [
            np.frombuffer(hashlib.shake_256(seed + struct.pack(">Q", i)).digest(8 * n), dtype="<u8").astype(np.uint64)
            for i, n in enumerate(sizes)
        ]
    )


@pytest.mark.parametrize("draws", [[1] * 80, [3, 5, 4, 60, 1, 7], [2, 9, 70, 600]])
def test_a_streams_words_are_its_shake_blocks_in_order_whatever_the_draw_sizes(draws):
    """Kills ``random_stream.RandomStream._refill__mutmut_47`` (the position after a refill 1: the first word of
    each block never drawn, and a draw of a whole block one word short), ``words__mutmut_1`` (refill only when
    ``len + pos < n``: an exhausted buffer gives empty draws) and ``words__mutmut_5`` (the slice ``pos:pos - n``:
    empty draws). The stream format (docs/noise.md, part of every release: a release is replayed from its key and
    coordinates): the words drawn, in order and whatever the sizes of the draws, are block_0 || block_1 || ...,
    each draw exactly as many words as asked; block_i holds 8 << 3i words (at most 4096), or the draw that
    needed it if that is more, the words left in the previous block coming first."""
    seed = bytes(range(7, 39))
    stream = RandomStream(seed)
    got, sizes, have, i = [], [], 0, 0
    for n in draws:
        w = stream.words(n)
        assert w.dtype == np.uint64 and w.shape == (n,), (n, w.shape)
        got.append(w)
        if have < n:  # a refill: block i, as large as the draw needs
            size = max(min(8 << (3 * i), 4096), n)
            sizes.append(size)
            have += size
            i += 1
        have -= n
    drawn = np.concatenate(got)
    np.testing.assert_array_equal(drawn, _blocks(seed, sizes)[: len(drawn)])


def test_the_blt_counters_horizon_limit_is_its_tables_largest_design_horizon():
    """Kills ``limits.counter_limit__mutmut_12`` and ``__mutmut_13`` (``"XXbltXX"`` / ``"BLT"``: the blt counter
    gets None, which ``pipelines/config/mechanism.py`` reads as "no limit of its own", so a horizon or a bounded
    release past the BLT table is accepted at load and fails in the run instead). The limit the module states: the
    largest horizon whose design horizon (the horizon rounded up to a power of two) the table covers, exactly:
    one more step needs a design horizon the table does not have; and a release of blt counters is limited by it."""
    from transforms.core.counters.factorization.blt import BLT_TABLE, blt_params

    lim = limits.counter_limit("blt")
    assert lim is not None, "the blt counter has a table of design horizons, hence a largest horizon"
    top = max(BLT_TABLE)
    assert lim[0] == 2**top
    blt_params((lim[0] - 1).bit_length())  # the design horizon of the largest horizon: in the table
    with pytest.raises(ValueError):
        blt_params(lim[0].bit_length())  # of one step more: not
    assert limits.periods_limit(["blt"])[0] == lim[0] < limits.MAX_PERIODS
