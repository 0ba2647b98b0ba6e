"""The pure differential-privacy core: plain Python + numpy, no Apache Beam.

Everything the Beam transforms run lives here as small state machines with
picklable state, so that the same algorithms run in memory, in tests against
brute-force references, and inside stateful DoFns.
"""

from .accounting import (
    ZCDP,
    ApproxDP,
    Budget,
    BudgetExceededError,
    Ledger,
    PrivacyUnit,
    PureDP,
    Scope,
    SeriesSplit,
    compose_parallel,
    compose_sequential,
    to_approx,
    zcdp_to_approx,
)
from .counters import COUNTER_NAMES, ContinualCounter, make_counter
from .dynamic import (
    Answer,
    BudgetProfile,
    DynamicConfig,
    FullyDynamicRelease,
    InsertionOnlyRelease,
    NodeOutput,
    QuerySet,
    TwoStreamBaseline,
)
from .errors import NoiseProfile
from .noise import NoiseSource, ReleaseIdentity, discrete_gaussian, discrete_laplace
from .partition import InfinitePartitioner, PartitionParams
from .pmw import PMWMechanism
from .registry import Rejection, Update
from .static import CountMechanism, HistogramMechanism, LinearQueryMechanism, Release, StaticMechanism

__all__ = [
    "Answer",
    "BudgetProfile",
    "DynamicConfig",
    "FullyDynamicRelease",
    "InfinitePartitioner",
    "InsertionOnlyRelease",
    "NodeOutput",
    "PMWMechanism",
    "PartitionParams",
    "QuerySet",
    "Rejection",
    "TwoStreamBaseline",
    "Update",
    "ApproxDP",
    "Budget",
    "BudgetExceededError",
    "COUNTER_NAMES",
    "ContinualCounter",
    "CountMechanism",
    "HistogramMechanism",
    "Ledger",
    "LinearQueryMechanism",
    "NoiseProfile",
    "NoiseSource",
    "PrivacyUnit",
    "PureDP",
    "Release",
    "ReleaseIdentity",
    "Scope",
    "SeriesSplit",
    "StaticMechanism",
    "ZCDP",
    "compose_parallel",
    "compose_sequential",
    "discrete_gaussian",
    "discrete_laplace",
    "make_counter",
    "to_approx",
    "zcdp_to_approx",
]
