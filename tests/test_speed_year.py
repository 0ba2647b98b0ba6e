"""Round 10 of issue 30 (a year of one-minute periods): each shortcut against the computation it replaces, and
each check against a broken twin of its shortcut (monkeypatched) that must fail (``docs/performance.md``,
"Round 10"). Cheap: a few seconds in all."""

from __future__ import annotations

import gc
import hashlib
import pickle
import random
import struct

import numpy as np
import pytest

from pipelines import runner as runner_mod
from transforms.core import ZCDP, ApproxDP, PureDP
from transforms.core.counters import KaryTreeCounter
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import BudgetExceededError, Ledger, Scope
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity
from transforms.core.foundation.random_stream import RandomStream, encode_coordinates
from transforms.core.static import CountMechanism, HistogramMechanism

# --- the keyed stream of a node release: NoiseSource.stream_at is NoiseSource.stream ------------------------------


def _coordinate(rng: random.Random):
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(["s", "count", "node", "q0", "région", "", "a" * 80])
    if kind == 1:
        return rng.randrange(-5, 70)
    if kind == 2:
        return rng.randint(-(2**200), 2**200)  # more than 63 digits: the long length form
    if kind == 3:
        return np.int64(rng.randrange(10**12))
    if kind == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(5)))
    return rng.randrange(10**9)


def _check_stream_at(sources) -> None:
    """For random heads and last coordinates, interleaved over the sources (two keys, a release's sub-key, noise
    off), and repeated so that kept hash states are reused: the same seed (the same words) and the same switch."""
    rng = random.Random(5)
    heads = [tuple(_coordinate(rng) for _ in range(rng.randrange(0, 6))) for _ in range(12)]
    for _ in range(400):
        src = rng.choice(sources)
        head, last = rng.choice(heads), _coordinate(rng)
        fast, plain = src.stream_at(head, last), src.stream(*head, last)
        assert fast._seed == plain._seed, (head, last)
        assert fast.disabled == plain.disabled
        assert fast.words(5).tolist() == plain.words(5).tolist()


def _sources():
    a, b = NoiseSource(b"a" * 32), NoiseSource(b"b" * 32)
    return [a, b, a.for_release(ReleaseIdentity("r1")), NoiseSource.disabled()]


def test_stream_at_is_stream():
    _check_stream_at(_sources())


def test_stream_at_check_fails_with_hash_states_shared_across_keys(monkeypatch):
    """Broken twin: the kept hash states keyed by the head only (not by the source's key)."""
    shared: dict = {}

    def stale(self, head, last):
        state = shared.get(head)
        if state is None:
            state = shared[head] = hashlib.blake2b(key=self._key, digest_size=32, person=b"dpdyn-noise-v1")
            state.update(encode_coordinates(head))
        h = state.copy()
        h.update(encode_coordinates((last,)))
        return RandomStream(h.digest(), disabled=self.is_disabled)

    monkeypatch.setattr(NoiseSource, "stream_at", stale)
    with pytest.raises(AssertionError):
        _check_stream_at(_sources())


def test_stream_at_of_a_source_that_overrides_stream_asks_it():
    """A test's spy or the privacy harness's recorder overrides ``stream``: ``stream_at`` goes through it."""
    seen = []

    class Spy(NoiseSource):
        def stream(self, *coords):
            seen.append(coords)
            return super().stream(*coords)

    Spy(b"k" * 32).stream_at(("s", "node", 1), 7)
    assert seen == [("s", "node", 1, 7)]


def test_stream_at_with_an_unhashable_coordinate_is_stream():
    src = NoiseSource(b"k" * 32)
    head = ("s", bytearray(b"ab"), 3)
    assert src.stream_at(head, 9)._seed == src.stream(*head, 9)._seed


def test_a_source_with_kept_hash_states_pickles_without_them():
    src = NoiseSource(b"k" * 32)
    src.stream_at(("s", "node", 0), 1)
    assert "_heads" in src.__dict__
    back = pickle.loads(pickle.dumps(src))
    assert back == src and "_heads" not in back.__dict__
    assert back.stream_at(("s", "node", 0), 1).words(3).tolist() == src.stream("s", "node", 0, 1).words(3).tolist()


def _run_counters(noise, periods: int = 700):
    """Estimates and bounds of two Honaker k-ary counters (a count and a 16-cell histogram) and their ledger."""
    ledger = Ledger(PureDP(1.0), keep_records=False)
    counters = [
        KaryTreeCounter(CountMechanism(16), PureDP(0.5), horizon=2000, coords=("s", "c"), scope=ledger.root.child("a")),
        KaryTreeCounter(
            HistogramMechanism(16), PureDP(0.5), horizon=2000, coords=("s", "h"), scope=ledger.root.child("b")
        ),
    ]
    batches = np.random.default_rng(1).integers(-1, 2, size=(periods, 16))
    out = []
    for t in range(periods):
        for c in counters:
            out.append(c.step(batches[t], noise).tobytes())
            out.append(c.error_bound(0.05))
        out.append(ledger.spent)
    return out


def test_counters_release_what_the_coordinate_streams_give(monkeypatch, noise):
    """Node releases through ``stream_at`` (the kept hash states) and through ``stream(*coords)`` (the former
    call): the same estimates, bounds and spends, bit for bit."""
    fast = _run_counters(noise)
    monkeypatch.setattr(NoiseSource, "stream_at", lambda self, head, last: self.stream(*head, last))
    assert _run_counters(noise) == fast


def test_counters_check_fails_with_a_broken_stream_at(monkeypatch, noise):
    """Broken twin: a stream keyed without the node's level (one hash state per counter)."""
    fast = _run_counters(noise)
    monkeypatch.setattr(NoiseSource, "stream_at", lambda self, head, last: self.stream(*head[:-1], last))
    assert _run_counters(noise) != fast


# --- the node release's calibration memo ---------------------------------------------------------------------------


def _check_release_memo(mechanism, budgets) -> None:
    """Releases with the memo against releases with the memo cleared before each call (the former calibration),
    the budget objects switching (equal values in new objects too): the same values and noise profiles."""
    rng = np.random.default_rng(3)
    src = NoiseSource(b"m" * 32)
    for i in range(120):
        budget = budgets[(i // 3) % len(budgets)]
        hist = rng.integers(0, 9, size=mechanism.domain_size)
        fast = mechanism.release(hist, budget, src.stream("r", i))
        mechanism.__dict__.pop("_release_memo", None)
        plain = mechanism.release(hist, budget, src.stream("r", i))
        assert np.array_equal(fast.values, plain.values) and fast.values.dtype == plain.values.dtype
        assert fast.noise.terms == plain.noise.terms and fast.cost is budget
        mechanism.release(hist, budget, src.stream("r", i))  # the memo of this budget, for the next round


@pytest.mark.parametrize(
    "mechanism, budgets",
    [
        (CountMechanism(16), [PureDP(0.5), PureDP(0.25), PureDP(0.5)]),
        (HistogramMechanism(4), [PureDP(1.0), PureDP(0.1)]),
        (HistogramMechanism(3, "gaussian"), [ZCDP(0.5), ApproxDP(1.0, 1e-6), ZCDP(0.05)]),
    ],
)
def test_release_memo_gives_the_former_calibration(mechanism, budgets):
    _check_release_memo(mechanism, budgets)
    assert "_release_memo" in mechanism.__dict__
    assert "_release_memo" not in repr(state_mod.to_plain(mechanism))


def test_release_memo_check_fails_with_a_memo_that_ignores_the_budget(monkeypatch):
    """Broken twin: the memo reused whatever the budget (keyed by nothing)."""
    cls = type(CountMechanism(1))
    former = cls.release

    def stale(self, hist, budget, stream):
        memo = self.__dict__.get("_release_memo")
        return former(self, hist, memo[0] if memo is not None else budget, stream)

    monkeypatch.setattr(cls, "release", stale)
    with pytest.raises(AssertionError):
        _check_release_memo(CountMechanism(16), [PureDP(0.5), PureDP(0.25)])


def test_a_release_profile_is_its_own_object():
    """Each release gets a fresh profile (a caller may add to its terms)."""
    m, b, src = CountMechanism(1), PureDP(1.0), NoiseSource(b"p" * 32)
    one, two = m.release(np.ones(1, dtype=np.int64), b, src.stream(1)), m.release(np.ones(1), b, src.stream(2))
    assert one.noise is not two.noise and one.noise.terms is not two.noise.terms


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, bool, float])
def test_count_answer_is_np_sum(dtype):
    rng = np.random.default_rng(7)
    m = CountMechanism(6)
    for _ in range(50):
        h = rng.integers(0, 2**20, size=6).astype(dtype)
        assert m._answers_units(h).tolist() == [int(np.sum(h))]


# --- the random stream: its words are the SHAKE-256 blocks, the empty buffer shared and read-only ------------------


def test_stream_words_are_the_shake_blocks():
    seed, sizes = b"w" * 32, [1, 3, 8, 2, 70, 5, 700, 9, 5000, 4]
    s = RandomStream(seed)
    got = np.concatenate([s.words(n) for n in sizes]).tolist()
    flat, counter, buf = [], 0, b""
    for n in sizes:  # the definition: block k is SHAKE-256(seed || k), of max(growth(k), what is asked) words
        if len(buf) < 8 * n:
            grow = min(RandomStream._FIRST_BLOCK_WORDS << (3 * counter), RandomStream._MAX_BLOCK_WORDS)
            buf += hashlib.shake_256(seed + struct.pack(">Q", counter)).digest(8 * max(grow, n))
            counter += 1
        flat += [int.from_bytes(buf[8 * i : 8 * i + 8], "little") for i in range(n)]
        buf = buf[8 * n :]
    assert got == flat
    fresh = RandomStream(seed)
    assert fresh._buf.size == 0 and not fresh._buf.flags.writeable  # the shared empty buffer cannot be written


# --- the ledger: Scope.total kept until the next charge; the one-number paths of a charge --------------------------


def _check_ledger(ledger: Ledger, costs) -> None:
    """Charge ``costs`` in a sequential and a parallel scope; after each charge (and a refused one) ``total`` of
    every scope is the Budget built from its totals now (the former property), and ``spent`` follows."""
    seq = ledger.root.child("seq", Scope.SEQUENTIAL)
    par = ledger.root.child("par", Scope.PARALLEL)
    scopes = [ledger.root, seq, par]
    for i, cost in enumerate(costs):
        for s in scopes:
            s.total  # noqa: B018 - fills the memo before the charge
        try:
            (seq if i % 2 else par.child(f"m{i}", Scope.SEQUENTIAL)).charge(cost, ("c", i))
        except BudgetExceededError:
            pass
        for s in scopes:
            assert s.total == ledger.budget.from_vector(s._total), (i, s.path)
        assert ledger.spent == ledger.budget.from_vector(ledger.root._total)


@pytest.mark.parametrize(
    "budget, cost",
    [(PureDP(1.0), PureDP(0.125)), (ApproxDP(1.0, 1e-5), ApproxDP(0.125, 1e-6)), (ZCDP(0.5), ZCDP(0.0625))],
)
def test_scope_total_memo_follows_the_charges(budget, cost):
    ledger = Ledger(budget, keep_records=False)
    _check_ledger(ledger, [cost] * 12)  # the last ones are refused: over the budget
    restored = state_mod.restore(state_mod.to_plain(ledger))
    assert "_total_memo" not in repr(state_mod.to_plain(ledger))
    assert restored.spent == ledger.spent


def test_scope_total_check_fails_with_a_memo_never_renewed(monkeypatch):
    """Broken twin: ``total`` kept forever (not renewed by a charge)."""

    def stale(self):
        memo = self.__dict__.get("_total_memo")
        if memo is None:
            memo = self._total_memo = (self._total, self.ledger.budget.from_vector(self._total))
        return memo[1]

    monkeypatch.setattr(Scope, "total", property(stale))
    with pytest.raises(AssertionError):
        _check_ledger(Ledger(PureDP(1.0), keep_records=False), [PureDP(0.125)] * 4)


def _check_cap(budget, cost, n_ok: int) -> None:
    """``n_ok`` charges of ``cost`` reach the cap exactly (within the tolerance) and pass; the next is refused and
    changes nothing."""
    ledger = Ledger(budget, keep_records=False)
    for i in range(n_ok):
        ledger.root.child("s").charge(cost, (i,))
    before = ledger.root._total
    with pytest.raises(BudgetExceededError):
        ledger.root.child("s").charge(cost, ("over",))
    assert ledger.root._total == before


@pytest.mark.parametrize(
    "budget, cost, n_ok",
    [(PureDP(1.0), PureDP(0.1), 10), (ZCDP(0.3), ZCDP(0.1), 3), (ApproxDP(1.0, 1e-6), ApproxDP(0.25, 2.5e-7), 4)],
)
def test_cap_check_admits_the_cap_and_refuses_past_it(budget, cost, n_ok):
    _check_cap(budget, cost, n_ok)  # 10 x 0.1 is 0.9999999999999999: within the tolerance, as before


def test_cap_check_fails_without_its_tolerance(monkeypatch):
    """Broken twin: the comparison without the relative tolerance refuses 10 x 0.1 of epsilon 1 (a float sum)."""
    from transforms.core.foundation.accounting import ledger as ledger_mod

    monkeypatch.setattr(ledger_mod, "_TOL", -1e-15)
    with pytest.raises((AssertionError, BudgetExceededError)):
        _check_cap(PureDP(1.0), PureDP(0.1), 10)


# --- the collector's thresholds during a bounded run -----------------------------------------------------------------


def _check_gc_thresholds(ctx) -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with pytest.raises(RuntimeError), ctx((50_000, 50, 100)):
            assert gc.get_threshold() == (50_000, 50, 100)
            raise RuntimeError("the run failed")
        assert gc.get_threshold() == (700, 10, 10)  # put back, after a failure too
        gc.set_threshold(0, 10, 10)  # collection switched off by the process: left so
        with ctx((50_000, 50, 100)):
            assert gc.get_threshold() == (0, 10, 10)
        gc.set_threshold(90_000, 5, 500)  # larger thresholds of the process's own are kept
        with ctx((50_000, 50, 100)):
            assert gc.get_threshold() == (90_000, 50, 500)
        assert gc.get_threshold() == (90_000, 5, 500)
    finally:
        gc.set_threshold(*before)


def test_bounded_run_thresholds_are_raised_and_put_back():
    _check_gc_thresholds(runner_mod._gc_thresholds)
    assert runner_mod.BOUNDED_GC_THRESHOLDS[0] > gc.get_threshold()[0]


def test_gc_check_fails_when_the_thresholds_are_not_put_back():
    """Broken twin: thresholds set and never put back."""
    import contextlib

    @contextlib.contextmanager
    def leaky(thresholds):
        gc.set_threshold(*thresholds)
        yield

    with pytest.raises(AssertionError):
        _check_gc_thresholds(leaky)
