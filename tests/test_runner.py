"""``pipelines.runner``: how a local streaming run ends when the operator presses Ctrl-C."""

import subprocess
import sys
import textwrap
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
