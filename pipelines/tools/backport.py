"""Backports of upstream Beam fixes to the Java runner we pin, compiled at fetch time; the standard library only.

We pin Beam's Flink runner at 2.62.0, the newest whose dependencies Maven Central (as these machines reach it)
resolves (``flink_jobserver.py``). A fix merged upstream after it reaches our jobs as a :class:`Backport`: the
upstream classes' sources, from the same release's ``-sources.jar`` on Maven Central, changed by exact text
edits that each must match once (a source that does not match fails the fetch with a message naming the
backport, never compiles half a fix), compiled with ``javac`` against the runner's resolved class path and put
first on the launcher's ``Class-Path`` (``maven.fetch``), so the JVM loads them in place of the release's.
Nothing of Beam's source is kept in this repository: only the edits below.

:data:`SDF_RESIDUALS`, the one backport today: **apache/beam#27648** (open since 2023), fixed upstream by
**apache/beam#39191** (merged 2026-07-01, after 2.62). On the portable Flink runner a splittable DoFn that defers
its remainder (our followed-file source, ``pipelines/io/follow.py``, every second while it follows a file)
hands each residual to ``StateAndTimerBundleCheckpointHandler``, which writes it under a new keyed-state name
(``sdf_checkpoint:<n>:<index>``) that the timer's read never clears. Flink registers a state for every name,
so the job's heap and every checkpoint grow for as long as it runs: measured on the embedded Flink (stop 53),
the read stage's checkpointed state grew by 5.0 KB per deferral, one a second, idle or reading (432 MB a day;
at that rate the job manager's memory-backed checkpoint storage, 5 MB a state, refuses it after about 17 minutes). The
backport keeps every residual of a key and window in one map state, keyed by its timer id, and removes it when
its timer fires (streaming and batch reads), as upstream does; a residual written before it (a savepoint
taken by an unpatched job server) is read from its old state, and that state cleared, so no followed file
stops on a restore.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Backport", "Edit", "SDF_RESIDUALS", "build", "jar_path", "patched_sources"]


@dataclass(frozen=True)
class Edit:
    """Exact replacements in one source file of an artifact's ``-sources.jar`` (each ``old`` must occur once)."""

    artifact: str  # group:artifact:version
    path: str  # the .java file inside the sources jar
    replacements: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Backport:
    """An upstream fix (``upstream``) applied to the release of ``edits``' artifacts, compiled into one jar."""

    name: str
    upstream: str
    edits: tuple[Edit, ...]
    compile_only: tuple[str, ...] = ()  # artifacts javac needs that the runtime class path lacks

    def digest(self) -> str:
        """Names the compiled jar: a changed edit compiles a new one."""
        text = repr((self.name, self.upstream, self.edits, self.compile_only)).encode()
        return hashlib.sha256(text).hexdigest()[:12]


_BEAM = "2.62.0"
_FN_EXECUTION = f"org.apache.beam:beam-runners-java-fn-execution:{_BEAM}"
_FLINK_RUNNER = f"org.apache.beam:beam-runners-flink-1.19:{_BEAM}"
_HANDLER = "org/apache/beam/runners/fnexecution/control/BundleCheckpointHandlers.java"
_STREAMING = "org/apache/beam/runners/flink/translation/wrappers/streaming/ExecutableStageDoFnOperator.java"
_BATCH = "org/apache/beam/runners/flink/translation/functions/FlinkExecutableStageFunction.java"

#: The reader both runners' timer callbacks call (added to the handler): the residual from the map, removed;
#: else from the state name of the unpatched handler (a restored savepoint), cleared.
_TAKE_RESIDUAL = """
    /** The map state holding every pending residual of a key and window, keyed by its timer id. */
    public static final String RESIDUALS = "sdf_checkpoint_residuals";

    /**
     * Reads and removes the residual that the SDF timer {@code timerId} was set for (dp-dynamic's backport of
     * apache/beam#39191). A residual written by the unpatched handler (one value state per residual, from a
     * savepoint) is read from that state, which is then cleared.
     */
    public static <V> WindowedValue<V> takeResidual(
        StateInternals stateInternals,
        StateNamespace namespace,
        String timerId,
        Coder<WindowedValue<V>> residualCoder) {
      MapState<String, WindowedValue<V>> residuals =
          stateInternals.state(namespace, StateTags.map(RESIDUALS, StringUtf8Coder.of(), residualCoder));
      WindowedValue<V> value = residuals.get(timerId).read();
      if (value != null) {
        residuals.remove(timerId);
        return value;
      }
      ValueState<WindowedValue<V>> legacy = stateInternals.state(namespace, StateTags.value(timerId, residualCoder));
      value = legacy.read();
      legacy.clear();
      return value;
    }

    @Override
    public void onCheckpoint(ProcessBundleResponse response) {"""

#: apache/beam#27648 fixed as apache/beam#39191 does (see the module's docstring).
SDF_RESIDUALS = Backport(
    name="beam-sdf-residuals",
    upstream="apache/beam#39191 (issue apache/beam#27648)",
    edits=(
        Edit(
            _FN_EXECUTION,
            _HANDLER,
            (
                (
                    "import org.apache.beam.sdk.coders.Coder;\n",
                    "import org.apache.beam.sdk.coders.Coder;\nimport org.apache.beam.sdk.coders.StringUtf8Coder;\n"
                    "import org.apache.beam.sdk.state.MapState;\nimport org.apache.beam.sdk.state.ValueState;\n",
                ),
                ("\n    @Override\n    public void onCheckpoint(ProcessBundleResponse response) {", _TAKE_RESIDUAL),
                (
                    "            stateInternals\n"
                    "                .state(stateNamespace, StateTags.value(tag, residualCoder))\n"
                    "                .write(\n",
                    "            stateInternals\n"
                    "                .state(stateNamespace, "
                    "StateTags.map(RESIDUALS, StringUtf8Coder.of(), residualCoder))\n"
                    "                .put(\n"
                    "                    tag,\n",
                ),
            ),
        ),
        Edit(
            _FLINK_RUNNER,
            _STREAMING,
            (
                (
                    "        WindowedValue stateValue =\n"
                    "            keyedStateInternals.state(namespace, "
                    "StateTags.value(timerId, residualCoder)).read();\n",
                    "        WindowedValue stateValue =\n"
                    "            StateAndTimerBundleCheckpointHandler.takeResidual(\n"
                    "                keyedStateInternals, namespace, timerId, (Coder) residualCoder);\n",
                ),
            ),
        ),
        Edit(
            _FLINK_RUNNER,
            _BATCH,
            (
                (
                    "            WindowedValue stateValue =\n"
                    "                sdfStateInternals\n"
                    "                    .state(timer.getNamespace(), "
                    "StateTags.value(timer.getTimerId(), inputCoder))\n"
                    "                    .read();\n",
                    "            WindowedValue stateValue =\n"
                    "                org.apache.beam.runners.fnexecution.control.BundleCheckpointHandlers\n"
                    "                    .StateAndTimerBundleCheckpointHandler.takeResidual(\n"
                    "                        sdfStateInternals, timer.getNamespace(), "
                    "timer.getTimerId(), (Coder) inputCoder);\n",
                ),
            ),
        ),
    ),
    # Beam's sources carry SpotBugs' @SuppressFBWarnings (class-file retention, not on the runner's class path)
    compile_only=("com.github.spotbugs:spotbugs-annotations:4.8.6",),
)


def jar_path(backport: Backport, repo: Path) -> Path:
    """Where ``backport`` is compiled to (beside the launchers, named by its digest)."""
    return repo / "dp-dynamic" / backport.name / backport.digest() / f"{backport.name}-{backport.digest()}.jar"


def _artifact_jar(artifact: str, repo: Path, classifier: str = "") -> Path:
    """The jar of ``artifact`` (with ``classifier``, e.g. ``sources``) in ``repo``, fetched by Maven when absent."""
    group, name, version = artifact.split(":")
    suffix = f"-{classifier}" if classifier else ""
    jar = repo.joinpath(*group.split("."), name, version, f"{name}-{version}{suffix}.jar")
    if not jar.exists():
        cmd = [
            "mvn",
            "-q",
            "-B",
            "dependency:get",
            f"-Dartifact={artifact}:jar{':' + classifier if classifier else ''}",
            "-Dtransitive=false",
            f"-Dmaven.repo.local={repo}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not jar.exists():
            raise RuntimeError(
                f"mvn could not fetch {artifact}{suffix} (exit {proc.returncode}):\n"
                f"{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
            )
    return jar


def patched_sources(backport: Backport, repo: Path) -> dict[str, str]:
    """The edited source of every file ``backport`` changes, by its path. Raises ``RuntimeError`` naming the
    backport and the file when an edit's text does not occur exactly once (the release's source moved)."""
    out: dict[str, str] = {}
    for edit in backport.edits:
        text = out.get(edit.path)
        if text is None:
            with zipfile.ZipFile(_artifact_jar(edit.artifact, repo, "sources")) as zf:
                text = zf.read(edit.path).decode("utf-8")
        for old, new in edit.replacements:
            found = text.count(old)
            if found != 1:
                raise RuntimeError(
                    f"the backport {backport.name} ({backport.upstream}) does not apply to {edit.path} of "
                    f"{edit.artifact}: a text it replaces occurs {found} times, not once:\n{old}"
                )
            text = text.replace(old, new)
        out[edit.path] = text
    return out


def build(backport: Backport, repo: Path, class_path: list[Path]) -> Path:
    """The jar of ``backport``'s classes, compiled against ``class_path`` (cached; built when absent)."""
    target = jar_path(backport, repo)
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-backport-") as tmp:
        src, classes = Path(tmp, "src"), Path(tmp, "classes")
        files = []
        for path, text in patched_sources(backport, repo).items():
            f = src / path
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text, encoding="utf-8")
            files.append(str(f))
        # Beam 2.62's own target (Java 8 class files), so the jar runs wherever the runner it patches runs
        cmd = ["javac", "-nowarn", "-Xlint:none", "--release", "8", "-d", str(classes)]
        compile_path = [*class_path, *(_artifact_jar(a, repo) for a in backport.compile_only)]
        cmd += ["-cp", os.pathsep.join(str(p) for p in compile_path), *files]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"javac could not compile the backport {backport.name}:\n{proc.stderr[-4000:]}")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\r\n\r\n")
            zf.writestr(
                "META-INF/dp-dynamic-backport.txt", f"{backport.name}: {backport.upstream}\n{backport.digest()}\n"
            )
            for cls in sorted(classes.rglob("*.class")):
                zf.write(cls, cls.relative_to(classes).as_posix())
        partial.replace(target)
    return target
