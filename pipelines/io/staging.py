"""Publishing a bounded run's file outputs at once: written to hidden sibling folders, moved into place only when
the run completes.

A bounded run with a local file sink writes its releases, node outputs, dead letters, release manifest and picture
(and Beam's own ``beam-temp-*`` folders) under ``<parent>/.<name>.partial-<tag>``, a hidden sibling of each
folder (the same file system, so the move is a rename). :meth:`Staging.commit` moves them into the folders when
the run has completed; :meth:`Staging.discard` removes them when it failed or was cancelled, so a folder never
holds a mix of two runs and a failed run leaves it exactly as it was. A streaming run writes its windows as they
close (no staging: its releases are published as they go), and a remote folder (``gs://...``) is written in
place.

This module knows folders only: which sink has which folder is the sink's (``Sink.staged``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from pathlib import Path

__all__ = ["OUTPUT_NAMES", "Staging", "staging_folder", "outputs_in", "remove_outputs"]

#: what a run writes into a sink's folders (file name prefixes): the outputs, the manifest, the picture, and the
#: temporary folders of Beam's file writes
OUTPUT_NAMES = (
    "releases",
    "nodes",
    "dead_letters",
    "query_answers",
    "estimates",
    "release_manifest.json",
    "beam-temp-",
)

_MARK = ".partial-"


def staging_folder(final: str, tag: str) -> str:
    """The hidden sibling folder where a bounded run writes the outputs of ``final`` (``tag``: the run's)."""
    p = Path(final.rstrip("/"))
    return str(p.parent / f".{p.name}{_MARK}{tag}")


def outputs_in(folder: str) -> list[str]:
    """The names of the run outputs a local folder holds (sorted; none when the folder does not exist)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(OUTPUT_NAMES))


def remove_outputs(folder: str) -> None:
    """Remove a run's outputs from ``folder`` (the files and folders :func:`outputs_in` names; nothing else)."""
    for name in outputs_in(folder):
        path = Path(folder) / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def _uninterrupted():
    """SIGINT ignored for a moment (a second Ctrl-C must not stop a publication or a clean-up half-way)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


class Staging:
    """The staged folders of one bounded run: ``pairs`` of (hidden staging folder, the folder it publishes to)."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.pairs = list(pairs)

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def final_name(self, path: str) -> str:
        """``path`` (under a staging folder) as it will be named once published."""
        for staged, final in self.pairs:
            if path.startswith(staged):
                return final.rstrip("/") + path[len(staged) :]
        return path

    def commit(self) -> None:
        """Move the staged outputs into their folders: a folder that does not exist or is empty is replaced by its
        staging folder (one rename); otherwise the run outputs already there (a replay of the same release, or
        ``--overwrite``) are removed and the staged files moved in one by one (other files are left alone)."""
        with _uninterrupted():
            self._commit()

    def _commit(self) -> None:
        for staged, final in self.pairs:
            if not os.path.isdir(staged):
                continue
            final = final.rstrip("/")
            if os.path.isdir(final) and not os.listdir(final):
                os.rmdir(final)
            if not os.path.exists(final):
                os.makedirs(os.path.dirname(final) or ".", exist_ok=True)
                os.rename(staged, final)
                continue
            remove_outputs(final)
            for name in sorted(os.listdir(staged)):
                os.replace(os.path.join(staged, name), os.path.join(final, name))
            os.rmdir(staged)

    def discard(self) -> None:
        """Remove the staged outputs (a failed or cancelled run): the folders stay as they were."""
        with _uninterrupted():
            for staged, _ in self.pairs:
                shutil.rmtree(staged, ignore_errors=True)
