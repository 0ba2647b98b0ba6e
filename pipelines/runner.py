"""Running a pipeline the CLI built: the runner's options (the Flink options Beam's Python SDK does not
declare), where the runner runs, and the wait for a run (bounded: to its end; streaming on a local runner: for
``--duration`` seconds or until interrupted). Shared by the release CLI and the local-DP collector."""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import gc
import logging
import os
import signal
import sys
import threading
import time

from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

__all__ = [
    "FlinkCheckpointOptions",
    "flink_checkpoint_args",
    "pipeline_options",
    "runner_locality",
    "failed",
    "cancelled",
    "run",
    "run_as_process",
    "Run",
    "STATUSES",
    "DONE",
    "FAILED",
    "CANCELLED",
    "STOPPED",
    "SUBMITTED",
]


class FlinkCheckpointOptions(PipelineOptions):
    """Options of Beam's Java ``FlinkPipelineOptions`` that the Python SDK does not declare. Declared here so
    that the CLI accepts them (``check_cli_args``) and the portable runner passes them to the job server (an
    option left at None is not sent); ``docs/flink.md``, "Checkpoints, savepoints and faults"."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument(
            "--checkpointing_interval",
            type=int,
            default=None,
            help="Flink: checkpoint every this many milliseconds (state and the sources' positions)",
        )
        parser.add_argument(
            "--finish_bundle_before_checkpointing",
            action="store_true",
            default=None,
            help="Flink: finish the open bundle before a checkpoint barrier (added by the CLI when checkpointing)",
        )
        parser.add_argument(
            "--number_of_execution_retries", type=int, default=None, help="Flink: restarts after a task failure"
        )
        parser.add_argument(
            "--execution_retry_delay", type=int, default=None, help="Flink: milliseconds between restarts"
        )
        parser.add_argument(
            "--shutdown_sources_after_idle_ms",
            type=int,
            default=None,
            help="Flink: stop a source this many milliseconds after it finished (a checkpointed job keeps finished "
            "sources, and so never ends, unless this is set; after it no checkpoint can be taken)",
        )
        parser.add_argument(
            "--max_bundle_time_mills",
            type=int,
            default=None,
            help="Flink: end a bundle after this many milliseconds (Beam's default 1000); a timer set in a bundle "
            "fires in the next one (docs/flink.md: not a remedy for release files during a replay)",
        )
        parser.add_argument(
            "--max_bundle_size",
            type=int,
            default=None,
            help="Flink: end a bundle after this many elements (Beam's default 1000 in streaming)",
        )
        parser.add_argument(
            "--savepoint_path",
            default=None,
            help="Flink: restore the job from this savepoint (a remote cluster; an embedded [local] one ignores it)",
        )


def flink_checkpoint_args(beam_args: list[str], runner: str) -> list[str]:
    """``beam_args`` with ``--finish_bundle_before_checkpointing`` added when a Flink job checkpoints.

    Why the CLI decides this (and not the user): without it Beam's Flink operator (2.62) finishes a bundle that
    is open at a checkpoint *after* the barrier, buffers that bundle's output and sends its watermark at once;
    the buffered updates then arrive behind the watermark (applied at a later tick: every release differs) or
    never (a job that releases nothing). Measured in docs/flink.md: 3 of 4 checkpointed runs released nothing
    in 300 s, the fourth released wrong values; with the option every run equals the core. It is public
    configuration, not data: it changes when a bundle ends, never which release happens when."""
    names = {a.split("=", 1)[0] for a in beam_args}
    flink = "flink" in runner.lower() or "portable" in runner.lower()
    if flink and "--checkpointing_interval" in names and "--finish_bundle_before_checkpointing" not in names:
        return [*beam_args, "--finish_bundle_before_checkpointing"]
    return beam_args


def runner_locality(options: PipelineOptions) -> tuple[str, bool]:
    """The runner's name, and whether it runs in this process (the CLI then
    waits for a streaming job and reads the noise key here)."""
    runner = str(options.get_all_options().get("runner") or "DirectRunner")
    local = any(r in runner for r in ("Direct", "FnApi", "Portable", "Prism"))
    # an embedded Flink ([local] or [auto], the default) runs in this process: wait
    # for it like for the DirectRunner, or a streaming job would die with the CLI
    flink_master = str(options.get_all_options().get("flink_master") or "[auto]")
    return runner, local or ("Flink" in runner and flink_master in ("[local]", "[auto]"))


def pipeline_options(beam_args: list[str], streaming: bool) -> tuple[PipelineOptions, str, bool]:
    """``(options, runner, local)`` for ``beam_args`` (default the DirectRunner), with the Flink checkpoint flag
    added when needed (said on stderr) and streaming on for an unbounded source."""
    options = PipelineOptions(beam_args or ["--runner=DirectRunner"])
    runner, local = runner_locality(options)
    args = flink_checkpoint_args(beam_args, runner)
    if args != beam_args:
        print("Flink checkpointing: --finish_bundle_before_checkpointing added (docs/flink.md)", file=sys.stderr)
        options = PipelineOptions(args)
    if streaming:
        options.view_as(StandardOptions).streaming = True
    return options, runner, local


def failed(error: BaseException | None) -> int:
    """A failed run: one line and exit status 1. The exception's message is not
    shown: Beam's messages can quote the element being processed, and a payload
    must never reach a log."""
    what = f" ({type(error).__name__})" if error is not None else ""
    print(
        f"pipeline failed{what}: the run stopped before it finished; its outputs are incomplete "
        "(the runner's own log has the step; no record is shown here)",
        file=sys.stderr,
    )
    return 1


#: how a run ended (``Run.status``): the values a caller records (the budget ledger marks its release with them)
DONE, FAILED, CANCELLED, STOPPED, SUBMITTED = "done", "failed", "cancelled", "stopped", "submitted"
STATUSES = (DONE, FAILED, CANCELLED, STOPPED, SUBMITTED)


def cancelled() -> int:
    """A cancelled run (Ctrl-C, SIGINT, before a bounded run completed): one line and exit status 130 (128 +
    SIGINT, as a shell reports it). In the CLI's own process (``run_as_process``) the process then ends within
    :data:`CANCEL_EXIT_GRACE_SECONDS` even if a runner's thread would hold its shutdown."""
    _ProcessGuard.on_cancel()
    print(
        "cancelled: the run was interrupted before it completed; nothing was published (its temporary outputs are "
        "removed, the output folders are as they were)",
        file=sys.stderr,
    )
    return 130


class Run:
    """How a run ended: ``status`` (one of :data:`STATUSES`), ``result`` (the runner's result; None when there was
    none), ``exit`` (the exit status of a run that failed to start or finish, else None), ``submitted`` (a
    streaming job left running on a remote runner), ``stream_failed`` (a local streaming run that failed while it
    ran: its summary is still shown).

    ``cancelled``: a BOUNDED run interrupted (SIGINT, Ctrl-C) before it completed: its outputs are incomplete, the
    CLI discards them and exits 130. A local STREAMING run interrupted (or ended by ``--duration``) is ``stopped``:
    the releases it made were published as it went, and it ends with its summary (exit 0)."""

    def __init__(
        self,
        result=None,
        exit: int | None = None,
        submitted: bool = False,
        stream_failed: bool = False,
        status: str | None = None,
    ):
        self.result, self.exit, self.submitted, self.stream_failed = result, exit, submitted, stream_failed
        if status is None:
            status = SUBMITTED if submitted else FAILED if exit is not None or stream_failed else DONE
        assert status in STATUSES, status
        self.status = status

    @property
    def cancelled(self) -> bool:
        return self.status == CANCELLED


def _python_sigint() -> None:
    """Python's own SIGINT handler (Ctrl-C raises KeyboardInterrupt in the main thread).

    Beam's job server for a portable runner (Flink) installs its own SIGINT handler when the job starts, with the
    wrong signature (StopOnExitJobServer.stop takes no arguments: apache-beam 2.62 raises a TypeError from inside
    the wait, a traceback and exit 1); Python's own handler is put back for the wait. The job server still stops
    at exit (Beam registers that with atexit)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _cancel(result) -> None:
    """Ask the runner to stop a job (in the background: the DirectRunner's Pub/Sub reader blocks in a pull for up
    to 30 s; the caller does not wait for it more than 2 s)."""
    if result is None:
        return

    def cancel():
        with contextlib.suppress(Exception):  # a runner that cannot cancel: nothing more to do
            result.cancel()

    stopper = threading.Thread(target=cancel, name="cancel-pipeline", daemon=True)
    stopper.start()
    stopper.join(2)


#: The cyclic garbage collector's thresholds while a bounded run waits in this process (``gc.set_threshold``;
#: Python's default is (700, 10, 10)). The DirectRunner runs the whole job here and holds every stream's grouped
#: updates and the outputs in memory (~1.75 GB for a year of one-minute periods), and with the default thresholds
#: a full collection walks that whole heap every 100 young collections: ~11% of the year's CPU (12.1 s of 107.5 s,
#: 10.9 s of it in 38 full collections, measured with ``gc.callbacks``; 2.6 s with these thresholds;
#: ``docs/performance.md``, round 10). A larger
#: young generation (and rarer older ones) collects the same cyclic garbage, later: the outputs are unchanged;
#: cyclic garbage waits for up to 50,000 container allocations instead of 700. The process's own thresholds are
#: put back after the run; a process that switched collection off (threshold 0) is left as it is.
BOUNDED_GC_THRESHOLDS = (50_000, 50, 100)


@contextlib.contextmanager
def _gc_thresholds(thresholds: tuple[int, int, int]):
    before = gc.get_threshold()
    if before[0] != 0:  # 0: the process switched automatic collection off
        gc.set_threshold(*(max(a, b) for a, b in zip(before, thresholds)))
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _run_bounded(p) -> Run:
    """A bounded run to its end. SIGINT (Ctrl-C) cancels it: the interruption is noted before Python raises
    KeyboardInterrupt, because the runner may turn it into another exception on its way out (the DirectRunner
    raised a KeyError from its bundle bookkeeping when the signal arrived at the wrong moment): a run that fails
    after a SIGINT is a cancelled one, not a failed one."""
    interrupted = []

    def on_sigint(signum, frame):
        interrupted.append(signum)
        # the runner logs the interruption as an error in the step it stopped, with a traceback: the CLI says it
        # in one line instead (and Beam's messages can quote an element)
        logging.disable(logging.CRITICAL)
        raise KeyboardInterrupt

    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if main else None
    result = None
    try:
        with _gc_thresholds(BOUNDED_GC_THRESHOLDS):
            result = p.run()
            if main:  # a portable runner's job server installs its own handler when the job starts
                signal.signal(signal.SIGINT, on_sigint)
            result.wait_until_finish()
    except KeyboardInterrupt:
        _cancel(result)
        return Run(result, status=CANCELLED)
    except Exception as e:  # noqa: BLE001 - any failure of the run: a clear line and a non-zero exit
        if interrupted:
            _cancel(result)
            return Run(result, status=CANCELLED)
        return Run(exit=failed(e))
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGINT, previous)
        if interrupted:
            logging.disable(logging.NOTSET)
    return Run(result)


#: How long a stopped local streaming run of the CLI's own process (Ctrl-C, ``--duration``) may take, from its
#: stop, to print its summary and end. The runner's worker threads and the Pub/Sub and gRPC clients' threads are
#: not ours: on a loaded machine (CI, stop 37) a stopped process was still alive 60 s after its Ctrl-C. Past this
#: the process ends anyway, with the stack of every thread on stderr (``faulthandler``) and exit status 1: a
#: hang becomes a failure that says where it was, never a process to kill by hand.
STOP_GRACE_SECONDS = 75.0
#: After a stopped run's summary, the seconds the interpreter's own shutdown (joining threads, ``atexit``: Beam
#: stops a Flink job server there, which must not be cut short or its JVM outlives us) may take before the
#: process exits with the run's status regardless.
EXIT_GRACE_SECONDS = 30.0
#: After a cancelled run's line (Ctrl-C before a bounded run completed), the seconds the interpreter's shutdown
#: may take before the process exits with status 130 regardless. Nothing is left to flush (nothing was
#: published; the staged outputs are already removed); a runner's thread interrupted at the wrong moment can
#: wait for ever (CI, stop 43: a demo run cancelled as its staging folder appeared was alive 120 s after its
#: "cancelled" line; 40 repetitions here at load 2-3 all ended within 1.3 s of the signal).
CANCEL_EXIT_GRACE_SECONDS = 10.0


class _ProcessGuard:
    """Whether the CLI runs as its own process (``run_as_process``): only then may a stopped run end the
    process; a caller that imported ``main`` (a test, a notebook) is never ended by it."""

    enabled = False
    stopped = False
    cancelled = False

    @classmethod
    def on_stop(cls) -> None:
        if cls.enabled and not cls.stopped:
            cls.stopped = True
            faulthandler.dump_traceback_later(STOP_GRACE_SECONDS, exit=True, file=sys.__stderr__)

    @classmethod
    def on_cancel(cls) -> None:
        if cls.enabled:
            cls.cancelled = True


def run_as_process(main) -> int:
    """``main()`` as the process's entry point (``python -m pipelines.release``): after a local streaming run
    was stopped and has printed its summary, the process ends within :data:`EXIT_GRACE_SECONDS` even when a
    runner's thread blocks the interpreter's shutdown (a daemon timer ends it with the run's exit status, the
    outputs flushed), and within :data:`STOP_GRACE_SECONDS` of the stop in any case; after a cancelled bounded
    run (exit 130), within :data:`CANCEL_EXIT_GRACE_SECONDS` of its line."""
    _ProcessGuard.enabled = True
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>`: every thread's stack on stderr (names, never data)
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True, chain=False)
    # registered before the run, so it runs after every atexit the run registers (LIFO): Beam's own stop of a
    # job server or expansion service sends its JVM a SIGTERM and does not wait for it; a JVM busy with a
    # cancelled Flink job can ignore it (CI, stop 40: a Kafka job server's JVM outlived the test's CLI run and
    # used a core for 14 minutes). What is still running then is ended: SIGTERM, then SIGKILL after 5 s.
    atexit.register(_end_children)
    code = main()
    if _ProcessGuard.stopped or _ProcessGuard.cancelled:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if _ProcessGuard.stopped:
            grace, after, why = EXIT_GRACE_SECONDS, "summary", "the releases were published as the run went"
        else:
            grace, after, why = CANCEL_EXIT_GRACE_SECONDS, "cancellation", "nothing was published"

        def end():
            time.sleep(grace)
            # the threads' names (never their data) say which step held the shutdown
            holding = sorted(
                t.name
                for t in threading.enumerate()
                if t.is_alive() and not t.daemon and t is not threading.main_thread()
            )
            print(
                f"note: the runner's threads did not stop within {grace:.0f} s of the {after}; the process ends "
                f"without waiting for them ({why}; still running: {', '.join(holding) or 'none'})",
                file=sys.__stderr__,
                flush=True,
            )
            _end_children()
            os._exit(code if isinstance(code, int) else 1)

        threading.Thread(target=end, name="exit-guard", daemon=True).start()
    return code


def _children() -> list[int]:
    """The process ids of this process's children (Linux ``/proc``; elsewhere none are found)."""
    me, found = os.getpid(), []
    names = os.listdir("/proc") if os.path.isdir("/proc") else []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # after "pid (comm)": state, ppid, ...
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] != b"Z" and int(fields[1]) == me:
            found.append(int(name))
    return found


def _end_children(grace: float = 5.0) -> None:
    """At exit, and before the forced exit: end the processes this one started (a Flink or Kafka job server's
    JVM, which Beam's ``atexit`` only sends a SIGTERM, and not at all when the shutdown is cut short; seen on
    loaded machines: a JVM left running after its run ended): SIGTERM, then SIGKILL after ``grace`` seconds."""
    pids = _children()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        for pid in list(pids):
            with contextlib.suppress(ChildProcessError, OSError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    pids.remove(pid)
        pids = [pid for pid in pids if pid in _children()]
        time.sleep(0.1)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def run(p, *, streaming: bool, local: bool, duration: float | None) -> Run:
    """Run ``p``: a bounded run to its end (interrupted: ``cancelled``); a streaming run on a remote runner is
    submitted and left running; on a local runner it runs until interrupted, or for ``duration`` seconds, then is
    cancelled (``stopped``)."""
    if not streaming:
        return _run_bounded(p)
    try:
        result = p.run()
    except KeyboardInterrupt:  # the runner's threads may have started: the process guard covers its end too
        _ProcessGuard.on_stop()
        return Run(status=STOPPED)
    except Exception as e:  # noqa: BLE001 - any failure of the run: a clear line and a non-zero exit
        return Run(exit=failed(e))
    if not local:
        return Run(result, submitted=True)
    # Ctrl-C ends a local streaming run with its summary
    _python_sigint()
    try:
        if duration is None:
            result.wait_until_finish()
        else:
            time.sleep(duration)
    except KeyboardInterrupt:
        pass
    _ProcessGuard.on_stop()
    if "FAILED" in str(getattr(result, "state", "") or ""):
        return Run(result, stream_failed=True)
    _cancel(result)
    return Run(result, status=STOPPED)
