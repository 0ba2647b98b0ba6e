"""A mechanism's state written as a small head and content-addressed chunks: what keeps a streaming step's
state traffic per firing near constant while the state itself grows.

Why: a counter without a horizon that keeps its history (``anytime_sqrt``, exact square-root noise for
ever) holds O(t) numbers, and the per-stream step (``transforms.per_stream``) stores its core's whole
state at every firing. Written as one value, that is 9 MB a firing after 2 x 10^4 one-minute ticks of a
count and a 16-cell histogram, about 200 MB after a year: every firing reads and writes it all, and a
year's job writes some 50 TB of state. The history only grows at its end, so almost all of it is the
same bytes from one firing to the next.

How: :meth:`ChunkStore.write` takes the plain data of a state (``transforms.core.foundation.state``) and
cuts every numpy array of at least ``chunk_bytes`` bytes (its ``{"$nd": (dtype, shape, bytes)}`` form)
into chunks of ``chunk_bytes`` bytes, each named by its BLAKE2b-128 digest; the array's bytes become the
list of its chunks' digests (a list where the plain form has bytes: nothing else in plain data looks like
that, since a data dict with a ``"$nd"`` key is stored escaped). The *head*, ``{"$chunked": 1, "state":
<plain data with digests>, "bag": (bytes, count, generation)}``, goes to the step's value cell; the chunks
the bag does not hold yet go to a bag cell (each ``digest + bytes``). A firing that appends a row to a
growing array changes the array's last chunk only: it writes the head (about 20 bytes a chunk of state)
and one chunk an array that changed. Chunks no longer referenced stay in the bag until its bytes exceed
``2 x live + floor``; then the bag is written afresh with the live chunks only, so a firing writes O(chunk)
bytes amortised, and the bag holds at most about three times the state.

A state without such an array is written as before (``encode(plain)``, the same bytes), so small states,
the golden files and a previous version's cells keep their form; :meth:`ChunkStore.load` reads both.
Reading a head needs its chunks (the bag, read whole: a worker's first firing of a key); the step keeps
the core and this store in memory between firings (``PerStreamStepFn._live``) and reads nothing more
while its cell holds the head it wrote last.

Nothing here decides a release or touches noise: the plain data that comes out of :meth:`ChunkStore.load`
is the plain data that went into :meth:`ChunkStore.write`, byte for byte (``tests/test_state_chunks.py``).
Nothing here imports Apache Beam.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

import numpy as np

from transforms.core.foundation.state import StateError, arrays_made, decode, encode

__all__ = ["CHUNK_BYTES", "COMPACT_FLOOR", "DIGEST_BYTES", "ChunkStore", "Write"]

# 32 KiB: the head's digests (about 20 bytes a chunk) and the chunks a firing rewrites balance near 2^15
CHUNK_BYTES = 1 << 15
DIGEST_BYTES = 16
COMPACT_FLOOR = 1 << 22  # the bag is written afresh once it holds more than 2 x live + 4 MiB
_TAG = "$chunked"


class Write:
    """What one :meth:`ChunkStore.write` asks of the cells: ``clear`` the bag first (a compaction, or a state
    that no longer needs it), then ``add`` these bag entries, then write ``head`` to the value cell (bytes;
    plain data from :meth:`ChunkStore.write_plain`)."""

    __slots__ = ("head", "adds", "clear")

    def __init__(self, head: bytes, adds: list, clear: bool):
        self.head, self.adds, self.clear = head, adds, clear

    @property
    def bytes_written(self) -> int:
        return len(self.head) + sum(len(a) for a in self.adds)


def _digest(chunk) -> bytes:
    return hashlib.blake2b(chunk, digest_size=DIGEST_BYTES).digest()


class ChunkStore:
    """The writer's knowledge of one key's bag (which chunks it holds, its bytes, how many entries, how many
    times it was written afresh) and the chunks of the arrays it wrote last (to name unchanged chunks
    without hashing them again). One per key; :meth:`load` builds it from the cells."""

    def __init__(self, chunk_bytes: int = CHUNK_BYTES, floor: int = COMPACT_FLOOR):
        if chunk_bytes < 64 or chunk_bytes % 8:
            raise ValueError("chunk_bytes must be a multiple of 8, at least 64")
        self.chunk_bytes = int(chunk_bytes)
        self.floor = int(floor)
        self.held: set = set()  # digests in the bag
        self.bag_bytes = 0  # bytes of the bag's entries
        self.bag_count = 0  # entries in the bag
        self.generation = 0  # times the bag was written afresh
        self._last: list = []  # per array (walk order): (its bytes, their chunks' digests) as last written

    # -- writing ------------------------------------------------------------------------------------------
    def write(self, to_state: Callable[[], object]) -> Write:
        """The cells' writes for the state ``to_state()`` makes (module docstring), the head as bytes
        (``encode``). The large arrays are the ones ``to_plain`` makes inside the call
        (``state.arrays_made``): no walk over the plain data.

        Invariant (what lets a firing hash only the chunks that changed): after every write, each chunk the
        head names is in the bag; a chunk whose bytes equal the same array's chunk at the same place last
        time keeps that chunk's digest, so only the others can be missing from the bag."""
        head, adds, clear = self._write(to_state)
        return Write(encode(head), adds, clear)

    def write_plain(self, to_plain: Callable[[], object]) -> Write:
        """:meth:`write` with the head as plain data, for a cell that encodes it with its own coder (the open
        keys' cell tuple): a state without a large array is ``to_plain()`` itself."""
        return Write(*self._write(to_plain))

    def _write(self, to_state):
        with arrays_made(self.chunk_bytes) as forms:
            plain = to_state()
        last, self._last = self._last, []
        new: dict = {}  # digest -> chunk, for the chunks whose digests were computed now
        for i, form in enumerate(forms):
            dtype, shape, raw = form["$nd"]
            form["$nd"] = (dtype, shape, self._chunks(raw, last[i] if i < len(last) else (b"", []), new))
        if not forms:  # nothing to chunk: the plain data, as before; the bag has nothing to keep
            clear = bool(self.bag_count)
            if clear:
                self._reset()
            return plain, [], clear
        fresh = [d for d in new if d not in self.held]
        live = sum(len(raw) + DIGEST_BYTES * len(ds) for raw, ds in self._last)  # the arrays' bytes, named
        grown = self.bag_bytes + sum(len(new[d]) + DIGEST_BYTES for d in fresh)
        clear = grown > 2 * live + self.floor
        if clear:  # written afresh: the chunks the head names, each once
            self._reset()
            self.generation += 1
            every: dict = {}
            c = self.chunk_bytes
            for raw, ds in self._last:
                for j, d in enumerate(ds):
                    if d not in every:
                        every[d] = raw[j * c : (j + 1) * c]
            new, fresh = every, list(every)
        adds = [d + new[d] for d in fresh]
        self.held.update(fresh)
        self.bag_bytes += sum(len(a) for a in adds)
        self.bag_count += len(adds)
        return {_TAG: 1, "state": plain, "bag": (self.bag_bytes, self.bag_count, self.generation)}, adds, clear

    def _reset(self) -> None:
        self.held = set()
        self.bag_bytes = self.bag_count = 0

    def _chunks(self, raw: bytes, before: tuple, new: dict) -> list:
        """The digests of ``raw``'s chunks; ``before``: the same array's (bytes, digests) as last written,
        whose whole chunks that hold the same bytes keep their digests (compared 8 bytes at a time, in
        numpy); the others are hashed and put in ``new``."""
        c = self.chunk_bytes
        old, old_digests = before
        m = min(len(old), len(raw)) // c  # whole chunks in both
        if m:
            a = np.frombuffer(raw, np.uint64, m * c // 8).reshape(m, c // 8)
            b = np.frombuffer(old, np.uint64, m * c // 8).reshape(m, c // 8)
            same = (a == b).all(axis=1)
            if same.all():
                digests = old_digests[:m]
            else:
                digests = [old_digests[j] if same[j] else self._hash(raw, j, new) for j in range(m)]
        else:
            digests = []
        digests += [self._hash(raw, j, new) for j in range(m, -(-len(raw) // c))]
        self._last.append((raw, digests))
        return digests

    def _hash(self, raw: bytes, j: int, new: dict) -> bytes:
        chunk = raw[j * self.chunk_bytes : (j + 1) * self.chunk_bytes]
        d = _digest(chunk)
        new.setdefault(d, chunk)
        return d

    # -- reading ------------------------------------------------------------------------------------------
    @classmethod
    def load(
        cls, head: bytes, bag: Callable[[], Iterable[bytes]], chunk_bytes: int = CHUNK_BYTES, floor: int = COMPACT_FLOOR
    ):
        """``(plain, store)`` from a value cell's bytes and a function reading its bag (called only for a
        head that names chunks). A cell written before chunking (plain data) reads as it was."""
        return cls.load_plain(decode(head), bag, chunk_bytes, floor)

    @classmethod
    def load_plain(
        cls, data, bag: Callable[[], Iterable[bytes]], chunk_bytes: int = CHUNK_BYTES, floor: int = COMPACT_FLOOR
    ):
        """:meth:`load` of a head kept as plain data (:meth:`write_plain`)."""
        store = cls(chunk_bytes, floor)
        if not (isinstance(data, dict) and _TAG in data):
            return data, store
        if data.get(_TAG) != 1:
            raise StateError(f"chunked state version {data.get(_TAG)!r} is newer than this library")
        chunks: dict = {}
        count = size = 0
        for entry in bag():
            chunks[bytes(entry[:DIGEST_BYTES])] = bytes(entry[DIGEST_BYTES:])
            count += 1
            size += len(entry)
        if (size, count) != tuple(data["bag"][:2]):
            raise StateError(f"the chunk bag holds {count} entries / {size} bytes, its head says {data['bag'][:2]}")
        store.held = set(chunks)
        store.bag_bytes, store.bag_count, store.generation = size, count, int(data["bag"][2])
        arrays: list = []
        plain = store._join(data["state"], chunks, arrays)
        store._last = arrays
        return plain, store

    def _join(self, node, chunks: dict, arrays: list):
        if isinstance(node, dict):
            if len(node) == 1 and "$nd" in node:
                form = node["$nd"]
                if type(form) is not tuple or len(form) != 3 or type(form[2]) is not list:
                    return node
                dtype, shape, raw = form
                try:
                    whole = b"".join(chunks[d] for d in raw)
                except KeyError:
                    raise StateError("a chunk the state names is missing from its bag") from None
                arrays.append((whole, list(raw)))
                return {"$nd": (dtype, shape, whole)}
            return {k: self._join(v, chunks, arrays) for k, v in node.items()}
        if isinstance(node, list):
            return [self._join(v, chunks, arrays) for v in node]
        if isinstance(node, tuple):
            return tuple(self._join(v, chunks, arrays) for v in node)
        return node
