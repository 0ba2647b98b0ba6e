"""The random words of a release: the injective encoding of release
coordinates and the SHAKE-256 stream expanded from a release's seed
(``docs/noise.md``). Nothing here imports Apache Beam."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from typing import Union

import numpy as np

__all__ = ["Coordinate", "encode_coordinates", "RandomStream", "first_words"]

Coordinate = Union[int, str, bytes]
_U64_MAX_SAFE = 1 << 63  # uint64 fast path for moduli below this bound


def encode_coordinates(coords: Iterable[Coordinate]) -> bytes:
    """Injective, canonical encoding of release coordinates.

    Each element is tagged with its type and length-prefixed, so that no two
    different coordinate tuples share an encoding (``("a", 1)`` vs ``("a1",)``).

    Raises:
      TypeError: for an element that is not an int, str or bytes.
    """
    parts = []
    for c in coords:
        t = type(c)
        if t is str:
            enc = _STR_ENCODED.get(c)
            if enc is None:
                enc = _encode_str(c)
                if len(_STR_ENCODED) < _STR_ENCODED_MAX:
                    _STR_ENCODED[c] = enc
            parts.append(enc)
        elif t is int:
            payload = b"%d" % c
            n = len(payload)
            parts.append(b"i" + (_LEN4[n] if n < 64 else n.to_bytes(4, "big")) + payload)
        elif isinstance(c, bool):
            raise TypeError("release coordinates must be int, str or bytes, not bool")
        elif isinstance(c, (int, np.integer)):
            payload = str(int(c)).encode("ascii")
            parts.append(b"i" + len(payload).to_bytes(4, "big") + payload)
        elif isinstance(c, str):
            parts.append(_encode_str(c))
        elif isinstance(c, (bytes, bytearray)):
            parts.append(b"b" + len(c).to_bytes(4, "big") + bytes(c))
        else:
            raise TypeError(f"release coordinates must be int, str or bytes, got {type(c).__name__}")
    return b"".join(parts)


def _encode_str(c: str) -> bytes:
    payload = c.encode("utf-8")
    return b"s" + len(payload).to_bytes(4, "big") + payload


# A node release encodes its coordinates once (its keyed stream): the strings among them (stream names, the
# mechanism's and the tree's labels) are few and repeat, so their encodings are kept (at most
# _STR_ENCODED_MAX of them: later strings are encoded each time); the 4-byte length of a short int's digits
# comes from a table. The bytes are the same (``tests/test_speed_noise_path.py``).
_STR_ENCODED: dict[str, bytes] = {}
_STR_ENCODED_MAX = 4096
_LEN4 = tuple(i.to_bytes(4, "big") for i in range(64))


_NO_WORDS = np.empty(0, dtype=np.uint64)
_NO_WORDS.flags.writeable = False


class RandomStream:
    """The deterministic random words of one release.

    Words come from SHAKE-256(seed || counter) blocks; the stream never repeats
    a (seed, counter) pair. Draws are consumed in order, so one release must
    draw in a deterministic order (all samplers here do).
    """

    __slots__ = ("_seed", "_counter", "_buf", "_pos", "disabled")

    _FIRST_BLOCK_WORDS = 8  # most releases need a few words: start small, then grow
    _MAX_BLOCK_WORDS = 4096

    def __init__(self, seed: bytes, disabled: bool = False):
        self._seed = bytes(seed)
        self._counter = 0
        self._buf = _NO_WORDS  # one shared empty array (read-only): a node release's stream is refilled at once
        self._pos = 0
        self.disabled = disabled

    def _refill(self, n: int) -> None:
        grow = min(self._FIRST_BLOCK_WORDS << (3 * self._counter), self._MAX_BLOCK_WORDS)
        nwords = max(grow, n)
        block = hashlib.shake_256(self._seed + struct.pack(">Q", self._counter)).digest(8 * nwords)
        self._counter += 1
        # the block's little-endian words as uint64: on a little-endian machine the buffer's own (read-only)
        # view, no copy (callers only read words); elsewhere converted, as before
        fresh = np.frombuffer(block, dtype="<u8").astype(np.uint64, copy=False)
        # the same words in the same order; a node release's first refill has nothing left to keep
        self._buf = np.concatenate([self._buf[self._pos :], fresh]) if self._pos < len(self._buf) else fresh
        self._pos = 0

    def words(self, n: int) -> np.ndarray:
        """``n`` independent uniform 64-bit words (uint64 array)."""
        if len(self._buf) - self._pos < n:
            self._refill(n)
        out = self._buf[self._pos : self._pos + n]
        self._pos += n
        return out

    def uniform_below(self, n) -> np.ndarray:
        """Exact uniform integers in ``[0, n)`` for an array of positive bounds.

        Bounds below 2**63 use a vectorised uint64 rejection sampler (accept a
        word ``w`` iff ``w >= 2**64 mod n``: the accepted range has a length that
        is a multiple of ``n``, so ``w mod n`` is exactly uniform). Larger bounds
        use Python integers.
        """
        n_arr = np.asarray(n)
        if n_arr.dtype == object or n_arr.dtype.kind not in "iu":
            n_arr = np.asarray(n, dtype=object if _needs_big(n) else np.int64)
            if n_arr.dtype == object:
                return self._uniform_below_big(n_arr)
        n_arr = np.atleast_1d(n_arr)
        if np.any(n_arr <= 0):
            raise ValueError("uniform_below needs positive bounds")
        nu = n_arr.astype(np.uint64)
        thr = (~nu + np.uint64(1)) % nu  # 2**64 mod n
        out = np.empty(len(nu), dtype=np.int64)
        pending = np.arange(len(nu))
        while len(pending):
            w = self.words(len(pending))
            ok = w >= thr[pending]
            idx = pending[ok]
            out[idx] = (w[ok] % nu[idx]).astype(np.int64)
            pending = pending[~ok]
        return out

    def _uniform_below_big(self, n_arr: np.ndarray) -> np.ndarray:
        flat = np.atleast_1d(n_arr)
        out = np.empty(len(flat), dtype=object)
        for i, bound in enumerate(flat):
            bound = int(bound)
            if bound <= 0:
                raise ValueError("uniform_below needs positive bounds")
            bits = bound.bit_length()
            nw = (bits + 63) // 64
            mask = (1 << bits) - 1
            while True:
                ws = self.words(nw)
                v = 0
                for w in ws:
                    v = (v << 64) | int(w)
                v &= mask
                if v < bound:
                    out[i] = v
                    break
        return out

    def bernoulli(self, num, den) -> np.ndarray:
        """Exact Bernoulli(num/den) for arrays of integers ``0 <= num <= den``."""
        return np.asarray(self.uniform_below(den) < np.asarray(num), dtype=bool)


def first_words(seeds, n: int) -> np.ndarray:
    """The first ``n`` words of the stream of each seed, one row per seed: row i equals
    ``RandomStream(seeds[i]).words(n)``, word for word (the stream's first block is SHAKE-256 of the seed and
    counter 0, and an XOF's shorter output is a prefix of its longer one, so the block's length does not matter).
    For a caller that draws the same small number of words from many streams at once (a counter's node releases
    ahead, :func:`~transforms.core.foundation.samplers.discrete_laplace_rows`)."""
    zero = struct.pack(">Q", 0)
    shake = hashlib.shake_256
    raw = b"".join([shake(seed + zero).digest(8 * n) for seed in seeds])
    return np.frombuffer(raw, dtype="<u8").astype(np.uint64, copy=False).reshape(len(seeds), n)


def _needs_big(n) -> bool:
    arr = np.asarray(n, dtype=object)
    if arr.size == 0:
        return False
    return any(int(v) >= _U64_MAX_SAFE for v in arr.ravel())
