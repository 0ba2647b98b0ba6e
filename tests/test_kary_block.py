"""A bounded run's periods a block at a time (issue 30, stop 66): ``KaryTreeCounter.step_block`` gives, bit for bit,
the estimates, error bounds, state and ledger (totals and records, in order) of the same steps taken one by one,
across level ends, for a count, histograms and a lattice sum; ``ContinualCountRelease.apply_block`` (and through
it ``net_change`` and ``auto``) the same results, batch by batch, as ``apply``; and the bounded release step the
same records whatever ``BLOCK_TICKS`` groups. A block is refused where it cannot be exact (a level's first node,
noise not drawn ahead, the horizon). Broken twins (a node's carried part dropped, Honaker's weights swapped, the
noise halved or shifted by a node, a charge skipped, the bounds a step late) fail the same checks."""

from __future__ import annotations

import numpy as np
import pytest

import transforms.common as common
from transforms.common import ReleaseStep
from transforms.core import DynamicConfig, PureDP, QuerySet
from transforms.core.counters.factorization.kary import KaryTreeCounter
from transforms.core.foundation.accounting import Ledger
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity
from transforms.core.foundation.state import to_plain
from transforms.core.mechanisms import MECHANISMS
from transforms.core.static import linear
from transforms.core.static.linear import CountMechanism, HistogramMechanism, LinearQueryMechanism
from transforms.records import NoiseKey
from transforms.spec import StreamSpec

SRC = NoiseSource(b"b" * 32).drawing_ahead()
BETA = 0.05


def _mechanisms():
    levels = np.linspace(0.0, 1.0, 101).reshape(1, -1)  # a sum's levels: a real matrix, answered on the lattice
    return [CountMechanism(16), HistogramMechanism(3), HistogramMechanism(16), LinearQueryMechanism(levels)]


def _counters(horizon: int, ledger: Ledger) -> list[KaryTreeCounter]:
    return [
        KaryTreeCounter(
            m, PureDP(0.25), horizon=horizon, coords=("s", "net", f"q{i}"), scope=ledger.root.child(f"q{i}")
        )
        for i, m in enumerate(_mechanisms())
    ]


def _batches(periods: int, seed: int = 5) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-3, 4, size=(periods, m.domain_size)) for m in _mechanisms()]


def _trace(horizon: int, periods: int, blocks: dict[int, int]):
    """Every step's estimates (bytes), bounds and the ledger's spend; the final state, the ledger's records.
    ``blocks``: {first step (0-based): length} taken a block at a time (the rest one by one)."""
    ledger = Ledger(PureDP(1.0), keep_records=True)
    counters = _counters(horizon, ledger)
    batches = _batches(periods)
    out, t, taken = [], 0, 0
    while t < periods:
        n = blocks.get(t)
        plans = [c.block_plan(n, SRC) for c in counters] if n else None
        if plans and all(p is not None for p in plans):
            for s in range(t + 1, t + n + 1):
                for c in counters:
                    c.charge_step(s)
            ests = [c.step_block(b[t : t + n], p) for c, b, p in zip(counters, batches, plans)]
            bounds = [c.block_bounds(BETA, t, n) for c in counters]
            spent = repr(ledger.spent)
            for i in range(n):
                out += [x for k in range(len(counters)) for x in (ests[k][i].tobytes(), bounds[k][i])] + [spent]
            t, taken = t + n, taken + n
            continue
        assert not n or t < max(c.sizes[-1] for c in counters), f"a block at step {t} was refused"
        for c, b in zip(counters, batches):
            out += [c.step(b[t], SRC).tobytes(), c.error_bound(BETA)]
        out.append(repr(ledger.spent))
        t += 1
    state = [
        (c.t, c._acc.tobytes(), c._sums.tobytes(), c.estimate.tobytes(), list(c._digits), repr(c._terms))
        for c in counters
    ]
    records = [(r.coordinates, repr(r.cost), r.scope) for r in ledger.records]
    return out, state, records, repr(to_plain(ledger)), taken


@pytest.mark.parametrize(
    "horizon,periods,blocks",
    [
        (300, 300, {40: 7, 47: 64, 111: 1, 150: 149}),  # up to the horizon
        (5000, 2600, {1200: 1024, 2224: 300, 2524: 40}),
        (27459, 4200, {3000: 1024, 4024: 176}),  # the 10^6 benchmark's horizon: its tree
        (27459, 4200, {2800: 5, 2805: 1, 2806: 13}),
    ],
)
def test_a_block_is_the_steps_one_by_one(horizon, periods, blocks):
    one = _trace(horizon, periods, {})
    got = _trace(horizon, periods, blocks)
    assert got[4] == sum(blocks.values())  # every block was taken
    assert got[0] == one[0]
    assert got[1] == one[1]
    assert got[2] == one[2] and len(one[2]) > periods  # the charges, in the same order
    assert got[3] == one[3]


@pytest.mark.parametrize("levels", [2, 3, 4, 5, 8, 9, 12, 17])
@pytest.mark.parametrize("q", [1, 3, 16])
def test_numpy_reduces_the_levels_of_a_block_as_those_of_one_step(levels, q):
    """``step_block`` sums each step's levels with one ``np.add.reduce`` over the middle axis: on this numpy, the
    same floats as ``step``'s reduce of one ``(levels, q)`` array, for every row (values of mixed signs and
    magnitudes 1e-3..1e16, where the order of additions shows; more than 8 levels, where numpy's pairwise sum
    differs from adding in order: checked against both)."""
    rng = np.random.default_rng(levels * 100 + q)
    a = rng.standard_normal((400, levels, q)) * 10.0 ** rng.integers(-3, 17, size=(400, levels, q))
    rows = np.stack([np.add.reduce(np.ascontiguousarray(a[i]), axis=0) for i in range(len(a))])
    assert rows.tobytes() == np.add.reduce(a, axis=1).tobytes()
    in_order = a[:, 0, :].copy()
    for j in range(1, levels):
        in_order = in_order + a[:, j, :]
    if levels > 8 and q == 1:  # numpy's pairwise sum: the data shows an order of additions
        assert rows.tobytes() != in_order.tobytes()


def test_a_level_first_node_the_horizon_or_noise_not_drawn_ahead_refuse_the_block():
    ledger = Ledger(PureDP(1.0), keep_records=False)
    c = _counters(300, ledger)[0]
    assert c.block_plan(1, SRC) is None  # level 0's first node
    for _ in range(c.sizes[-1]):
        c.step(np.zeros(16, dtype=np.int64), SRC)
    assert c.block_plan(5, SRC) is not None
    assert c.block_plan(5, NoiseSource(b"b" * 32)) is None  # not marked for drawing ahead
    assert c.block_plan(5, NoiseSource.disabled().drawing_ahead()) is None
    assert c.block_plan(300 - c.t + 1, SRC) is None and c.block_plan(300 - c.t, SRC) is not None
    fresh = _counters(300, Ledger(PureDP(1.0), keep_records=False))[0]
    for _ in range(c.sizes[-1] - 1):
        fresh.step(np.zeros(16, dtype=np.int64), SRC)
    assert fresh.block_plan(1, SRC) is None  # the top level's first node is the next step


def test_a_mechanism_that_answers_its_own_way_steps_one_by_one():
    """A subclass that computes its answers its own way (its ``_answers_units``) is not answered in rows: its
    counter refuses blocks, and its rows method says so."""

    class Doubled(CountMechanism):
        def _answers_units(self, hist):
            return 2 * super()._answers_units(hist)

    ledger = Ledger(PureDP(1.0), keep_records=False)
    c = KaryTreeCounter(Doubled(4), PureDP(0.5), horizon=300, coords=("s", "d"), scope=ledger.root)
    for _ in range(c.sizes[-1]):
        c.step(np.ones(4, dtype=np.int64), SRC)
    assert not c.mechanism.answers_in_rows() and c.block_plan(3, SRC) is None
    with pytest.raises(TypeError, match="one release at a time"):
        c.mechanism.answers_with_noise(np.ones((2, 4), dtype=np.int64), PureDP(0.1), np.zeros((2, 1), dtype=np.int64))
    assert CountMechanism(4).answers_in_rows() and LinearQueryMechanism(np.ones((2, 3))).answers_in_rows()


def _multiset(xs) -> dict:
    out: dict = {}
    for x in xs:
        out[x] = out.get(x, 0) + 1
    return out


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("cols", [None, (2, 0), (1,)])
def test_block_histograms_are_the_batches_histograms(signed, cols):
    """``TickBatch.block_histograms``: row by row the histograms of ``from_counts`` of each aggregate (projected on
    ``cols``), over empty aggregates, repeated items and ticks left out; None for items or counts it does not
    count (histograms decides)."""
    rng = np.random.default_rng(3)
    sizes = (1, 3, 5)
    aggs = []
    for t in sorted(rng.choice(np.arange(10, 70), size=25, replace=False)):
        ins = [tuple(int(rng.integers(0, d)) for d in sizes) for _ in range(int(rng.integers(0, 6)))]
        dels = [(tuple(int(rng.integers(0, d)) for d in sizes), 3) for _ in range(int(rng.integers(0, 4)))]
        aggs.append((int(t), _multiset(ins), _multiset(dels), len(ins) + len(dels)))
    assert any(c > 1 for a in aggs for c in a[1].values())  # repeated items: counts above one
    picked = tuple(range(3)) if cols is None else cols
    domains = [sizes[c] for c in picked]
    got = TickBatch.block_histograms(aggs, 5, 70, domains, signed, cols)
    want = [np.zeros((70, d), dtype=np.int64) for d in domains]
    for a in aggs:
        b = TickBatch.from_counts(*a)
        projected = TickBatch(
            b.tick,
            [tuple(i[c] for c in picked) for i in b.inserts],
            [(tuple(i[c] for c in picked), t) for i, t in b.deletes],
        )
        for k, h in enumerate(projected.histograms(domains, signed)):
            want[k][b.tick - 5] = h
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want] and any(w.any() for w in want)
    for bad in ({(0, 1.5, 0): 1}, {(0, 3, 0): 1}, {(0, -1, 0): 1}, {(0, 1): 1}, {(0, "a", 0): 1}, {(0, 1, 0): 0}):
        odd = aggs + [(74, bad, {}, 1)]
        assert TickBatch.block_histograms(odd, 5, 70, sizes, signed) is None


# --- broken twins -------------------------------------------------------------------------------------------------

CASE = (5000, 1600, {1200: 300, 1500: 100})


def _twin_fails(monkeypatch, patch):
    one = _trace(*CASE[:2], {})
    patch()
    got = _trace(*CASE)
    assert got[4] == 400
    assert got[:4] != one[:4]


def test_twin_first_node_without_its_carried_part_fails(monkeypatch):
    """The part of each level's open node accumulated before the block dropped."""

    def patch():
        real_step = KaryTreeCounter.step_block

        def step_block(self, batches, plan):
            self._acc[:] = 0
            return real_step(self, batches, plan)

        monkeypatch.setattr(KaryTreeCounter, "step_block", step_block)

    _twin_fails(monkeypatch, patch)


def test_twin_honaker_weights_swapped_fails(monkeypatch):
    def patch():
        real_step = KaryTreeCounter.step_block

        def step_block(self, batches, plan):
            saved = self._weights
            self._weights = [(wc, wy) for wy, wc in saved]
            try:
                return real_step(self, batches, plan)
            finally:
                self._weights = saved

        monkeypatch.setattr(KaryTreeCounter, "step_block", step_block)

    _twin_fails(monkeypatch, patch)


@pytest.mark.parametrize("how", ["halved", "shifted"])
def test_twin_noise_halved_or_shifted_fails(monkeypatch, how):
    def patch():
        real = linear._AdditiveMechanism.answers_with_noise

        def answers(self, hists, budget, noise):
            noise = noise // 2 if how == "halved" else np.roll(noise, 1, axis=0)
            return real(self, hists, budget, noise)

        monkeypatch.setattr(linear._AdditiveMechanism, "answers_with_noise", answers)

    _twin_fails(monkeypatch, patch)


def test_twin_charge_skipped_fails(monkeypatch):
    def patch():
        real = KaryTreeCounter.charge_step
        monkeypatch.setattr(KaryTreeCounter, "charge_step", lambda self, t: None if t % 97 == 0 else real(self, t))

    _twin_fails(monkeypatch, patch)


def test_twin_bounds_a_step_late_fails(monkeypatch):
    def patch():
        real = KaryTreeCounter.block_bounds
        monkeypatch.setattr(KaryTreeCounter, "block_bounds", lambda self, beta, t0, n: real(self, beta, t0 + 1, n))

    _twin_fails(monkeypatch, patch)


# --- the release: apply_block, and the bounded step's records ------------------------------------------------------

KEY_HEX = bytes(range(32)).hex()
REL = ReleaseIdentity("test-kary-block")
END = 2500


def _config(name: str) -> DynamicConfig:
    queries = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    if name != "continual_count":
        queries += (QuerySet("amount", "histogram", domain_size=5),)
    return DynamicConfig(queries, PureDP(1.0))


def _step(name: str, every) -> ReleaseStep:
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=float(END), every_ticks=every)
    mech = MECHANISMS[name]
    # continual_count's default counter (infinite_honaker) steps one by one: its k-ary tree takes blocks
    opts = mech.options(counter="kary_tree", horizon=END) if name == "continual_count" else None
    step = ReleaseStep(spec, _config(name), mech, NoiseKey.fixed(KEY_HEX), False, options=opts, release=REL)
    step.setup()
    return step


def _aggregates(name: str, seed: int = 9) -> list:
    """Tick aggregates of a stream with data at most ticks (gaps of 1 to 40 ticks), deletes where allowed."""
    rng = np.random.default_rng(seed)
    k = len(_config(name).queries)
    domains = (1, 3, 5)[:k]
    out, live, t = [], [], 0
    while t < END - 30:
        t += int(rng.choice([1, 1, 1, 2, 5, 40]))
        ins, dele, n = {}, {}, 0
        for _ in range(int(rng.integers(0, 6))):
            item = tuple(int(rng.integers(0, d)) for d in domains)
            ins[item] = ins.get(item, 0) + 1
            live.append((item, t))
            n += 1
        if name != "continual_count" and live and rng.random() < 0.6:
            old = live.pop(int(rng.integers(0, len(live))))
            if old[1] < t:
                dele[old] = dele.get(old, 0) + 1
                n += 1
        if ins or dele:
            out.append((t, ins, dele, n))
    return out


def _answers(results) -> list:
    return [
        (a.stream, a.tick, a.segment, a.query, a.estimate.tobytes(), a.error_bound, a.beta, repr(a.spent))
        for r in results
        for a in r.answers
    ] + [(tuple(r.closes), tuple(r.events)) for r in results]


@pytest.mark.parametrize("name", ["auto", "net_change", "continual_count"])
@pytest.mark.parametrize("every", [None, 1])
def test_apply_in_blocks_is_apply_one_by_one(name, every, monkeypatch):
    """The driver's blocks (``BLOCK_TICKS`` 1024 and 37) against one ``apply`` a batch, the results batch by batch
    (estimates bit for bit, bounds, spends, closes, events), then the run to the end; and blocks were taken."""
    runs = {}
    for ticks in (1, 37, 1024):
        monkeypatch.setattr(common, "BLOCK_TICKS", ticks)
        step = _step(name, every)
        core = step.new_core("s")
        noise = step.noise.drawing_ahead()
        taken = []
        real = type(core).apply_block

        def counted(self, batches, src, real=real, taken=taken):
            out = real(self, batches, src)
            taken.append(out is not None)
            return out

        monkeypatch.setattr(type(core), "apply_block", counted)
        results = common.apply_in_order(core, _aggregates(name), noise)
        results += core.run_to_end(noise)
        runs[ticks] = (_answers(results), repr(to_plain(core)), sum(taken))
    assert runs[1][2] == 0 and runs[37][2] > 10 and runs[1024][2] >= 1
    assert runs[37][:2] == runs[1][:2]
    assert runs[1024][:2] == runs[1][:2]


def test_a_block_takes_the_aggregates_short_of_a_level_first_node():
    """``apply_block`` takes the prefix of the aggregates within its room (short of the next level's first node):
    none at the first tick (level 0's first node), then all up to the step before the next level's first one."""
    step = _step("net_change", 1)
    core = step.new_core("s")
    noise = step.noise.drawing_ahead()
    aggs = [(t, {(0, t % 3, t % 5): 1}, {}, 1) for t in range(1, 400)]
    sizes = core.counters[0].sizes
    assert core.block_room(noise) == 0 and core.apply_block(aggs, noise) is None
    core.apply(TickBatch.from_counts(*aggs[0]), noise)
    assert core.block_room(noise) == sizes[1] - 2  # steps 2 .. sizes[1] - 1
    out = core.apply_block(aggs[1:], noise)
    assert len(out) == sizes[1] - 2 and core.tick == sizes[1] - 1
    assert core.block_room(noise) == 0  # the next step is level 1's first node
    assert core.block_room(NoiseSource(b"b" * 32)) == 0  # a source that does not draw ahead: no block


def test_the_bounded_step_records_do_not_depend_on_the_blocks(monkeypatch):
    """``ReleaseStep.bounded`` (the pipeline's bounded release): the same records, in order, with blocks of 1,
    37 and 1,024 ticks."""
    out = {}
    for ticks in (1, 37, 1024):
        monkeypatch.setattr(common, "BLOCK_TICKS", ticks)
        step = _step("auto", 1)
        core = step.new_core("s")
        out[ticks] = [
            (repr(r.value), r.timestamp) for r in step.bounded(core, [_aggregates("auto")], [], step.spec.final_at)
        ]
    assert len(out[1]) == END * 3
    assert out[37] == out[1] and out[1024] == out[1]
