"""Lines of a bounded text source read in chunks: :class:`ReadLineChunks`, the read of a JSON-lines or CSV file
source for the release (``FileSource.read_chunks``) and the second read of that source for the dead letters
(``pipelines.wiring``).

The source is split into bundles read in parallel, as Beam's ``Read`` splits it (the same
``Read.get_desired_chunk_size`` of the source's estimated size), and each bundle's lines leave in lists of at
most ``chunk`` lines, read by the source's own reader (``BoundedSource.read``: its splitting, decompression,
header skipping and line separators: the same lines as ``ReadFromText`` of the same source gives). A step
after it loops over a list instead of taking an element per line: an element costs Beam's per-element work
(~1.5-2 us on the FnApiRunner) at every step it crosses, which at 10^6 lines is seconds (docs/performance.md,
"Stop 64").
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io import iobase
from apache_beam.metrics import Metrics

__all__ = ["ReadLineChunks", "text_source", "CHUNK"]

CHUNK = 4096  # lines per element


def text_source(path: str, skip_header_lines: int = 0) -> iobase.BoundedSource:
    """The ``BoundedSource`` that ``beam.io.ReadFromText(path, skip_header_lines=..., coder=BytesCoder())`` reads
    (lines as bytes: a line that is not UTF-8 is a dead letter, not a failed read), built by that transform (its
    glob check and defaults). Beam is pinned (setup.py); ``tests/test_line_chunks.py`` checks that it is a
    ``BoundedSource`` whose lines are ``ReadFromText``'s."""
    read = beam.io.ReadFromText(path, skip_header_lines=skip_header_lines, coder=beam.coders.BytesCoder())
    source = read._source  # ReadFromText.expand applies Read(self._source): Beam 2.62 (pinned)
    if not isinstance(source, iobase.BoundedSource):
        raise TypeError(f"ReadFromText holds no BoundedSource here ({type(source).__name__}): check the Beam version")
    return source


class ReadLineChunks(beam.PTransform):
    """A bounded source's lines (``source``: a ``BoundedSource`` of lines), in lists of at most ``chunk`` (None:
    ``CHUNK``).

    ``bundle_bytes``: the size of the bundles the source is split into (None: Beam ``Read``'s own choice for the
    source's estimated size, ``Read.get_desired_chunk_size``). ``needed`` (a singleton side input, a count): with
    0 the source is not split, so not read (the second read when no dead letter wants a line). ``counter``: the
    ``(namespace, name)`` of a Beam counter of the lines read (None: not counted). The lines are in the global
    window at the minimum timestamp, as ``Read`` gives them; their order across bundles is the runner's, as
    ``Read``'s is."""

    def __init__(self, source, chunk: int | None = None, bundle_bytes: int | None = None, needed=None, counter=None):
        super().__init__()
        self.source = source
        self.chunk = chunk
        self.bundle_bytes = bundle_bytes
        self.needed = needed
        self.counter = counter

    def expand(self, pbegin):
        extra = () if self.needed is None else (self.needed,)
        return (
            pbegin
            | "Source" >> beam.Create([self.source], reshuffle=False)
            | "Split" >> beam.FlatMap(_split, self.bundle_bytes, *extra)
            | "Spread" >> beam.Reshuffle()
            | "Lines" >> beam.FlatMap(_read_chunks, self.chunk or CHUNK, self.counter)
        )


def _split(source, bundle_bytes: int | None, needed: int | None = None) -> list:
    """A source's bundles as ``(source, start, stop)``; none (no read) when ``needed`` is 0."""
    if needed is not None and not needed:
        return []
    if bundle_bytes is None:
        bundle_bytes = iobase.Read.get_desired_chunk_size(source.estimate_size())
    return [(b.source, b.start_position, b.stop_position) for b in source.split(bundle_bytes)]


def _read_chunks(bundle, chunk: int, counter: tuple[str, str] | None = None):
    """A source bundle's lines, in lists of at most ``chunk``; counted by the counter ``counter`` names (if any)."""
    source, start, stop = bundle
    out = []
    n = 0
    for line in source.read(source.get_range_tracker(start, stop)):
        out.append(line)
        if len(out) >= chunk:
            n += len(out)
            yield out
            out = []
    if out:
        n += len(out)
        yield out
    if counter is not None:
        Metrics.counter(*counter).inc(n)
