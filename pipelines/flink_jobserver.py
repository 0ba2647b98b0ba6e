"""Beam's Flink job server from Maven Central, with an embedded Flink cluster.

Maven Central (as these machines reach it) serves no shaded ``beam-runners-flink-*-job-server`` jar for a
recent Beam release (``docs/flink.md``), but it serves the Flink runner library itself,
``org.apache.beam:beam-runners-flink-1.19:2.62.0``, with all its dependencies. The job server is that
library's ``org.apache.beam.runners.flink.FlinkJobServerDriver``; this module resolves it with Maven
(cached in ``~/.m2``) and writes a small launcher jar whose manifest names the main class and the
resolved class path, so that ``java -jar LAUNCHER`` starts the job server and Beam's Python
``FlinkRunner`` takes it as ``--flink_job_server_jar``.

Command line::

    python -m pipelines.flink_jobserver fetch          # resolve (mvn) and print the launcher jar's path
    python -m pipelines.flink_jobserver serve --port 8099   # job server + embedded Flink until interrupted
    python -m pipelines.flink_jobserver serve --port 8099 --rest   # and the embedded Flink's REST API

Then run a pipeline with ``--runner=FlinkRunner --flink_master=[local] --flink_job_server_jar=JAR``
(the runner starts and stops its own job server) or, against ``serve``, with ``--runner=PortableRunner
--job_endpoint=localhost:8099``; both with ``--environment_type=LOOPBACK`` (or ``PROCESS``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: The Beam release of the Java runner (the newest whose Flink runner resolves from Maven Central here).
BEAM_JAVA_VERSION = "2.62.0"
#: The Flink line that runner is built against.
FLINK_VERSION = "1.19"
#: Maven coordinates of the runner and of the logging binding added to its class path.
RUNNER_ARTIFACT = f"org.apache.beam:beam-runners-flink-{FLINK_VERSION}:{BEAM_JAVA_VERSION}"
LOGGING_ARTIFACT = "org.slf4j:slf4j-jdk14:1.7.30"
MAIN_CLASS = "org.apache.beam.runners.flink.FlinkJobServerDriver"


def m2_repository() -> Path:
    """The local Maven repository (``MAVEN_REPO`` or ``~/.m2/repository``)."""
    return Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))


def launcher_path(repo: Path | None = None) -> Path:
    """Where the launcher jar is cached: inside the local Maven repository, beside what it points to."""
    repo = repo or m2_repository()
    name = f"beam-flink-{FLINK_VERSION}-job-server-launcher"
    return repo / "dp-dynamic" / name / BEAM_JAVA_VERSION / f"{name}-{BEAM_JAVA_VERSION}.jar"


def missing_prerequisites() -> list[str]:
    """The tools the job server needs that are not on ``PATH`` (empty when it can run)."""
    return [tool for tool in ("java", "mvn") if shutil.which(tool) is None]


def _pom() -> str:
    deps = []
    for coords in (RUNNER_ARTIFACT, LOGGING_ARTIFACT):
        group, artifact, version = coords.split(":")
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
            f"<version>{version}</version></dependency>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>dp-dynamic</groupId><artifactId>flink-job-server</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies>{''.join(deps)}</dependencies></project>\n"
    )


def _manifest(main_class: str, class_path: list[str]) -> bytes:
    """A jar manifest; lines are at most 72 bytes, continued by a leading space."""
    lines = ["Manifest-Version: 1.0", f"Main-Class: {main_class}", "Class-Path: " + " ".join(class_path)]
    out = []
    for line in lines:
        data = line.encode()
        out.append(data[:72])
        data = data[72:]
        while data:
            out.append(b" " + data[:71])
            data = data[71:]
    return b"\r\n".join(out) + b"\r\n\r\n"


def fetch(repo: Path | None = None, quiet: bool = True) -> Path:
    """Resolve the Flink runner with Maven and write the launcher jar; return its path.

    A cached launcher whose class path is all present is returned at once. Raises ``RuntimeError`` with
    Maven's output when the resolution fails (offline, artifact not served).
    """
    repo = repo or m2_repository()
    return build_launcher(launcher_path(repo), MAIN_CLASS, _pom(), RUNNER_ARTIFACT, repo, "the Flink job server", quiet)


def build_launcher(
    target: Path, main_class: str, pom: str, what: str, repo: Path, purpose: str, quiet: bool = True
) -> Path:
    """Resolve the dependencies of ``pom`` (a Maven project naming ``what``) into ``repo`` with ``mvn
    dependency:build-classpath`` and write ``target``: a jar whose manifest names ``main_class`` and the resolved
    class path, so that ``java -jar target`` runs it. Returned at once when ``target`` exists with its whole class
    path present. Shared by the Flink job server and the Kafka jars (``pipelines/kafka_tool.py``)."""
    if target.exists() and _class_path_present(target):
        return target
    missing = missing_prerequisites()
    if missing:
        raise RuntimeError(f"cannot fetch {purpose}: {', '.join(missing)} not found on PATH")
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-mvn-") as tmp:
        Path(tmp, "pom.xml").write_text(pom, encoding="utf-8")
        cp_file = Path(tmp, "classpath.txt")
        cmd = ["mvn", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={cp_file}", f"-Dmaven.repo.local={repo}"]
        if quiet:
            cmd.insert(2, "-q")
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0 or not cp_file.exists():
            raise RuntimeError(
                f"mvn could not resolve {what} (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
            )
        jars = [Path(p) for p in cp_file.read_text(encoding="utf-8").strip().split(os.pathsep) if p]
    target.parent.mkdir(parents=True, exist_ok=True)
    rel = [Path(os.path.relpath(j, target.parent)).as_posix() for j in jars]
    tmp_target = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp_target, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", _manifest(main_class, rel))
    tmp_target.replace(target)
    return target


def _class_path_present(launcher: Path) -> bool:
    with zipfile.ZipFile(launcher) as zf:
        text = zf.read("META-INF/MANIFEST.MF").decode().replace("\r\n ", "")
    for line in text.splitlines():
        if line.startswith("Class-Path: "):
            return all((launcher.parent / p).exists() for p in line[len("Class-Path: ") :].split())
    return False


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    """A running job server: its process, gRPC job endpoint and log file; with ``rest_port``, the embedded
    Flink's REST API (jobs, checkpoints, stop with a savepoint) and the Flink configuration it reads."""

    process: subprocess.Popen
    endpoint: str
    expansion_endpoint: str
    log_path: Path
    startup_seconds: float
    rest_port: int | None = None
    flink_conf_dir: Path | None = None
    flink_conf: dict[str, object] | None = None

    def options(self, *extra: str) -> list[str]:
        """Pipeline options that submit to this job server with an in-process (LOOPBACK) SDK worker."""
        return ["--runner=PortableRunner", f"--job_endpoint={self.endpoint}", "--environment_type=LOOPBACK", *extra]

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

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
        if self.flink_conf_dir is None or self.flink_conf is None:
            raise RuntimeError("this job server was started without a Flink configuration (start(..., rest=True))")
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
    timeout: float = 120.0,
    rest: bool = False,
    flink_conf: dict[str, object] | None = None,
) -> JobServer:
    """Start the job server with an embedded Flink (``--flink-master=[local]``) and wait until it listens.

    ``rest=True`` (or ``flink_conf``) gives it a Flink configuration directory of its own: with ``rest``,
    ``rest.bind-port`` on a free port, so that ``JobServer.rest`` reaches the embedded cluster's REST API
    (jobs, checkpoints, stop with savepoint), and ``JobServer.restore_next_job_from`` can set a savepoint.
    """
    port = port or free_port()
    rest_port = None
    if rest or flink_conf is not None:
        flink_conf = dict(flink_conf or {})
        if rest:
            rest_port = free_port()
            flink_conf["rest.bind-port"] = rest_port
            flink_conf.setdefault("rest.address", "127.0.0.1")
            flink_conf.setdefault("rest.bind-address", "127.0.0.1")
        if flink_conf_dir is None:
            flink_conf_dir = Path(tempfile.mkdtemp(prefix="dp-dynamic-flink-conf-"))
        write_flink_conf(flink_conf_dir, flink_conf)
    expansion = free_port()
    artifacts = Path(tempfile.mkdtemp(prefix="dp-dynamic-flink-artifacts-"))
    log_path = log_path or Path(tempfile.mkstemp(prefix="dp-dynamic-flink-jobserver-", suffix=".log")[1])
    cmd = [
        "java",
        "-jar",
        str(jar),
        "--flink-master=[local]",
        f"--job-port={port}",
        "--artifact-port=0",
        f"--expansion-port={expansion}",
        f"--artifacts-dir={artifacts}",
    ]
    if flink_conf_dir is not None:
        cmd.append(f"--flink-conf-dir={flink_conf_dir}")
    env = dict(os.environ)
    env.setdefault("FLINK_DEFAULT_PARALLELISM", str(parallelism))
    t0 = time.perf_counter()
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - owned by the process for its life
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the Flink job server exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the Flink job server did not listen on {port} in {timeout} s") from None
            time.sleep(0.2)
    return JobServer(
        proc,
        f"localhost:{port}",
        f"localhost:{expansion}",
        log_path,
        time.perf_counter() - t0,
        rest_port,
        flink_conf_dir,
        flink_conf,
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
    ap = argparse.ArgumentParser(prog="python -m pipelines.flink_jobserver", description=__doc__.split("\n\n")[0])
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
    server = start(jar, port=args.port, rest=args.rest)
    print(f"job server on {server.endpoint} (started in {server.startup_seconds:.1f} s); log: {server.log_path}")
    if server.rest_port is not None:
        print(
            f"Flink REST API (while a job runs): http://127.0.0.1:{server.rest_port}; "
            f"Flink configuration: {server.flink_conf_dir}/flink-conf.yaml"
        )
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
