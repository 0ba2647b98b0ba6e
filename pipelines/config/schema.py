"""The configuration's JSON Schema, for an editor to validate a YAML file:
``python -m pipelines.config --schema > dp-dynamic.schema.json``.

The schema states the keys, their types and choices; what depends on several keys (a file source needs
``time.end``, ``lower < upper``, ...) is checked when the configuration is loaded."""

from __future__ import annotations

import argparse
import json
import sys

from pipelines.config.pipeline import PipelineConfig

__all__ = ["json_schema", "main"]


def json_schema() -> dict:
    schema = PipelineConfig.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "dp-dynamic pipeline configuration"
    # sections that may be left out (their defaults apply); queries is required
    schema["required"] = ["queries"]
    return schema


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.config", description=__doc__.split("\n\n")[0])
    ap.add_argument("--schema", action="store_true", help="print the JSON Schema of a configuration file")
    args = ap.parse_args(argv)
    if not args.schema:
        ap.print_help()
        return 2
    json.dump(json_schema(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
