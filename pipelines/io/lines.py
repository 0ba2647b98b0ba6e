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
bytes, at random range and chunk sizes, with and without header lines, plain and gzip). The lines are split here
(:func:`_range_lines`), as Beam's ``_TextSource`` splits them: a line is the bytes up to a newline (LF), without it
and without one CR just before it (a lone CR stays in its line), the last bytes of a file after its last LF are a
line when there are any, and a line belongs to the range its first byte is in (a range that starts inside a line
skips to the next one). The first ``skip_header_lines`` lines are a header no range reads, and a file whose header
does not end with a LF gives no line at all (Beam's ``_skip_lines`` leaves its buffer at the end of the file). A
compressed file (by its extension) is decompressed and read whole, by one reader (it cannot be split), as Beam
reads it. Files are opened by the names their pattern matched (a name with glob characters is not matched again).
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.io import iobase
from apache_beam.io.filesystem import CompressionTypes, FileSystem
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

__all__ = ["ReadLineChunks", "JoinedLines", "text_source", "CHUNK", "JOINED_LINES", "JOINED_CHARS"]

CHUNK = 4096  # lines per element
CHUNK_BYTES = 4 << 20  # bytes of lines per element (about: the line that passes it ends the list)
BLOCK = 1 << 20  # bytes read at once


def text_source(path: str, skip_header_lines: int = 0) -> iobase.BoundedSource:
    """The ``BoundedSource`` that ``beam.io.ReadFromText(path, skip_header_lines=..., coder=BytesCoder())`` reads
    (lines as bytes: a line that is not UTF-8 is a dead letter, not a failed read), built by that transform: its
    check of the pattern (one that matches nothing fails here, at construction, as ``ReadFromText`` does), and
    the reference ``tests/test_line_chunks.py`` compares :func:`_range_lines` with. Beam is pinned (setup.py)."""
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
    """The ranges to read, ``(path, start, stop, header lines)``: byte ranges of an uncompressed file, the whole of a
    compressed one (``stop`` None: it cannot be split); none when ``needed`` is 0. Empty files are skipped, and the
    files read are reported to Beam's lineage, as Beam's file sources do (``FileBasedSource``)."""
    if needed is not None and not needed:
        return []
    pattern, skip = files
    found = [m for m in FileSystems.match([pattern])[0].metadata_list if m.size_in_bytes > 0]
    _report_lineage([m.path for m in found])
    if bundle_bytes is None:
        bundle_bytes = iobase.Read.get_desired_chunk_size(sum(m.size_in_bytes for m in found))
    out = []
    for m in found:
        size = m.size_in_bytes
        if CompressionTypes.detect_compression_type(m.path) != CompressionTypes.UNCOMPRESSED:
            out.append((m.path, 0, None, skip))
        else:
            out += [(m.path, s, min(s + bundle_bytes, size), skip) for s in range(0, size, bundle_bytes)]
    return out


def _report_lineage(paths: list) -> None:
    """Beam's ``FileBasedSource._report_source_lineage``: up to 100 files by name, else their folders (up to 100),
    else the top level."""
    if len(paths) <= 100:
        for path in paths:
            FileSystems.report_source_lineage(path)
        return
    folders = set()
    for path in paths:
        if len(folders) >= 100:
            FileSystems.report_source_lineage(path, level=FileSystem.LineageLevel.TOP_LEVEL)
            return
        try:
            folders.add(FileSystems.split(path)[0])
        except ValueError:
            pass
    for folder in folders:
        FileSystems.report_source_lineage(folder)


def _read_chunks(item: tuple, chunk: int, counter: tuple[str, str] | None = None):
    """A range's lines, in lists of at most ``chunk`` lines and about ``CHUNK_BYTES`` (a list is given up once it
    holds that many bytes: wide lines make short lists); counted by the counter ``counter`` names (if any)."""
    path, start, stop, skip = item
    out = []
    size = n = 0
    for line in _range_lines(path, start, stop, skip=skip):
        out.append(line)
        size += len(line)
        if len(out) >= chunk or size >= CHUNK_BYTES:
            n += len(out)
            yield out
            out = []
            size = 0
    if out:
        n += len(out)
        yield out
    if counter is not None:
        Metrics.counter(*counter).inc(n)


def _range_lines(path: str, start: int, stop: int | None, block: int | None = None, skip: int = 0):
    """The lines of a file that start in ``[start, stop)`` (``stop`` None: to its end; a compressed file, known by
    its extension, is read whole and decompressed), as bytes without their separator (a newline, or CR LF), after
    its first ``skip`` lines (a header), as Beam's text source reads them (module docstring)."""
    block = block or BLOCK
    with FileSystems.open(path, compression_type=CompressionTypes.AUTO) as f:
        header_end = 0
        for _ in range(skip):  # Beam's _skip_lines: a header line the file ends in leaves nothing to read
            line = f.readline()
            if not line.endswith(b"\n"):
                return
            header_end += len(line)
        pos = max(start, header_end)  # where the next line starts (a file offset)
        if pos > header_end:  # the line that holds byte pos - 1 belongs to an earlier range (uncompressed only)
            f.seek(pos - 1)
            head = f.readline()
            if not head.endswith(b"\n"):
                return
            pos += len(head) - 1
        rest = b""
        while stop is None or pos < stop:
            data = f.read(block)
            if not data:  # the end of the file: its last bytes, if any, are a line
                if rest:
                    yield rest
                return
            lines = (rest + data).split(b"\n")
            rest = lines.pop()  # the bytes after the last LF: the start of a line not read to its end
            for line in lines:
                if stop is not None and pos >= stop:
                    return
                pos += len(line) + 1
                yield line[:-1] if line[-1:] == b"\r" else line


class JoinedLines(beam.DoFn):
    """``to_line`` of each element, the lines of a bundle joined by newlines ``JOINED_LINES`` at a time (fewer
    once they hold ``JOINED_CHARS`` characters), for ``WriteToText``: it writes each element and a newline, so a
    shard holds the same bytes as when each line is an element (a line that holds newlines itself, a CSV field's,
    too), in the same order. One element per thousand lines instead of one per line through the write's steps
    (its stage input, its window assignment, its per-element call with a side input: a million release records in
    a year of one-minute periods). Bounded outputs only (``write_files``): the lines of a bundle's end leave in the
    global window (the write puts every element there)."""

    def __init__(self, to_line):
        self.to_line = to_line
        self._lines, self._size = [], 0

    def start_bundle(self):
        self._lines, self._size = [], 0

    def process(self, element):
        line = self.to_line(element)
        lines = self._lines
        lines.append(line)
        self._size += len(line)
        if len(lines) >= JOINED_LINES or self._size >= JOINED_CHARS:
            self._lines, self._size = [], 0
            yield "\n".join(lines)

    def finish_bundle(self):
        lines, self._lines, self._size = self._lines, [], 0
        if lines:
            yield WindowedValue("\n".join(lines), MIN_TIMESTAMP, (GlobalWindow(),))


JOINED_LINES = 1024  # lines per element written (JoinedLines) ...
JOINED_CHARS = 1 << 20  # ... or fewer, once they hold this many characters (dead letters' records can be wide)
