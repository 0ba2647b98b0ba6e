"""A throwaway PostgreSQL server on loopback, for the ledger's tests and CI (``.ci/run``).

Usage::

    python -m pipelines.ledger.server start   # prints DIR URL; the server runs in the background
    python -m pipelines.ledger.server stop DIR

The binaries are PostgreSQL's own (``initdb``, ``pg_ctl``: ``/usr/lib/postgresql/N/bin`` or ``pg_config
--bindir``; Debian package ``postgresql``). The data lives in a temporary folder; the server listens on
127.0.0.1 at a free port, trusts local connections and runs without fsync (a test server: nothing to keep).
PostgreSQL refuses to run as root: under root it runs as the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile

__all__ = ["bin_dir", "start", "stop", "main"]


def bin_dir() -> str | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest installed PostgreSQL), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[-3]))
    if found:
        return os.path.dirname(found[-1])
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False).stdout.strip()
        if out and os.path.exists(os.path.join(out, "initdb")):
            return out
    return os.path.dirname(shutil.which("initdb")) if shutil.which("initdb") else None


def _as_user() -> tuple[list[str], str | None]:
    """The command prefix that runs PostgreSQL (not as root) and that user's name."""
    if os.geteuid() != 0:
        return [], None
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("PostgreSQL refuses to run as root and there is no 'postgres' user to run it") from None
    return ["runuser", "-u", "postgres", "--"], "postgres"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start() -> tuple[str, str]:
    """Start a server; returns ``(data folder, URL)``. Raises RuntimeError when PostgreSQL is not installed or
    does not start."""
    bindir = bin_dir()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed (Debian package postgresql: initdb and pg_ctl)")
    prefix, user = _as_user()
    folder = tempfile.mkdtemp(prefix="dp-ledger-pg-")
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    try:
        return _start_in(folder, bindir, prefix)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _start_in(folder: str, bindir: str, prefix: list[str]) -> tuple[str, str]:
    data = os.path.join(folder, "data")
    run = {"capture_output": True, "text": True, "check": False, "cwd": folder}
    init = subprocess.run(
        [*prefix, f"{bindir}/initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"], **run
    )
    if init.returncode != 0:
        raise RuntimeError(f"initdb failed: {init.stderr.strip()[-300:]}")
    port = _free_port()
    options = f"-h 127.0.0.1 -p {port} -k {folder} -F"
    up = subprocess.run(
        [
            *prefix,
            f"{bindir}/pg_ctl",
            "-D",
            data,
            "-o",
            options,
            "-l",
            f"{folder}/server.log",
            "-w",
            "-t",
            "60",
            "start",
        ],
        **run,
    )
    if up.returncode != 0:
        log = open(f"{folder}/server.log").read()[-300:] if os.path.exists(f"{folder}/server.log") else ""
        raise RuntimeError(f"pg_ctl start failed: {up.stderr.strip()[-300:]} {log}")
    return folder, f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop(folder: str) -> None:
    """Stop the server of ``folder`` (immediately) and remove its data."""
    bindir = bin_dir()
    prefix, _ = _as_user()
    if bindir is not None and os.path.exists(os.path.join(folder, "data")):
        subprocess.run(
            [*prefix, f"{bindir}/pg_ctl", "-D", os.path.join(folder, "data"), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            check=False,
            cwd=folder,
        )
    shutil.rmtree(folder, ignore_errors=True)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["start"] and len(argv) == 1:
        try:
            folder, url = start()
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(folder, url)
        return 0
    if argv[:1] == ["stop"] and len(argv) == 2:
        stop(argv[1])
        return 0
    print("usage: python -m pipelines.ledger.server start | stop DIR", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
