"""The pure differential-privacy core: plain Python + numpy, no Apache Beam.

Everything the Beam transforms run lives here as small state machines
(``protocol.ContinualRelease``) with versioned plain-data state
(``state.py``), registered in ``mechanisms.py``, so that the same algorithms
run in memory, in tests against brute-force references, and inside stateful
DoFns.
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
from .baselines import ContinualCountOptions, ContinualCountRelease, InsertionOnlyRelease, TwoStreamBaseline
from .config import QUERY_KINDS, BudgetProfile, DynamicConfig, QuerySet
from .counters import COUNTER_NAMES, ContinualCounter, make_counter
from .errors import NoiseProfile
from .fully_dynamic import FullyDynamicOptions, FullyDynamicRelease
from .mechanisms import MECHANISMS, MechanismSpec
from .noise import NoiseSource, ReleaseIdentity, discrete_gaussian, discrete_laplace
from .outputs import EVENTS, Answer, NodeOutput, TickResult
from .partition import InfinitePartitioner, PartitionParams
from .pmw import PMWMechanism
from .protocol import ContinualRelease, NoOptions
from .registry import EntryRegistry, Rejection, TickBatch, Update
from .static import CountMechanism, HistogramMechanism, LinearQueryMechanism, Release, StaticMechanism

__all__ = [
    "Answer",
    "BudgetProfile",
    "ContinualCountOptions",
    "ContinualCountRelease",
    "ContinualRelease",
    "EVENTS",
    "EntryRegistry",
    "FullyDynamicOptions",
    "MECHANISMS",
    "MechanismSpec",
    "NoOptions",
    "QUERY_KINDS",
    "TickBatch",
    "TickResult",
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
