"""Continual private key selection over open key domains (issue 33): exactness with noise off,
the contribution bound, plain-data state, the accounting, and the exact privacy loss of the
selection counters and the exact probability of selecting a key nobody else has
(``docs/open_keys.md``)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest

from transforms.core.contribution.loss import Draw, privacy_loss
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.samplers import discrete_gaussian_pmf, discrete_laplace_pmf
from transforms.core.foundation.state import StateError, decode, encode
from transforms.core.selection import (
    KeyLimit,
    OpenKeyRelease,
    PersonKeys,
    SelectionParams,
    apply_event,
    dyadic_nodes,
)
from transforms.core.selection.candidate import select_coords
from transforms.core.selection.params import OpenKeysNeedDelta, selection_guarantee

KEY = NoiseSource(bytes(range(32)))


def _random_stream(seed: int, periods: int, persons: int = 12, keys: int = 9, per: int = 8):
    """Random (person, Update) periods: inserts, upserts (key changes) and deletes, some invalid."""
    rnd = random.Random(seed)
    out = []
    for _ in range(periods):
        ups = []
        for _ in range(rnd.randrange(per)):
            person, e = f"p{rnd.randrange(persons)}", f"e{rnd.randrange(4)}"
            op = rnd.choice(("insert", "insert", "upsert", "delete"))
            item = None if op == "delete" else (f"k{rnd.randrange(keys)}",)
            ups.append((person, Update(op, e, item)))
        out.append(ups)
    return out


def _reference(stream, K: int, L: int, k: int):
    """Brute force: the live entries per key after each period, and the first period each key had a
    live contributor, by the rules of ``transforms/core/selection/keys.py`` written out plainly."""
    rank = {"insert": 0, "upsert": 1, "delete": 2}
    admitted, slots, entries = {}, {}, {}  # person -> set; person -> set; (person, e) -> [key, mutations]
    first, per_period = {}, []
    for p, ups in enumerate(stream, 1):
        for person, u in sorted(ups, key=lambda pu: (pu[0], rank[pu[1].op], repr(pu[1].item), pu[1].entry_id)):
            adm = admitted.setdefault(person, [])
            if u.entry_id not in adm:
                if u.op != "insert" or len(adm) >= L:
                    if u.op == "insert":
                        adm.append(None)  # a refused entry id: never admitted later (PersonBounder)
                        admitted[person] = adm
                        adm.append(("refused", u.entry_id))
                    continue
                adm.append(u.entry_id)
            if ("refused", u.entry_id) in adm:
                continue
            e = entries.get((person, u.entry_id))
            live = e is not None and e[0] is not None
            if e is not None and e[1] >= k:
                continue
            if (u.op == "insert" and live) or (u.op != "insert" and not live):
                continue
            s = slots.setdefault(person, set())
            if u.op != "delete" and u.item[0] not in s:
                if len(s) >= K:
                    continue
                s.add(u.item[0])
            e = entries.setdefault((person, u.entry_id), [None, 0])
            e[0] = None if u.op == "delete" else u.item[0]
            e[1] += 1
        live = {}
        for (_, _), (key, _) in entries.items():
            if key is not None:
                live[key] = live.get(key, 0) + 1
        for key in live:
            first.setdefault(key, p)
        per_period.append(live)
    return per_period, first


def test_reference_counts_admissions_like_the_person_unit():
    # sanity of the brute force's entry admission (count of admitted entries, refused for good)
    per, first = _reference([[("a", Update("insert", "e1", ("x",))), ("a", Update("insert", "e2", ("y",)))]], 2, 1, 3)
    assert per == [{"x": 1}] and first == {"x": 1}


@pytest.mark.parametrize("seed", range(6))
def test_noise_off_threshold_zero_releases_every_live_key_exactly(seed):
    K, L, k = 2, 3, 3
    stream = _random_stream(seed, 25)
    per, first = _reference(stream, K, L, k)
    params = SelectionParams(PureDP(1.0), K, horizon=25, threshold=0)
    rel = OpenKeyRelease(params, KeyLimit(K, L, k), NoiseSource.disabled())
    selected_at = {}
    for p, ups in enumerate(stream, 1):
        out = rel.step(ups)
        for key in out.selected:
            selected_at[key] = p
        truth = per[p - 1]
        assert out.answers == {key: truth.get(key, 0) for key in selected_at}
    assert selected_at == first


def test_contribution_bound_first_come_and_for_good():
    pk = PersonKeys(KeyLimit(2, 5, 4))
    ins = [("a", Update("insert", f"e{i}", (key,))) for i, key in enumerate(("z", "y", "x"))]
    acc, refused, events = pk.decide_tick(1, ins)
    # first-come in the person unit's order (op rank, item, entry id): x and y take the slots
    assert [u.item for _, u in acc] == [("x",), ("y",)]
    assert refused == [(ins[0], "contribution_bounded")]
    assert sorted(events) == [("x", 1, 1), ("y", 1, 1)]
    # leaving a key keeps its slot: a third key stays refused; a return adds entries, no contributor
    _, _, events = pk.decide_tick(2, [("a", Update("delete", "e2"))])
    assert events == [("x", -1, -1)]
    acc, refused, events = pk.decide_tick(
        3, [("a", Update("insert", "e5", ("w",))), ("a", Update("insert", "e6", ("x",)))]
    )
    assert [r for _, r in refused] == ["contribution_bounded"] and events == [("x", 0, 1)]
    # the entry limit of the person unit underneath (max_entries 5: e0 e1 e2 e5 e6 admitted, e7 refused)
    _, refused, _ = pk.decide_tick(4, [("a", Update("insert", "e7", ("x",)))])
    assert [r for _, r in refused] == ["contribution_bounded"]
    # no reason names a key or a person
    assert all(
        r in ("contribution_bounded", "unknown_entry", "duplicate_insert", "constraint_exceeded") for _, r in refused
    )


def test_later_updates_of_an_entry_refused_for_its_key_are_refused_the_same_way():
    """An entry whose insertion took no slot (K keys taken) is refused contribution_bounded for good: its
    upsert and delete too (not unknown_entry: the input is right, the bound is by design), through a state
    round trip; an entry of an admitted key is unaffected."""
    pk = PersonKeys(KeyLimit(1, 5, 4))
    _, refused, _ = pk.decide_tick(1, [("a", Update("insert", "e0", ("x",))), ("a", Update("insert", "e1", ("y",)))])
    assert [(u.entry_id, r) for (_, u), r in refused] == [("e1", "contribution_bounded")]
    pk.persons = {p: decode(encode(st)) for p, st in pk.persons.items()}
    _, refused, events = pk.decide_tick(2, [("a", Update("upsert", "e1", ("x",)))])
    assert [(u.entry_id, r) for (_, u), r in refused] == [("e1", "contribution_bounded")] and events == []
    _, refused, _ = pk.decide_tick(3, [("a", Update("delete", "e1")), ("a", Update("delete", "e9"))])
    assert sorted((u.entry_id, r) for (_, u), r in refused) == [("e1", "contribution_bounded"), ("e9", "unknown_entry")]
    _, refused, events = pk.decide_tick(4, [("a", Update("delete", "e0"))])
    assert refused == [] and events == [("x", -1, -1)]


def test_mutation_limit_and_unknown_entries():
    pk = PersonKeys(KeyLimit(3, 2, 2))
    _, refused, _ = pk.decide_tick(1, [("a", Update("delete", "e1"))])
    assert [r for _, r in refused] == ["unknown_entry"]
    pk.decide_tick(2, [("a", Update("insert", "e1", ("x",)))])
    pk.decide_tick(3, [("a", Update("upsert", "e1", ("y",)))])
    _, refused, _ = pk.decide_tick(4, [("a", Update("delete", "e1"))])
    assert [r for _, r in refused] == ["constraint_exceeded"]


def test_candidate_and_person_state_round_trip():
    s = apply_event(None, 1, 2)
    assert decode(encode(s)) == s and apply_event(decode(encode(s)), -1, -2) is None  # evicted at zero
    with pytest.raises(StateError):
        apply_event({"v": 99, "live": 1, "entries": 1}, 1, 1)
    pk = PersonKeys(KeyLimit(2, 3, 3))
    pk.decide_tick(1, [("a", Update("insert", "e1", ("x",)))])
    restored = PersonKeys(KeyLimit(2, 3, 3))
    restored.persons = decode(encode(pk.persons))
    for which in (pk, restored):
        out = which.decide_tick(2, [("a", Update("insert", "e2", ("y",))), ("a", Update("insert", "e3", ("z",)))])
        assert [r for _, r in out[1]] == ["contribution_bounded"]


def test_release_restores_mid_stream_and_noise_is_keyed():
    stream = _random_stream(3, 12)
    params = SelectionParams(ApproxDP(2.0, 1e-3), 2, horizon=12, threshold=1, test="tree")
    a = OpenKeyRelease(params, KeyLimit(2, 3, 3), KEY)
    outs = [a.step(u) for u in stream]
    b = OpenKeyRelease(params, KeyLimit(2, 3, 3), KEY)
    for u in stream[:6]:
        b.step(u)
    # a candidate re-created from its plain state (Beam: restored from keyed state) continues the same
    b.candidates = decode(encode(b.candidates))
    b.persons.persons = decode(encode(b.persons.persons))
    b.node_noise._cache.clear()
    assert [b.step(u).selected for u in stream[6:]] == [o.selected for o in outs[6:]]


@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)])
@pytest.mark.parametrize("test", ["svt", "tree"])
def test_accounting_charges_the_stated_guarantee(budget, test):
    params = SelectionParams(budget, 3, horizon=16, failure=1e-8, selection_share=0.4, test=test)
    rel = OpenKeyRelease(params, KeyLimit(3, 2, 2), KEY)
    stated = selection_guarantee(budget, 0.4, 3, 2, 2, failure=1e-8)
    assert type(rel.ledger.spent) is ApproxDP and type(stated) is ApproxDP
    assert rel.ledger.spent.vector() == pytest.approx(stated.vector(), rel=1e-12)  # the charge is the statement
    assert params.guarantee() == stated == params.ledger_budget
    if isinstance(budget, PureDP):  # pure eps is not possible for open keys: stated as (eps, failure)
        assert stated == ApproxDP(1.0, 1e-8)
    else:
        assert stated == budget
    assert stated.delta >= params.event_delta > 0  # never a silent delta


@pytest.mark.parametrize("budget", [ZCDP(0.5), ApproxDP(1.0, 0.0)])
def test_a_budget_without_a_delta_is_refused(budget):
    with pytest.raises(OpenKeysNeedDelta, match="^open keys need a delta: "):
        SelectionParams(budget, 2)
    with pytest.raises(ValueError, match="^open keys need a delta: "):  # a ValueError for the configuration layer
        selection_guarantee(budget, 0.5, 2, 4, 2)
    with pytest.raises(ValueError, match="max_entries"):
        selection_guarantee(PureDP(1.0), 0.5, 2, 0, 2)


# -- the exact privacy loss of the selection counters --------------------------------------------


def _contributor_streams(stream, limit: KeyLimit) -> dict:
    """{key: {period: signed change of live contributors}} as the release's key events give it."""
    pk = PersonKeys(limit)
    out: dict = {}
    for p, ups in enumerate(stream, 1):
        for key, d_live, _ in pk.decide_tick(p, ups)[2]:
            if d_live:
                out.setdefault(key, {})
                out[key][p] = out[key].get(p, 0) + d_live
    return out


def _draws(streams: dict, keys, params: SelectionParams) -> dict:
    """Every node of every key's selection tree (the ideal counter over ``keys``)."""
    H = params.horizon
    out = {}
    for key in keys:
        changes = streams.get(key, {})
        for lvl in range(params.levels):
            for j in range(1, ((H - 1) >> lvl) + 2):
                lo, hi = (j - 1) << lvl, j << lvl
                v = sum(d for p, d in changes.items() if lo < p <= hi)
                c = select_coords(key, lvl, j)
                out[c] = Draw(c, params.selection_noise, Fraction(params.node_param(lvl)), (v,))
    return out


def _selection_loss(base, extra, params, limit):
    with_person = [b + e for b, e in zip(base, extra)]
    sa, sb = _contributor_streams(base, limit), _contributor_streams(with_person, limit)
    keys = sorted(set(sa) | set(sb))
    return privacy_loss(_draws(sa, keys, params), _draws(sb, keys, params))


def _adversary(K_used: int, periods: int, shared: str | None = None):
    """One person who takes ``K_used`` keys nobody else has (and ``shared`` too), leaves and comes back."""
    extra = [[] for _ in range(periods)]
    keys = [f"only{i}" for i in range(K_used)] + ([shared] if shared else [])
    for i, key in enumerate(keys):
        extra[i % periods].append(("X", Update("insert", f"x{i}", (key,))))
        extra[(i + 3) % periods].append(("X", Update("delete", f"x{i}")))
        extra[(i + 5) % periods].append(("X", Update("insert", f"x{i}", (key,))))
    return extra


@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)])
def test_selection_counters_exact_loss_within_budget(budget):
    K, H = 3, 13
    params = SelectionParams(budget, K, horizon=H, test="tree")
    limit = KeyLimit(K, 6, 3)
    base = _random_stream(5, H, keys=4)
    for extra in (_adversary(3, H), _adversary(2, H, shared="k1"), _adversary(6, H)):
        loss = _selection_loss(base, extra, params, limit)
        if isinstance(budget, PureDP):
            assert 0 < loss.epsilon <= params.counter_budget.epsilon * (1 + 1e-9)
        else:
            assert 0 < loss.rho <= params.key_share * K * (1 + 1e-9)  # rho_sel (from (eps, delta): rho_for_approx)


def test_selection_loss_fails_without_the_key_bound_or_with_too_little_noise():
    K, H = 3, 13
    params = SelectionParams(PureDP(1.0), K, horizon=H, test="tree")
    base = _random_stream(5, H, keys=4)
    # the person bound not enforced: the bounder lets 6 keys through
    loss = _selection_loss(base, _adversary(6, H), params, KeyLimit(6, 6, 3))
    assert loss.epsilon > params.counter_budget.epsilon

    class HalfNoise(SelectionParams):
        def node_param(self, level):  # a twin that calibrated to L1 = 1 (forgot the -1)
            return super().node_param(level) / 2

    twin = HalfNoise(PureDP(1.0), K, horizon=H, test="tree")
    loss = _selection_loss(base, _adversary(3, H), twin, KeyLimit(K, 6, 3))
    assert loss.epsilon > twin.counter_budget.epsilon


# -- the probability of selecting a key nobody else has ------------------------------------------


def _noise_pmf(params: SelectionParams, p: int, span: int):
    z = np.arange(-span, span + 1)
    pmf = np.array([1.0])
    for lvl, _ in dyadic_nodes(p):
        f = discrete_laplace_pmf if params.selection_noise == "laplace" else discrete_gaussian_pmf
        pmf = np.convolve(pmf, f(z, params.node_param(lvl)))
    return pmf, np.arange(len(pmf)) - span * len(dyadic_nodes(p))


def _false_selection(params: SelectionParams, span: int) -> float:
    """Tree: the sum over the periods of P(Z_p > T_p), at least P(a zero key is ever selected);
    sparse vector: P(a zero key is ever selected), exactly."""
    if params.selection_test == "svt":
        return 1.0 - float(_svt_outcomes(params, [0] * params.horizon)[-1])
    total = 0.0
    for p in range(1, params.horizon + 1):
        pmf, z = _noise_pmf(params, p, span)
        total += float(pmf[z > params.threshold_at(p)].sum())
    return total


@pytest.mark.parametrize(
    "budget,test",
    [
        (PureDP(2.0), "auto"),
        (ApproxDP(2.0, 1e-3), "auto"),
        (PureDP(2.0), "tree"),
        (ApproxDP(2.0, 1e-3), "tree"),
    ],
)
def test_a_key_nobody_else_has_is_selected_with_probability_at_most_delta(budget, test):
    params = SelectionParams(budget, 1, horizon=6, failure=1e-3, test=test)
    span = int(20 * math.sqrt(params.noise_profile(1).variance())) + 50
    p = _false_selection(params, span)
    assert 0 < p <= params.key_delta
    k_e = params.max_keys_per_person * math.exp(params.counter_budget.epsilon)  # K delta_key e^eps_sel = delta_event
    assert k_e * params.key_delta == pytest.approx(params.event_delta, rel=1e-12)

    class LowThreshold(SelectionParams):
        def threshold_at(self, q):  # a twin whose threshold forgot the delta schedule over periods
            return self.noise_profile(q).tail_bound(self.key_delta * 30)

    twin = LowThreshold(budget, 1, horizon=6, failure=1e-3, test=test)
    assert _false_selection(twin, span) > twin.key_delta


def test_never_selected_keys_appear_nowhere():
    params = SelectionParams(PureDP(1.0), 2, horizon=8)
    rel = OpenKeyRelease(params, KeyLimit(2, 3, 3), KEY)
    outs = [rel.step([("a", Update("insert", f"e{p}", ("secret-key",)))] if p == 0 else []) for p in range(8)]
    assert all(not o.answers and not o.selected for o in outs)
    assert "secret-key" not in repr([(o.answers, o.selected, o.refused) for o in outs])
    with pytest.raises(ValueError) as err:
        rel.step([])
    assert "secret-key" not in str(err.value)


# -- the sparse-vector test (pure eps): the exact distribution of the selection period --------------


def _dlap_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    """P(nu <= x) for integer x, nu discrete Laplace of ``scale``."""
    q = math.exp(-1.0 / scale)
    x = np.asarray(x, dtype=float)
    upper = 1 - q ** (x + 1) / (1 + q)
    lower = q ** (-x) / (1 + q)
    return np.where(x >= 0, upper, lower)


def _svt_outcomes(params: SelectionParams, counts) -> np.ndarray:
    """P(the key is selected first at period p), p = 1..H, then P(never), for live counts ``counts``."""
    thr, query = params.svt_scales
    span = int(60 * thr) + 10
    rho = np.arange(-span, span + 1)
    w = discrete_laplace_pmf(rho, thr)
    alive = np.ones(len(rho))
    out = []
    for p, c in enumerate(counts, 1):
        bar = np.floor(params.threshold_at(p) + rho - c)  # selected iff nu > T_p + rho - c
        stay = _dlap_cdf(bar, query)
        out.append(float(np.sum(w * alive * (1 - stay))))
        alive = alive * stay
    out.append(float(np.sum(w * alive)))
    return np.array(out)


def _svt_loss(params, a, b) -> float:
    pa, pb = _svt_outcomes(params, a), _svt_outcomes(params, b)
    keep = (pa > 1e-300) & (pb > 1e-300)
    return float(np.max(np.abs(np.log(pa[keep]) - np.log(pb[keep]))))


SVT_PAIRS = [
    ([0, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]),  # a key only the extra person has
    ([2, 3, 1, 4, 2, 0], [3, 4, 2, 5, 3, 0]),  # a person who adds to a shared key
    ([5, 0, 5, 0, 5, 0], [4, 1, 4, 1, 4, 1]),  # non-monotone differences (ruled out for the twin's shortcut)
    ([3, 3, 3, 3, 3, 3], [3, 4, 3, 4, 3, 4]),
]


@pytest.mark.parametrize("a,b", SVT_PAIRS)
def test_sparse_vector_selection_exact_loss_within_the_key_budget(a, b):
    params = SelectionParams(PureDP(4.0), 1, horizon=6, threshold=3)
    assert params.selection_test == "svt" and params.svt_scales == (1.0, 2.0)
    assert _svt_outcomes(params, a).sum() == pytest.approx(1.0, abs=1e-12)
    loss = _svt_loss(params, a, b)
    assert 0 < loss <= params.key_share * (1 + 1e-9)


def test_sparse_vector_twin_with_too_little_noise_fails():
    class Thin(SelectionParams):
        @property
        def svt_scales(self):  # a twin that halved both noises
            t, q = super().svt_scales
            return t / 2, q / 2

    twin = Thin(PureDP(4.0), 1, horizon=6, threshold=3)
    assert max(_svt_loss(twin, a, b) for a, b in SVT_PAIRS) > twin.key_share


def test_sparse_vector_noise_is_one_threshold_per_key_and_fresh_query_noise():
    from transforms.core.foundation.samplers import discrete_laplace
    from transforms.core.selection.candidate import NodeNoise, svt_coords

    params = SelectionParams(PureDP(1.0), 2, horizon=8)
    nn = NodeNoise(params, KEY)
    thr, query = params.svt_scales
    rho = int(discrete_laplace(KEY.stream(*svt_coords("k")), thr, 1)[0])
    got = [nn.at("k", p) for p in range(1, 9)]
    nn.forget("k")  # an evicted key that comes back draws the same noise
    assert [nn.at("k", p) for p in range(1, 9)] == got
    assert got == [int(discrete_laplace(KEY.stream(*svt_coords("k", p)), query, 1)[0]) - rho for p in range(1, 9)]


def test_selected_keys_come_in_a_canonical_order():
    params = SelectionParams(PureDP(1.0), 2, horizon=4, threshold=0)
    outs = []
    for order in (("b", "a"), ("a", "b")):
        rel = OpenKeyRelease(params, KeyLimit(2, 3, 3), NoiseSource.disabled())
        outs.append(rel.step([(f"p{key}", Update("insert", "e", (key,))) for key in order]))
    assert outs[0].selected == outs[1].selected == ("a", "b")
    assert list(outs[0].answers) == list(outs[1].answers)


def test_an_upsert_within_its_key_keeps_the_contributor():
    pk = PersonKeys(KeyLimit(2, 3, 3))
    pk.decide_tick(1, [("a", Update("insert", "e1", ("x",)))])
    acc, refused, events = pk.decide_tick(2, [("a", Update("upsert", "e1", ("x",)))])
    assert len(acc) == 1 and not refused and events == []
    _, _, events = pk.decide_tick(3, [("a", Update("delete", "e1"))])
    assert events == [("x", -1, -1)]
