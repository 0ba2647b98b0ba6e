"""Maven, for resolving jars only; the standard library alone (``fetch`` runs with the system Python).

A :class:`Bundle` is data: Maven coordinates resolved together (Maven mediates their versions), groups excluded
below one of them, and the class that its launcher runs. :func:`fetch` resolves a bundle with ``mvn
dependency:build-classpath`` on a copy of ``classpath.pom.xml`` (the template beside this module, one
``<dependency>`` added per coordinate) into the local repository (``~/.m2``), and writes the bundle's launcher: a
jar holding only a manifest, whose ``Main-Class`` is the bundle's and whose ``Class-Path`` names the resolved jars
relative to it, so that ``java -jar LAUNCHER`` runs that class and Beam's ``FlinkRunner`` takes it as
``--flink_job_server_jar``. Beam's ``JavaJarServer.make_classpath_jar`` cannot write it: it copies the
``Main-Class`` of a main jar, and none of these jars has one; and ``.ci/run`` fetches before Beam is installed.
Starting and stopping the JVMs is ``pipelines/tools/jvm.py``'s, on Beam's process helpers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pipelines.tools import backport

__all__ = ["Bundle", "fetch", "launcher_ready", "m2_repository", "missing_tools", "pom", "write_launcher"]

POM_TEMPLATE = Path(__file__).with_name("classpath.pom.xml")
POM_NS = "http://maven.apache.org/POM/4.0.0"


@dataclass(frozen=True)
class Bundle:
    """Jars resolved together into one class path, and the class ``java -jar`` of their launcher runs.

    ``artifacts`` are ``group:artifact:version`` coordinates; ``exclusions`` pairs one of them with a group that
    Maven leaves out below it; ``backports`` (upstream fixes to those jars, ``pipelines/tools/backport.py``) come
    first on the class path. The launcher is cached at ``~/.m2/repository/dp-dynamic/NAME/VERSION/``.
    """

    name: str
    version: str
    main_class: str
    artifacts: tuple[str, ...]
    exclusions: tuple[tuple[str, str], ...] = ()
    #: compiled against the resolved class path and put first on it (``pipelines/tools/backport.py``)
    backports: tuple[backport.Backport, ...] = ()

    def launcher_path(self, repo: Path | None = None) -> Path:
        repo = repo or m2_repository()
        return repo / "dp-dynamic" / self.name / self.version / f"{self.name}-{self.version}.jar"


def m2_repository() -> Path:
    """The local Maven repository (``MAVEN_REPO`` or ``~/.m2/repository``)."""
    return Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))


def missing_tools(*tools: str) -> list[str]:
    """Those of ``tools`` that are not on ``PATH``."""
    return [tool for tool in tools if shutil.which(tool) is None]


def pom(bundle: Bundle) -> bytes:
    """The template POM with one ``<dependency>`` (and its ``<exclusions>``) per coordinate of ``bundle``."""
    ET.register_namespace("", POM_NS)
    root = ET.parse(POM_TEMPLATE).getroot()
    dependencies = root.find(f"{{{POM_NS}}}dependencies")
    for coords in bundle.artifacts:
        group, artifact, version = coords.split(":")
        dep = _child(dependencies, "dependency", groupId=group, artifactId=artifact, version=version)
        excluded = [g for c, g in bundle.exclusions if c == coords]
        if excluded:
            exclusions = _child(dep, "exclusions")
            for g in excluded:
                _child(exclusions, "exclusion", groupId=g, artifactId="*")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _child(parent: ET.Element, tag: str, **texts: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{POM_NS}}}{tag}")
    for name, text in texts.items():
        ET.SubElement(element, f"{{{POM_NS}}}{name}").text = text
    return element


def resolve(bundle: Bundle, repo: Path, quiet: bool = True) -> list[Path]:
    """The jars of ``bundle`` with all their dependencies, resolved by Maven into ``repo``."""
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-mvn-") as tmp:
        Path(tmp, "pom.xml").write_bytes(pom(bundle))
        out = Path(tmp, "classpath.txt")
        cmd = ["mvn", "-B", "dependency:build-classpath", f"-Dmdep.outputFile={out}", f"-Dmaven.repo.local={repo}"]
        if quiet:
            cmd.insert(2, "-q")
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(
                f"mvn could not resolve {', '.join(bundle.artifacts)} (exit {proc.returncode}):\n"
                f"{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
            )
        return [Path(p) for p in out.read_text(encoding="utf-8").strip().split(os.pathsep) if p]


def fetch(bundle: Bundle, repo: Path | None = None, purpose: str | None = None, quiet: bool = True) -> Path:
    """The launcher of ``bundle``: returned at once when cached with its whole class path present, else resolved
    (Maven) and written. Raises ``RuntimeError`` (Maven's output) when Maven cannot resolve it."""
    repo = repo or m2_repository()
    target = bundle.launcher_path(repo)
    first = [backport.jar_path(b, repo) for b in bundle.backports]
    if launcher_ready(target, first):
        return target
    missing = missing_tools("java", "mvn", *(["javac"] if bundle.backports else []))
    if missing:
        raise RuntimeError(f"cannot fetch {purpose or bundle.name}: {', '.join(missing)} not found on PATH")
    jars = resolve(bundle, repo, quiet)
    first = [backport.build(b, repo, jars) for b in bundle.backports]
    return write_launcher(target, bundle.main_class, [*first, *jars])


#: The packages the launcher's manifest opens to the class path (``Add-Opens``, which ``java -jar`` honours for its
#: main jar): the ``--add-opens`` that Flink's own configuration passes on Java 17 (``env.java.opts.all``). Without
#: ``java.base/java.util`` the embedded Flink's Kryo fails on Java 17 as soon as a job copies a Java list between
#: chained operators (a file sink in a ``--streaming`` job: ``InaccessibleObjectException`` ... ``Arrays$ArrayList``).
ADD_OPENS = (
    "java.base/java.io",
    "java.base/java.lang",
    "java.base/java.lang.reflect",
    "java.base/java.net",
    "java.base/java.nio",
    "java.base/java.text",
    "java.base/java.time",
    "java.base/java.util",
    "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic",
    "java.base/java.util.concurrent.locks",
    "java.base/sun.nio.ch",
)


def write_launcher(target: Path, main_class: str, jars: list[Path]) -> Path:
    """Write ``target``: a jar whose manifest names ``main_class`` and ``jars`` (relative to the launcher) and opens
    ``ADD_OPENS``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    class_path = [Path(os.path.relpath(j, target.parent)).as_posix() for j in jars]
    tmp = target.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        zf.writestr("META-INF/MANIFEST.MF", _manifest(main_class, class_path))
    tmp.replace(target)
    return target


def _manifest(main_class: str, class_path: list[str]) -> bytes:
    """A jar manifest: lines of at most 72 bytes, continued by a leading space (the jar specification)."""
    out = []
    for line in (
        "Manifest-Version: 1.0",
        f"Main-Class: {main_class}",
        "Class-Path: " + " ".join(class_path),
        "Add-Opens: " + " ".join(ADD_OPENS),
    ):
        data = line.encode()
        out.append(data[:72])
        data = data[72:]
        while data:
            out.append(b" " + data[:71])
            data = data[71:]
    return b"\r\n".join(out) + b"\r\n\r\n"


def launcher_ready(launcher: Path, first: Sequence[Path] = ()) -> bool:
    """Whether ``launcher`` exists, opens ``ADD_OPENS`` (a launcher written before they were added is written
    again), its ``Class-Path`` starts with the jars ``first`` (a launcher written before a backport is written
    again) and every jar it names is there."""
    if not launcher.exists():
        return False
    with zipfile.ZipFile(launcher) as zf:
        text = zf.read("META-INF/MANIFEST.MF").decode().replace("\r\n ", "")
    if "Add-Opens: " + " ".join(ADD_OPENS) not in text.splitlines():
        return False
    for line in text.splitlines():
        if line.startswith("Class-Path: "):
            entries = line[len("Class-Path: ") :].split()
            if [(launcher.parent / e).resolve() for e in entries[: len(first)]] != [f.resolve() for f in first]:
                return False
            return all((launcher.parent / p).exists() for p in entries)
    return False
