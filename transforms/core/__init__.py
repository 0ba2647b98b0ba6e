"""The pure differential-privacy core: plain Python + numpy, no Apache Beam.

Everything the Beam transforms run lives here as small state machines
(``protocol.ContinualRelease``) with versioned plain-data state
(``state.py``), registered in ``mechanisms.py``, so that the same algorithms
run in memory, in tests against brute-force references, and inside stateful
DoFns.
"""

from transforms.core.config import QUERY_KINDS, BudgetProfile, DynamicConfig, QuerySet
from transforms.core.continual.baselines import (
    ContinualCountOptions,
    ContinualCountRelease,
    InsertionOnlyRelease,
    TwoStreamBaseline,
)
from transforms.core.continual.fully_dynamic import FullyDynamicOptions, FullyDynamicRelease
from transforms.core.continual.partition import InfinitePartitioner, PartitionParams
from transforms.core.counters import COUNTER_NAMES, ContinualCounter, make_counter
from transforms.core.foundation.accounting import (
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
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import EntryRegistry, Rejection, TickBatch, Update
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity, discrete_gaussian, discrete_laplace
from transforms.core.foundation.outputs import EVENTS, Answer, NodeOutput, TickResult
from transforms.core.mechanisms import MECHANISMS, MechanismSpec
from transforms.core.protocol import ContinualRelease, NoOptions
from transforms.core.static.linear import (
    CountMechanism,
    HistogramMechanism,
    LinearQueryMechanism,
    Release,
    StaticMechanism,
)
from transforms.core.static.pmw import PMWMechanism

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
