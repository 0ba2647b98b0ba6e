"""An empirical differential-privacy test harness that runs the real pipeline.

Trials are *streams*: one pipeline run declares many streams (``t0``, ``t1``,
...) and feeds each the same records. Streams are disjoint releases whose noise
is drawn at coordinates that name the stream, so every stream is one
independent trial of the mechanism on the same input, and one Beam run gives
hundreds of samples. Running the same trials on a neighbouring input gives the
second sample; :func:`loss_lower_bound` turns the counts of an event into a
one-sided confidence bound on the privacy loss, and :func:`assert_within_loss`
fails only when the data show, with confidence ``1 - alpha``, that
``P[E | D] > e^eps P[E | D'] + delta`` for one of the checked events.

False failures: each call checks ``2 * len(events)`` one-sided bounds (both
directions), each at level ``alpha / (2 * len(events))`` split over its two
Clopper-Pearson intervals, so a correct mechanism fails a call with
probability at most ``alpha``.

Later mechanisms reuse it: give :func:`run_bounded_trials` a transform factory
and a per-trial record list, and an event on a stream's releases.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.test_pipeline import TestPipeline
from beam_runners import FNAPI_RUNNER
from scipy import stats

from transforms.records import UpdateRecord

__all__ = [
    "clopper_pearson",
    "loss_lower_bound",
    "assert_within_loss",
    "run_bounded_trials",
    "trial_streams",
]


_COLLECTED: dict = {}
_RUNS = itertools.count()


def _collect(rec, key):
    _COLLECTED[key].append(rec)


def trial_streams(n: int) -> tuple[str, ...]:
    return tuple(f"t{i:05d}" for i in range(n))


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Exact two-sided (1 - alpha) interval for a binomial proportion."""
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def loss_lower_bound(k_a: int, n_a: int, k_b: int, n_b: int, delta: float, alpha: float) -> float:
    """A (1 - alpha) lower confidence bound on the smallest eps with
    ``P_a <= e^eps P_b + delta`` (``-inf`` when the data show nothing)."""
    lo_a, _ = clopper_pearson(k_a, n_a, alpha)
    _, hi_b = clopper_pearson(k_b, n_b, alpha)
    if lo_a - delta <= 0:
        return -math.inf
    if hi_b <= 0:
        return math.inf
    return math.log((lo_a - delta) / hi_b)


def assert_within_loss(
    releases_a: dict,
    releases_b: dict,
    events: Sequence[Callable[[list], bool]],
    epsilon: float,
    delta: float = 0.0,
    alpha: float = 1e-6,
) -> list[float]:
    """Fail if some event's estimated loss provably exceeds ``(epsilon, delta)``.

    ``releases_a`` / ``releases_b``: trial -> that trial's releases on the two
    neighbouring inputs. ``events``: predicates on one trial's releases. Both
    directions (a vs b, b vs a) and each event are checked. Returns the lower
    bounds (for reporting)."""
    bounds = []
    level = alpha / (2 * len(events))
    na, nb = len(releases_a), len(releases_b)
    for event in events:
        ka = sum(1 for r in releases_a.values() if event(r))
        kb = sum(1 for r in releases_b.values() if event(r))
        for k1, n1, k2, n2 in ((ka, na, kb, nb), (kb, nb, ka, na)):
            lb = loss_lower_bound(k1, n1, k2, n2, delta, level)
            bounds.append(lb)
            assert lb <= epsilon, (
                f"privacy loss on an event is at least {lb:.3f} > {epsilon} with confidence 1 - {alpha} "
                f"(event counts {k1}/{n1} vs {k2}/{n2})"
            )
    return bounds


def run_bounded_trials(
    make_transform: Callable[[tuple], beam.PTransform],
    records: Sequence[UpdateRecord],
    trials: int,
    options: PipelineOptions | None = None,
) -> dict:
    """Run ``records`` (stream field ignored) as ``trials`` independent streams
    through one bounded pipeline; returns trial stream -> its ReleaseRecords
    sorted by (tick, query). ``make_transform(streams)`` builds the transform
    for the declared trial streams."""
    streams = trial_streams(trials)
    per_trial = [r._replace(stream=s) for s in streams for r in records]
    out: dict = {s: [] for s in streams}
    key = f"run{next(_RUNS)}"
    _COLLECTED[key] = []
    with TestPipeline(options=options or PipelineOptions(runner=FNAPI_RUNNER)) as p:
        released = (
            p
            | beam.Create(per_trial, reshuffle=False)
            | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
            | make_transform(streams)
        )
        released["answers"] | beam.Map(_collect, key)  # in-process runner: the module's dict is shared
    for rec in _COLLECTED.pop(key):
        out[rec.stream].append(rec)
    for s in out:
        out[s].sort(key=lambda r: (r.tick, r.query))
    return out
