"""Contract: every parameter, mechanism and state class survives pickling, and a
restored state machine continues exactly like the original (same outputs)."""

import copy
import pickle

import numpy as np
import pytest

from transforms.core.contribution.bounding import PersonLimit
from transforms.core.counters import COUNTER_NAMES, make_counter
from transforms.core.foundation.accounting import ZCDP, ApproxDP, Ledger, PrivacyUnit, PureDP, SeriesSplit
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import NoiseSource
from transforms.core.static import CountMechanism, HistogramMechanism, LinearQueryMechanism

VALUES = [
    PureDP(1.0),
    ApproxDP(1.0, 1e-6),
    ZCDP(0.5),
    SeriesSplit("zeta", 0.3),
    PrivacyUnit.entry(3),
    PrivacyUnit.person(2, 3, per_window=4),
    PersonLimit(2, window=4),
    NoiseProfile.single("laplace", 2.0) + NoiseProfile.single("gaussian", 3.0, 0.5),
    NoiseSource(bytes(range(32))),
    NoiseSource.disabled(),
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_values_round_trip(value):
    assert pickle.loads(pickle.dumps(value)) == value


@pytest.mark.parametrize(
    "mech",
    [CountMechanism("gaussian", 3), HistogramMechanism(4), LinearQueryMechanism([[0.5, 1.0], [1.0, 0.0]], "gaussian")],
    ids=lambda m: m.name,
)
def test_mechanisms_round_trip(mech, noise):
    m2 = pickle.loads(pickle.dumps(mech))
    b = PureDP(1.0) if mech.noise_kind == "laplace" else ZCDP(1.0)
    h = np.arange(mech.domain_size)
    r1 = mech.release(h, b, noise.stream("p"))
    r2 = m2.release(h, b, noise.stream("p"))
    np.testing.assert_array_equal(r1.values, r2.values)
    assert mech.alpha(b, 0.1) == m2.alpha(b, 0.1)


def test_ledger_round_trip():
    led = Ledger(PureDP(1.0))
    par = led.scope("tree", "level1", kind="parallel")
    par.charge(PureDP(0.3), ("a", 1))
    led2 = pickle.loads(pickle.dumps(led))
    assert led2.spent == led.spent and led2.records == led.records
    led2.scope("tree", "level1", kind="parallel").charge(PureDP(0.2))
    assert led2.spent == led.spent  # parallel member below the max


@pytest.mark.parametrize("name", COUNTER_NAMES)
@pytest.mark.parametrize("copier", [lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy], ids=["pickle", "deepcopy"])
def test_counter_state_round_trip_continues_identically(name, copier, noise, rng):
    c = make_counter(name, HistogramMechanism(3), PureDP(1.0), horizon=50, coords=("s",))
    for _ in range(13):
        c.step(rng.integers(0, 3, 3), noise)
    c2 = copier(c)
    assert c2.scope.ledger.spent == c.scope.ledger.spent
    for _ in range(20):
        b = rng.integers(0, 3, 3)
        np.testing.assert_array_equal(c.step(b, noise), c2.step(b, noise))
        assert c.error_bound(0.05) == c2.error_bound(0.05)


def test_dynamic_state_round_trip_continues_identically(noise):
    """A fully-dynamic release pickled mid-stream continues byte-identically."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
    from benchmarks.workloads import sparse_dynamic_stream
    from transforms.core import DynamicConfig, FullyDynamicRelease, InsertionOnlyRelease, QuerySet, TwoStreamBaseline
    from transforms.core.continual.partition import InfinitePartitioner, PartitionParams

    cfg = DynamicConfig((QuerySet("n"), QuerySet("h", "histogram", domain_size=100)), PureDP(1.0), profile="paper")
    batches = list(sparse_dynamic_stream(20_000, seed=4))
    half = len(batches) // 2
    for cls in (FullyDynamicRelease, TwoStreamBaseline):
        a = cls(cfg, stream="s")
        for t, ups in batches[:half]:
            a.process_tick(t, ups, noise)
        b = pickle.loads(pickle.dumps(a))
        for t, ups in batches[half:]:
            ra, rb = a.process_tick(t, ups, noise), b.process_tick(t, ups, noise)
            assert [(x.tick, x.query, x.estimate.tolist(), x.error_bound) for x in ra.answers] == [
                (x.tick, x.query, x.estimate.tolist(), x.error_bound) for x in rb.answers
            ]
    ins = InsertionOnlyRelease(DynamicConfig((QuerySet("n"),), PureDP(1.0)))
    assert pickle.loads(pickle.dumps(ins)).config == ins.config
    part = InfinitePartitioner(PartitionParams(1.0))
    part.advance(100, noise)
    p2 = pickle.loads(pickle.dumps(part))
    assert p2.advance(10**6, noise) == part.advance(10**6, noise)
