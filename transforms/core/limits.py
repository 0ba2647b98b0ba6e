"""The horizon and encoding limits of the continual counters and of a bounded release, stated once so that a
configuration is refused before its run rather than failing mid-way (``pipelines/config/mechanism.py`` checks
them at load, with the limit and the largest ``time.end`` allowed in the message).

* ``sqrt_factorization``: its exact int64 lattice encoder needs the snapped coefficients to sum to less than 2^31
  (``LatticeTables``, ``docs/counters.md``): a horizon of at most :data:`SQRT_MAX_HORIZON` steps (the
  coefficients do not depend on the horizon, so this is the prefix of their sum; ``tests/test_validation_limits.py``
  recomputes it).
* ``blt``: the design horizon is the horizon rounded up to a power of two, and the BLT table covers 2^3 to 2^20
  (``blt_params``): a horizon of at most :data:`BLT_MAX_HORIZON` steps.
* every bounded release: it releases every period up to its end, each stream stepping every counter through them
  all, data or not, so its work and output grow with the number of periods: at most :data:`MAX_PERIODS`
  (2^22, a deliberate choice: 80 years of 10-minute periods, 48 days of 1-second periods; the lattice counters
  stop earlier).
"""

from __future__ import annotations

__all__ = ["MAX_PERIODS", "SQRT_MAX_HORIZON", "BLT_MAX_HORIZON", "counter_limit", "periods_limit"]

MAX_PERIODS = 1 << 22
SQRT_MAX_HORIZON = 3_294_201  # the largest T with sum_{k<T} round(c_k 2^20) < 2^31
BLT_MAX_HORIZON = 1 << 20  # the largest design horizon of BLT_TABLE


def counter_limit(counter: str | None) -> tuple[int, str] | None:
    """``(largest horizon in steps, why)`` of a counter that has one (None: no horizon limit of its own)."""
    if counter == "sqrt_factorization":
        return SQRT_MAX_HORIZON, "the sqrt_factorization counter's int64 lattice encoding (coefficients sum < 2^31)"
    if counter == "scaled_sqrt":
        return SQRT_MAX_HORIZON, "the scaled_sqrt counter's int64 lattice encoding (as sqrt_factorization's)"
    if counter == "blt":
        return BLT_MAX_HORIZON, "the blt counter's table of design horizons (2^3 to 2^20)"
    return None


def periods_limit(counters) -> tuple[int, str]:
    """``(largest number of periods, why)`` of a bounded release whose counters over periods are ``counters``
    (names; None for a mechanism without one): the smallest of :data:`MAX_PERIODS` and the counters' limits."""
    best = (MAX_PERIODS, "the largest bounded release (every stream steps through every period up to the end)")
    for c in counters:
        lim = counter_limit(c)
        if lim is not None and lim[0] < best[0]:
            best = lim
    return best
