"""``pipelines.runner``: how a local streaming run ends when the operator presses Ctrl-C."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import os, signal, threading
    from pipelines.runner import run

    class Result:
        state = "RUNNING"
        cancelled = False

        def cancel(self):
            Result.cancelled = True

    class Pipeline:
        # as Beam's StopOnExitJobServer does when a portable (Flink) job starts: a SIGINT handler whose
        # signature is wrong (it takes no arguments), so that Ctrl-C raised a TypeError inside the wait
        def run(self):
            def stop():
                pass

            signal.signal(signal.SIGINT, stop)
            return Result()

    threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    done = run(Pipeline(), streaming=True, local=True, duration=60)
    print("ended", done.exit, done.result is not None, Result.cancelled)
    """
)


def test_ctrl_c_ends_a_local_streaming_run_with_its_summary_despite_beams_handler():
    """Ctrl-C during a local streaming run cancels the job and returns the run (its summary follows, exit 0),
    even after Beam's job server installed its broken SIGINT handler; the twin without the fix raised
    ``TypeError: StopOnExitJobServer.stop() takes 1 positional argument but 3 were given``."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["ended", "None", "True", "True"], proc.stdout


GUARD_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from pipelines import runner

    runner.EXIT_GRACE_SECONDS, runner.STOP_GRACE_SECONDS = 1.0, float(sys.argv[2])

    class Result:
        state = "RUNNING"

        def cancel(self):
            pass

    class Pipeline:
        def run(self):
            return Result()

    def main():
        # a runner's thread that never ends (not a daemon): the interpreter's shutdown would wait for it for ever
        threading.Thread(target=time.sleep, args=(3600,), name="stuck-runner-thread").start()
        if sys.argv[1].startswith("child"):  # and a child process (a job server's JVM) its atexit would stop
            if sys.argv[1] == "child-twin":
                runner._end_children = lambda *a: None  # the guard as before: the child outlives the run
            import subprocess
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(3600)"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            print("child", child.pid, flush=True)
        done = runner.run(Pipeline(), streaming=True, local=True, duration=0.1)
        if sys.argv[1] == "summary-hangs":
            time.sleep(3600)
        print("summary", done.status, flush=True)
        return 0

    sys.exit(runner.run_as_process(main) if sys.argv[1] != "in-process" else main())
    """
)


def _guarded(mode: str, stop_grace: float, timeout: float):
    return subprocess.run(
        [sys.executable, "-c", GUARD_SCRIPT, mode, str(stop_grace)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_stopped_run_ends_its_process_when_a_runner_thread_blocks_the_shutdown():
    """CI (stop 37) saw a stopped Pub/Sub run still alive 60 s after its Ctrl-C on a loaded machine. A runner's
    thread that never ends must not keep the CLI's process alive: after the summary the process exits with the
    run's status within ``EXIT_GRACE_SECONDS`` (1 s here) and says why. The twin (the same run in a process that
    does not use ``run_as_process``, as before) is still alive when the test gives up on it."""
    proc = _guarded("stuck-thread", stop_grace=60.0, timeout=30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["summary", "stopped"], proc.stdout
    assert "did not stop within 1 s of the summary" in proc.stderr
    try:
        _guarded("in-process", stop_grace=60.0, timeout=8)
    except subprocess.TimeoutExpired:
        pass
    else:
        raise AssertionError("without the guard the stuck thread should keep the process alive")


def test_the_forced_exit_ends_the_processes_the_run_started():
    """A -n 3 CI run on a loaded machine left a Kafka job server's JVM running for an hour: the forced exit
    cut short the ``atexit`` that stops it. The guard now ends the process's children (SIGTERM, then SIGKILL)
    before it exits; the twin without the guard leaves the child alive (ended here by the test)."""
    proc = _guarded("child", stop_grace=60.0, timeout=40)
    assert proc.returncode == 0, proc.stderr[-2000:]
    pid = int(proc.stdout.split()[1])
    assert proc.stdout.split()[2:] == ["summary", "stopped"], proc.stdout
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the run's child process outlived it"
    twin = _guarded("child-twin", stop_grace=60.0, timeout=40)
    pid = int(twin.stdout.split()[1])
    try:
        assert twin.returncode == 0 and _alive(pid), "without ending its children the run leaves them running"
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def test_a_stopped_run_whose_summary_hangs_ends_with_every_threads_stack():
    """The last resort: a stopped run that has not ended ``STOP_GRACE_SECONDS`` after its stop (2 s here; the
    summary itself hangs) ends with exit status 1 and the stack of every thread on stderr, so the failure says
    where it hung."""
    proc = _guarded("summary-hangs", stop_grace=2.0, timeout=30)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "summary" not in proc.stdout
    dump = proc.stderr[proc.stderr.index("Timeout (") :]
    assert "in run_as_process" in dump and dump.count("Thread 0x") >= 2, dump  # the main thread and the stuck one


EXIT_SCRIPT = textwrap.dedent(
    """
    import atexit, subprocess, sys
    from pipelines import runner

    if sys.argv[1] == "twin":
        runner._end_children = lambda *a: None  # as before: nothing ends what Beam's atexit did not

    def main():
        # a child that ignores SIGTERM (a JVM busy cancelling a Flink job), stopped at exit as Beam stops a job
        # server: one SIGTERM, no wait
        code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); "
        code += "time.sleep(3600)"
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        child.stdout.readline()  # its handler is set
        atexit.register(child.terminate)
        print("child", child.pid, flush=True)
        return 0

    sys.exit(runner.run_as_process(main))
    """
)


def test_a_child_that_ignores_its_stop_does_not_outlive_the_cli():
    """CI (stop 40) found a Kafka job server's JVM running 14 minutes after the test's CLI run had ended (and
    using a core meanwhile): Beam's atexit sends a job server one SIGTERM, which a JVM cancelling a Flink job can
    ignore. ``run_as_process`` ends what is still running at exit (SIGTERM, then SIGKILL after 5 s); the twin
    without it leaves the child alive (ended here by the test)."""
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, "fixed"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    pid = int(proc.stdout.split()[1])
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the CLI's child outlived it"
    twin = subprocess.run(
        [sys.executable, "-c", EXIT_SCRIPT, "twin"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    pid = int(twin.stdout.split()[1])
    try:
        time.sleep(1.0)
        assert twin.returncode == 0 and _alive(pid), "without ending its children the CLI leaves them running"
    finally:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


CANCEL_SCRIPT = textwrap.dedent(
    """
    import sys, threading, time
    from pipelines import runner

    runner.CANCEL_EXIT_GRACE_SECONDS = 1.0

    class Pipeline:
        def run(self):
            # a runner's thread that never ends (not a daemon), left behind by the interruption
            threading.Thread(target=time.sleep, args=(3600,), name="stuck-runner-thread").start()
            raise KeyboardInterrupt  # Ctrl-C while the bounded run runs

    def main():
        done = runner.run(Pipeline(), streaming=False, local=True, duration=None)
        assert done.status == runner.CANCELLED, done.status
        return runner.cancelled()

    sys.exit(runner.run_as_process(main) if sys.argv[1] != "in-process" else main())
    """
)


def test_a_cancelled_bounded_run_ends_its_process_when_a_runner_thread_blocks_the_shutdown():
    """CI (stop 43): a demo run cancelled by SIGINT as its staging folder appeared printed its "cancelled" line
    and was still alive 120 s later. The CLI's process now exits 130 within ``CANCEL_EXIT_GRACE_SECONDS`` (1 s
    here), naming the threads (not their data) that held it; the twin without ``run_as_process`` is still alive
    when the test gives up on it."""
    proc = subprocess.run(
        [sys.executable, "-c", CANCEL_SCRIPT, "guarded"], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 130, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert lines[-2].startswith("cancelled: the run was interrupted before it completed"), proc.stderr
    assert lines[-1].startswith("note: the runner's threads did not stop within 1 s of the cancellation"), lines
    assert lines[-1].endswith("nothing was published; still running: stuck-runner-thread)"), lines
    try:
        subprocess.run([sys.executable, "-c", CANCEL_SCRIPT, "in-process"], cwd=ROOT, capture_output=True, timeout=8)
    except subprocess.TimeoutExpired:
        pass
    else:
        raise AssertionError("without the guard the stuck thread should keep the process alive")


def test_sigusr1_prints_every_threads_stack_and_the_run_goes_on():
    """``kill -USR1 <pid>`` on the CLI's process (``run_as_process``): every thread's stack on stderr, and the run
    is not disturbed (the tests send it to a stopped run that outlives its grace, before killing it)."""
    script = textwrap.dedent(
        """
        import os, signal, sys, threading, time
        from pipelines import runner

        def main():
            threading.Thread(target=time.sleep, args=(5,), name="held", daemon=True).start()
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.5)
            print("went on")
            return 0

        sys.exit(runner.run_as_process(main))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "went on", proc.stderr[-2000:]
    assert "Current thread 0x" in proc.stderr and "\nThread 0x" in proc.stderr, proc.stderr[-2000:]  # main, held
    assert "in main" in proc.stderr and "in run_as_process" in proc.stderr, proc.stderr[-2000:]
