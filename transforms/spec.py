"""Time and stream layout of a release: which streams, how event time maps to
ticks, where the release starts and ends, and how late data is treated.

Everything here is public configuration: the release schedule (ticks,
origin, end) never depends on the data (``docs/privacy.md``).

:class:`StreamSpec` owns every tick computation (event time to tick, tick to
timestamp, the end tick, periods, a span of seconds in ticks), in integer
microseconds: the configured numbers are read as the decimals they were
written as (``0.1`` is a tenth), an event time as Beam reads it into a
timestamp (whole microseconds, truncated), and everything after that is exact
integer arithmetic, so that a record's tick, its element timestamp and the
timers that release it always agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from fractions import Fraction

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
_MICROS = 1_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def event_time_ok(t) -> bool:
    """``t`` is a finite number of seconds within :data:`TIME_RANGE`."""
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return False
    try:
        t = float(t)
    except OverflowError:
        return False
    return math.isfinite(t) and TIME_RANGE[0] <= t <= TIME_RANGE[1]


def micros_of(event_time) -> int:
    """An event time (seconds) in whole microseconds, as Beam's ``Timestamp.of`` reads it (truncated), so a
    record's tick and its element timestamp agree."""
    return int(event_time * _MICROS)


def _decimal(seconds) -> Fraction:
    """A configured number of seconds as the decimal it was written as: ``0.1`` is exactly a tenth (the
    float's shortest repr), not the binary fraction nearest to it."""
    if isinstance(seconds, int):
        return Fraction(seconds)
    seconds = float(seconds)
    if not math.isfinite(seconds):
        raise ValueError(f"times and spans must be finite numbers of seconds, got {seconds}")
    return Fraction(repr(seconds))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class StreamSpec:
    """Time and stream layout shared by the transforms.

    Args:
      streams: the declared stream keys (public). Updates for other streams are
        dead-lettered; every declared stream releases on schedule.
      tick_seconds: tick length in event-time seconds.
      origin: event time of the start of tick 1.
      late_policy: an update is late when its tick is at or before the last
        tick its own key has resolved (its entry's; under the person unit, its
        person's, which is checked first): ``dead_letter`` sends it to the
        dead letters (reason ``late``), ``current`` applies it at that key's
        next tick. Either way nothing is ever applied to a tick already
        released: a tick batch that reaches a stream after the stream has
        released that tick is applied at the stream's next tick (counter
        ``late_batches_applied_at_current_tick``; its registry effect has
        happened, so dropping it would corrupt state). So the first update of
        a NEW entry (entry unit) is never ``late``: its key has resolved
        nothing, and if its tick was released it is applied at the stream's
        next tick under either policy. Why per key: the decision must depend on
        public things only (ticks and the watermark: a key resolves tick t when
        the watermark passes t's close) and on the key's own records, never on
        other entries' data; a Beam step cannot read the watermark, and a
        stream-wide "last tick seen" would be made of other entries' updates
        (one person's records would decide whether another's are dropped).
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

    Tick ``k`` covers the microseconds ``[origin + (k-1) s, origin + k s)`` (``s``: the tick length), each
    bound rounded up to a whole microsecond. The fields are the whole of its ``repr``, which keys the noise.
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
        # The grid in microseconds, over one denominator: tick k ends at (origin + k * tick) / den
        # microseconds. Not a field (the fields are the repr, which keys the noise).
        tick, origin = _decimal(self.tick_seconds) * _MICROS, _decimal(self.origin) * _MICROS
        den = math.lcm(tick.denominator, origin.denominator)
        grid = (int(origin * den), int(tick * den), den)
        end_tick = None
        if self.end_time is not None:
            end = _decimal(self.end_time) * _MICROS
            end_tick = max(1, math.ceil((end - origin) / tick))
        object.__setattr__(self, "_grid", grid)
        object.__setattr__(self, "_end_tick", end_tick)
        object.__setattr__(self, "_lateness_ticks", self.ticks_in(self.allowed_lateness))

    # -- spans ------------------------------------------------------------------------

    def ticks_in(self, seconds) -> int:
        """A span of ``seconds`` in whole ticks, rounded up (the allowed lateness, a mutation window)."""
        return math.ceil(_decimal(seconds) / _decimal(self.tick_seconds))

    @property
    def lateness_ticks(self) -> int:
        """Allowed lateness in whole ticks (rounded up): L."""
        return self._lateness_ticks

    @property
    def end_tick(self) -> int | None:
        """The last released tick (public: from ``end_time``), or None: the last tick that starts before
        ``end_time``."""
        return self._end_tick

    @property
    def end_periods(self) -> int | None:
        """Release periods of ``every_ticks`` ticks up to the end tick, the last one partial (a mechanism's
        horizon in periods); None without an end or a period."""
        if self._end_tick is None or self.every_ticks is None:
            return None
        return _ceil_div(self._end_tick, int(self.every_ticks))

    # -- event time <-> ticks -----------------------------------------------------------

    def tick_of(self, event_time) -> int:
        """The tick an event time falls in: the first tick not over at ``event_time`` (whole microseconds,
        as Beam stamps the element), so ``tick_of(t) == tick_at(Timestamp.of(t)) + 1``."""
        origin, tick, den = self._grid
        return (int(event_time * _MICROS) * den - origin) // tick + 1  # micros_of(event_time), inlined

    def tick_end(self, tick: int) -> Timestamp:
        """The time at which tick ``tick`` is over (start of tick + 1), rounded *up* to Beam's whole
        microseconds (``Timestamp.of`` would truncate: ``0.3 * 3 == 0.8999999999999999``, and a timer set a
        hair early fired for the tick before)."""
        origin, length, den = self._grid
        return Timestamp(micros=_ceil_div(origin + tick * length, den))

    def tick_at(self, ts) -> int:
        """The last tick that is over at timestamp ``ts`` (the inverse of :meth:`tick_end`)."""
        origin, length, den = self._grid
        return (Timestamp.of(ts).micros * den - origin) // length

    def tick_middle(self, tick: int) -> Timestamp:
        """The middle of tick ``tick``, rounded up to a whole microsecond."""
        origin, length, den = self._grid
        return Timestamp(micros=_ceil_div(2 * origin + (2 * tick - 1) * length, 2 * den))

    # -- when the steps act ---------------------------------------------------------------

    def closes_at(self, tick: int) -> Timestamp:
        """When no more on-time input of ``tick`` can come: the end of tick + L. An entry's updates of the
        tick are resolved then, and their tick aggregates carry this time."""
        return self.tick_end(tick + self.lateness_ticks)

    def closed_tick(self, ts) -> int:
        """The last tick closed at ``ts`` (the inverse of :meth:`closes_at`)."""
        return self.tick_at(ts) - self.lateness_ticks

    def final_at(self, tick: int) -> Timestamp:
        """When a per-stream step has all of ``tick``'s input (its aggregates, emitted when the tick closes,
        have arrived): the close of the next tick, the end of tick + 1 + L. The step applies and releases
        ``tick`` then, and every record of ``tick`` carries this time, whichever firing computed it."""
        return self.closes_at(tick + 1)

    def final_tick(self, ts) -> int:
        """The last tick whose input is final at ``ts`` (the inverse of :meth:`final_at`)."""
        return self.closed_tick(ts) - 1

    def as_of(self, tick: int) -> str:
        """The event-time end of ``tick`` (what a release of that tick describes), RFC 3339 UTC, to the
        nearest microsecond."""
        origin, length, den = self._grid
        # round(Fraction(origin + tick * length, den)) in integers (half to even, as Fraction rounds); one call a
        # released tick
        end, rem = divmod(origin + tick * length, den)
        if 2 * rem > den or (2 * rem == den and end & 1):
            end += 1
        try:
            return (_EPOCH + timedelta(microseconds=end)).isoformat().replace("+00:00", "Z")
        except OverflowError:  # beyond the calendar's range
            sign, end = ("-" if end < 0 else ""), abs(end)
            return f"{sign}{end // _MICROS}.{end % _MICROS:06d}"
