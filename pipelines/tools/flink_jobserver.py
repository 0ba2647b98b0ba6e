"""Beam's Flink job server from Maven Central, with an embedded Flink cluster.

Maven Central (as these machines reach it) serves no shaded ``beam-runners-flink-*-job-server`` jar for a
recent Beam release (``docs/flink.md``), but it serves the Flink runner library itself,
``org.apache.beam:beam-runners-flink-1.19:2.62.0``, with all its dependencies. The job server is that
library's ``org.apache.beam.runners.flink.FlinkJobServerDriver``: ``fetch`` resolves it with Maven (cached in
``~/.m2``; :data:`JOB_SERVER`, ``pipelines/tools/maven.py``) and writes a launcher jar naming the main class and
the resolved class path, so that ``java -jar LAUNCHER`` starts the job server and Beam's Python ``FlinkRunner``
takes it as ``--flink_job_server_jar``. ``start`` runs it on Beam's process helpers (``pipelines/tools/jvm.py``).

Command line::

    python -m pipelines.tools.flink_jobserver fetch          # resolve (mvn) and print the launcher jar's path
    python -m pipelines.tools.flink_jobserver serve --port 8099   # job server + embedded Flink until interrupted
    python -m pipelines.tools.flink_jobserver serve --port 8099 --rest   # and the embedded Flink's REST API

Then run a pipeline with ``--runner=FlinkRunner --flink_master=[local] --flink_job_server_jar=JAR``
(the runner starts and stops its own job server) or, against ``serve``, with ``--runner=PortableRunner
--job_endpoint=localhost:8099``; both with ``--environment_type=LOOPBACK`` (or ``PROCESS``).

``fetch`` runs with the standard library alone (``.ci/run`` calls it with the system Python, before the venv
exists); ``start`` and ``serve`` need Beam.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.tools import backport, maven

if TYPE_CHECKING:
    from pipelines.tools.jvm import Service

__all__ = ["JOB_SERVER", "JobServer", "fetch", "launcher_path", "missing_prerequisites", "running", "start"]

#: The Beam release of the Java runner (the newest whose Flink runner resolves from Maven Central here).
BEAM_JAVA_VERSION = "2.62.0"
#: The Flink line that runner is built against.
FLINK_VERSION = "1.19"
#: Maven coordinates of the runner and of the logging binding added to its class path.
RUNNER_ARTIFACT = f"org.apache.beam:beam-runners-flink-{FLINK_VERSION}:{BEAM_JAVA_VERSION}"
LOGGING_ARTIFACT = "org.slf4j:slf4j-jdk14:1.7.30"
MAIN_CLASS = "org.apache.beam.runners.flink.FlinkJobServerDriver"
#: What ``fetch`` resolves, and the launcher it writes (``~/.m2/repository/dp-dynamic/...``).
JOB_SERVER = maven.Bundle(
    name=f"beam-flink-{FLINK_VERSION}-job-server-launcher",
    version=BEAM_JAVA_VERSION,
    main_class=MAIN_CLASS,
    artifacts=(RUNNER_ARTIFACT, LOGGING_ARTIFACT),
    backports=(backport.SDF_RESIDUALS,),
)


def launcher_path(repo: Path | None = None) -> Path:
    """Where the launcher jar is cached: inside the local Maven repository, beside what it points to."""
    return JOB_SERVER.launcher_path(repo)


def missing_prerequisites() -> list[str]:
    """The tools the job server needs that are not on ``PATH`` (empty when it can run)."""
    return maven.missing_tools("java", "javac", "mvn")  # javac: the backport (pipelines/tools/backport.py)


def fetch(repo: Path | None = None, quiet: bool = True) -> Path:
    """Resolve the Flink runner with Maven and write the launcher jar; return its path.

    A cached launcher whose class path is all present is returned at once. Raises ``RuntimeError`` with
    Maven's output when the resolution fails (offline, artifact not served).
    """
    return maven.fetch(JOB_SERVER, repo, "the Flink job server", quiet)


def write_flink_conf(conf_dir: Path, settings: dict[str, object]) -> Path:
    """Write ``conf_dir/flink-conf.yaml`` with ``settings`` (``key: value`` lines); return its path.

    The job server reads this file again for every job it runs (``FlinkExecutionEnvironments``), so a
    setting written between two submissions applies to the second job only.
    """
    conf_dir.mkdir(parents=True, exist_ok=True)
    path = conf_dir / "flink-conf.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in settings.items()), encoding="utf-8")
    return path


@dataclass
class JobServer:
    """A running job server: the process (``service``, on Beam's process helpers), its gRPC job endpoint and
    the Flink configuration it reads for every job; with ``rest_port``, the embedded Flink's REST API (jobs,
    checkpoints, stop with a savepoint)."""

    service: Service
    endpoint: str
    expansion_endpoint: str
    flink_conf_dir: Path
    flink_conf: dict[str, object]
    rest_port: int | None = None

    @property
    def startup_seconds(self) -> float:
        return self.service.startup_seconds

    @property
    def log_path(self) -> Path:
        return self.service.log_path

    def options(self, *extra: str) -> list[str]:
        """Pipeline options that submit to this job server with an in-process (LOOPBACK) SDK worker."""
        return ["--runner=PortableRunner", f"--job_endpoint={self.endpoint}", "--environment_type=LOOPBACK", *extra]

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self.service.stop()

    # --- the embedded Flink's REST API (needs ``start(..., rest=True)``) ---

    def rest(self, method: str, path: str, body: dict | None = None, timeout: float = 10.0) -> dict:
        """One call to the embedded Flink's REST API (``path`` like ``/jobs/overview``); the JSON answer."""
        if self.rest_port is None:
            raise RuntimeError("this job server was started without a REST port (start(..., rest=True))")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.rest_port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback, our own port
            return json.loads(resp.read() or b"{}")

    def flink_jobs(self, state: str | None = "RUNNING") -> list[dict]:
        """The Flink jobs of the embedded cluster (``jid``, ``name``, ``state``, ...), those in ``state``."""
        jobs = self.rest("GET", "/jobs/overview").get("jobs", [])
        return [j for j in jobs if state is None or j.get("state") == state]

    def wait_for_running_job(self, timeout: float = 120.0, exclude: tuple[str, ...] = ()) -> str:
        """The id of the (one) running Flink job, waiting until there is one whose tasks all run."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                jobs = self.flink_jobs()
            except OSError:  # each job runs in a Flink mini cluster of its own: no REST API before it starts
                jobs = []
            for job in jobs:
                if job["jid"] in exclude:
                    continue
                tasks = job.get("tasks", {})
                if tasks.get("total") and tasks.get("running") == tasks.get("total"):
                    return job["jid"]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no running Flink job within {timeout} s: {self.flink_jobs(None)}")
            time.sleep(0.2)

    def checkpoint_counts(self, job_id: str) -> dict:
        """``{"completed": n, "failed": n, "restored": n, ...}`` of a job's checkpoints (savepoints included)."""
        return self.rest("GET", f"/jobs/{job_id}/checkpoints").get("counts", {})

    def latest_checkpoint(self, job_id: str) -> dict:
        """The job's latest completed checkpoint (``id``, ``state_size`` in bytes, ...); empty before the first."""
        return self.rest("GET", f"/jobs/{job_id}/checkpoints").get("latest", {}).get("completed") or {}

    def stop_with_savepoint(self, job_id: str, target: Path, timeout: float = 120.0) -> str:
        """Stop a streaming job with a savepoint under ``target`` (no drain: no final watermark, so no
        timer fires early); returns the savepoint's location. Raises with Flink's failure cause."""
        answer = self.rest("POST", f"/jobs/{job_id}/stop", {"targetDirectory": target.as_uri(), "drain": False})
        request = answer["request-id"]
        deadline = time.monotonic() + timeout
        while True:
            status = self.rest("GET", f"/jobs/{job_id}/savepoints/{request}")
            if status.get("status", {}).get("id") == "COMPLETED":
                operation = status.get("operation", {})
                if "location" not in operation:
                    raise RuntimeError(f"stop with savepoint failed: {operation.get('failure-cause', operation)}")
                return operation["location"]
            if time.monotonic() > deadline:
                raise TimeoutError(f"savepoint of {job_id} not completed within {timeout} s: {status}")
            time.sleep(0.2)

    def restore_next_job_from(self, savepoint: str | None) -> None:
        """Make the next job submitted restore from ``savepoint`` (None: start from nothing).

        ``--savepoint_path`` is ignored by an embedded (``[local]``) Flink (Beam 2.62 applies it only to a
        remote master), but the job server reads its Flink configuration for every job, and
        ``execution.savepoint.path`` there restores. Call it again with None once the job runs.
        """
        conf = dict(self.flink_conf)
        if savepoint is not None:
            conf["execution.savepoint.path"] = savepoint
        write_flink_conf(self.flink_conf_dir, conf)


def start(
    jar: Path,
    port: int | None = None,
    parallelism: int = 2,
    log_path: Path | None = None,
    flink_conf_dir: Path | None = None,
    rest: bool = False,
    flink_conf: dict[str, object] | None = None,
) -> JobServer:
    """Start the job server with an embedded Flink (``--flink-master=[local]``) and wait until its job service
    answers (Beam's ``SubprocessServer``, ``pipelines/tools/jvm.py``; ``log_path``: where its output goes).

    The job server gets a Flink configuration directory of its own (``parallelism.default``, ``flink_conf``),
    which ``JobServer.restore_next_job_from`` can point at a savepoint; with ``rest``, ``rest.bind-port`` on a
    free port, so that ``JobServer.rest`` reaches the embedded cluster's REST API (jobs, checkpoints, stop with
    savepoint).
    """
    from apache_beam.utils.subprocess_server import pick_port

    from pipelines.tools import jvm

    port, expansion, *rest_port = pick_port(port, None, *([None] if rest else []))
    conf = {"parallelism.default": parallelism, **(flink_conf or {})}
    if rest:
        conf["rest.bind-port"] = rest_port[0]
        conf.setdefault("rest.address", "127.0.0.1")
        conf.setdefault("rest.bind-address", "127.0.0.1")
    temp_dirs = [Path(tempfile.mkdtemp(prefix="dp-dynamic-flink-artifacts-"))]
    artifacts = temp_dirs[0]
    if flink_conf_dir is None:
        flink_conf_dir = Path(tempfile.mkdtemp(prefix="dp-dynamic-flink-conf-"))
        temp_dirs.append(flink_conf_dir)
    write_flink_conf(flink_conf_dir, conf)
    cmd = [
        "java",
        "-jar",
        str(jar),
        "--flink-master=[local]",
        f"--job-port={port}",
        "--artifact-port=0",
        f"--expansion-port={expansion}",
        f"--artifacts-dir={artifacts}",
        f"--flink-conf-dir={flink_conf_dir}",
    ]
    service = jvm.start(cmd, port, "the Flink job server", log_path=log_path, temp_dirs=tuple(temp_dirs))
    return JobServer(
        service, f"localhost:{port}", f"localhost:{expansion}", flink_conf_dir, conf, rest_port[0] if rest else None
    )


@contextlib.contextmanager
def running(jar: Path | None = None, **kwargs) -> Iterator[JobServer]:
    """``start`` as a context manager (fetching the launcher first when not given)."""
    server = start(jar or fetch(), **kwargs)
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.tools.flink_jobserver", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help="resolve the job server with Maven (cached in ~/.m2); print the launcher jar")
    serve = sub.add_parser("serve", help="run the job server with an embedded Flink until interrupted")
    serve.add_argument("--port", type=int, default=8099)
    serve.add_argument(
        "--rest",
        action="store_true",
        help="open the embedded Flink's REST API on a free port (checkpoints, stop with savepoint; docs/flink.md)",
    )
    args = ap.parse_args(argv)
    try:
        jar = fetch(quiet=True)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.command == "fetch":
        print(jar)
        return 0
    try:
        server = start(jar, port=args.port, rest=args.rest)
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"job server on {server.endpoint} (started in {server.startup_seconds:.1f} s); log: {server.log_path}")
    if server.rest_port is not None:
        print(f"Flink REST API (while a job runs): http://127.0.0.1:{server.rest_port}", flush=True)
    print(f"Flink configuration: {server.flink_conf_dir}/flink-conf.yaml", flush=True)
    return server.service.serve()


if __name__ == "__main__":
    sys.exit(main())
