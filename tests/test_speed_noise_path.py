"""The node release's shortcuts of issue 30 (round 7) change no draw: the coordinates' encoding (kept string
encodings, a table of short lengths), the keyed hash copied per stream, the stream's refill without a
concatenation, and the kept calibration of a budget are the former computations, byte for byte."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest

from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP
from transforms.core.foundation.noise import NoiseSource, RandomStream, encode_coordinates
from transforms.core.foundation.samplers import as_ratio_up
from transforms.core.static.linear import CountMechanism, HistogramMechanism, LinearQueryMechanism


def _reference_encoding(coords) -> bytes:
    """The encoding as it was written before the shortcuts (docs/noise.md)."""
    parts = []
    for c in coords:
        if isinstance(c, str):
            payload = c.encode("utf-8")
            parts.append(b"s" + len(payload).to_bytes(4, "big") + payload)
        elif isinstance(c, (bytes, bytearray)):
            parts.append(b"b" + len(c).to_bytes(4, "big") + bytes(c))
        else:
            payload = str(int(c)).encode("ascii")
            parts.append(b"i" + len(payload).to_bytes(4, "big") + payload)
    return b"".join(parts)


COORDS = [
    (),
    ("eu", "auto", "net_change", "count", "kary_tree", "node", 0, 525_600),
    ("eu", "node", -3, 10**70, -(10**70), 2**63, "", "é☃", b"\x00raw", bytearray(b"ab")),
    ("a", 1),
    ("a1",),
    (np.int64(7), np.int32(-2), "x" * 300, 10**63 - 1, 10**63),
]


@pytest.mark.parametrize("coords", COORDS)
def test_encoding_is_the_former_one(coords):
    for _ in range(2):  # the second time from the kept string encodings
        assert encode_coordinates(coords) == _reference_encoding(coords)


def test_encoding_refuses_bools_and_other_types():
    with pytest.raises(TypeError):
        encode_coordinates(("a", True))
    with pytest.raises(TypeError):
        encode_coordinates((1.5,))


def test_stream_seed_is_the_keyed_blake2b_of_the_coordinates():
    key = bytes(range(32))
    for source in (NoiseSource(key), NoiseSource(b"other key of 16+ bytes")):
        for coords in COORDS[1:4]:
            seed = hashlib.blake2b(
                _reference_encoding(coords), key=source._key, digest_size=32, person=b"dpdyn-noise-v1"
            ).digest()
            for _ in range(2):  # the copied hash is not consumed by a stream
                assert source.stream(*coords).words(20).tolist() == RandomStream(seed).words(20).tolist()


def _reference_words(seed: bytes, requests) -> list[int]:
    """The words of ``requests`` (successive ``words(n)`` calls), refilled as before: SHAKE-256 blocks of
    max(8 << 3c, n) words (at most 4,096 unless more are asked), appended to what was left."""
    buf, counter, out = [], 0, []
    for n in requests:
        if len(buf) < n:
            grow = min(8 << (3 * counter), 4096)
            block = hashlib.shake_256(seed + struct.pack(">Q", counter)).digest(8 * max(grow, n))
            counter += 1
            buf += [int.from_bytes(block[i : i + 8], "little") for i in range(0, len(block), 8)]
        out += buf[:n]
        buf = buf[n:]
    return out


@pytest.mark.parametrize("requests", [[1], [8, 1], [3, 5, 2, 60, 1], [3, 7, 100, 600, 5000, 9], [0, 8, 0, 8, 64]])
def test_stream_words_across_refills(requests):
    seed = b"s" * 32
    stream = RandomStream(seed)
    got = []
    for n in requests:
        got += stream.words(n).tolist()
    assert got == _reference_words(seed, requests)


def _reference_param(mech, budget) -> float:
    if mech.noise_kind == "laplace":
        return float(as_ratio_up(mech.l1 / budget.epsilon))
    return float(as_ratio_up(mech.l2**2 / (2 * budget.gaussian_rho())))


def test_kept_calibration_is_the_formula():
    mechs = [
        CountMechanism(1),
        HistogramMechanism(16),
        LinearQueryMechanism(np.array([[0.3, 1.0, 0.25], [1.0, 0.5, 0.0]])),
        HistogramMechanism(4, noise="gaussian"),
        LinearQueryMechanism(np.array([[0.3, 1.0], [1.0, 0.5]]), noise="gaussian"),
    ]
    budgets = [PureDP(0.5), PureDP(1 / 3), PureDP(0.125), ApproxDP(0.7, 0.0), ZCDP(0.05), ApproxDP(1.0, 1e-6)]
    for _ in range(2):
        for mech in mechs:
            for budget in budgets:
                if mech.noise_kind not in budget.noise_families:
                    with pytest.raises(ValueError, match="uses"):  # refused every time, never kept
                        mech.noise_profile(budget)
                    continue
                try:
                    expected = _reference_param(mech, budget)
                except ValueError as err:  # e.g. a Gaussian under (eps, 0): refused every time too
                    with pytest.raises(ValueError, match=str(err)[:20]):
                        mech.noise_profile(budget)
                    continue
                ((kind, param, unit),) = mech.noise_profile(budget).terms
                assert (kind, param, unit) == (mech.noise_kind, expected, mech.unit)
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        CountMechanism(1).noise_profile(PureDP(0.0))
