"""``pipelines.io.fnapi_metrics``: the FnApiRunner's metrics of a stage with more than a thousand bundles (a
followed file: one bundle a read) can be read (Beam 2.62 nests a generator per bundle and fails with
``RecursionError`` when the run's metrics are queried, as the CLI's summary does)."""

from __future__ import annotations

import sys

import apache_beam as beam
import pytest
from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker
from apache_beam.metrics import Metrics, monitoring_infos
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.runners.portability.fn_api_runner import fn_runner
from apache_beam.transforms.core import RestrictionProvider
from apache_beam.utils.timestamp import Duration

import pipelines.io.follow  # noqa: F401  (installs the module below, as the followed source does)
from pipelines.io import fnapi_metrics

BUNDLES = 1200  # past Python's recursion limit of 1,000 frames


class _Offsets(RestrictionProvider):
    def initial_restriction(self, n):
        return OffsetRange(0, n)

    def create_tracker(self, restriction):
        return OffsetRestrictionTracker(restriction)

    def restriction_size(self, n, restriction):
        return restriction.size()


class _OneAReadFn(beam.DoFn):
    """Claims one offset a call and defers the rest: one bundle a call on the FnApiRunner, like a followed read."""

    def process(self, n, tracker=beam.DoFn.RestrictionParam(_Offsets())):  # noqa: B008 (Beam idiom)
        pos = tracker.current_restriction().start
        if tracker.try_claim(pos):
            Metrics.counter("fnapi_metrics_test", "reads").inc()
            yield pos
            tracker.defer_remainder(Duration.of(0))


def _reads_counted() -> int:
    """The run's count of reads, queried as the CLI's summary does, under Python's default recursion limit (another
    test module of the same worker may have raised it: ``tests/architecture.py``)."""
    p = beam.Pipeline(runner="DirectRunner")
    p | beam.Create([BUNDLES]) | beam.ParDo(_OneAReadFn()) | beam.Map(lambda x: x)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        result = p.run()
        result.wait_until_finish()
        counters = result.metrics().query(MetricsFilter().with_namespace("fnapi_metrics_test"))["counters"]
    finally:
        sys.setrecursionlimit(limit)
    return sum(c.committed for c in counters)


def test_the_metrics_of_a_stage_of_many_bundles_can_be_read_and_are_exact():
    assert fnapi_metrics.installed()
    assert _reads_counted() == BUNDLES  # every bundle's counter merged, none lost


def test_beams_own_consolidation_fails_there(monkeypatch):
    """The twin: Beam's generator put back, the same run fails when its metrics are read."""
    monkeypatch.setattr(fn_runner, "consolidate_monitoring_infos", monitoring_infos.consolidate)
    with pytest.raises(RecursionError):
        _reads_counted()


def test_install_leaves_a_consolidation_it_does_not_know(monkeypatch):
    def other(metrics, key=None):
        return list(metrics)

    monkeypatch.setattr(fn_runner, "consolidate_monitoring_infos", other)
    assert not fnapi_metrics.install() and fn_runner.consolidate_monitoring_infos is other
    monkeypatch.setattr(fn_runner, "consolidate_monitoring_infos", monitoring_infos.consolidate)
    assert fnapi_metrics.install() and fnapi_metrics.installed()
