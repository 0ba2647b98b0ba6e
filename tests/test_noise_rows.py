"""Node releases' noise drawn ahead, in blocks (issue 30, stop 63): ``discrete_laplace_rows`` gives, row by row,
what ``discrete_laplace`` gives on each seed's own stream (the same words, the same exact values, the rare
guesses inside the band decided by the one-stream sampler), and a counter that draws its nodes' noise ahead
releases the same estimates, bounds and spends as one that draws each node alone: across block ends, levels,
restores, a change of noise source and of budget. Broken twins (a block shifted by one node, one block shared by
two levels) fail the same checks."""

from __future__ import annotations

import numpy as np
import pytest

from transforms.core.counters import base as counter_base
from transforms.core.counters.base import ContinualCounter
from transforms.core.counters.factorization.kary import KaryTreeCounter
from transforms.core.foundation import samplers
from transforms.core.foundation.accounting import ZCDP, Ledger, PureDP
from transforms.core.foundation.noise import NoiseSource, RandomStream, discrete_laplace, discrete_laplace_rows
from transforms.core.foundation.random_stream import first_words
from transforms.core.foundation.state import from_plain, to_plain
from transforms.core.static import linear
from transforms.core.static.linear import CountMechanism, HistogramMechanism

SEEDS = NoiseSource(b"r" * 32).drawing_ahead().seeds_at(("s", "node", 0), 1, 3000)


def test_first_words_are_the_streams_words():
    for n in (1, 2, 8, 9, 32, 40):
        rows = first_words(SEEDS[:50], n)
        assert rows.shape == (50, n) and rows.dtype == np.uint64
        for seed, row in zip(SEEDS[:50], rows):
            assert row.tolist() == RandomStream(seed).words(n).tolist()


def test_seeds_are_the_streams_seeds():
    src = NoiseSource(b"q" * 32)
    assert src.seeds_at(("eu", "count", "node", 2), 7, 5) is None  # not marked: streams one by one
    seeds = src.drawing_ahead().seeds_at(("eu", "count", "node", 2), 7, 5)
    for i, seed in enumerate(seeds):
        assert RandomStream(seed).words(4).tolist() == src.stream("eu", "count", "node", 2, 7 + i).words(4).tolist()


@pytest.mark.parametrize("size", [1, 6, 7, 16])
@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0 / 3.0, 37.5, 9.4e6, 3e11])
def test_rows_are_the_lone_draws(size, scale):
    """Sizes on both sides of the one-stream sampler's scalar form (12 geometrics); scales from below one (many
    zeros) to a lattice sum's and past it (guesses of ~1e12)."""
    n = 3000 if size == 1 else 400
    rows = discrete_laplace_rows(SEEDS[:n], scale, size)
    assert rows.shape == (n, size) and rows.dtype == np.int64
    lone = np.stack([discrete_laplace(RandomStream(seed), scale, size) for seed in SEEDS[:n]])
    assert np.array_equal(rows, lone)


@pytest.mark.parametrize("size", [1, 16])
def test_rows_inside_the_band_are_decided_as_the_lone_draws(monkeypatch, size):
    """A band so wide (a third of every boundary) that most guesses are refused: every such row goes to the
    one-stream sampler, which reads more words of its own stream. Still the lone draws, value for value, and
    the refused rows are many (the path is exercised)."""
    monkeypatch.setattr(samplers, "INVERSION_MARGIN", 0.3)
    words = first_words(SEEDS[:300], 2 * size)
    _, ok = samplers._inversion_guess(words, -1 / 1.5)
    assert (~ok.all(axis=1)).sum() > 100
    rows = discrete_laplace_rows(SEEDS[:300], 1.5, size)
    lone = np.stack([discrete_laplace(RandomStream(seed), 1.5, size) for seed in SEEDS[:300]])
    assert np.array_equal(rows, lone)


def test_rows_broken_twin_reading_a_shifted_word_fails(monkeypatch):
    """Broken twin: rows that read each stream from its second word."""
    monkeypatch.setattr(samplers, "first_words", lambda seeds, n: first_words(seeds, n + 1)[:, 1:])
    rows = discrete_laplace_rows(SEEDS[:200], 5.0, 1)
    lone = np.stack([discrete_laplace(RandomStream(seed), 5.0, 1) for seed in SEEDS[:200]])
    assert not np.array_equal(rows, lone)


# --- counters: ahead or alone, the same releases -------------------------------------------------------------------


def _counters(horizon: int, ledger: Ledger):
    return [
        KaryTreeCounter(
            CountMechanism(16), PureDP(0.5), horizon=horizon, coords=("s", "c"), scope=ledger.root.child("a")
        ),
        KaryTreeCounter(
            HistogramMechanism(16), PureDP(0.5), horizon=horizon, coords=("s", "h"), scope=ledger.root.child("b")
        ),
    ]


def _run(noises, periods: int, horizon: int = 5000, restore_at: int | None = None):
    """Estimates, bounds and spends of a count and a 16-cell histogram k-ary counter over ``periods`` steps;
    ``noises(t)`` is the source of step t; with ``restore_at``, both counters are restored from their state there
    (what a streaming step does between firings)."""
    ledger = Ledger(PureDP(1.0), keep_records=False)
    counters = _counters(horizon, ledger)
    batches = np.random.default_rng(1).integers(-1, 2, size=(periods, 16))
    out = []
    for t in range(periods):
        if t == restore_at:
            ledger, counters = from_plain(to_plain([ledger, counters]))
        for c in counters:
            out.append(c.step(batches[t], noises(t)).tobytes())
            out.append(c.error_bound(0.05))
        out.append(ledger.spent)
    return out, counters


def _alone(monkeypatch):
    monkeypatch.setattr(ContinualCounter, "_noise_ahead", lambda self, *a: None)


SRC = NoiseSource(b"k" * 32).drawing_ahead()


def test_counters_ahead_release_what_they_release_alone(monkeypatch):
    """2,600 steps: level 0's blocks of 2, 4, ..., 1,024 and two more; level 1's (radix ~14) and above."""
    counter_base._AHEAD.clear()
    ahead, _ = _run(lambda t: SRC, 2600)
    sizes = {head[1]: b[4] for (_, head), b in counter_base._AHEAD.items() if head[-1] == 0}
    assert sizes == {"c": counter_base.AHEAD_MAX, "h": counter_base.AHEAD_VALUES // 16}  # the blocks did grow
    _alone(monkeypatch)
    assert _run(lambda t: SRC, 2600)[0] == ahead


def test_blocks_stop_at_the_horizon():
    """A horizon of 300 steps: no block reaches past the level's last node."""
    counter_base._AHEAD.clear()
    _, counters = _run(lambda t: SRC, 300, horizon=300)
    seen = 0
    for (_, head), (*_, first, size, _) in counter_base._AHEAD.items():
        seen += 1
        assert first + size - 1 <= 300 // counters[0].sizes[head[-1]]
    assert seen == 2 * counters[0].levels


def test_counters_ahead_across_a_restore_and_a_new_source(monkeypatch):
    """Restored from state at step 700 (nothing drawn ahead is kept), and a new source (another key) from step
    1,500, then the first source again from 2,000: the releases of the counters drawing alone."""
    other = NoiseSource(b"o" * 32).drawing_ahead()

    def noises(t):
        return other if 1500 <= t < 2000 else SRC

    ahead, _ = _run(noises, 2300, restore_at=700)
    _alone(monkeypatch)
    alone, _ = _run(noises, 2300, restore_at=700)
    assert ahead == alone
    assert _run(lambda t: SRC, 2300)[0] != alone  # the other key's noise did reach the releases


def test_blocks_table_is_bounded(monkeypatch):
    """Many counters (a streaming job's live streams) keep at most ``_AHEAD_HEADS`` heads' blocks: the table is
    emptied past it, and the counters still release what they release alone."""
    monkeypatch.setattr(counter_base, "_AHEAD_HEADS", 5)
    ledger = Ledger(PureDP(1.0), keep_records=False)
    many = [
        KaryTreeCounter(CountMechanism(16), PureDP(0.1), horizon=900, coords=(f"s{i}", "c"), scope=ledger.root)
        for i in range(4)
    ]
    out = []
    for _ in range(300):
        for c in many:
            out.append(c.step(np.ones(16, dtype=np.int64), SRC).tobytes())
            assert len(counter_base._AHEAD) <= 5
    _alone(monkeypatch)
    ledger = Ledger(PureDP(1.0), keep_records=False)
    again = [
        KaryTreeCounter(CountMechanism(16), PureDP(0.1), horizon=900, coords=(f"s{i}", "c"), scope=ledger.root)
        for i in range(4)
    ]
    assert out == [c.step(np.ones(16, dtype=np.int64), SRC).tobytes() for _ in range(300) for c in again]


def test_broken_twin_blocks_shifted_by_one_node_fail(monkeypatch):
    """Broken twin: a block's seeds from the node after the first (every node gets its successor's noise)."""
    ahead, _ = _run(lambda t: SRC, 400)
    real = NoiseSource.seeds_at
    monkeypatch.setattr(NoiseSource, "seeds_at", lambda self, head, first, count: real(self, head, first + 1, count))
    assert _run(lambda t: SRC, 400)[0] != ahead


def test_broken_twin_blocks_of_level_0_for_every_level_fail(monkeypatch):
    """Broken twin: a block drawn from level 0's streams whatever the level (node i of every level reuses level
    0's node i's noise)."""
    ahead, _ = _run(lambda t: SRC, 400)
    real = linear.CountMechanism.noise_rows
    monkeypatch.setattr(
        linear.CountMechanism,
        "noise_rows",
        lambda self, budget, source, head, first, n: real(self, budget, source, head[:-1] + (0,), first, n),
    )
    assert _run(lambda t: SRC, 400)[0] != ahead


# --- where the noise is drawn one release at a time ----------------------------------------------------------------


class _SpySource(NoiseSource):
    def stream(self, *coords):
        return super().stream(*coords)


def test_no_rows_where_releases_must_be_seen_one_by_one(monkeypatch):
    """A source that overrides ``stream`` (the privacy harness's recorder), noise switched off, Gaussian noise,
    a sampler replaced in the mechanisms' module (the harness's wrapper): no block is drawn."""
    m, b = CountMechanism(16), PureDP(0.5)
    head = ("s", "c", "node", 0)
    assert m.noise_rows(b, SRC, head, 1, 8).shape == (8, 1)
    assert m.noise_rows(b, _SpySource(b"k" * 32), head, 1, 8) is None
    assert m.noise_rows(b, NoiseSource.disabled(), head, 1, 8) is None
    assert HistogramMechanism(4, "gaussian").noise_rows(ZCDP(0.5), SRC, head, 1, 8) is None
    calls = []

    def wrapped(stream, scale, size=1):
        calls.append(size)
        return discrete_laplace(stream, scale, size)

    monkeypatch.setattr(linear, "discrete_laplace", wrapped)
    assert m.noise_rows(b, SRC, head, 1, 8) is None
    ledger = Ledger(PureDP(1.0), keep_records=False)
    c = _counters(5000, ledger)[0]
    for _ in range(100):
        c.step(np.zeros(16, dtype=np.int64), SRC)
    assert len(calls) == ledger.num_releases > 100  # every node through the (wrapped) sampler


def test_release_log_switches_the_blocks_off():
    """A counter whose releases are logged (the privacy harness) draws every node alone."""
    counter_base._AHEAD.clear()
    ledger = Ledger(PureDP(1.0), keep_records=False)
    c = _counters(5000, ledger)[1]
    c.release_log = []
    for _ in range(50):
        c.step(np.ones(16, dtype=np.int64), SRC)
    assert not counter_base._AHEAD and len(c.release_log) == ledger.num_releases > 50


@pytest.mark.parametrize(
    "mechanism",
    [
        CountMechanism(16),
        HistogramMechanism(16),
        linear.LinearQueryMechanism(np.array([[0.5, 0.125, 0.3], [1.0, 0.0, 0.7]])),  # a lattice of 2^-20
        linear.LinearQueryMechanism(np.array([[1, 0, 1]])),
    ],
)
def test_answers_with_rows_are_the_releases_answers(mechanism):
    """Each row of ``noise_rows`` gives, through ``answer_with_noise``, the answers of the release drawn from the
    row's own stream (the lattice's units too)."""
    budget, head = PureDP(0.7), ("eu", "q", "node", 1)
    rows = mechanism.noise_rows(budget, SRC, head, 5, 40)
    rng = np.random.default_rng(2)
    for i, row in enumerate(rows):
        h = rng.integers(-3, 9, size=mechanism.domain_size)
        lone = mechanism.answer(mechanism.release(h, budget, SRC.stream(*head, 5 + i)))
        fast = mechanism.answer_with_noise(h, budget, row)
        assert fast.dtype == lone.dtype and np.array_equal(fast, lone)


def test_an_unmarked_source_never_draws_ahead():
    """A streaming step's source (not marked by ``drawing_ahead``): every node alone, nothing kept in memory; the
    releases are those of the marked source (the same key and streams)."""
    plain = NoiseSource(b"k" * 32)
    assert plain == SRC and not plain.draws_ahead and SRC.draws_ahead
    counter_base.forget_noise_ahead()
    alone, _ = _run(lambda t: plain, 600)
    assert not counter_base._AHEAD
    assert _run(lambda t: SRC, 600)[0] == alone and counter_base._AHEAD


def test_the_mark_is_kept_by_a_release_sub_source():
    from transforms.core.foundation.noise import ReleaseIdentity

    sub = SRC.for_release(ReleaseIdentity("rel-00000001"))
    assert sub.draws_ahead and sub == NoiseSource(b"k" * 32).for_release(ReleaseIdentity("rel-00000001"))
    assert not NoiseSource(b"k" * 32).for_release(ReleaseIdentity("rel-00000001")).draws_ahead


def _interleaved(make_pair, steps: int = 300) -> list:
    """Two counters at the same coordinates, stepped one after the other (found by a review: a block must be
    used only by the budget and mechanism it was drawn for)."""
    a, b = make_pair()
    out = []
    for t in range(steps):
        for c in (a, b):
            out.append(c.step(np.full(16, t % 3, dtype=np.int64), SRC).tobytes())
    return out


def _two_budgets():
    ledger = Ledger(PureDP(20.0), keep_records=False)
    m = CountMechanism(16)  # one mechanism object: only the budget tells the two calibrations apart
    return [
        KaryTreeCounter(m, PureDP(e), horizon=900, coords=("s", "c"), scope=ledger.root.child(f"{e}"))
        for e in (0.5, 5.0)
    ]


def _two_mechanisms():
    ledger = Ledger(PureDP(20.0), keep_records=False)
    a = KaryTreeCounter(CountMechanism(16), PureDP(0.5), horizon=900, coords=("s", "c"), scope=ledger.root.child("a"))
    b = KaryTreeCounter(
        linear.LinearQueryMechanism(np.full((1, 16), 0.3)),
        PureDP(0.5),
        horizon=900,
        coords=("s", "c"),
        scope=ledger.root.child("b"),
    )
    b.node_budget = a.node_budget  # one budget object, two calibrations
    return [a, b]


@pytest.mark.parametrize("make_pair", [_two_budgets, _two_mechanisms])
def test_counters_at_one_head_with_two_calibrations_release_what_they_release_alone(monkeypatch, make_pair):
    ahead = _interleaved(make_pair)
    _alone(monkeypatch)
    assert _interleaved(make_pair) == ahead


def test_broken_twin_blocks_without_the_budget_check_fail(monkeypatch):
    """Broken twin: a block used by whatever budget asks at its head (another counter's calibration)."""
    ahead = _interleaved(_two_budgets)
    real = ContinualCounter._noise_ahead

    def shared(self, budget, noise, coords, n):
        block = counter_base._AHEAD.get((id(noise), coords[:-1]))
        return real(self, block[1] if block is not None else budget, noise, coords, n)

    monkeypatch.setattr(ContinualCounter, "_noise_ahead", shared)
    assert _interleaved(_two_budgets) != ahead
