"""The processes the tools run (the Flink job server, the Kafka broker, the KafkaIO expansion service, the Pub/Sub
emulator), on Beam's own process helpers, ``apache_beam.utils.subprocess_server``.

Beam picks the free ports (``pick_port``, called by the tools), starts the command
(``SubprocessServer.start_process``: its output is logged line by line through the logger
``apache_beam.utils.subprocess_server``), waits until a gRPC service answers (``SubprocessServer.start``, which
fails when the process exits first) and stops it (``SubprocessServer.stop``: SIGINT, then kill). Added here: the
wait for a service that does not speak gRPC (the Kafka broker: a probe, with a time limit), the process kept for
``serve`` to wait on, and a file that collects the output.

The lifetime is Beam's: the servers of one Python process share their processes, and a process started while
other servers of the Python process ran stops once its own server and those have all stopped (Beam's
``SubprocessServer`` cache, as for ``cache_subprocesses``): in a test session a Kafka broker started after the
session's Flink job server stops with that job server.

Only the commands that start a process import this module: ``fetch`` runs with the standard library alone.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from apache_beam.utils.subprocess_server import SubprocessServer

__all__ = ["OUTPUT_LOGGER", "Service", "output_log", "start"]

#: Beam's logger for the output of the processes it starts (one INFO record per line).
OUTPUT_LOGGER = "apache_beam.utils.subprocess_server"


class _Server(SubprocessServer):
    """Beam's ``SubprocessServer`` that keeps what its ``start_process`` returned (the process, its endpoint)."""

    process: subprocess.Popen | None = None
    endpoint: str | None = None

    def start_process(self):
        self.process, self.endpoint = super().start_process()
        return self.process, self.endpoint


@dataclass
class Service:
    """A running process started by Beam: its endpoint (``localhost:PORT``), the file with its output, the seconds
    it took to answer, and the temporary directories it works in."""

    server: SubprocessServer
    process: subprocess.Popen
    address: str
    log_path: Path
    startup_seconds: float
    temp_dirs: tuple[Path, ...] = ()

    def stop(self) -> None:
        """Release the process: Beam stops it now, or with the servers that ran when it started (above). Its
        temporary directories go once it has ended (at exit, if it still runs)."""
        self.server.stop()
        for path in self.temp_dirs:
            if self.process.poll() is None:
                atexit.register(shutil.rmtree, path, True)
            else:
                shutil.rmtree(path, ignore_errors=True)

    def serve(self) -> int:
        """Wait until the process ends or the user interrupts (Ctrl-C), then stop it (the commands that serve
        until interrupted)."""
        try:
            self.process.wait()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
        return 0


def output_log(path: Path | str | None = None) -> Path:
    """The file that receives, from now on, the output of every process this Python process starts (Beam logs each
    line through :data:`OUTPUT_LOGGER`; it then goes to the files of this function only, not to the root logger).
    Default: one file per Python process in the temporary directory."""
    path = Path(os.path.abspath(path or Path(tempfile.gettempdir()) / f"dp-dynamic-jvm-{os.getpid()}.log"))
    logger = logging.getLogger(OUTPUT_LOGGER)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    logger.propagate = False
    if not any(getattr(h, "baseFilename", None) == str(path) for h in logger.handlers):
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    return path


def start(
    cmd: list[str],
    port: int,
    what: str,
    ready: Callable[[], bool] | None = None,
    timeout: float = 120.0,
    log_path: Path | str | None = None,
    temp_dirs: tuple[Path, ...] = (),
) -> Service:
    """Start ``cmd``, which serves on ``port``, with Beam's ``SubprocessServer`` and wait until it answers: as a
    gRPC service (Beam's wait) or, given ``ready``, until that probe is true (at most ``timeout`` seconds).
    Raises ``RuntimeError`` naming ``what``, with the end of its output, when it exits or does not answer.
    ``temp_dirs`` (the process's own temporary directories) are removed when it stops, or fails to start."""
    log = output_log(log_path)
    server = _Server(lambda channel: channel, cmd, port=port)
    t0 = time.perf_counter()
    if ready is None:
        try:
            server.start()
        except RuntimeError as e:
            _remove(temp_dirs)
            raise RuntimeError(f"{what} did not start ({e}); its output, {log}:\n{_tail(log)}") from None
    else:
        process, _ = server.start_process()
        deadline = time.monotonic() + timeout
        while not ready():
            failure = f"exited with {process.returncode}" if process.poll() is not None else None
            if failure is None and time.monotonic() > deadline:
                failure = f"did not answer in {timeout:.0f} s"
            if failure:
                server.stop()
                _remove(temp_dirs)
                raise RuntimeError(f"{what} {failure}; its output, {log}:\n{_tail(log)}")
            time.sleep(0.2)
    return Service(server, server.process, server.endpoint, log, time.perf_counter() - t0, tuple(temp_dirs))


def _remove(paths) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def _tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-chars:]
