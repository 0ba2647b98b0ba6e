"""The JVM tooling without a JVM: Maven bundles as data (the POM, the launcher jar) and the process handling on
Beam's helpers (``pipelines/tools/jvm.py``), exercised with Python processes. ``tests/test_flink.py`` and
``tests/test_kafka.py`` run the real job server, broker and expansion service."""

import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile

import pytest

from pipelines.tools import backport, flink_jobserver, jvm, kafka_tool, maven

ROOT = pathlib.Path(__file__).resolve().parents[1]
NS = {"m": maven.POM_NS}


def _dependencies(bundle):
    root = ET.fromstring(maven.pom(bundle))
    out = {}
    for dep in root.findall("m:dependencies/m:dependency", NS):
        coords = ":".join(dep.find(f"m:{t}", NS).text for t in ("groupId", "artifactId", "version"))
        out[coords] = [
            (e.find("m:groupId", NS).text, e.find("m:artifactId", NS).text) for e in dep.iterfind(".//m:exclusion", NS)
        ]
    return out


def test_each_bundle_pom_names_its_artifacts_and_exclusions():
    assert _dependencies(flink_jobserver.JOB_SERVER) == {
        flink_jobserver.RUNNER_ARTIFACT: [],
        flink_jobserver.LOGGING_ARTIFACT: [],
    }
    runner = _dependencies(kafka_tool.RUNNER)
    assert list(runner) == list(kafka_tool.RUNNER.artifacts)  # the order Maven mediates in
    # Confluent's schema-registry client is not served by Maven Central: left out below KafkaIO only
    assert runner[kafka_tool.KAFKA_IO_ARTIFACT] == [("io.confluent", "*")]
    assert all(not excl for coords, excl in runner.items() if coords != kafka_tool.KAFKA_IO_ARTIFACT)
    assert list(_dependencies(kafka_tool.BROKER)) == [kafka_tool.BROKER_ARTIFACT, flink_jobserver.LOGGING_ARTIFACT]


def test_launcher_names_the_main_class_and_the_jars_relative_to_it(tmp_path):
    jars = []
    for i in range(3):
        jar = tmp_path / "repo" / "org" / "example" / f"a-rather-long-artifact-name-for-the-manifest-{i}" / f"x-{i}.jar"
        jar.parent.mkdir(parents=True)
        jar.write_bytes(b"")
        jars.append(jar)
    bundle = maven.Bundle("launcher", "1.0", "org.example.Main", ("org.example:x:1.0",))
    target = bundle.launcher_path(tmp_path / "repo")
    assert not maven.launcher_ready(target)
    maven.write_launcher(target, bundle.main_class, jars)
    raw = zipfile.ZipFile(target).read("META-INF/MANIFEST.MF")
    assert all(len(line) <= 72 for line in raw.split(b"\r\n"))  # the jar specification's line length
    fields = dict(line.split(": ", 1) for line in raw.decode().replace("\r\n ", "").splitlines() if line)
    assert fields["Main-Class"] == "org.example.Main"
    entries = fields["Class-Path"].split()
    assert all(not e.startswith("/") for e in entries)
    assert [(target.parent / e).resolve() for e in entries] == [j.resolve() for j in jars]
    # Java 17: the embedded Flink's Kryo needs java.util open (a --streaming job with a file sink failed without)
    assert "java.base/java.util" in fields["Add-Opens"].split()
    assert fields["Add-Opens"].split() == list(maven.ADD_OPENS)
    assert maven.launcher_ready(target)
    with zipfile.ZipFile(target, "w") as zf:  # a launcher written before the opens: written again by fetch
        zf.writestr("META-INF/MANIFEST.MF", raw.decode().split("Add-Opens")[0].rstrip() + "\r\n\r\n")
    assert not maven.launcher_ready(target)
    maven.write_launcher(target, bundle.main_class, jars)
    assert maven.launcher_ready(target)
    jars[1].unlink()  # a jar gone from ~/.m2: fetch resolves again
    assert not maven.launcher_ready(target)


def _sources_jar(repo: pathlib.Path, coords: str, files: dict[str, str]) -> None:
    group, name, version = coords.split(":")
    jar = repo.joinpath(*group.split("."), name, version, f"{name}-{version}-sources.jar")
    jar.parent.mkdir(parents=True)
    with zipfile.ZipFile(jar, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)


def test_a_backport_applies_its_edits_exactly_once_or_refuses_with_its_name(tmp_path):
    repo = tmp_path / "repo"
    _sources_jar(repo, "org.example:lib:1.0", {"org/example/A.java": "class A { int f() { return 1; } }\n"})
    fix = backport.Backport(
        "example-fix", "example/repo#1", (backport.Edit("org.example:lib:1.0", "org/example/A.java", (("1;", "2;"),)),)
    )
    assert backport.patched_sources(fix, repo) == {"org/example/A.java": "class A { int f() { return 2; } }\n"}
    for text, times in (("3;", 0), ("{ ", 2)):  # the release's source moved: no half-applied fix
        moved = dataclasses.replace(fix, edits=(dataclasses.replace(fix.edits[0], replacements=((text, "x"),)),))
        with pytest.raises(RuntimeError, match=f"example-fix .*example/repo#1.* occurs {times} times, not once"):
            backport.patched_sources(moved, repo)
    assert backport.jar_path(fix, repo) != backport.jar_path(moved, repo)  # a changed edit: a new jar


def test_the_job_servers_carry_the_sdf_residual_backport_first_on_their_class_path(tmp_path):
    """Both Flink job servers (plain and with KafkaIO) load the backported classes in place of the release's
    (``pipelines/tools/backport.py``; what it fixes: ``tests/test_flink.py``), and a launcher written before
    the backport, or without it first, is written again by ``fetch``."""
    assert flink_jobserver.JOB_SERVER.backports == (backport.SDF_RESIDUALS,)
    assert kafka_tool.RUNNER.backports == (backport.SDF_RESIDUALS,)
    assert {e.artifact for e in backport.SDF_RESIDUALS.edits} <= {
        f"org.apache.beam:beam-runners-java-fn-execution:{flink_jobserver.BEAM_JAVA_VERSION}",
        flink_jobserver.RUNNER_ARTIFACT,
    }
    repo = tmp_path / "repo"
    jars = []
    for name in ("fix.jar", "runner.jar"):
        jar = repo / "x" / name
        jar.parent.mkdir(parents=True, exist_ok=True)
        jar.write_bytes(b"")
        jars.append(jar)
    target = repo / "dp-dynamic" / "launcher" / "1.0" / "launcher-1.0.jar"
    maven.write_launcher(target, "org.example.Main", jars[1:])  # written before the backport
    assert maven.launcher_ready(target) and not maven.launcher_ready(target, jars[:1])
    maven.write_launcher(target, "org.example.Main", jars)
    assert maven.launcher_ready(target, jars[:1])


def test_fetch_and_the_poms_need_only_the_standard_library():
    """``.ci/run`` fetches with the system Python before the venv exists (``-S``: no site-packages)."""
    code = (
        "from pipelines.tools import backport, flink_jobserver, kafka_tool, maven\n"
        "for b in (flink_jobserver.JOB_SERVER, kafka_tool.BROKER, kafka_tool.RUNNER): maven.pom(b)\n"
        "backport.jar_path(backport.SDF_RESIDUALS, maven.m2_repository())\n"
        "print(flink_jobserver.launcher_path())"
    )
    proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


# The processes run in a fresh Python: Beam's SubprocessServer keeps a process alive while any server started
# before it still runs (pipelines/tools/jvm.py), and a test session may hold the Flink job server.
_SERVICES = r"""
import json, subprocess, sys, tempfile
from pathlib import Path
from apache_beam.utils.subprocess_server import pick_port
from pipelines.tools import jvm
from pipelines.io.kafka import reachable

out = {}
port, grpc_port = pick_port(None, None)
work = Path(tempfile.mkdtemp())
http = jvm.start([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], port, "an HTTP server",
                 ready=lambda: reachable(f"127.0.0.1:{port}"), timeout=30, temp_dirs=(work,))
out["http_answers"] = reachable(f"127.0.0.1:{port}")
out["http_address"] = http.address == f"localhost:{port}"
grpc_server = (
    "import grpc, sys; from concurrent import futures; s = grpc.server(futures.ThreadPoolExecutor(1)); "
    "s.add_insecure_port('localhost:' + sys.argv[1]); s.start(); print('serving', flush=True); s.wait_for_termination()"
)
rpc = jvm.start([sys.executable, "-c", grpc_server, str(grpc_port)], grpc_port, "a gRPC server")
out["grpc_running"] = rpc.process.poll() is None and reachable(f"127.0.0.1:{grpc_port}")
for service in (http, rpc):
    service.stop()


def ended(process):  # Beam's stop sends SIGINT, then SIGKILL without waiting: under load the end comes a bit later
    try:
        process.wait(60)  # a deadline that only bounds a hang (a process stop() left running)
        return True
    except subprocess.TimeoutExpired:
        return False


out["stopped"] = [ended(s.process) for s in (http, rpc)]
out["work"] = str(work)  # removed by stop(), or at this script's exit if the process had not ended yet
out["log"] = str(http.log_path)
print(json.dumps(out))
"""


def test_services_start_when_they_answer_and_stop():
    proc = subprocess.run([sys.executable, "-c", _SERVICES], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["http_answers"] and out["http_address"] and out["grpc_running"]
    assert out["stopped"] == [True, True] and not pathlib.Path(out["work"]).exists()
    assert "serving" in pathlib.Path(out["log"]).read_text()  # the processes' output went to the log file


def _eventually(check, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.1)
    return check()


@pytest.mark.parametrize("probe", [True, False], ids=["probe", "grpc"])
def test_a_process_that_exits_before_it_answers_is_an_error_with_its_output(tmp_path, probe):
    log = tmp_path / "out.log"
    cmd = [sys.executable, "-c", "print('cannot bind', flush=True); raise SystemExit(3)"]
    ready = (lambda: False) if probe else None
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(RuntimeError) as err:
        jvm.start(cmd, 1, "the test service", ready=ready, log_path=log, temp_dirs=(work,))
    assert not work.exists()
    message = str(err.value)
    assert message.startswith("the test service ") and str(log) in message
    assert "exited with 3" in message if probe else "failed to start up with error 3" in message
    assert _eventually(lambda: "cannot bind" in log.read_text())


def test_a_probe_that_never_answers_times_out(tmp_path):
    cmd = [sys.executable, "-c", "import time; time.sleep(60)"]
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="the sleeper did not answer in 1 s"):
        jvm.start(cmd, 1, "the sleeper", ready=lambda: False, timeout=1.0, log_path=tmp_path / "out.log")
    assert time.monotonic() - t0 < 30


def test_output_log_is_one_file_per_path(tmp_path):
    path = tmp_path / "a.log"
    assert jvm.output_log(path) == jvm.output_log(str(path)) == path
    import logging

    handlers = [h for h in logging.getLogger(jvm.OUTPUT_LOGGER).handlers if getattr(h, "baseFilename", "") == str(path)]
    assert len(handlers) == 1
    assert os.path.exists(path)
