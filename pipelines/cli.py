"""The release CLI: ``python -m pipelines.release --config configs/NAME.yaml [Beam options]``.

With no arguments it runs ``configs/demo.yaml``: the bundled demo input on the
DirectRunner, releases under ``./output/``, and a summary at the end. The other
arguments must be Beam pipeline options (``--runner``, ...). Exit status: 0
done; 1 the pipeline failed; 2 a configuration or argument error (one line,
before anything runs: a sink folder that holds another release's outputs too,
unless ``--overwrite``); 3 a bounded run dead-lettered every record it read, or
more than ``source.max_dead_letter_fraction``; 130 a bounded run cancelled by
Ctrl-C (SIGINT: nothing published). See ``docs/pipelines.md``.

This module is the CLI only (arguments, exit codes, messages); no library
module imports it. The pipeline is wired in ``pipelines.wiring``.
"""

# ruff: noqa: E402 - the third-party warning filter goes before the imports that warn

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import sys
import time

from pipelines.quiet import quiet_third_party_warnings

quiet_third_party_warnings()  # before the imports below: some of them warn

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from pydantic import TypeAdapter

from pipelines.config import (
    ConfigError,
    MissingTimeError,
    Override,
    check_environment,
    check_runner,
    load_config,
)
from pipelines.config.load import read_raw
from pipelines.io import SourceConfig
from pipelines.ledger import check_no_ledger, register_release
from pipelines.manifest import Publication, check_folders, noise_key_for, release_identity
from pipelines.rr_collect import run_collector
from pipelines.runner import cancelled, failed, pipeline_options, run
from pipelines.summary import dead_letter_failure, summary
from pipelines.wiring import PROGRESS, build_pipeline

__all__ = ["main", "ReleaseOptions", "check_cli_args", "input_time_range", "DEFAULT_CONFIG"]

DEFAULT_CONFIG = "configs/demo.yaml"


class ReleaseOptions(PipelineOptions):
    """The CLI's own flags, declared as Beam declares pipeline options (so that Beam knows them too); the
    configuration overrides (``--origin``, ``--release-id``) set keys of the configuration before it is
    validated, so every check applies to them."""

    #: flag -> the configuration key it sets
    OVERRIDES = {"--origin": "time.origin", "--release-id": "privacy.release_id"}

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument("--config", default=DEFAULT_CONFIG, help=f"YAML configuration (default {DEFAULT_CONFIG})")
        parser.add_argument(
            "--duration",
            type=float,
            default=None,
            help="streaming (Pub/Sub) runs on a local runner: stop after this many seconds and print the summary "
            "(default: run until interrupted)",
        )
        parser.add_argument(
            "--origin",
            type=float,
            default=None,
            help="override time.origin (epoch seconds), e.g. for a local replay with pipelines.tools.pubsub_tool",
        )
        parser.add_argument(
            "--release-id",
            dest="release_id",
            default=None,
            help="override privacy.release_id: continue or reproduce that release (a Dataflow --update or a Flink "
            "restore of a streaming job must pass the id of the job it replaces); default: a new release",
        )
        parser.add_argument(
            "--overwrite",
            action="store_true",
            default=False,
            help="replace the outputs of another release in the sinks' folders (default: such a folder is refused, "
            "exit 2; the same release id, a replay or a continuation, is always allowed)",
        )


_OUR_FLAGS = ("--config", "--duration", "--origin", "--release-id", "--overwrite")


@contextlib.contextmanager
def _quiet_beam_options():
    """Beam logs a warning for each unknown option while we look for them: not shown (the CLI says it)."""
    log = logging.getLogger("apache_beam.options.pipeline_options")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def _dest(flag: str) -> str:
    return flag.split("=", 1)[0].lstrip("-").replace("-", "_")


def check_cli_args(beam_args: list[str]) -> None:
    """The arguments the CLI passes to Beam must be Beam options: a positional
    argument or an unknown flag (``--confg``) is a ConfigError, not a silent
    demo run."""
    for arg in beam_args:
        if not arg.startswith("--"):
            raise ConfigError(
                f"unexpected argument {arg!r}: give the configuration as --config PATH; the other arguments are "
                "Beam pipeline options of the form --name=value"
            )
    if not beam_args:
        return
    options = PipelineOptions(beam_args)
    with _quiet_beam_options():
        known = set(options.get_all_options())
        unknown = set(options.get_all_options(retain_unknown_options=True)) - known
    for arg in beam_args:
        name = arg.split("=", 1)[0]
        if _dest(arg) in unknown:
            flags = list(_OUR_FLAGS) + sorted("--" + d for d in known)
            close = difflib.get_close_matches(name, flags, n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(
                f"unknown argument {name}{hint}: not an option of this CLI ({', '.join(_OUR_FLAGS)}) nor a Beam "
                "pipeline option"
            )
        with _quiet_beam_options():
            set_by_it = set(PipelineOptions([arg]).get_all_options(drop_default=True))
        longer = sorted(d for d in set_by_it if d != _dest(arg) and d.startswith(_dest(arg)))
        if longer and _dest(arg) not in set_by_it:  # argparse took an abbreviation for a longer option
            raise ConfigError(f"unknown argument {name} (did you mean --{longer[0]}?): give Beam options in full")


def _split_values(args: list[str]) -> list[str]:
    """``--name value`` -> ``--name=value`` for Beam flags that take a value (so that the value is not taken
    for a positional argument)."""
    args = list(args)
    i = 0
    while i < len(args) - 1:
        if args[i].startswith("--") and "=" not in args[i] and not args[i + 1].startswith("-"):
            args[i : i + 2] = [f"{args[i]}={args[i + 1]}"]
        i += 1
    return args


def input_time_range(config_path: str) -> tuple[float, float] | None:
    """The first and last event times of a local bounded source (for the operator to copy into
    ``time.origin`` / ``time.end``; never used by the pipeline)."""
    try:
        raw = read_raw(config_path)
        source = TypeAdapter(SourceConfig).validate_python(raw.get("source"))
        field = (raw.get("time") or {}).get("field", "time")
    except Exception:  # noqa: BLE001 - no hint rather than a second error
        return None
    return source.time_range(field)


def _time_text(t: float) -> str:
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return repr(t)


def _arguments(argv) -> tuple[argparse.Namespace, list[str]]:
    ap = argparse.ArgumentParser(prog="python -m pipelines.release", description=__doc__.split("\n\n")[0])
    ReleaseOptions._add_argparse_args(ap)
    args, beam_args = ap.parse_known_args(argv)
    return args, _split_values(beam_args)


def main(argv=None) -> int:
    quiet_third_party_warnings()
    args, beam_args = _arguments(argv)
    try:
        return _launch(args, beam_args)
    except KeyboardInterrupt:  # before the run started (the run's own interruption is handled where it ends)
        return cancelled()
    except MissingTimeError as e:
        span = input_time_range(args.config)
        hint = ""
        if span is not None:
            hint = (
                f"; the input's event times run from {span[0]!r} to {span[1]!r} ({_time_text(span[0])} to "
                f"{_time_text(span[1])}; shown for you to decide, the pipeline never uses them)"
            )
        print(f"configuration error: {e}{hint}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2


def _launch(args: argparse.Namespace, beam_args: list[str]) -> int:
    """Everything from the configuration to the run's exit status; a ConfigError before the run starts."""
    check_cli_args(beam_args)
    overrides = [
        Override(flag, key, getattr(args, _dest(flag)))
        for flag, key in ReleaseOptions.OVERRIDES.items()
        if getattr(args, _dest(flag)) is not None
    ]
    cfg = load_config(args.config, overrides)
    if "--update" in beam_args and not cfg.release_id:
        raise ConfigError(
            "--update replaces a running job: pass its release id (--release-id or privacy.release_id), or the "
            "updated job would draw new noise for the same release"
        )
    if cfg.mechanism_spec.input_kind == "reports":  # local DP: a collector of client reports, no noise, no key
        check_no_ledger(cfg)  # it spends no budget: privacy.ledger is refused, not ignored
        return run_collector(cfg, beam_args, duration=args.duration, overwrite=args.overwrite)
    if cfg.disable_noise:
        print(
            "WARNING: privacy.disable_noise is true: releases are EXACT and NOT differentially private. "
            "Use this for tests only.",
            file=sys.stderr,
        )
    options, runner, local = pipeline_options(beam_args, cfg.streaming)
    check_runner(cfg, runner)
    check_environment(cfg, local=local)
    release = release_identity(cfg)
    check_folders(cfg, release, overwrite=args.overwrite)  # before a key is made or anything written
    key = noise_key_for(cfg, local=local)
    if not PROGRESS.handlers:
        PROGRESS.addHandler(_StderrHandler())
        PROGRESS.setLevel(logging.INFO)
        PROGRESS.propagate = False  # once, not again through a root handler the runner installed
    # privacy.ledger: registered before the pipeline starts (over the cap: a ConfigError, exit 2), then its status
    # (from the exit status: 130 cancelled, pipelines.runner.cancelled)
    with register_release(cfg, release, local=local) as entry:
        return entry.finish(_run_release(args, cfg, options, runner, local, key, release))


def _run_release(args, cfg, options, runner, local, key, release) -> int:
    """The release's outputs (folders checked, a bounded run's staged: ``Publication``), the pipeline's run and
    its summary: the exit status."""
    out = Publication(cfg, release, overwrite=args.overwrite)
    print(f"release id: {release.release_id}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        p = beam.Pipeline(options=options)
        written = build_pipeline(p, out.cfg, key, release)
        done = run(p, streaming=cfg.streaming, local=local, duration=args.duration)
        # done.status (pipelines.runner.STATUSES: done, failed, cancelled, stopped, submitted) is how the run ended
        return _finish(done, out, written, runner, cfg, release, t0)
    except KeyboardInterrupt:
        out.discard()
        return cancelled()
    except BaseException:
        out.discard()
        raise


def _finish(done, out, written: list[str], runner: str, cfg, release, t0: float) -> int:
    """The end of a run: its summary and exit status; a bounded run's outputs published (``out.commit``) when it
    completed, discarded when it failed or was cancelled (the folders are then as they were)."""
    if done.cancelled:
        out.discard()
        return cancelled()
    if done.exit is not None:
        out.discard()
        return done.exit
    if done.submitted:
        print(f"streaming job submitted to {runner}; it runs until cancelled. Outputs: {', '.join(written)}")
        return 0
    if done.result is None:  # a streaming run interrupted before it had a result
        return 0
    written = [out.final_name(w) for w in written]
    print(summary(done.result, written, cfg, time.perf_counter() - t0, release))
    if done.stream_failed:
        return failed(None)
    if not cfg.streaming:
        picture = draw_picture(out.cfg)
        try:
            out.commit()
        except OSError as e:
            out.discard()
            print(
                f"error: the outputs could not be moved into their folders ({e.strerror or type(e).__name__})",
                file=sys.stderr,
            )
            return 1
        if picture is not None:
            print(f"picture:             {out.final_name(picture)}")
        failure = dead_letter_failure(done.result, cfg)
        if failure:
            print(f"error: {failure}", file=sys.stderr)
            return 3
    return 0


class _StderrHandler(logging.Handler):
    """Progress lines to whatever ``sys.stderr`` is at the time of writing."""

    def emit(self, record):
        sys.stderr.write(f"progress: {record.getMessage()}\n")


def draw_picture(cfg, truth: str | None = None) -> str | None:
    """A picture of the releases of a bounded run (``pipelines.plot``), from the first sink that has them in a
    local folder as JSON lines; returns its path (None: no picture)."""
    from pipelines.plot import plot_releases

    # the queries whose released values are clamped at 0 (the bands are clamped the same way)
    nonnegative = {q.name for q in cfg.queries if cfg.clamp and q.type in ("count", "histogram")}
    for folder in (sink.picture_folder for sink in cfg.sinks):
        if folder is None:
            continue
        try:
            path = plot_releases(folder, truth=truth, nonnegative=nonnegative)
        except ImportError:  # matplotlib is a dependency; a stripped install may lack it
            return None
        except Exception as e:  # noqa: BLE001 - a picture that cannot be drawn never stops a completed release
            print(f"picture:             not drawn ({type(e).__name__})", file=sys.stderr)
            return None
        return None if path is None else str(path)
    return None
