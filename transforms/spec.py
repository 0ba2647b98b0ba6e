"""Time and stream layout of a release: which streams, how event time maps to
ticks, where the release starts and ends, and how late data is treated.

Everything here is public configuration: the release schedule (ticks,
origin, end) never depends on the data (``docs/privacy.md``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from apache_beam.utils.timestamp import Timestamp

__all__ = ["StreamSpec", "LATE_POLICIES", "NAMESPACE", "TIME_RANGE", "event_time_ok"]

NAMESPACE = "dp_dynamic"  # Beam metrics namespace
LATE_POLICIES = ("current", "dead_letter")
# Event times, origins and ends: seconds of the calendar's years 1 to 9999. Beam's
# timestamps hold about +-292,000 years, so every tick end and timer derived
# from such a time (plus a tick length and a lateness of at most ~30 years each)
# stays representable; a record outside this range is dead-lettered (bad_time)
# before it reaches any step that makes a Timestamp of it.
TIME_RANGE = (-62135596800.0, 253402300799.0)


def event_time_ok(t) -> bool:
    """``t`` is a finite number of seconds within :data:`TIME_RANGE`."""
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return False
    try:
        t = float(t)
    except OverflowError:
        return False
    return math.isfinite(t) and TIME_RANGE[0] <= t <= TIME_RANGE[1]


@dataclass(frozen=True)
class StreamSpec:
    """Time and stream layout shared by the transforms.

    Args:
      streams: the declared stream keys (public). Updates for other streams are
        dead-lettered; every declared stream releases on schedule.
      tick_seconds: tick length in event-time seconds.
      origin: event time of the start of tick 1.
      late_policy: an update older than its entry's last resolved tick is
        ``dead_letter``-ed (reason ``late``) or applied at the entry's
        ``current`` tick. (A tick batch that reaches a stream after the stream
        has released that tick is always applied at the stream's next tick:
        its registry effect has happened, so dropping it would corrupt state.)
      end_time: the configured, public end of the release (event time,
        exclusive): the last released tick is the last one that starts before
        ``end_time`` (so an end inside a tick is rounded up to the end of that
        tick); updates of later ticks are dead-lettered (``after_end``).
        Required for bounded input: the end of a release must never be
        derived from the data (the last tick with data is data, and a release
        schedule that depends on it leaks with probability 1).
        Optional for unbounded input (the release then runs until cancelled).
      allowed_lateness: seconds an update may arrive behind the watermark and
        still count as on time (rounded up to whole ticks, L). Tick k is
        resolved when the watermark passes the end of tick k + L, so releases
        are L ticks later; updates arriving out of order within L change nothing.
      every_ticks: the release period in ticks: every mechanism releases each
        query's current answer at every multiple of it (and at the end), data
        or not (public). None: each mechanism's own schedule (a partitioned
        one releases at its segment closes only).
    """

    streams: tuple = ("default",)
    tick_seconds: float = 60.0
    origin: float = 0.0
    late_policy: str = "current"
    end_time: float | None = None
    allowed_lateness: float = 0.0
    every_ticks: int | None = None

    def __post_init__(self):
        if not self.allowed_lateness >= 0:
            raise ValueError(f"allowed_lateness must be >= 0 seconds, got {self.allowed_lateness}")
        if not self.streams or len(set(self.streams)) != len(self.streams):
            raise ValueError("streams must be a non-empty list of distinct keys")
        if not self.tick_seconds > 0:
            raise ValueError(f"tick_seconds must be > 0, got {self.tick_seconds}")
        if self.late_policy not in LATE_POLICIES:
            raise ValueError(f"late_policy must be one of {', '.join(LATE_POLICIES)}; got {self.late_policy!r}")
        if self.every_ticks is not None and (isinstance(self.every_ticks, bool) or int(self.every_ticks) < 1):
            raise ValueError(f"every_ticks must be an integer >= 1 or None, got {self.every_ticks!r}")
        if self.end_time is not None and not self.end_time > self.origin:
            raise ValueError(f"end_time ({self.end_time}) must be after origin ({self.origin})")

    @property
    def lateness_ticks(self) -> int:
        """Allowed lateness in whole ticks (rounded up)."""
        return int(math.ceil(self.allowed_lateness / self.tick_seconds - 1e-9))

    def tick_of(self, event_time: float) -> int:
        return int(math.floor((event_time - self.origin) / self.tick_seconds)) + 1

    @property
    def end_tick(self) -> int | None:
        """The last released tick (public: from ``end_time``), or None."""
        if self.end_time is None:
            return None
        return max(1, int(math.ceil((self.end_time - self.origin) / self.tick_seconds - 1e-9)))

    def as_of(self, tick: int) -> str:
        """The event-time end of ``tick`` (what a release of that tick describes), RFC 3339 UTC."""
        from datetime import UTC, datetime

        end = self.origin + tick * self.tick_seconds
        try:
            return datetime.fromtimestamp(end, UTC).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):  # beyond the calendar's range
            return f"{end:.6f}"

    def tick_end(self, tick: int) -> Timestamp:
        """Event time at which tick ``tick`` is over (start of tick + 1), rounded *up* to Beam's whole
        microseconds. ``Timestamp.of`` truncates, and ``origin + tick * tick_seconds`` can land a hair below
        the boundary (``0.3 * 3 == 0.8999999999999999``; with an epoch origin every 0.1 s tick did): ``tick_at``
        of a timer set there gave the tick before, and the step re-armed the same timer for ever. The 1e-3
        microsecond allowance keeps float noise just above an exact boundary from adding a microsecond."""
        return Timestamp(micros=math.ceil(self.origin * 1e6 + tick * (self.tick_seconds * 1e6) - 1e-3))

    def tick_at(self, ts: Timestamp) -> int:
        """The last tick that is over at timestamp ``ts``. Counted in microseconds: ``float(ts)`` of an epoch
        time (~1.7e9 s) keeps only ~0.2 microseconds, and ``float(ts) - origin`` then fell below a 0.1 s
        tick's end."""
        micros = ts.micros if isinstance(ts, Timestamp) else float(ts) * 1e6
        return int(math.floor((micros - self.origin * 1e6) / (self.tick_seconds * 1e6) + 1e-9))
