"""The main pipeline: ``python -m pipelines.release --config configs/NAME.yaml [Beam options]``.

With no arguments it runs ``configs/demo.yaml``: the bundled demo input on the
DirectRunner, releases under ``./output/``, and a summary at the end. Unknown
arguments are passed to Beam as pipeline options (``--runner``, ...).

Sources: JSON lines, CSV (with a header) and Avro files (globs, bounded), a
Pub/Sub subscription (JSON payloads, streaming), followed files and Kafka
(``pipelines.io``). Sinks: JSON lines and Avro files (schemas in
``pipelines/schemas``), Pub/Sub and Kafka topics. See ``docs/pipelines.md``.

The command's entry point only: the CLI is ``pipelines.cli``, the wiring
``pipelines.wiring``, the output records ``pipelines.outputs``, the release
manifest ``pipelines.manifest``. The names below are re-exported where the
README and the docs show them; no library module imports this one (run as
``-m``, it is ``__main__``, and a second import would declare its options twice).
"""

import sys

from pipelines.cli import DEFAULT_CONFIG, ReleaseOptions, check_cli_args, input_time_range, main
from pipelines.manifest import MANIFEST, check_and_write_manifest, noise_key_for, release_identity, release_manifest
from pipelines.outputs import mechanism_plan, spend_in_units
from pipelines.runner import FlinkCheckpointOptions, flink_checkpoint_args, run_as_process, runner_locality
from pipelines.summary import dead_letter_failure
from pipelines.wiring import build_pipeline, parse_line

__all__ = [
    "main",
    "build_pipeline",
    "parse_line",
    "check_cli_args",
    "flink_checkpoint_args",
    "FlinkCheckpointOptions",
    "ReleaseOptions",
    "noise_key_for",
    "release_identity",
    "release_manifest",
    "check_and_write_manifest",
    "mechanism_plan",
    "spend_in_units",
    "runner_locality",
    "dead_letter_failure",
    "input_time_range",
    "DEFAULT_CONFIG",
    "MANIFEST",
]

if __name__ == "__main__":
    sys.exit(run_as_process(main))
