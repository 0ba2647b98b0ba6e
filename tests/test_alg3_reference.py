"""Alg. 3 (000 §4.2) under a scripted noise source, against an independent reference.

With the noise *switched off* the error bounds are 0, so Alg. 3 never halts and
restarts exactly when half the node is deleted: restarts and halting are
invisible there. Here a scripted :class:`NoiseSource` keeps the noise *on*
(public bounds gamma > 0) but makes every draw a chosen value:

* every sparse-vector query halts at once, so segment j closes at tick j
  (coordinates holding ``"svt"``; the threshold draw, ``"threshold"``, is 0);
* ``n_hat`` of (node i, round r) is ``n_hat = |D(v)| + z(i, r)`` with a
  scripted ``z`` (default 0), drawn at the paper's scale 1/eps_r;
* every other draw (``static``, ``del_count``, ``del_query``, ...) is 0.

Coordinates are matched by their named components, never by position or by
query index. The library's answers and the (tick, node, round) of every
``n_hat`` draw (a round start) are compared with :func:`reference`, a small
count-only implementation of ALGORITHMS.md §4.1-4.2 written for this file:
node i at level l = 1 + ctz(i) covers insertion segments (i - lowbit(i), i]
and is queried at segments i .. i + lowbit(i) - 1; eps_v = eps_tree 6/(pi^2 l^2),
eps_tree = eps/2 (the paper profile's split), eps_r = 3 eps_v/(2 pi^2 r^2),
beta_r = beta/(pi^2 r^2); restart iff n_del_hat > n_hat/2 + 2 gamma; at a
restart halt iff the new n_hat < 2 gamma, gamma of the round that just ended
(the documented choice). gamma is the public (1 - beta_r) bound of the
insertion-only deletion counter (the black box M_Lap-Ins of Alg. 3), taken from
the library's ``infinite`` counter, whose bounds are tested in
test_coverage.py.

No randomness: every test here is deterministic.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import pkgutil
from collections import defaultdict

import numpy as np
import pytest

from transforms.core import (
    CountMechanism,
    DynamicConfig,
    FullyDynamicRelease,
    NoiseSource,
    PureDP,
    QuerySet,
    Update,
    make_counter,
)
from transforms.core.foundation.noise import RandomStream, as_ratio_up, discrete_laplace

# ---------------------------------------------------------------------------
# The only code that knows library internals (update it after a refactor).
# ---------------------------------------------------------------------------


def _alg3_node_class():
    """The class running Alg. 3 at one tree node, found by its methods
    (``start_round``, ``step``, ``halted_bound``) in the modules of
    ``transforms.core``. The twins below patch it; they use its attributes
    ``size`` (exact live content) and ``n_hat`` and the ``gamma_end``
    parameter of ``start_round``."""
    import transforms.core as core

    found = set()
    for info in pkgutil.walk_packages(core.__path__, "transforms.core."):
        mod = importlib.import_module(info.name)
        for obj in vars(mod).values():
            if inspect.isclass(obj) and all(callable(getattr(obj, a, None)) for a in ("start_round", "step")):
                if callable(getattr(obj, "halted_bound", None)):
                    found.add(obj)
    assert len(found) == 1, f"expected one Alg. 3 node class, found {found}"
    return found.pop()


def twin_restart_only_when_empty(monkeypatch):
    """Broken twin: a node restarts only once its content is empty."""
    cls = _alg3_node_class()
    orig = cls.step

    def step(self, *args, **kwargs):
        if self.size == 0:
            return orig(self, *args, **kwargs)
        saved, self.n_hat = self.n_hat, math.inf  # no estimate exceeds inf/2: no restart
        try:
            return orig(self, *args, **kwargs)
        finally:
            if self.n_hat == math.inf:
                self.n_hat = saved

    monkeypatch.setattr(cls, "step", step)


def twin_halting_disabled(monkeypatch):
    """Broken twin: a restart never halts the node."""
    cls = _alg3_node_class()
    orig = cls.start_round
    sig = inspect.signature(orig)

    def start_round(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.arguments["gamma_end"] = None
        return orig(*bound.args, **bound.kwargs)

    monkeypatch.setattr(cls, "start_round", start_round)


# ---------------------------------------------------------------------------
# Scripted noise
# ---------------------------------------------------------------------------

_ZERO_WORD = 2**64 - 2**40  # U = 1 - 2^-24: the geometric inversion gives 0 (noise 0) at scales < 2^24
_TOP_WORD = 2**64 - 1  # U at the top: a geometric number of trials is 1 (the sparse vector halts now)


class ScriptedStream(RandomStream):
    """Scripted uniform words, then ``fill`` forever (a guard stops a sampler
    that would loop forever on scripted words, e.g. a discrete Gaussian)."""

    def __init__(self, words=(), fill=_ZERO_WORD):
        super().__init__(b"\0" * 32)
        self.script = [int(w) for w in words]
        self.fill = fill
        self.used = 0

    def words(self, n):
        self.used += n
        if self.used > 100_000:
            raise RuntimeError("a sampler keeps asking a scripted stream for words")
        out = np.full(n, self.fill, dtype=np.uint64)
        k = min(n, len(self.script))
        out[:k] = self.script[:k]
        del self.script[:k]
        return out


def dlap_words(z: int, scale: float) -> list[int]:
    """Two words on which the discrete Laplace sampler at ``scale`` returns ``z``:
    it is G1 - G2 with P(G >= k) = q^k drawn by inversion (G = k iff
    q^(k+1) < U <= q^k), so U = q^(k + 1/2) gives G = k."""
    r = as_ratio_up(scale)
    q = math.exp(-r.denominator / r.numerator)
    words = [int(q ** (g + 0.5) * 2**64) for g in (max(z, 0), max(-z, 0))]
    if min(words) < 2**8:
        raise ValueError(f"|z| = {abs(z)} is too far in the tail of scale {scale} to script with one word")
    return words


def _after(coords: tuple, name: str):
    """The coordinate that follows the component ``name``."""
    if name not in coords:
        raise AssertionError(f"no {name!r} component in noise coordinates {coords}")
    return coords[coords.index(name) + 1]


class ScriptedNoise(NoiseSource):
    """The noise source of the module docstring; records every n_hat draw as
    (tick, node, round), the tick being set by the driver."""

    def __init__(self, nhat_noise=None, nhat_scale=None):
        super().__init__(b"scripted noise for the Alg. 3 tests")
        self.nhat_noise = dict(nhat_noise or {})
        self.nhat_scale = nhat_scale
        self.tick = 0
        self.nhat_draws: list[tuple[int, int, int]] = []

    def for_release(self, release):
        return self  # the script is the same for every release identity

    def stream(self, *coords):
        if "svt" in coords:
            return ScriptedStream(fill=_ZERO_WORD if "threshold" in coords else _TOP_WORD)
        if "n_hat" in coords:
            node, rnd = int(_after(coords, "node")), int(_after(coords, "round"))
            self.nhat_draws.append((self.tick, node, rnd))
            z = self.nhat_noise.get((node, rnd), 0)
            if z:
                return ScriptedStream(dlap_words(z, self.nhat_scale(node, rnd)))
        return ScriptedStream()


# ---------------------------------------------------------------------------
# Reference: count-only fully-dynamic tree, Alg. 3 per node (ALGORITHMS.md §4)
# ---------------------------------------------------------------------------


def lowbit(i: int) -> int:
    return i & -i


def chain(j: int) -> list[int]:
    out = []
    while j > 0:
        out.append(j)
        j -= lowbit(j)
    return out


def eps_round(eps: float, node: int, rnd: int) -> float:
    eps_v = (eps / 2) * 6 / (math.pi**2 * lowbit(node).bit_length() ** 2)
    return 3 * eps_v / (2 * math.pi**2 * rnd**2)


@functools.cache
def gamma(eps_r: float, steps: int, beta_r: float) -> float:
    """Public (1 - beta_r) bound of M_Lap-Ins (eps_r) after ``steps`` timestamps."""
    counter = make_counter("infinite", CountMechanism("laplace"), PureDP(eps_r))
    for _ in range(steps):
        counter.step(np.array([0]), ScriptedNoise())
    return counter.error_bound(beta_r)


class RefNode:
    def __init__(self, index: int, size: int):
        self.index, self.size = index, size
        self.horizon = lowbit(index) - 1  # later segments at which the node is queried
        self.steps = 0
        self.round = 0
        self.n_hat = 0.0
        self.halted = False
        self.counting = False
        self.k = 0  # timestamps of this round's deletion counter
        self.dels = 0  # deletions seen by this round's counter (its estimate: the noise is 0)


def reference(events: dict, ticks: int, eps: float, beta: float, nhat_noise: dict):
    """Answers [(tick, count)] and round starts [(tick, node, round)]."""
    nodes: dict[int, RefNode] = {}
    answers, starts = [], []

    def start_round(v: RefNode, tick: int, gamma_end):
        v.round += 1
        v.n_hat = v.size + nhat_noise.get((v.index, v.round), 0)  # n_hat = |D(v)| + Lap(1/eps_r)
        starts.append((tick, v.index, v.round))
        if gamma_end is not None and v.n_hat < 2 * gamma_end:
            v.halted = True  # answer 0 from now on; the items stay for merging
            return
        v.k = v.dels = 0
        v.counting = v.horizon - v.steps > 0

    def step(v: RefNode, deleted: int, tick: int):
        v.steps += 1
        if v.halted or not v.counting:
            return
        v.k += 1
        v.dels += deleted
        g = gamma(eps_round(eps, v.index, v.round), v.k, beta / (math.pi**2 * v.round**2))
        if v.dels > v.n_hat / 2 + 2 * g:
            start_round(v, tick, gamma_end=g)

    for j in range(1, ticks + 1):  # segment j is tick j
        inserted, deletions = events.get(j, (0, {}))
        routed = defaultdict(int)
        for ins_tick, c in deletions.items():
            owner = [i for i in nodes if i - lowbit(i) < ins_tick <= i]
            assert len(owner) == 1 and ins_tick < j
            routed[owner[0]] += c
        for i, c in routed.items():
            nodes[i].size -= c
        keep = set(chain(j - lowbit(j)))
        size = inserted + sum(nodes.pop(i).size for i in list(nodes) if i not in keep)
        for i in sorted(keep, reverse=True):
            step(nodes[i], routed.get(i, 0), j)
        nodes[j] = RefNode(j, size)
        start_round(nodes[j], j, gamma_end=None)
        answers.append((j, sum(0 if nodes[i].halted else nodes[i].size for i in chain(j))))
    return answers, starts


# ---------------------------------------------------------------------------
# Driving the library
# ---------------------------------------------------------------------------


def run_library(events: dict, ticks: int, eps: float, beta: float, nhat_noise: dict):
    """``events``: tick -> (number of insertions, {insertion tick: deletions})."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(eps), profile="paper", beta=beta)
    rel = FullyDynamicRelease(cfg, stream="alg3")
    noise = ScriptedNoise(nhat_noise, lambda node, rnd: 1 / eps_round(eps, node, rnd))
    live: dict[int, list[str]] = defaultdict(list)
    answers = []
    for t in range(1, ticks + 1):
        noise.tick = t
        inserted, deletions = events.get(t, (0, {}))
        ups = [Update("delete", live[k].pop()) for k, c in deletions.items() for _ in range(c)]
        for n in range(inserted):
            live[t].append(f"{t}-{n}")
            ups.append(Update("insert", f"{t}-{n}", (0,)))
        res = rel.process_tick(t, ups, noise)
        assert not res.rejections
        assert res.closes == [t], "the scripted sparse vector closes a segment at every tick"
        answers += [(a.tick, float(a.estimate[0])) for a in res.answers]
    return answers, noise.nhat_draws


def truth(events: dict, ticks: int) -> list[int]:
    n, out = 0, []
    for t in range(1, ticks + 1):
        inserted, deletions = events.get(t, (0, {}))
        n += inserted - sum(deletions.values())
        out.append(n)
    return out


def check_against_reference(events, ticks, eps=50.0, beta=0.1, nhat_noise=None):
    nhat_noise = nhat_noise or {}
    got_answers, got_starts = run_library(events, ticks, eps, beta, nhat_noise)
    ref_answers, ref_starts = reference(events, ticks, eps, beta, nhat_noise)
    assert sorted(got_starts) == sorted(ref_starts), "round starts (tick, node, round) differ from the reference"
    assert got_answers == ref_answers, "answers differ from the reference"
    return ref_answers, ref_starts


def restarts(starts, node):
    return [(t, r) for t, i, r in starts if i == node and r > 1]


# Node 8 (level 4, queried at segments 8..15), eps = 50, beta = 0.1: its round-1
# deletion counter has gamma = 64 after one step, round 2's 331 (checked below).
RESTART_THEN_HALT = {8: (6000, {}), 9: (0, {8: 3300}), 10: (0, {8: 2650})}


def test_gamma_values_used_by_the_scenarios():
    assert gamma(eps_round(50.0, 8, 1), 1, 0.1 / math.pi**2) == pytest.approx(64, abs=1)
    assert gamma(eps_round(50.0, 8, 2), 1, 0.1 / (4 * math.pi**2)) == pytest.approx(331, abs=1)


def test_scripted_noise_draws_the_script():
    """The scripting helper itself: the library's sampler returns the scripted values."""
    for scale in (0.5, 6.93, 27.7, 400.0):
        for z in (-300, -7, -1, 0, 1, 2, 40, 1000):
            try:
                words = dlap_words(z, scale)
            except ValueError:
                assert abs(z) > 30 * scale  # beyond what one 64-bit word can reach
                continue
            assert discrete_laplace(ScriptedStream(words), scale, 1)[0] == z
    assert discrete_laplace(ScriptedStream(), 1e6, 5).tolist() == [0] * 5


def test_restart_then_halt_at_the_prescribed_ticks():
    """6000 items in node 8; 3300 deleted at segment 9: 3300 > 3000 + 2*64, restart
    (round 2, n_hat = 2700 >= 128: no halt); 2650 more at segment 10:
    2650 > 1350 + 2*331, restart, n_hat = 50 < 2*331: halt. Node 8 then answers
    0 while it holds 50 items (segments 10..15); node 16 merges them at 16."""
    ticks = 18
    answers, starts = check_against_reference(RESTART_THEN_HALT, ticks)
    assert restarts(starts, 8) == [(9, 2), (10, 3)]
    exact = truth(RESTART_THEN_HALT, ticks)
    assert [a for _, a in answers] == exact[:9] + [0] * 6 + exact[15:]
    assert exact[9:15] == [50] * 6


@pytest.mark.parametrize("extra", [0, 1])
def test_restart_threshold_is_strict(extra):
    """n_del_hat = n_hat/2 + 2 gamma does not restart; one more deletion does."""
    g = gamma(eps_round(50.0, 8, 1), 1, 0.1 / math.pi**2)
    d = math.floor(1000 / 2 + 2 * g) + extra
    events = {8: (1000, {}), 9: (0, {8: d})}
    _, starts = check_against_reference(events, 12)
    assert restarts(starts, 8) == ([(9, 2)] if extra else [])


def test_noisy_n_hat_drives_restart_and_halting():
    """n_hat noise -200 in round 1 makes 550 deletions of 1000 a restart
    (550 > 400 + 128, but 550 < 628 without noise); n_hat noise -330 in
    round 2 halts the node (450 - 330 = 120 < 128, but 450 would not)."""
    events = {8: (1000, {}), 9: (0, {8: 550})}
    answers, starts = check_against_reference(events, 16, nhat_noise={(8, 1): -200, (8, 2): -330})
    assert restarts(starts, 8) == [(9, 2)]
    assert [a for t, a in answers if 9 <= t <= 15] == [0] * 7
    _, starts = check_against_reference(events, 16, nhat_noise={(8, 1): -200})
    assert restarts(starts, 8) == [(9, 2)]  # restarted, not halted
    _, starts = check_against_reference(events, 16)
    assert restarts(starts, 8) == []


def test_restart_after_merge_into_the_next_node():
    """A restarted node's exact content moves to node 16, which restarts on its own."""
    events = {8: (6000, {}), 9: (0, {8: 3300}), 17: (0, {8: 2000})}
    _, starts = check_against_reference(events, 20)
    assert restarts(starts, 8) == [(9, 2)]
    assert restarts(starts, 16) == [(17, 2)]


def _random_script(seed: int, ticks: int):
    rng = np.random.default_rng(seed)
    events, live, noise = {}, defaultdict(int), {}
    for t in range(1, ticks + 1):
        dels = {}
        if t > 4 and rng.random() < 0.5:
            frac = rng.uniform(0.3, 1.0)
            for k in sorted(live):
                c = int(rng.binomial(live[k], frac))
                if c:
                    dels[k] = c
                    live[k] -= c
        ins = int(rng.integers(500, 4000)) if rng.random() < 0.35 else 0
        live[t] += ins
        if ins or dels:
            events[t] = (ins, dels)
        # n_hat noise of the nodes' rounds, about the paper's scale (clipped to what one word can script)
        for r in (1, 2, 3):
            scale = 1 / eps_round(50.0, t, r)
            noise[(t, r)] = int(np.clip(np.round(rng.laplace(0, scale)), -20 * scale, 20 * scale))
    return events, noise


def test_random_scripts_match_the_reference():
    """Random insert / mass-delete scripts with random n_hat noise: every answer
    and every round start equals the reference's; the scripts do exercise
    restarts and halts."""
    n_restarts = n_halts = 0
    for seed in range(8):
        events, noise = _random_script(seed, 24)
        answers, starts = check_against_reference(events, 24, nhat_noise=noise)
        exact = truth(events, 24)
        n_restarts += sum(r > 1 for _, _, r in starts)
        n_halts += sum(a != e for (_, a), e in zip(answers, exact))
    assert n_restarts >= 8 and n_halts >= 4, (n_restarts, n_halts)


@pytest.mark.parametrize("twin", [twin_restart_only_when_empty, twin_halting_disabled])
def test_catches_broken_alg3(twin, monkeypatch):
    twin(monkeypatch)
    with pytest.raises(AssertionError, match="differ from the reference"):
        check_against_reference(RESTART_THEN_HALT, 18)
