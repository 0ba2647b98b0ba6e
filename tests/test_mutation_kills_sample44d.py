"""Tests written for the survivors of the mutation round of session 44, group d (``transforms/core/contribution/`` and
``transforms/core/selection/``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 sampled mutants a module, issue
27). As in ``test_mutation_kills_sample43b.py`` and ``43c``: each asserts a property of the module (a sensitivity
against the pattern that reaches it, a charge, a stated bound, a refusal the contract states, a state round trip),
never a pinned value, and names the mutant(s) it kills (checked with ``python -m benchmarks.mutation_fast confirm
NAME TEST``: passes unmutated, fails on the mutant). Fast: in memory, no Beam."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from transforms.core.config import QuerySet
from transforms.core.contribution import (
    ContributionUnit,
    PersonBounder,
    PersonLimit,
    bound_person,
    contribution_sensitivity,
    group_noise_multiplier,
    group_update_budget,
    query_columns,
)
from transforms.core.contribution import toeplitz as toeplitz_mod
from transforms.core.contribution.loss import TOLERANCE, Draw, PrivacyLoss, privacy_loss
from transforms.core.contribution.toeplitz import (
    CROSS_SLACK_FACTOR,
    ChainBound,
    alternating_bound,
    chain_bound,
    layer_cake_bound,
    toeplitz_model,
)
from transforms.core.contribution.trees import change_costs, kary_top_nodes
from transforms.core.counters import make_counter
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP, rho_for_approx
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.samplers import discrete_gaussian, discrete_laplace
from transforms.core.foundation.state import StateError, decode, encode
from transforms.core.selection import (
    CANDIDATE_STATE_VERSION,
    KeyLimit,
    NodeNoise,
    OpenKeyRelease,
    PersonKeys,
    SelectionParams,
    answer_budget,
    answer_calibration,
    apply_event,
    dyadic_nodes,
    key_state_from_plain,
    key_state_to_plain,
    new_candidate_state,
)
from transforms.core.selection.answers import answer_counter
from transforms.core.selection.candidate import key_coords, select_coords, svt_coords
from transforms.core.selection.release import KeyContext, advance_key
from transforms.core.static.linear import CountMechanism


# kills transforms.core.selection.keys.xǁPersonKeysǁdecide_tick__mutmut_32 (a person's state kept when its bounder
# state is None, i.e. an empty state kept for every person whose updates were all refused, and a state dropped when
# only the bounder's is set)
def test_a_person_whose_updates_are_all_refused_keeps_no_key_state():
    """``PersonKeys`` holds a state only for a person with something to remember (entries, keys, left keys, refused
    insertions or a bounder state): a person whose only updates are refused (an upsert or delete of an entry they
    never inserted) holds none, so memory grows with the people who contribute, not with bad input; a person with an
    accepted insertion holds their state, which decides their next updates."""
    pk = PersonKeys(KeyLimit(1, 1, 2))
    acc, ref, ev = pk.decide_tick(1, [("p1", Update("delete", "e1", None)), ("p2", Update("upsert", "e2", ("k",)))])
    assert acc == [] and ev == [] and [r for _, r in ref] == ["unknown_entry", "unknown_entry"]
    assert pk.persons == {}
    pk.decide_tick(2, [("p3", Update("insert", "e3", ("k",)))])
    assert set(pk.persons) == {"p3"}
    assert pk.persons["p3"]["entries"] == {"e3": ["k", 1]} and pk.persons["p3"]["bound"] is not None
    # the kept state decides p3's next update: a second key is over K = 1 (refused), a second entry over L = 1
    acc, ref, _ = pk.decide_tick(3, [("p3", Update("insert", "e4", ("j",)))])
    assert acc == [] and [r for _, r in ref] == ["contribution_bounded"]


# kills transforms.core.selection.release.xǁOpenKeyReleaseǁstep__mutmut_32 (the candidates tested in their natural
# sort order instead of the canonical repr order: keys of different types, an int and a string, cannot be compared)
def test_an_open_key_release_takes_keys_of_any_coordinate_type_in_the_canonical_order():
    """A key is any value a noise coordinate can name (``key_coords``: an int, a string, bytes, or a (stream, cell)
    pair); the release walks its candidates in the canonical ``repr`` order (the module docstring: arrival order is
    not a release and the order changes no value), so keys that do not compare with each other are tested and
    answered like any: with the noise off and threshold 0, both keys are selected at period 1 in repr order, each
    answered with its live entries."""
    params = SelectionParams(PureDP(1.0), 2, horizon=4, threshold=0)
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled())
    out = rel.step([("p1", Update("insert", "e1", (7,))), ("p2", Update("insert", "e2", ("k",)))])
    assert out.selected == tuple(sorted((7, "k"), key=repr))
    assert out.answers == {7: 1, "k": 1}
    out = rel.step([("p1", Update("insert", "e3", (7,)))])
    assert out.answers == {7: 2, "k": 1}


# kills transforms.core.selection.candidate.x_new_candidate_state__mutmut_1 (a new candidate's state without its
# version field: not a state of version 1, which apply_event and the key state's reader refuse)
def test_a_new_candidate_state_is_a_versioned_state_its_readers_accept():
    """The candidate's state is versioned plain data (``{"v": 1, "live", "entries"}``, module docstring): the new
    state is one, and every reader takes it: ``apply_event`` moves it by a key event, ``key_state_from_plain`` (the
    Beam step's reader) returns it as it is; a state without its version is refused."""
    new = new_candidate_state()
    assert new == {"v": CANDIDATE_STATE_VERSION, "live": 0, "entries": 0}
    assert apply_event(new, 1, 2) == {"v": CANDIDATE_STATE_VERSION, "live": 1, "entries": 2}
    assert apply_event(new, 0, 0) is None  # both numbers at zero: evicted
    assert key_state_from_plain(new) == new
    with pytest.raises(StateError):
        apply_event({"live": 0, "entries": 0}, 1, 1)


# kills transforms.core.selection.release.xǁOpenKeyReleaseǁ__init____mutmut_8 (a cap of one released key refused)
def test_a_cap_of_one_released_key_is_accepted_and_releases_one_key_for_good():
    """``max_keys`` is an integer >= 1 (the cap on RELEASED keys, ``admit_keys``): 1 is accepted and releases the
    first key in the canonical order of the first period any key passes, and no other key ever; 0, a bool or a float
    is refused."""
    params = SelectionParams(PureDP(1.0), 2, horizon=4, threshold=0)
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled(), max_keys=1)
    out = rel.step([("p1", Update("insert", "e1", ("b",))), ("p2", Update("insert", "e2", ("a",)))])
    assert out.selected == ("a",) and out.answers == {"a": 1}
    out = rel.step([("p3", Update("insert", "e3", ("c",)))])
    assert out.selected == () and set(out.answers) == {"a"} and rel.cap_reached
    for bad in (0, True, 1.0):
        with pytest.raises(ValueError, match="max_keys must be an integer >= 1"):
            OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled(), max_keys=bad)


# kills transforms.core.selection.release.x_advance_key__mutmut_55 (a key selected with one live entry too many in
# its truth: the counter's first batch is right, the key's recorded live entries are not)
def test_a_selected_keys_live_entries_are_its_counters_input_and_its_noise_off_answer():
    """A selected key's state records its live entries (the truth its counter counts: the first batch is the key's
    live entries at its selection period, then each period's signed change); with the noise off the answer is exactly
    that truth, at selection and after (``OpenKeyRelease.truth``, and the state's plain form)."""
    params = SelectionParams(PureDP(1.0), 2, horizon=5, threshold=1)
    rel = OpenKeyRelease(params, KeyLimit(2, 3, 3), NoiseSource.disabled())
    steps = [
        [("p1", Update("insert", "e1", ("k",))), ("p1", Update("insert", "e2", ("k",)))],  # one contributor: no
        [("p2", Update("insert", "e3", ("k",)))],  # two contributors > 1: selected with 3 live entries
        [("p1", Update("delete", "e1", None)), ("p3", Update("insert", "e4", ("k",)))],
        [("p2", Update("upsert", "e3", ("j",)))],
    ]
    for ups in steps:
        out = rel.step(ups)
        assert out.answers == rel.truth()
    assert rel.truth() == {"k": 2}
    assert key_state_to_plain(rel.selected["k"])["entries"] == 2


def _alternating_truth(model, toggles: int) -> int:
    """Brute force: the largest ||K D u||^2 over 0/1 paths u from 0 with at most ``toggles`` changes (exact ints)."""
    t = model.horizon
    kappa = [int(v) for v in model.kappa[:t]]
    best = 0
    for c in range(1, toggles + 1):
        for pos in itertools.combinations(range(t), c):
            d = [0] * t
            for i, p in enumerate(pos):
                d[p] = 1 if i % 2 == 0 else -1
            y = [sum(kappa[i - j] * d[j] for j in range(i + 1)) for i in range(t)]
            best = max(best, sum(v * v for v in y))
    return best


# kills transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_59 (Lemma P's cross-term allowance
# subtracted from the chain instead of added: a bound below what the proof covers)
@pytest.mark.parametrize("horizon", [6, 9])
def test_an_alternating_bound_from_four_toggles_is_the_chain_plus_lemma_p_allowance_and_bounds_every_path(horizon):
    """``alternating_bound`` (toeplitz module docstring): r <= 2 exact, r = 3 ``chain(1, open)``, r >= 4 Lemma P,
    ``chain(r // 2, r odd)`` plus ``CROSS_SLACK_FACTOR * C(r // 2, 2) * s1`` for the cross terms of disjoint closed
    visits; the bound is the largest over q <= r. So it is never below any q's proven term (the chain's certified
    upper bound plus its allowance), and it is above the brute-force maximum over every 0/1 path."""
    model = toeplitz_model("sqrt_factorization", horizon)
    for r in range(1, 7):
        bound = alternating_bound(model, r)[0]
        for q in range(2, r + 1):
            proven = (
                chain_bound(model, q // 2, bool(q % 2)).upper + CROSS_SLACK_FACTOR * math.comb(q // 2, 2) * model.s1
            )
            assert bound >= proven, (r, q)
        assert bound >= _alternating_truth(model, r)


# kills transforms.core.contribution.units.xǁContributionUnitǁof__mutmut_11 (a configured entry unit's insertion limit
# dropped: an entry inserted once counted as ceil(k / 2) lifetimes, a larger multiplier than its unit's)
@pytest.mark.parametrize("insertions", [None, 1, 2])
def test_a_configured_entry_unit_contributes_its_insertion_limit(insertions):
    """``ContributionUnit.of`` a configured entry unit keeps k and the registry's insertion limit (by default 1: a
    deleted id never comes back), so its lifetimes and its Laplace multiplier through a k-ary tree are those of
    ``ContributionUnit.entry(k, limit)``; one insertion of k = 4 mutations changes a count at most twice."""
    unit = PrivacyUnit("entry", 4, max_insertions=insertions)
    got = ContributionUnit.of(unit)
    assert got == ContributionUnit.entry(4, unit.insertion_limit)
    assert got.lifetimes == min(2, unit.insertion_limit) and got.alive_toggles == 2 * got.lifetimes
    q = QuerySet("n", "count")
    m = contribution_sensitivity(q, "kary_tree", "laplace", got, horizon=64).multiplier
    assert (
        m
        == contribution_sensitivity(
            q, "kary_tree", "laplace", ContributionUnit.entry(4, got.lifetimes), horizon=64
        ).multiplier
    )
    assert m == 2 * got.lifetimes  # a count's change mass: one per alive toggle


# kills transforms.core.selection.keys.x__rank__mutmut_3 (a person's updates of one tick no longer ordered by op rank
# first: an upsert sorted before the insertion of its entry is refused as unknown_entry)
def test_a_persons_updates_of_one_tick_are_decided_inserts_first_then_upserts_then_deletes():
    """The person unit's order within a tick (``docs/open_keys.md``, "Neighbour relation"): op rank (insert < upsert <
    delete), then item, then entry id, whatever the order of the lines. An insertion into key "b" and an upsert of
    the same entry into key "a" in one tick: the insertion first (it takes a slot), then the upsert moves the entry
    to "a" (both accepted; one contributor and one live entry in "a", none left in "b")."""
    ups = [("p", Update("upsert", "e1", ("a",))), ("p", Update("insert", "e1", ("b",)))]
    for order in (ups, ups[::-1]):
        pk = PersonKeys(KeyLimit(2, 2, 3))
        acc, ref, ev = pk.decide_tick(1, order)
        assert ref == [] and [u.op for _, u in acc] == ["insert", "upsert"]
        assert ev == [("a", 1, 1)]
        assert pk.persons["p"]["entries"] == {"e1": ["a", 2]}


# kills transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_21 (a horizon of one period refused)
@pytest.mark.parametrize("test", ["tree", "svt"])
def test_a_selection_over_a_horizon_of_one_period_is_accepted_and_tested_once(test):
    """``horizon`` is an integer >= 1 or None: one period is a release of one test per key. The tree has one level
    of weight 1, the threshold at period 1 is the tail bound of its noise at ``delta_key`` (``delta_p = delta_key /
    H``), period 2 is past the horizon; 0 is refused."""
    params = SelectionParams(PureDP(1.0), 2, horizon=1, test=test)
    assert params.levels == 1 and params.level_weight(0) == 1.0
    assert params.period_delta(1) == params.key_delta
    assert params.threshold_at(1) == params.noise_profile(1).tail_bound(params.key_delta)
    with pytest.raises(ValueError, match="past the horizon"):
        params.threshold_at(2)
    with pytest.raises(ValueError, match="horizon must be an integer >= 1"):
        SelectionParams(PureDP(1.0), 2, horizon=0, test=test)


# kills transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_303 (every account says
# "exact", an upper bound included)
@pytest.mark.parametrize(
    "unit", [ContributionUnit.entry(3), ContributionUnit.entry(6), ContributionUnit.person(2, 3, None, 8)]
)
def test_a_sensitivitys_account_says_exact_only_for_an_attained_bound(unit):
    """``Sensitivity.method`` (the one-line account plans and manifests show) names the unit, the norm, the counter,
    the multiplier and the group size, and says "exact" only where the bound is attained by a pattern (``exact``),
    else "upper bound": a per-window person (never exact), an entry through the square-root factorization (3 toggles:
    Lemma A's chain, an upper bound) and through the k-ary tree and the BLT (exact)."""
    q = QuerySet("n", "count")
    seen = set()
    for counter, noise in (("kary_tree", "laplace"), ("sqrt_factorization", "gaussian"), ("blt", "gaussian")):
        s = contribution_sensitivity(q, counter, noise, unit, horizon=32, end_tick=32)
        assert s.method.startswith(unit.describe() + ": count " + s.norm.upper() + " through " + counter)
        assert f"<= {s.multiplier:.4g} x one update" in s.method
        assert s.method.endswith(f"({'exact' if s.exact else 'upper bound'}); group privacy: {s.group_size} updates")
        seen.add(s.exact)
    assert seen == ({False} if unit.entries_window else {True, False})


# kills transforms.core.contribution.bounding.x__check__mutmut_10 (any non-empty state read as a tuple: a dict raises
# a KeyError, not a StateError, and a list is described as a tuple with its first element)
@pytest.mark.parametrize(
    "bad,what", [({"e1": 0}, "a dict"), ([1, {}, {}, {}], "a list"), ("person-7", "a str"), ((), "a tuple")]
)
def test_a_person_state_of_another_shape_is_refused_naming_its_type_only(bad, what):
    """``bound_person`` refuses a state that is not ``(1, admitted, refused, counts)`` with a StateError naming its
    shape, never its contents (it holds entry ids, record data): a dict, a list of four, a string, an empty tuple."""
    with pytest.raises(StateError) as err:
        bound_person(bad, [("e1", (1, 0, "insert", (0,), 1.0))], PersonLimit(2))
    assert str(err.value).endswith(": " + what)


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_210 (the search stopped AT its work budget, not
# past it: a search whose work is exactly MAX_WORK gives up after one round with a looser, uncertified bound)
def test_a_chain_search_stops_for_work_only_past_its_budget(monkeypatch):
    """``chain_bound`` refines until its bound is certified (``upper <= lower (1 + rtol)``) and gives up early only
    PAST ``MAX_WORK`` products (then with a valid, looser bound). With the work counter pinned exactly at
    ``MAX_WORK`` (an evaluator whose ``work`` reads MAX_WORK whatever is added), the search is not past its budget:
    it converges to the same certified bound as an unmetered search."""
    model = toeplitz_model("sqrt_factorization", 64)
    search = getattr(chain_bound, "__wrapped__", chain_bound)  # past the cache: the search itself
    free = search(model, 3, True)
    assert free.exact
    pinned = _pinned_search(monkeypatch, lambda: toeplitz_mod.MAX_WORK)
    assert pinned(model, 3, True) == free


# kills transforms.core.selection.answers.x__gaussian_key_multiplier__mutmut_36 (the largest multiplier taken over the
# counter horizons t = 2 .. H: none for a release of one period, whose answers could not be calibrated)
@pytest.mark.parametrize("horizon", [1, 3])
def test_the_answers_multiplier_is_the_largest_over_every_counter_horizon_from_one(horizon):
    """``docs/open_keys.md``, "After selection": a key selected at period p is answered by a counter over ``t = H - p +
    1`` periods, any t from 1 to H; under (eps, delta) each key's counter is calibrated at the largest person-unit
    multiplier over all of them, times sqrt(K) for the K keys (the sequential route, below group privacy's g). A
    release of one period (t = 1 only) is calibrated like any."""
    limit = KeyLimit(2, 2, 2)
    cal = answer_calibration(SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=horizon), limit)
    unit = ContributionUnit.person(2, 2)
    q = QuerySet("open_keys", "count")
    m = max(
        contribution_sensitivity(q, "sqrt_factorization", "gaussian", unit, horizon=t).multiplier
        for t in range(1, horizon + 1)
    )
    assert cal.route == "sequential" and cal.multiplier == math.sqrt(2) * m < limit.group


# kills transforms.core.selection.release.x_key_state_from_plain__mutmut_12 (a selected key read back without its
# selection period: its counter's horizon and its stated bound are keyed by it)
def test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored():
    """A selected key's state as plain data (``key_state_to_plain``, what the Beam step stores, through the state
    codec) reads back (``key_state_from_plain``) as the same key: its selection period, live entries, latest answer
    and counter; the restored key's next answers and stated bounds are those of the key never stored."""
    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=6, threshold=-1e9)  # every key with state passes
    noise = NoiseSource(bytes(range(32)))
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), noise)
    rel.step([("p1", Update("insert", "e1", ("k",)))])
    rel.step([("p2", Update("insert", "e2", ("k",))), ("p3", Update("insert", "e3", ("j",)))])
    kept = rel.selected["j"]
    back = key_state_from_plain(decode(encode(key_state_to_plain(kept))))
    assert (back.period, back.entries, back.answer) == (kept.period, kept.entries, kept.answer) == (2, 1, kept.answer)
    ctx = rel.context
    for d in (1, -1, 2):
        a = advance_key(ctx, "j", kept, 0, d, 3)
        b = advance_key(ctx, "j", back, 0, d, 3)
        assert a[1] == b[1] and ctx.bound(kept) == ctx.bound(back)


def _pattern_mass(cols, pattern) -> int:
    """The L1 change mass of an entry's lifecycle ``((period, op, item), ...)`` over integer columns."""
    cur, total = None, 0
    for _, op, item in pattern:
        new = None if op == "delete" else item
        v = (cols[:, new] if new is not None else 0) - (cols[:, cur] if cur is not None else 0)
        total += int(np.abs(v).sum())
        cur = new
    return total


# kills transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_250 (a one-cell histogram's
# Laplace pattern built as upserts into its only cell, which move nothing, instead of alternating insert / delete)
@pytest.mark.parametrize(
    "query",
    [
        QuerySet("n", "count"),
        QuerySet("h1", "histogram", domain_size=1),
        QuerySet("h3", "histogram", domain_size=3),
        QuerySet("s", "linear", domain_size=3, matrix=((0.0, 0.5, 1.0),)),
    ],
    ids=lambda q: q.name,
)
@pytest.mark.parametrize("k", [3, 4])
def test_an_exact_laplace_bound_is_attained_by_its_pattern(query, k):
    """``docs/contribution.md``, "Laplace": through the k-ary tree the bound is the entry's largest change mass CM
    (times one update's), exact when each change can sit alone in its top-level node: then ``pattern`` is a lifecycle
    of at most k mutations, starting dead, each change in its own top-level node, whose change mass IS CM (the
    multiplier's numerator: ``multiplier = CM / l1``)."""
    unit = ContributionUnit.entry(k)
    s = contribution_sensitivity(query, "kary_tree", "laplace", unit, horizon=64)
    cols = query_columns(query)
    l1 = int(np.abs(cols).sum(axis=0).max())
    assert s.exact and 0 < len(s.pattern) <= k
    ops = [op for _, op, _ in s.pattern]
    assert ops[0] == "insert" and ops.count("insert") <= unit.lifetimes
    assert _pattern_mass(cols, s.pattern) == s.multiplier * l1


# kills transforms.core.selection.candidate.x_svt_coords__mutmut_14 and _15 (the sparse vector's query noise drawn
# at coordinates other than the documented ones)
@pytest.mark.parametrize("key", ["k", ("s", "cell-3")])
def test_the_sparse_vectors_noise_is_drawn_at_the_keys_documented_coordinates(key):
    """``docs/open_keys.md``: the sparse-vector test of a key at period p is ``live + nu_p - rho``, ``rho`` drawn once
    at ``("open_keys", "svt", *key, "threshold")`` and ``nu_p`` at ``("open_keys", "svt", *key, "query", p)``: a
    function of the key, the period and the release's noise key only (a restored or re-created key sees the same
    noise), never shared with the selection tree's nodes or another key."""
    params = SelectionParams(PureDP(1.0), 2, horizon=8, test="svt")
    noise = NoiseSource(bytes(range(32)))
    kc = key_coords(key)
    assert svt_coords(key) == ("open_keys", "svt", *kc, "threshold")
    thr, query = params.svt_scales
    rho = int(discrete_laplace(noise.stream("open_keys", "svt", *kc, "threshold"), thr, 1)[0])
    nn = NodeNoise(params, noise)
    for p in (1, 2, 5):
        assert svt_coords(key, p) == ("open_keys", "svt", *kc, "query", p)
        nu = int(discrete_laplace(noise.stream("open_keys", "svt", *kc, "query", p), query, 1)[0])
        assert nn.at(key, p) == nu - rho


# kills transforms.core.selection.release.x_key_state_from_plain__mutmut_2 (a dict of another version read as a
# candidate's state) and x_key_state_to_plain__mutmut_10 (a selected key's counter stored under another name)
def test_an_open_key_state_reader_refuses_other_versions_and_reads_what_the_writer_wrote():
    """``key_state_from_plain`` reads versioned plain data only: a dict of another version, or not a dict, is refused
    (StateError); a selected key's plain form (``key_state_to_plain``) reads back with its counter."""
    for bad in ({"v": 99, "live": 1, "entries": 1}, {"live": 1, "entries": 1}, [1, 1, 1]):
        with pytest.raises(StateError):
            key_state_from_plain(bad)
    params = SelectionParams(PureDP(1.0), 2, horizon=4, threshold=0)
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled())
    rel.step([("p1", Update("insert", "e1", ("k",)))])
    plain = key_state_to_plain(rel.selected["k"])
    back = key_state_from_plain(decode(encode(plain)))
    assert key_state_to_plain(back) == plain


# kills transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_318 (a sensitivity without its
# unit's number of entries) and _320 (without its account)
@pytest.mark.parametrize("window", [None, 8])
def test_a_person_sensitivity_states_its_entries_group_and_account(window):
    """A person's sensitivity states how many entries one person brings over the release (``L``, or ``L`` per window
    of a bounded release: ``L ceil(end / window)``), the group size group privacy would pay (``entries (2k - 1)``), and
    its one-line account; its multiplier is the entry's times the entries."""
    unit = ContributionUnit.person(3, 2, None, window)
    q = QuerySet("n", "count")
    one = contribution_sensitivity(q, "blt", "gaussian", ContributionUnit.entry(2))
    s = contribution_sensitivity(q, "blt", "gaussian", unit, end_tick=32)
    entries = 3 if window is None else 3 * 4
    assert s.entries == unit.entries(32) == entries
    assert s.group_size == entries * 3
    assert s.multiplier >= one.multiplier * entries
    assert s.method.startswith(unit.describe()) and f"group privacy: {entries * 3} updates" in s.method


# kills transforms.core.contribution.bounding.x_bound_person__mutmut_17 (ties in the total order broken by the update's
# own tuple instead of the entry id: in the in-memory core, by the line's position)
def test_which_entry_a_person_keeps_at_the_limit_does_not_depend_on_the_order_of_lines():
    """``bound_person`` decides in the total order on updates (tick, event time, seq, op rank, item, raw, then the
    entry id): two insertions of the same item at the same tick by a person limited to one entry admit the smaller
    entry id, whichever line comes first (``PersonBounder``: the in-memory core gives no seq, event time or raw)."""
    ups = [("p", Update("insert", "e2", (0,))), ("p", Update("insert", "e1", (0,)))]
    for order in (ups, ups[::-1]):
        b = PersonBounder(PersonLimit(1))
        accepted, refused = b.filter_tick(1, order)
        assert [u.entry_id for u in accepted] == ["e1"]
        assert [(r, u.entry_id) for r, _, u in refused] == [("contribution_bounded", "e2")]


def _pinned_search(monkeypatch, work):
    """``chain_bound``'s search whose own evaluator's work counter reads ``work()`` whatever is added (inner searches,
    e.g. the early stop's ``chain(1, closed)``, run as usual)."""
    real, made = toeplitz_mod._Evaluator, []

    def pinned_first(m):
        ev = real(m)
        if not made:

            class Pinned(real):
                work = property(lambda self: work(), lambda self, v: None)

            ev.__class__ = Pinned
        made.append(ev)
        return ev

    monkeypatch.setattr(toeplitz_mod, "_Evaluator", pinned_first)
    return getattr(chain_bound, "__wrapped__", chain_bound)


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_227 (the early stop's cap Lemma M gives,
# closed * chain(1, closed) + open * S(T), with S(T) subtracted: a "bound" below real patterns)
def test_a_chain_search_stopped_past_its_work_budget_still_bounds_every_pattern(monkeypatch):
    """Past ``MAX_WORK`` the search stops with the smaller of its programme's bound and Lemma M's cap (every closed
    visit is a pair: ``closed * chain(1, closed) + open * S(T)``): valid, looser. Stopped after its first round (its
    work read past the budget), the bound is still at or above the best real pattern of the converged search (a
    lower bound on the truth) and at or above its own pattern, and flagged not exact."""
    model = toeplitz_model("sqrt_factorization", 64)
    free = chain_bound(model, 3, True)
    chain_bound(model, 1, False)  # the cap's inner search, cached before the pinned one runs
    stopped = _pinned_search(monkeypatch, lambda: toeplitz_mod.MAX_WORK + 1)(model, 3, True)
    assert not stopped.exact
    assert stopped.upper >= free.lower and stopped.upper >= stopped.lower
    assert stopped.upper <= 3 * chain_bound(model, 1, False).upper + model.n2


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_33 (an empty chain without its open visit worth
# S(T) instead of 0)
def test_an_empty_chain_is_worth_nothing_and_an_open_visit_alone_its_column(monkeypatch):
    """``chain(0, open)``: no closed visit; with the open visit alone the entry's column from period 0 to the horizon,
    ``S(T) = n2`` (what one insertion does), without it nothing: 0, exact."""
    for horizon in (1, 8, 64):
        model = toeplitz_model("sqrt_factorization", horizon)
        assert chain_bound(model, 0, False) == ChainBound(0, 0, (0,), True)
        assert chain_bound(model, 0, True) == ChainBound(model.n2, model.n2, (0,), True)


# kills transforms.core.contribution.trees.x_kary_top_nodes__mutmut_3 (the released top-level nodes counted as a
# fraction when the horizon is not a multiple of a top node's periods)
@pytest.mark.parametrize("horizon,radices", [(10, (2, 2)), (64, (4, 4)), (100, (3, 3, 3))])
def test_a_kary_trees_released_top_nodes_are_the_complete_ones(horizon, radices):
    """A k-ary tree over ``horizon`` periods releases a top-level node once all its ``prod(radices)`` periods are in:
    ``horizon // size`` of them, an integer count (the nodes ``[i size, (i + 1) size)`` inside the horizon)."""
    n, size = kary_top_nodes(horizon, radices)
    assert size == math.prod(radices)
    assert type(n) is int and n == sum(1 for i in range(horizon) if (i + 1) * size <= horizon)


# kills transforms.core.selection.release.x_advance_key__mutmut_35 (an evicted candidate reported as selected)
def test_a_candidate_whose_counts_reach_zero_is_evicted_not_selected():
    """``candidate.apply_event`` evicts a key when its live contributors and entries both reach 0: ``advance_key``
    then returns no state, no answer and not selected (``docs/open_keys.md``, "Eviction": a key with no state cannot
    be selected), and the release holds neither a candidate nor a selected key for it."""
    params = SelectionParams(PureDP(1.0), 2, horizon=4, threshold=5)  # noise off: one contributor never passes
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled())
    rel.step([("p1", Update("insert", "e1", ("k",)))])
    cand = rel.candidates["k"]
    assert cand == {"v": CANDIDATE_STATE_VERSION, "live": 1, "entries": 1}
    assert advance_key(rel.context, "k", dict(cand), -1, -1, 2) == (None, None, False)
    out = rel.step([("p1", Update("delete", "e1", None))])
    assert out.selected == () and out.answers == {} and rel.candidates == {} and rel.selected == {}


# kills transforms.core.contribution.bounding.xǁPersonBounderǁ__init____mutmut_3 (the in-memory bounder dropping its
# limit's window: a per-window person limited over the whole release)
def test_the_in_memory_bounder_enforces_its_limit_per_window():
    """``PersonLimit(L, window)``: at most L admitted entries per window of that many ticks from tick 1, a fresh
    allowance in each window. The in-memory ``PersonBounder`` keeps its limit (``limit`` reads it back) and admits
    one entry in window [1, 5] and one in [6, 10], refusing a second in the same window."""
    b = PersonBounder(PersonLimit(1, window=5))
    assert b.limit == PersonLimit(1, 5)
    acc, ref = b.filter_tick(1, [("p", Update("insert", "a", (0,)))])
    assert [u.entry_id for u in acc] == ["a"] and ref == []
    acc, ref = b.filter_tick(5, [("p", Update("insert", "b", (0,)))])
    assert acc == [] and [(r, u.entry_id) for r, _, u in ref] == [("contribution_bounded", "b")]
    acc, ref = b.filter_tick(6, [("p", Update("insert", "c", (0,)))])
    assert [u.entry_id for u in acc] == ["c"] and ref == []


# kills transforms.core.selection.candidate.xǁNodeNoiseǁ__init____mutmut_4 (the tree test's nodes always discrete
# Gaussian: under pure eps a Laplace scale used as a Gaussian variance, not the noise the eps-DP proof calibrates)
@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)], ids=["pure", "approx"])
def test_a_tree_tests_nodes_are_drawn_from_the_selection_noise_at_their_coordinates(budget):
    """The tree test (``docs/open_keys.md``, "Parameters"): under pure eps every node is discrete Laplace of scale
    ``node_param(level)`` (L1 2 per level: ``eps_key`` per key), under (eps, delta) discrete Gaussian of variance
    ``node_param(level)`` (zCDP); each node drawn at ``select_coords(key, level, index)``, and ``Z_p`` is the sum of
    the nodes decomposing ``[1, p]``."""
    params = SelectionParams(budget, 2, horizon=16, test="tree")
    noise = NoiseSource(bytes(range(32)))
    sampler = discrete_laplace if isinstance(budget, PureDP) else discrete_gaussian
    assert params.selection_noise == ("laplace" if isinstance(budget, PureDP) else "gaussian")
    nn = NodeNoise(params, noise)
    for p in (1, 6, 13):
        want = [
            int(sampler(noise.stream(*select_coords("k", lvl, idx)), params.node_param(lvl), 1)[0])
            for lvl, idx in dyadic_nodes(p)
        ]
        assert [nn.node("k", lvl, idx) for lvl, idx in dyadic_nodes(p)] == want
        assert nn.at("k", p) == sum(want)


# kills transforms.core.contribution.sensitivity.x_group_noise_multiplier__mutmut_1 (group privacy's Laplace noise and
# zCDP Gaussian noise no longer scaled by g: an (eps, delta) Laplace target taken through the Gaussian conversion)
@pytest.mark.parametrize("g", [1, 3, 7])
def test_group_privacys_noise_multiplier_is_g_wherever_the_budget_scales_linearly(g):
    """Group privacy over g updates (``group_update_budget``): eps / g for Laplace noise (pure or (eps, delta)) and
    rho / g^2 for zCDP, so the noise scale is g times the update level's; for an (eps, delta) target with Gaussian
    noise it is sqrt(rho(target) / rho(group budget)) through the counters' CKS conversion, at least g."""
    for target, noise in ((PureDP(1.0), "laplace"), (ApproxDP(1.0, 1e-6), "laplace"), (ZCDP(0.5), "gaussian")):
        assert group_noise_multiplier(target, g, noise) == g
    approx = ApproxDP(1.0, 1e-6)
    m = group_noise_multiplier(approx, g, "gaussian")
    assert m == math.sqrt(rho_for_approx(approx) / rho_for_approx(group_update_budget(approx, g))) >= g


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_187 (the best path read back through the wrong
# layer: the real pattern found is not the programme's best, and a converged search is no longer certified)
@pytest.mark.parametrize("closed", [2, 3, 4])
@pytest.mark.parametrize("open_", [False, True])
def test_a_small_horizons_chain_search_converges_to_a_pattern_it_attains(closed, open_):
    """Over 16 periods the search refines to single positions: its bound is certified exact (``upper`` equals the
    value of the real pattern at ``positions``), ``positions`` start at 0 and are ordered, and the value of the
    chain at them (``S`` and ``F`` of the module docstring, exact ints) is ``lower``."""
    model = toeplitz_model("sqrt_factorization", 16)
    cb = getattr(chain_bound, "__wrapped__", chain_bound)(model, closed, open_)
    assert cb.exact and cb.upper == cb.lower
    pts = list(cb.positions)
    assert pts[0] == 0 and pts == sorted(pts) and len(pts) == closed + 1
    assert toeplitz_mod._Evaluator(model).value(pts[1:], open_) == cb.lower


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_235 (the early stop's Lemma M cap built from
# chain(1, open) instead of chain(1, closed): a looser cap than the proof gives)
def test_an_early_stopped_chain_search_never_states_more_than_lemma_ms_cap(monkeypatch):
    """Stopped past its work budget, the search states at most ``closed * chain(1, closed) + open * S(T)`` (Lemma M:
    every closed visit is a pair), whatever its programme's values: with a programme over-estimating every ``F`` four
    times, the bound stated is exactly that cap."""
    model = toeplitz_model("sqrt_factorization", 64)
    cap = 3 * chain_bound(model, 1, False).upper + model.n2
    chain_bound(model, 1, True)  # inner searches cached before the pinned one runs
    real, made = toeplitz_mod._Evaluator, []

    def inflated_first(m):
        ev = real(m)
        if not made:

            class Inflated(real):
                work = property(lambda self: toeplitz_mod.MAX_WORK + 1, lambda self, v: None)

                def F(self, n, delta):
                    return 4 * real.F(self, n, delta)

            ev.__class__ = Inflated
        made.append(ev)
        return ev

    monkeypatch.setattr(toeplitz_mod, "_Evaluator", inflated_first)
    assert getattr(chain_bound, "__wrapped__", chain_bound)(model, 3, True).upper == cap


# kills transforms.core.contribution.loss.x_privacy_loss__mutmut_6 (the draws walked in their natural order: two
# coordinates of different types at one place, e.g. a tree node's level and a lattice step's tag, do not compare)
def test_privacy_loss_takes_coordinates_of_any_types_in_a_canonical_order():
    """``privacy_loss`` pairs two runs' draws by coordinates (tuples of ints and strings, as the counters name their
    releases: ``(..., name, level, index)`` for a tree node, ``(..., name, "step", t)`` for a lattice step) and walks
    them in a canonical (repr) order: coordinates of different shapes in one run are fine; the loss is the sum over
    draws (Laplace |Delta| / b, Gaussian Delta^2 / (2 sigma^2))."""
    a = {
        ("s", "c", "q", 2, 1): Draw(("s", "c", "q", 2, 1), "laplace", Fraction(2), (3,)),
        ("s", "c", "q", "step", 1): Draw(("s", "c", "q", "step", 1), "gaussian", Fraction(8), (5, 1)),
    }
    b = {
        ("s", "c", "q", 2, 1): Draw(("s", "c", "q", 2, 1), "laplace", Fraction(2), (2,)),
        ("s", "c", "q", "step", 1): Draw(("s", "c", "q", "step", 1), "gaussian", Fraction(8), (3, 1)),
    }
    loss = privacy_loss(a, b)
    assert (loss.draws, loss.differing) == (2, 2)
    assert loss.epsilon == 0.5 and loss.rho == 4 / 16
    assert loss.by_query == {"q": (0.25, 0.5)}


# kills transforms.core.selection.answers.x__laplace_mass__mutmut_8 (the joint L1 route computed through the counter
# of a run without an end, whatever the horizon: its account names a counter the keys do not use)
@pytest.mark.parametrize("horizon", [8, None])
def test_the_joint_l1_accounts_counter_is_the_one_the_selected_keys_use(horizon):
    """Under pure eps the selected keys' counters are ``answer_counter("laplace", t)`` (a k-ary tree with an end, the
    unbounded Honaker tree without one); the calibration's account names that counter, and its multiplier is the
    joint change mass of a person over min(K, k) cells: ``L (2k - 1)`` once K >= 2, ``L`` alive toggles for K = 1."""
    params = SelectionParams(PureDP(1.0), 2, horizon=horizon)
    limit = KeyLimit(2, 2, 2)
    cal = answer_calibration(params, limit)
    counter = answer_counter("laplace", horizon)
    assert counter == ("kary_tree" if horizon else "infinite_honaker")
    key_counter = KeyContext(params, cal.budget, NoiseSource.disabled()).counter("k", 1)
    assert type(key_counter) is type(make_counter(counter, CountMechanism(1, "laplace"), cal.budget, horizon=horizon))
    assert cal.route == "joint_l1" and f"through {counter}:" in cal.method
    assert cal.multiplier == limit.group == 6


# kills transforms.core.selection.release.x_advance_key__mutmut_24 (an event of live entries without a contributor
# change dropped for a key without state: a person's return to a key they left is lost)
def test_a_persons_return_to_a_key_they_left_is_counted_in_its_entries_not_its_contributors():
    """``docs/open_keys.md``: a person is a contributor of a key once; a later return adds entries (the answers count
    them) but no contributor. After p1 leaves "k" (evicted: no contributor, no entry) and comes back, "k" is a
    candidate again with one live entry and no contributor; when two others join it is selected and its answer (noise
    off) counts all three live entries."""
    params = SelectionParams(PureDP(1.0), 2, horizon=6, threshold=1)
    rel = OpenKeyRelease(params, KeyLimit(2, 2, 3), NoiseSource.disabled())
    rel.step([("p1", Update("insert", "e1", ("k",)))])
    rel.step([("p1", Update("delete", "e1", None))])
    assert rel.candidates == {}
    rel.step([("p1", Update("insert", "e2", ("k",)))])
    assert rel.candidates == {"k": {"v": CANDIDATE_STATE_VERSION, "live": 0, "entries": 1}}
    out = rel.step([("p2", Update("insert", "e3", ("k",))), ("p3", Update("insert", "e4", ("k",)))])
    assert out.selected == ("k",) and out.answers == {"k": 3} == rel.truth()


# kills transforms.core.contribution.units.xǁContributionUnitǁof__mutmut_3 (a configured update unit, k = 1 by
# default, read as a person of one entry of one mutation)
def test_a_configured_update_unit_contributes_one_update():
    """``ContributionUnit.of`` the update unit (the seeds' relation; its ``max_mutations`` is 1 by default) is the
    update unit itself: one update, multiplier 1 exactly, described as "one update", not a one-entry person."""
    got = ContributionUnit.of(PrivacyUnit("update"))
    assert got == ContributionUnit.update() and got.kind == "update" and got.describe() == "one update"
    s = contribution_sensitivity(QuerySet("n", "count"), "blt", "gaussian", got)
    assert s.multiplier == 1.0 and s.exact and s.method.startswith("one update:")


# kills transforms.core.selection.params.x_dyadic_nodes__mutmut_16 (every other level skipped: the nodes no longer
# cover [1, p], so the tree's estimate misses periods)
def test_the_dyadic_nodes_of_a_period_partition_one_to_p():
    """``dyadic_nodes(p)``: one node ``(level, index)`` per set bit of p, highest level first, whose intervals
    ``((index - 1) 2^level, index 2^level]`` partition ``[1, p]`` (the tree test's estimate is their sum)."""
    for p in range(1, 130):
        nodes = dyadic_nodes(p)
        assert len(nodes) == bin(p).count("1")
        assert [lvl for lvl, _ in nodes] == sorted((lvl for lvl, _ in nodes), reverse=True)
        covered = [t for lvl, idx in nodes for t in range((idx - 1) * 2**lvl + 1, idx * 2**lvl + 1)]
        assert sorted(covered) == list(range(1, p + 1))


# kills transforms.core.selection.candidate.xǁNodeNoiseǁforget__mutmut_1 (forget removes nothing: a worker's node-noise
# cache grows with every key it has seen)
@pytest.mark.parametrize("test", ["tree", "svt"])
def test_a_key_context_that_does_not_remember_holds_no_node_noise_after_its_keys(test):
    """``KeyContext(remember=False)`` (each Beam worker's): the node noise is redrawn, never cached across keys, so the
    worker's memory does not grow with the keys it has seen; ``NodeNoise.forget`` drops a key's cached noise (and a
    remembered key's noise is the same when drawn again)."""
    params = SelectionParams(PureDP(1.0), 2, horizon=16, test=test)
    noise = NoiseSource(bytes(range(32)))
    ctx = KeyContext(params, answer_budget(params, KeyLimit(2, 2, 3)), noise, remember=False)
    for i in range(12):
        state, _, selected = advance_key(ctx, f"k{i}", None, 1, 1, 3)
        assert not selected and state is not None
    assert ctx.node_noise._cache == {}
    nn = NodeNoise(params, noise)
    z = nn.at("k", 5)
    assert "k" in nn._cache
    nn.forget("k")
    assert "k" not in nn._cache and nn.at("k", 5) == z


# kills transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_14 (a zCDP loss exactly at its budget, to the
# stated float tolerance, no longer within it)
def test_a_zcdp_loss_at_its_budget_to_the_tolerance_is_within_it_and_one_ulp_more_is_not():
    """``PrivacyLoss.within`` a zCDP budget: ``rho + eps^2 / 2 <= rho_budget (1 + TOLERANCE)`` (float sums of exact
    ratios): a loss exactly at that edge is within, the next float above is not."""
    budget = ZCDP(0.5)
    edge = budget.rho * (1 + TOLERANCE)
    assert PrivacyLoss(rho=edge).within(budget)
    assert not PrivacyLoss(rho=math.nextafter(edge, 1.0)).within(budget)


# kills transforms.core.contribution.toeplitz.x_layer_cake_bound__mutmut_52 (a row of non-positive answers bounded
# with (hi + lo) instead of its range (hi - lo): below what the entry can do)
@pytest.mark.parametrize("k", [2, 3])
def test_the_layer_cake_bound_of_a_negated_query_is_the_querys(k):
    """Lemma L (``layer_cake_bound``, any integer columns: rows of either sign) bounds each row by its range and its
    distance from 0; negating the answers (columns ``-C``) changes no entry's L2 change, so the bound of ``-C`` is
    that of ``C``: for a row whose lower end is above 0, and for one starting at 0 (then exact for a one-row sum)."""
    model = toeplitz_model("sqrt_factorization", 32)
    alive = ContributionUnit.entry(k).alive_toggles
    for row in ((0.25, 0.5, 1.0), (0.0, 0.5, 1.0)):
        cols = query_columns(QuerySet("p", "linear", domain_size=3, matrix=(row,)))
        assert layer_cake_bound(model, -cols, k, alive) == layer_cake_bound(model, cols, k, alive)


# kills transforms.core.contribution.trees.x_change_costs__mutmut_2 (the default norm spelled "L1", refused)
def test_change_costs_default_to_the_l1_norm():
    """``change_costs(columns)`` is ``change_costs(columns, "l1")`` (the documented default: the interval-release
    counters' norm)."""
    cols = query_columns(QuerySet("s", "linear", domain_size=3, matrix=((0.0, 0.5, 1.0),)))
    assert change_costs(cols) == change_costs(cols, "l1") != change_costs(cols, "l2sq")
