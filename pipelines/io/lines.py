"""The lines of text files read in chunks: :class:`ReadLineChunks`, the read of a JSON-lines or CSV file source for
the release (``FileSource.read_chunks``) and the second read of that source for the dead letters
(``pipelines.wiring``).

The files a pattern matches are split into byte ranges read in parallel (the size Beam's ``Read`` would choose,
``Read.get_desired_chunk_size`` of the total), and each range's lines leave in lists of at most ``chunk`` lines:
a step after it loops over a list instead of taking an element per line. An element costs Beam's per-element
work (~1.5-2 us on the FnApiRunner) at every step it crosses, and Beam's text reader ~2-3 us of Python per line:
at 10^6 lines, seconds (docs/performance.md, "Stop 64").

**The same lines as ``ReadFromText(pattern, skip_header_lines=..., coder=BytesCoder())``**, as a multiset (the
order across ranges is the runner's, as ``Read``'s is; ``tests/test_line_chunks.py`` compares them on random
bytes, at random range and chunk sizes, with and without header lines). An uncompressed file is read here
(:func:`_range_lines`): a line is the bytes up to a newline (LF), without it and without one CR just before it (a
lone CR stays in its line), the last bytes of a file after its last LF are a line when there are any, and
a line belongs to the range its first byte is in (a range that starts inside a line skips to the next one), as
Beam's ``_TextSource`` decides them; header lines (a CSV's) are the file's first lines that end with a LF, and no
range reads them. A compressed file (by its extension) is read by Beam's own text source (``text_source``), over
the bundles its ``split`` gives.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io import iobase
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

__all__ = ["ReadLineChunks", "text_source", "CHUNK"]

CHUNK = 4096  # lines per element
BLOCK = 1 << 20  # bytes read at once by the uncompressed reader


def text_source(path: str, skip_header_lines: int = 0) -> iobase.BoundedSource:
    """The ``BoundedSource`` that ``beam.io.ReadFromText(path, skip_header_lines=..., coder=BytesCoder())`` reads
    (lines as bytes: a line that is not UTF-8 is a dead letter, not a failed read), built by that transform (its
    glob check: a pattern that matches nothing fails here, at construction, as ``ReadFromText`` does). Beam is
    pinned (setup.py); ``tests/test_line_chunks.py`` compares its lines with ``ReadFromText``'s."""
    read = beam.io.ReadFromText(path, skip_header_lines=skip_header_lines, coder=beam.coders.BytesCoder())
    source = read._source  # ReadFromText.expand applies Read(self._source): Beam 2.62 (pinned)
    if not isinstance(source, iobase.BoundedSource):
        raise TypeError(f"ReadFromText holds no BoundedSource here ({type(source).__name__}): check the Beam version")
    return source


class ReadLineChunks(beam.PTransform):
    """The lines of the files ``pattern`` matches (bytes, as ``ReadFromText(pattern, skip_header_lines=...,
    coder=BytesCoder())`` gives them), in lists of at most ``chunk`` (None: ``CHUNK``).

    ``bundle_bytes``: the size of the byte ranges read in parallel (None: Beam ``Read``'s own choice for the
    files' total size). ``needed`` (a singleton side input, a count): with 0 nothing is read (the second read when
    no dead letter wants a line). ``counter``: the ``(namespace, name)`` of a Beam counter of the lines read (None:
    not counted). The lines are in the global window at the minimum timestamp, as ``Read`` gives them."""

    def __init__(
        self,
        pattern: str,
        skip_header_lines: int = 0,
        chunk: int | None = None,
        bundle_bytes: int | None = None,
        needed=None,
        counter=None,
    ):
        super().__init__()
        self.pattern = pattern
        self.skip_header_lines = skip_header_lines
        self.chunk = chunk
        self.bundle_bytes = bundle_bytes
        self.needed = needed
        self.counter = counter

    def expand(self, pbegin):
        extra = () if self.needed is None else (self.needed,)
        return (
            pbegin
            | "Source" >> beam.Create([(self.pattern, self.skip_header_lines)], reshuffle=False)
            | "Split" >> beam.FlatMap(_split, self.bundle_bytes, *extra)
            | "Spread" >> beam.Reshuffle()
            | "Lines" >> beam.FlatMap(_read_chunks, self.chunk or CHUNK, self.counter)
        )


def _split(files: tuple[str, int], bundle_bytes: int | None, needed: int | None = None) -> list:
    """The ranges to read: ``(path, start, stop, header lines)`` of an uncompressed file (read by
    :func:`_range_lines`), ``(None, start, stop, source)`` of a bundle of Beam's text source for a compressed one;
    none when ``needed`` is 0. Empty files are skipped (as Beam's file sources skip them)."""
    if needed is not None and not needed:
        return []
    pattern, skip = files
    found = [m for m in FileSystems.match([pattern])[0].metadata_list if m.size_in_bytes > 0]
    if bundle_bytes is None:
        bundle_bytes = iobase.Read.get_desired_chunk_size(sum(m.size_in_bytes for m in found))
    out = []
    for m in found:
        if CompressionTypes.detect_compression_type(m.path) != CompressionTypes.UNCOMPRESSED:
            source = text_source(m.path, skip)
            out += [(None, b.start_position, b.stop_position, b.source) for b in source.split(bundle_bytes)]
        else:
            size = m.size_in_bytes
            out += [(m.path, s, min(s + bundle_bytes, size), skip) for s in range(0, size, bundle_bytes)]
    return out


def _read_chunks(item: tuple, chunk: int, counter: tuple[str, str] | None = None):
    """A range's lines, in lists of at most ``chunk``; counted by the counter ``counter`` names (if any)."""
    path, start, stop, source = item
    if path is not None:  # an uncompressed file: ``source`` is its number of header lines
        lines = _range_lines(path, start, stop, skip=source)
    else:
        lines = source.read(source.get_range_tracker(start, stop))
    out = []
    n = 0
    for line in lines:
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


def _range_lines(path: str, start: int, stop: int, block: int | None = None, skip: int = 0):
    """The lines of an uncompressed file that start in ``[start, stop)`` (bytes, without their separator: a newline,
    or CR LF), after its first ``skip`` lines (a header), as Beam's text source reads them (module docstring)."""
    block = block or BLOCK
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        header_end = 0  # after the header's lines that end with a newline (Beam's _skip_lines)
        for _ in range(skip):
            line = f.readline()
            if not line.endswith(b"\n"):
                break
            header_end += len(line)
        pos = max(start, header_end)  # where the next line starts (a file offset)
        if pos > header_end:  # the line that holds byte pos - 1 belongs to an earlier range
            f.seek(pos - 1)
            head = f.readline()
            if not head.endswith(b"\n"):
                return
            pos += len(head) - 1
        f.seek(pos)
        rest = b""
        while pos < stop:
            data = f.read(block)
            if not data:  # the end of the file: its last bytes, if any, are a line
                if rest:
                    yield rest
                return
            lines = (rest + data).split(b"\n")
            rest = lines.pop()  # the bytes after the last \n: the start of a line not read to its end
            for line in lines:
                if pos >= stop:
                    return
                pos += len(line) + 1
                yield line[:-1] if line[-1:] == b"\r" else line
