"""A Flink 1.19 session cluster on this machine: one JobManager and N TaskManagers as separate JVM processes, whose
task managers start the Python SDK harness as Beam's ``PROCESS`` environment does, from a boot command.

Flink's distribution (``flink-dist``) is not served from Maven Central here, but the jars of Flink 1.19.0's runtime
are: they are the class path of Beam's Flink runner, which ``flink_jobserver fetch`` already resolves into
``~/.m2`` (``pipelines/tools/flink_jobserver.py``, ``docs/flink.md``). The cluster's JVMs run on that class path
(the launcher jar): the JobManager is ``StandaloneSessionClusterEntrypoint``, each TaskManager
``TaskManagerRunner``, both with ``--configDir`` and the memory options that Flink's own scripts compute with
``BashJavaUtils`` (``GET_JM_RESOURCE_PARAMS`` / ``GET_TM_RESOURCE_PARAMS``: JVM heap and direct memory, and the
``-D`` settings a TaskManager refuses to start without). Beam's runner also comes with every job, as the
official shaded job server jar would: the job server stages the jars of its class path (163 files, 152 MB), which
each TaskManager downloads from the JobManager's blob server for the job's class loader.

The Python SDK harness: jobs use ``--environment_type=PROCESS --environment_config='{"command": "DIR/sdk-boot"}'``;
each TaskManager starts that command for every SDK worker it needs (a child of the TaskManager, in its process
group), with ``--id`` and ``--provision_endpoint``, as it would start Beam's container boot program (not on
PyPI). ``DIR/sdk-boot`` runs :func:`boot` (``python -m pipelines.tools.flink_cluster boot``) in the
Python that started the cluster, so the workers import this package as installed there (a staged
``--setup_file`` is not installed): it runs Beam's ``SdkHarness`` on the control endpoint, what Beam's worker pool
(``apache_beam.runners.worker.worker_pool_main``) runs for each worker. The pool itself, with
``--environment_type=EXTERNAL``, is not safe for two TaskManagers on one host: each TaskManager names its workers
``1-1``, ``2-1``, ... (a counter per JVM), the pool keeps its worker processes by that name, and a second
``StartWorker("1-1")`` replaces the first in it, so a ``StopWorker("1-1")`` can kill the other TaskManager's
worker. A race: the demo ran through twice at parallelism 2 on one pool, then the test's job failed with ``CANCELLED:
client cancelled`` from an SDK worker, the pool's log showing worker ``1-1`` started for both TaskManagers. A
deployment avoids it with one pool per TaskManager (a sidecar on the task manager's ``localhost``), which one host
with one ``localhost`` cannot give.

Command line (``start`` returns once the REST API reports every TaskManager; ``stop`` ends each process group,
SIGTERM then SIGKILL, and checks that none is left)::

    python -m pipelines.tools.flink_cluster start [--dir DIR] [--rest-port 8081] [--taskmanagers 2] [--slots 2]
    python -m pipelines.tools.flink_cluster status [--dir DIR]
    python -m pipelines.tools.flink_cluster stop [--dir DIR]

then ``python -m pipelines.release ... --runner=FlinkRunner --flink_master=localhost:8081
--flink_job_server_jar="$(python3 -m pipelines.tools.flink_jobserver fetch)" --environment_type=PROCESS
--environment_config='{"command": "DIR/sdk-boot"}' --parallelism=2`` (README). ``DIR`` (default
``$TMPDIR/dp-dynamic-flink-cluster``) holds ``conf/flink-conf.yaml``, ``sdk-boot``, ``log/`` (one file per
process; the SDK workers' output goes to their TaskManager's), ``tmp/`` (Flink's ``io.tmp.dirs``) and
``cluster.json`` (ports, process ids and start times: ``stop`` ends only processes it started). The standard
library only, and Java (``boot`` needs Beam).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipelines.tools import flink_jobserver

__all__ = ["Cluster", "Process", "default_dir", "flink_settings", "load", "running", "start", "stop"]

JOB_MANAGER_CLASS = "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint"
TASK_MANAGER_CLASS = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner"
BASH_JAVA_UTILS = "org.apache.flink.runtime.util.bash.BashJavaUtils"
BOOT_SCRIPT = "sdk-boot"
STATE_FILE = "cluster.json"

#: Memory for a 2-core machine shared with other work; what the settings are for (``flink_settings``).
JOB_MANAGER_MEMORY = "1024m"
TASK_MANAGER_MEMORY = "1728m"
NETWORK_MEMORY = "256m"


def default_dir() -> Path:
    return Path(tempfile.gettempdir()) / "dp-dynamic-flink-cluster"


def flink_settings(rpc_port: int, rest_port: int, slots: int, tmp: Path) -> dict[str, object]:
    """The cluster's ``flink-conf.yaml``: everything on loopback, the given ports, small memory.

    Beyond addresses and ports, three settings that a Beam job needs on a standalone cluster: a batch job's
    blocking exchanges use Flink's sort-based shuffle, which takes ``taskmanager.network.sort-shuffle.min-buffers``
    (default 512) network buffers per result partition; a Beam job has dozens of them per task, so the default
    failed the demo with ``Insufficient number of network buffers: required 512, but only 486 available`` even with
    256 MB of network memory (8,192 buffers): 64 a partition is enough here. Managed memory (sorting, RocksDB) is
    little used by Beam's operators (the state lives on the heap), so its fraction is lowered from 0.4 to 0.25 in
    favour of the task heap. And ``cluster.evenly-spread-out-slots``: a job at parallelism 2 runs on both
    TaskManagers, not in two slots of one.
    """
    return {
        "jobmanager.rpc.address": "localhost",
        "jobmanager.rpc.port": rpc_port,
        "jobmanager.bind-host": "localhost",
        "rest.address": "localhost",
        "rest.bind-address": "localhost",
        "rest.port": rest_port,
        "taskmanager.host": "localhost",
        "taskmanager.bind-host": "localhost",
        "taskmanager.numberOfTaskSlots": slots,
        "jobmanager.memory.process.size": JOB_MANAGER_MEMORY,
        "taskmanager.memory.process.size": TASK_MANAGER_MEMORY,
        "taskmanager.memory.network.min": NETWORK_MEMORY,
        "taskmanager.memory.network.max": NETWORK_MEMORY,
        "taskmanager.memory.managed.fraction": 0.25,
        "taskmanager.network.sort-shuffle.min-buffers": 64,
        "cluster.evenly-spread-out-slots": "true",
        "parallelism.default": 1,
        "io.tmp.dirs": tmp,
        "web.tmpdir": tmp,
    }


# --- processes, by id and start time (a recycled process id is never taken for ours) ---------------------------


def _stat(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` after the command name: [state, ppid, pgrp, ...]; None when there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None


def _group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields and fields[2] == str(pgid) and fields[0] != "Z":
                members.append(int(entry))
    return members


@dataclass
class Process:
    """One process the cluster started, the leader of its own process group (its children are in it)."""

    name: str
    pid: int
    start_time: str
    log: str

    def alive(self) -> bool:
        fields = _stat(self.pid)
        return bool(fields) and fields[19] == self.start_time and fields[0] != "Z"

    def group(self) -> list[int]:
        """What is left of its process group (empty once it and its children ended); nothing when the id was
        recycled by another process."""
        if _start_time(self.pid) not in (None, self.start_time):
            return []
        return _group_members(self.pid)

    def signal_group(self, sig: int) -> None:
        if self.group():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)


_CHILDREN: dict[int, subprocess.Popen] = {}  # started by this Python process: reaped once stopped


@dataclass
class Cluster:
    """A running (or recorded) session cluster: its directory, ports and processes."""

    dir: str
    rest_port: int
    rpc_port: int
    boot: str
    taskmanagers: int
    slots: int
    processes: list[Process] = field(default_factory=list)

    @property
    def flink_master(self) -> str:
        return f"localhost:{self.rest_port}"

    @property
    def environment_config(self) -> str:
        """The ``PROCESS`` environment: the boot command each TaskManager runs for an SDK worker."""
        return json.dumps({"command": self.boot})

    def pipeline_args(self, jar: Path | str, parallelism: int = 2) -> list[str]:
        """The README's cluster options for this cluster."""
        return [
            "--runner=FlinkRunner",
            f"--flink_master={self.flink_master}",
            f"--flink_job_server_jar={jar}",
            "--environment_type=PROCESS",
            f"--environment_config={self.environment_config}",
            f"--parallelism={parallelism}",
        ]

    def rest(self, path: str, timeout: float = 5.0) -> dict:
        """``GET`` one path of the JobManager's REST API (``/overview``, ``/taskmanagers``, ``/jobs/overview``)."""
        url = f"http://127.0.0.1:{self.rest_port}{path}"
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback, our own port
            return json.loads(resp.read() or b"{}")

    def overview(self) -> dict | None:
        """The REST API's ``/overview`` (task managers, slots, jobs), or None when it does not answer."""
        try:
            return self.rest("/overview")
        except (OSError, ValueError):
            return None

    def save(self) -> None:
        Path(self.dir, STATE_FILE).write_text(json.dumps(asdict(self), indent=1) + "\n", encoding="utf-8")

    def stop(self, timeout: float = 20.0) -> list[str]:
        """End every process group (the TaskManagers with their SDK workers first, the JobManager last): SIGTERM,
        then SIGKILL after ``timeout`` seconds. Returns what was still running; raises when a process is left."""
        running = [p for p in self.processes if p.group()]
        for proc in reversed(running):
            proc.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while any(p.group() for p in running) and time.monotonic() < deadline:
            _reap()
            time.sleep(0.2)
        for proc in running:
            proc.signal_group(signal.SIGKILL)
        time.sleep(0.2)
        _reap()
        left = {p.name: p.group() for p in running if p.group()}
        if left:
            raise RuntimeError(f"processes left after SIGKILL: {left}")
        with contextlib.suppress(FileNotFoundError):
            Path(self.dir, STATE_FILE).unlink()
        shutil.rmtree(Path(self.dir, "tmp"), ignore_errors=True)
        return [p.name for p in running]


def _reap() -> None:
    for pid, child in list(_CHILDREN.items()):
        if child.poll() is not None:
            del _CHILDREN[pid]


def load(directory: Path | str | None = None) -> Cluster | None:
    """The cluster recorded in ``directory`` (default :func:`default_dir`), or None."""
    path = Path(directory or default_dir(), STATE_FILE)
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    data["processes"] = [Process(**p) for p in data["processes"]]
    return Cluster(**data)


# --- starting ---------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _port(requested: int, what: str) -> int:
    """``requested``, checked free on loopback; 0 picks a free port."""
    if requested == 0:
        return _free_port()
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", requested))
        except OSError:
            raise RuntimeError(f"{what} port {requested} is in use (pass 0 for a free one)") from None
    return requested


def _write_conf(conf_dir: Path, settings: dict[str, object]) -> None:
    conf_dir.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{k}: {v}\n" for k, v in settings.items())
    (conf_dir / "flink-conf.yaml").write_text(text, encoding="utf-8")


def resource_params(jar: Path, conf_dir: Path, which: str) -> tuple[list[str], list[str]]:
    """What Flink's scripts pass a JobManager (``which="JM"``) or TaskManager (``"TM"``): JVM options (heap,
    direct memory, metaspace) and ``-D key=value`` settings, computed by Flink's ``BashJavaUtils`` from the
    configuration's memory sizes."""
    proc = subprocess.run(
        ["java", "-cp", str(jar), BASH_JAVA_UTILS, f"GET_{which}_RESOURCE_PARAMS", "--configDir", str(conf_dir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    marker = "BASH_JAVA_UTILS_EXEC_RESULT:"
    results = [line[len(marker) :] for line in proc.stdout.splitlines() if line.startswith(marker)]
    if proc.returncode != 0 or len(results) < 2:
        raise RuntimeError(f"Flink's BashJavaUtils failed ({which}, exit {proc.returncode}):\n{proc.stdout[-2000:]}")
    return results[0].split(), results[1].split()


def _spawn(name: str, cmd: list[str], log_dir: Path, env: dict | None = None, cwd: str | None = None) -> Process:
    log = log_dir / f"{name}.log"
    with open(log, "ab") as out:
        child = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            cwd=cwd,
        )
    _CHILDREN[child.pid] = child
    return Process(name, child.pid, _start_time(child.pid) or "", str(log))


def _tail(path: str, chars: int = 2500) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def start(
    directory: Path | str | None = None,
    taskmanagers: int = 2,
    slots: int = 2,
    rest_port: int = 8081,
    jar: Path | None = None,
    python: str | None = None,
    cwd: str | None = None,
    timeout: float = 180.0,
) -> Cluster:
    """Start the JobManager and ``taskmanagers`` TaskManagers of ``slots`` slots (in ``cwd``: where their SDK workers
    resolve relative paths), write the boot command for ``python`` (default this one); return once the REST API
    reports every TaskManager. Port 0 is picked free. Raises ``RuntimeError`` (with the
    end of the failing process's log) after stopping what it started, or when a cluster already runs in
    ``directory``."""
    root = Path(directory or default_dir()).resolve()
    previous = load(root)
    if previous is not None and any(p.alive() for p in previous.processes):
        raise RuntimeError(
            f"a cluster already runs from {root} (stop it: python -m pipelines.tools.flink_cluster stop)"
        )
    jar = jar or flink_jobserver.fetch()
    conf_dir, log_dir, tmp = root / "conf", root / "log", root / "tmp"
    for d in (log_dir, tmp):
        d.mkdir(parents=True, exist_ok=True)
    for old in log_dir.glob("*.log"):
        old.unlink()
    rest_port = _port(rest_port, "REST")
    boot = root / BOOT_SCRIPT
    boot.write_text(f'#!/bin/sh\nexec "{python or sys.executable}" -m pipelines.tools.flink_cluster boot "$@"\n')
    boot.chmod(0o755)
    cluster = Cluster(str(root), rest_port, _free_port(), str(boot), taskmanagers, slots)
    _write_conf(conf_dir, flink_settings(cluster.rpc_port, rest_port, slots, tmp))
    jm_jvm, jm_dyn = resource_params(jar, conf_dir, "JM")
    tm_jvm, tm_dyn = resource_params(jar, conf_dir, "TM")
    java = ["java", "-cp", str(jar)]
    try:
        jm = [*java[:1], *jm_jvm, *java[1:], JOB_MANAGER_CLASS, "--configDir", str(conf_dir), *jm_dyn]
        cluster.processes.append(_spawn("jobmanager", jm, log_dir, cwd=cwd))
        for i in range(1, taskmanagers + 1):
            tm = [*java[:1], *tm_jvm, *java[1:], TASK_MANAGER_CLASS, "--configDir", str(conf_dir), *tm_dyn]
            cluster.processes.append(_spawn(f"taskmanager-{i}", tm, log_dir, cwd=cwd))
        cluster.save()
        _wait_ready(cluster, timeout)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def _wait_ready(cluster: Cluster, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        dead = [p for p in cluster.processes if not p.alive()]
        if dead:
            raise RuntimeError(f"{dead[0].name} exited; the end of {dead[0].log}:\n{_tail(dead[0].log)}")
        view = cluster.overview() or {}
        if view.get("taskmanagers", 0) >= cluster.taskmanagers:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"the cluster was not ready in {timeout:.0f} s (REST overview: {view or 'no answer'}); "
                f"logs in {cluster.dir}/log"
            )
        time.sleep(0.5)


def stop(directory: Path | str | None = None) -> list[str]:
    """Stop the cluster recorded in ``directory``; the names of the processes that were running."""
    cluster = load(directory)
    return [] if cluster is None else cluster.stop()


@contextlib.contextmanager
def running(directory: Path | str | None = None, **kwargs) -> Iterator[Cluster]:
    """``start`` as a context manager: everything is stopped on leaving, also after a failure."""
    cluster = start(directory, **kwargs)
    try:
        yield cluster
    finally:
        cluster.stop()


def boot(argv: list[str]) -> None:
    """The SDK worker a TaskManager starts (``DIR/sdk-boot``), with the arguments Beam's ``PROCESS`` environment
    gives a boot program (``--id``, ``--provision_endpoint``): like Beam's container boot, it asks the provision
    service for the control endpoint, then runs Beam's ``SdkHarness`` on it as Beam's worker pool runs it for each
    worker (the same cache and buffer settings). What the container boot does beyond that (installing staged
    packages, the main session) a worker with the package installed does not need."""
    import grpc
    from apache_beam.portability.api import beam_provision_api_pb2, beam_provision_api_pb2_grpc
    from apache_beam.runners.worker.sdk_worker import SdkHarness

    ap = argparse.ArgumentParser(prog="sdk-boot")
    ap.add_argument("--id", required=True)
    ap.add_argument("--provision_endpoint", required=True)
    args, _ = ap.parse_known_args(argv)
    with grpc.insecure_channel(args.provision_endpoint) as channel:
        stub = beam_provision_api_pb2_grpc.ProvisionServiceStub(channel)
        request = beam_provision_api_pb2.GetProvisionInfoRequest()
        info = stub.GetProvisionInfo(request, metadata=[("worker_id", args.id)], timeout=120).info
    control = info.control_endpoint.url
    SdkHarness(control, worker_id=args.id, state_cache_size=0, data_buffer_time_limit_ms=-1).run()


def describe(cluster: Cluster) -> str:
    lines = [f"cluster directory: {cluster.dir} (logs in log/, configuration in conf/flink-conf.yaml)"]
    for p in cluster.processes:
        lines.append(f"  {p.name:<15} pid {p.pid:<8} {'running' if p.alive() else 'NOT RUNNING'}")
    view = cluster.overview()
    if view is None:
        lines.append(f"REST API on localhost:{cluster.rest_port}: no answer")
    else:
        lines.append(
            f"Flink {view.get('flink-version')} on localhost:{cluster.rest_port}: {view.get('taskmanagers')} task "
            f"managers, {view.get('slots-available')} of {view.get('slots-total')} slots free, "
            f"{view.get('jobs-running')} jobs running"
        )
    lines.append(
        f"pipeline options: --runner=FlinkRunner --flink_master={cluster.flink_master} --flink_job_server_jar=JAR "
        f"--environment_type=PROCESS --environment_config='{cluster.environment_config}'"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.tools.flink_cluster", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    commands = {
        "start": "start the JobManager and the TaskManagers; return once all are up",
        "status": "the processes and what the REST API reports (exit 1 when not all run)",
        "stop": "stop every process of the cluster",
    }
    parsers = {name: sub.add_parser(name, help=text) for name, text in commands.items()}
    for p in parsers.values():
        p.add_argument("--dir", type=Path, default=None, help=f"the cluster's directory (default {default_dir()})")
    parsers["start"].add_argument("--taskmanagers", type=int, default=2)
    parsers["start"].add_argument("--slots", type=int, default=2, help="task slots per TaskManager")
    parsers["start"].add_argument("--rest-port", type=int, default=8081, help="the REST API (the --flink_master)")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["boot"]:  # an SDK worker, started by a TaskManager
        boot(argv[1:])
        return 0
    args = ap.parse_args(argv)
    if args.command == "stop":
        try:
            stopped = stop(args.dir)
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"stopped: {', '.join(stopped)}" if stopped else "no cluster was running")
        return 0
    if args.command == "status":
        cluster = load(args.dir)
        if cluster is None:
            print("no cluster recorded")
            return 1
        print(describe(cluster))
        view = cluster.overview() or {}
        up = all(p.alive() for p in cluster.processes) and view.get("taskmanagers") == cluster.taskmanagers
        return 0 if up else 1
    t0 = time.monotonic()
    try:
        cluster = start(args.dir, args.taskmanagers, args.slots, args.rest_port, cwd=os.getcwd())
    except RuntimeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"started in {time.monotonic() - t0:.1f} s")
    print(describe(cluster))
    return 0


if __name__ == "__main__":
    sys.exit(main())
