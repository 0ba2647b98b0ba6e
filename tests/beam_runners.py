"""Runner names the tests pass to ``PipelineOptions``, spelled so that every apache-beam we support takes them.

apache-beam 2.62 (the release whose Flink runner the flink tier runs, ``docs/flink.md``) has no short name
``FnApiRunner`` (``ValueError: Unexpected pipeline runner``); later releases have. The dotted path of the
class works on both.
"""

FNAPI_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
