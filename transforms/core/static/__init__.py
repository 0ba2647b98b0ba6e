"""The static black boxes a continual mechanism runs: count, histogram and linear-query-matrix mechanisms
with Laplace or Gaussian noise (``linear``) and private multiplicative weights (``pmw``)."""

from transforms.core.static.linear import (
    LATTICE_BITS,
    CountMechanism,
    HistogramMechanism,
    LinearQueryMechanism,
    Release,
    StaticMechanism,
    union_alpha,
)
from transforms.core.static.pmw import PMWMechanism

__all__ = [
    "LATTICE_BITS",
    "CountMechanism",
    "HistogramMechanism",
    "LinearQueryMechanism",
    "PMWMechanism",
    "Release",
    "StaticMechanism",
    "union_alpha",
]
