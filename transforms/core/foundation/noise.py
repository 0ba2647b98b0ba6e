"""Secure, replayable noise: a keyed XOF random stream and exact integer samplers.

Design (see ``docs/noise.md`` for the proofs and the security argument):

* **Randomness.** A :class:`NoiseSource` holds a secret key (32 random bytes by
  default, drawn from ``os.urandom``). The randomness of one release is a
  deterministic function of the key and the *coordinates of the release*
  (stream, mechanism, node, round, index, ...): the coordinates are encoded
  injectively, BLAKE2b keyed with the secret key turns them into a 256-bit seed,
  and SHAKE-256 in counter mode expands the seed into as many 64-bit words as the
  sampler asks for. Recomputing a release after a retry therefore gives
  byte-identical noise; releases at different coordinates get independent
  (pseudo-random) noise. Without the key, the stream is indistinguishable from
  uniform under the standard PRF assumption on keyed BLAKE2b.
* **Samplers.** Discrete Laplace and discrete Gaussian are sampled *exactly*
  with the rejection samplers of Canonne, Kamath and Steinke ("The Discrete
  Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1-3), using only
  integer arithmetic on uniform integers drawn by rejection from the stream.
  No floating-point number is ever involved in drawing noise, so there is no
  floating-point deviation to charge to delta. The samplers are vectorised:
  a whole histogram runs the rejection loops in lock step over numpy arrays.
* **Parameters.** A float scale (or variance) is first rounded *up* to a
  rational with a power-of-two denominator. More noise than asked for never
  weakens the guarantee; the effective parameter is reported so that error
  bounds use the noise actually added.
* **Real-valued queries** never get floating-point noise: callers quantise the
  query to a lattice ``g * Z`` (``g`` a power of two) and add integer noise in
  lattice units (see :func:`lattice_granularity` and ``docs/noise.md``), the
  snapping idea of Mironov (CCS 2012) in the integer form used by Google's
  differential-privacy library.

The code: this module (keys, release identities, :class:`NoiseSource`),
:mod:`.random_stream` (coordinates, the word stream) and :mod:`.samplers` (the
exact samplers); every public name is importable from here.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import re
from dataclasses import dataclass

from transforms.core.foundation.random_stream import Coordinate, RandomStream, encode_coordinates
from transforms.core.foundation.samplers import (
    as_ratio_up,
    bernoulli_exp,
    bernoulli_exp_float,
    discrete_gaussian,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
    discrete_laplace,
    discrete_laplace_pmf,
    discrete_laplace_rows,
    discrete_laplace_variance,
    lattice_granularity,
)

__all__ = [
    "NoiseSource",
    "ReleaseIdentity",
    "config_digest",
    "RandomStream",
    "encode_coordinates",
    "as_ratio_up",
    "discrete_laplace",
    "discrete_gaussian",
    "discrete_laplace_rows",
    "bernoulli_exp",
    "bernoulli_exp_float",
    "lattice_granularity",
    "discrete_laplace_pmf",
    "discrete_gaussian_pmf",
    "discrete_laplace_variance",
    "discrete_gaussian_variance",
]

_PERSON = b"dpdyn-noise-v1"  # domain separation for the seed derivation
_RELEASE_PERSON = b"dpdyn-release-v1"  # domain separation for a release's sub-key


@dataclass(frozen=True)
class ReleaseIdentity:
    """The identity of one release: every noise draw is keyed by it.

    One secret key serves many releases (jobs, re-runs, configurations); two
    releases must never draw the same noise, or their difference cancels it
    (two jobs answering "all bookings" and "premium bookings" would publish
    the exact difference). Retries *within* a release must draw the same noise,
    so that a retried bundle re-emits identical values. The identity is
    therefore fixed when the release is launched, never derived from data:

    Attributes:
      release_id: generated at launch (:meth:`new`, 128 bits from the OS
        CSPRNG) and fixed in the pipeline graph, or given explicitly to
        reproduce or continue a release (a Dataflow ``--update``, a Flink
        restore). Reusing an id on other data or another configuration is
        refused by the pipelines' release manifest.
      config_digest: a digest of everything that defines the release (the
        mechanism, its configuration, the streams and time layout, the query
        encodings), so that a reused id with another configuration still gets
        fresh noise.
    """

    release_id: str
    config_digest: str = ""

    def __post_init__(self):
        if not isinstance(self.release_id, str) or not self.release_id:
            raise ValueError("release_id must be a non-empty string")
        if not isinstance(self.config_digest, str):
            raise ValueError("config_digest must be a string")

    @classmethod
    def new(cls, config_digest: str = "") -> ReleaseIdentity:
        """A fresh release: a random 128-bit id (never reused by chance)."""
        return cls(os.urandom(16).hex(), config_digest)

    def with_digest(self, *parts: str) -> ReleaseIdentity:
        """The same release id with ``parts`` mixed into the configuration digest."""
        h = hashlib.sha256(encode_coordinates((self.config_digest,) + tuple(str(p) for p in parts)))
        return ReleaseIdentity(self.release_id, h.hexdigest()[:32])


def config_digest(*parts) -> str:
    """A stable digest of configuration values (their ``repr``; frozen dataclasses,
    tuples, numbers and strings have deterministic reprs). A repr that shows a memory address (an object
    without its own ``__repr__``) is refused: it would key the noise differently in every process, so a
    replay of a release (the same key and release id) would draw fresh noise."""
    reprs = tuple(repr(p) for p in parts)
    for r in reprs:
        if _ADDRESS.search(r):
            raise ValueError(f"config_digest: a part's repr shows a memory address (give it a __repr__): {r[:120]}")
    return hashlib.sha256(encode_coordinates(reprs)).hexdigest()[:32]


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


class NoiseSource:
    """Keyed source of replayable noise.

    Args:
      key: the secret key (>= 16 bytes). Production code draws one with
        :meth:`generate` or loads one with :meth:`from_file` / :meth:`from_hex`;
        tests pass a fixed key. The key is never printed: ``repr`` shows only a
        fingerprint.

    A source built with ``disabled=True`` (:meth:`disabled`) yields streams whose
    samplers return exact zeros: the *noise switched off* mode used by tests and
    by the pipelines' ``privacy.disable_noise`` switch. It gives no privacy.
    """

    def __init__(self, key: bytes, *, disabled: bool = False):
        if not isinstance(key, (bytes, bytearray)) or len(key) < 16:
            raise ValueError("the noise key must be at least 16 bytes; use NoiseSource.generate()")
        self._key = bytes(key[:64])
        self.is_disabled = disabled
        self.release: ReleaseIdentity | None = None
        self.draws_ahead = False  # drawing_ahead(): a bounded run's counters may draw their nodes' noise ahead

    def for_release(self, release: ReleaseIdentity) -> NoiseSource:
        """The noise source of one release: a sub-key derived from this key and
        the release identity (keyed BLAKE2b), so that releases sharing a key get
        independent noise and a retry within a release gets the same noise."""
        if not isinstance(release, ReleaseIdentity):
            raise TypeError("for_release needs a ReleaseIdentity")
        sub = hashlib.blake2b(
            encode_coordinates(("release", release.release_id, release.config_digest)),
            key=self._key,
            digest_size=32,
            person=_RELEASE_PERSON,
        ).digest()
        out = NoiseSource(sub, disabled=self.is_disabled)
        out.release = release
        out.draws_ahead = self.draws_ahead
        return out

    def drawing_ahead(self) -> NoiseSource:
        """This source (the same key, release and streams: equal to it) marked for a bounded run, whose counters
        may then draw the noise of their coming node releases ahead, in blocks (:meth:`seeds_at`; the same
        values). The release steps of a bounded run use it (``ReleaseStep.bounded``); a streaming job's do not,
        so that no noise of a release to come is held in memory between its firings. Sub-sources
        (:meth:`for_release`) keep the mark."""
        out = copy.copy(self)
        out.draws_ahead = True
        return out

    @classmethod
    def generate(cls) -> NoiseSource:
        """A source with a fresh 32-byte key from the OS CSPRNG."""
        return cls(os.urandom(32))

    @classmethod
    def from_hex(cls, text: str) -> NoiseSource:
        return cls(bytes.fromhex(text.strip()))

    @classmethod
    def from_file(cls, path: str) -> NoiseSource:
        """Load a key stored as hex text (e.g. a mounted secret)."""
        with open(path, encoding="ascii") as fh:
            return cls.from_hex(fh.read())

    @classmethod
    def disabled(cls) -> NoiseSource:
        """Noise switched off (exact answers, no privacy). For tests only."""
        return cls(b"\x00" * 32, disabled=True)

    @property
    def fingerprint(self) -> str:
        """A short non-secret identifier of the key (for logs and outputs)."""
        return hashlib.blake2b(self._key, digest_size=6, person=b"dpdyn-keyfp").hexdigest()

    def __repr__(self) -> str:
        state = "disabled" if self.is_disabled else f"key fingerprint {self.fingerprint}"
        if self.release is not None:
            state += f", release {self.release.release_id}"
        return f"NoiseSource({state})"

    def __eq__(self, other) -> bool:
        return isinstance(other, NoiseSource) and self._key == other._key and self.is_disabled == other.is_disabled

    def __hash__(self) -> int:
        return hash((self.fingerprint, self.is_disabled))

    def stream(self, *coords: Coordinate) -> RandomStream:
        """The random stream of the release at ``coords``."""
        h = _keyed_seed_hash(self._key).copy()
        h.update(encode_coordinates(coords))
        return RandomStream(h.digest(), disabled=self.is_disabled)

    def stream_at(self, head: tuple, last: Coordinate) -> RandomStream:
        """``self.stream(*head, last)``: the same stream, for callers that draw many releases under one ``head``
        (a counter's node releases: ``(stream, mechanism, query, "node", level)``, then the node's index).

        The coordinates' encoding is the concatenation of each coordinate's (:func:`encode_coordinates`), and a
        hash fed in pieces digests their concatenation, so the keyed BLAKE2b state after ``head``'s encoding is
        kept (per head, for this source's key) and copied for each release: the seed is the same 32 bytes,
        without encoding ``head`` again. A subclass that overrides :meth:`stream` (a test's spy, the privacy
        harness's recorder) is asked through it, as before."""
        if type(self).stream is not NoiseSource.stream:
            return self.stream(*head, last)
        state = self._head_state(head)
        if state is None:  # an unhashable coordinate (a bytearray): no state kept, encoded as stream() does
            return self.stream(*head, last)
        h = state.copy()
        h.update(encode_coordinates((last,)))
        return RandomStream(h.digest(), disabled=self.is_disabled)

    def seeds_at(self, head: tuple, first: int, count: int) -> list[bytes] | None:
        """The seeds of the streams ``self.stream(*head, i)`` for i = first .. first + count - 1 (the seed of a
        :class:`RandomStream` these streams start from), for a caller that draws them all at once
        (:func:`discrete_laplace_rows`: a counter's node releases ahead). None where the streams must be asked
        one by one: a source not marked by :meth:`drawing_ahead`, a subclass that overrides :meth:`stream` (a
        test's spy, the privacy harness's recorder), noise switched off, or an unhashable head. The seeds depend
        on the key and the coordinates only."""
        if type(self).stream is not NoiseSource.stream or self.is_disabled or not self.draws_ahead:
            return None
        state = self._head_state(head)
        if state is None:
            return None
        seeds = []
        for i in range(first, first + count):
            h = state.copy()
            h.update(encode_coordinates((i,)))
            seeds.append(h.digest())
        return seeds

    def _head_state(self, head: tuple):
        """The keyed BLAKE2b state after ``head``'s encoding (kept per head, for this source's key), or None for
        an unhashable head."""
        memo = self.__dict__.get("_heads")
        if memo is None or memo[0] is not self._key:
            memo = self._heads = (self._key, {})
        states = memo[1]
        try:
            state = states.get(head)
        except TypeError:
            return None
        if state is None:
            if len(states) >= _HEADS_MAX:  # many streams (open keys): keep the memory bounded
                states.clear()
            state = _keyed_seed_hash(self._key).copy()
            state.update(encode_coordinates(head))
            states[head] = state  # complete before another thread can see it; kept states are only copied
        return state

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_heads", None)  # hash states (not picklable), rebuilt on use
        return state


_HEADS_MAX = 1024  # the hash states kept per source by stream_at (a few per counter: one per tree level)


@functools.lru_cache(maxsize=64)
def _keyed_seed_hash(key: bytes):
    """The keyed BLAKE2b of :meth:`NoiseSource.stream` before any data: each stream copies it and hashes its
    coordinates, the same digest as keying a new hash (keying is one compression of the key block), at a
    fraction of the cost per node release. Held per key (a release's sub-key) in memory, as the source is."""
    return hashlib.blake2b(key=key, digest_size=32, person=_PERSON)
