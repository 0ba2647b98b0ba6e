"""Benchmark of continual private key selection (issue 33; figures in ``docs/open_keys.md`` and
``docs/accuracy.md``).

A generated stream: a universe of ``--keys`` keys with Zipf(``--zipf``) popularity, persons who each
take up to ``K`` keys and insert 1-2 entries per key at uniform periods, each entry deleted later with
probability 1/2; about ``--updates`` updates over ``--periods`` periods; the person unit (``K`` keys,
``L = 2K`` entries of ``k = 2`` mutations). At eps = 1 (pure: discrete Laplace, plus the selection's
``delta_event``) and (1, 1e-6) (discrete Gaussian), selection share 1/2:

* the share of the true live count (live entries) that lies in released keys at the end;
* the time from a key's appearance (its first live contributor) to its release, in periods;
* the error of released keys: mean |answer - truth| over released keys and periods;
* the naive approach on the same budget: a fresh batch selection at every period (budget / periods
  each, threshold for the same delta per period) and a fresh noisy count of each released key
  (numpy noise of the same law: a baseline only, never a release), its counts calibrated to what a
  person changes in one period's histogram of live entries (``L``: at most ``L`` live entries, L1 and
  L2), and, for comparison with the earlier figures, to group privacy (``g = L (2k - 1)``);
* ``--calibration group``: the selected keys' counters calibrated by group privacy (the earlier
  calibration) instead of by contribution (``selection/answers.py``), to measure the gain;
* the memory per candidate key: the bytes of its encoded plain-data state, and per person.

Usage: ``python -m benchmarks.bench_open_keys [--quick] [--budget pure|approx|both] [--calibration group]``
(``--quick``: 10^4 keys, 10^5 updates). Prints one JSON object per budget.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from transforms.core.contribution.sensitivity import calibrated_budget
from transforms.core.foundation.accounting import ApproxDP, PureDP, rho_for_approx
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import encode
from transforms.core.selection import KeyLimit, OpenKeyRelease, SelectionParams

K, ENTRIES, MUTATIONS = 2, 4, 2
SHARE = 0.5


def generate(n_keys: int, n_updates: int, periods: int, zipf: float, seed: int = 1):
    """Per period, a list of (person, Update); keys are strings ``k<rank>``."""
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, n_keys + 1) ** zipf
    w /= w.sum()
    # a person makes about 1.5 keys * 1.5 entries * 1.5 updates = 3.4 updates (fewer deletions near the end)
    n_persons = max(1, int(n_updates / 3.2))
    out = [[] for _ in range(periods)]
    nk = rng.integers(1, K + 1, size=n_persons)
    keys = rng.choice(n_keys, size=int(nk.sum()), p=w)
    ki = 0
    for person in range(n_persons):
        pid = f"p{person}"
        for j in range(nk[person]):
            key = f"k{keys[ki]}"
            ki += 1
            for e in range(rng.integers(1, 3)):
                t = int(rng.integers(0, periods))
                eid = f"{j}.{e}"
                out[t].append((pid, Update("insert", eid, (key,))))
                if rng.random() < 0.5:
                    d = int(rng.integers(t, periods))
                    if d > t:
                        out[d].append((pid, Update("delete", eid)))
    return out


def naive_figures(truth_hist, periods: int, budget, rng, g: int):
    """A fresh batch selection and fresh counts at every period, budget / periods each."""
    gauss = not isinstance(budget, PureDP)
    released_final, released_any = set(), set()
    delta_key = 1e-9 / K if not gauss else budget.delta * SHARE / 2 / K
    for live, _entries in truth_hist:
        keys = [k for k, c in live.items() if c > 0]
        c = np.array([live[k] for k in keys], dtype=float)
        if gauss:
            rho_sel = rho_for_approx(ApproxDP(budget.epsilon * SHARE / periods, budget.delta * SHARE / 2 / periods))
            sigma = math.sqrt(1.0 / (2 * rho_sel / K))  # L2 of one person over K keys: sqrt(K)
            thr = sigma * math.sqrt(2 * math.log(1 / (delta_key / periods)))
            noisy = c + rng.normal(0, sigma, size=len(c))
            rho_ans = rho_for_approx(
                ApproxDP(budget.epsilon * (1 - SHARE) / periods, budget.delta * (1 - SHARE) / periods)
            )
            s_ans = g / math.sqrt(2 * rho_ans)
        else:
            b = K / (budget.epsilon * SHARE / periods)
            thr = b * math.log(1 / (2 * delta_key / periods))
            noisy = c + rng.laplace(0, b, size=len(c))
            b_ans = g / (budget.epsilon * (1 - SHARE) / periods)
        sel = [k for k, v in zip(keys, noisy) if v > thr]
        released_final = set(sel)
        released_any |= released_final
    # a released key's fresh count: E|noise| (continuous laws: the discrete ones are within a few %)
    err = s_ans * math.sqrt(2 / math.pi) if gauss else b_ans
    return {
        "mean_abs_error": err,
        "released_last_period": len(released_final),
        "released_at_some_period": len(released_any),
        "threshold": round(thr, 1),
    }


def run(budget, stream, periods: int, seed: int = 7, test: str = "auto", calibration: str = "contribution"):
    params = SelectionParams(budget, K, selection_share=SHARE, failure=1e-9, horizon=periods, test=test)
    limit = KeyLimit(K, ENTRIES, MUTATIONS)
    rel = OpenKeyRelease(params, limit, NoiseSource(bytes([seed]) * 32))
    if calibration == "group":  # the earlier calibration, for the comparison only
        rel.answer_budget = calibrated_budget(params.answers_budget, float(limit.group), params.noise_kind)
    appeared, released_at, errs, hist = {}, {}, [], []
    cand_bytes, max_cand = [], 0
    t0 = time.perf_counter()
    for p, ups in enumerate(stream, 1):
        out = rel.step(ups)
        # the truth (operator-side, for the figures only)
        live = {k: s["live"] for k, s in rel.candidates.items()}
        ent = {k: s["entries"] for k, s in rel.candidates.items()}
        for k in rel.selected:
            ent[k] = rel.entries[k]
        for k, s in rel.candidates.items():
            if s["live"] > 0:
                appeared.setdefault(k, p)
        for k in out.selected:
            appeared.setdefault(k, p)
            released_at[k] = p
        truth = rel.truth()
        errs += [abs(out.answers[k] - truth[k]) for k in out.answers]
        max_cand = max(max_cand, len(rel.candidates))
        if p == periods // 2:
            cand_bytes = [len(encode(s)) + len(k) for k, s in list(rel.candidates.items())[:2000]]
        hist.append((live | {k: 1 for k in rel.selected}, ent))
    elapsed = time.perf_counter() - t0
    truth = rel.truth()
    total_live = sum(s["entries"] for s in rel.candidates.values()) + sum(truth.values())
    delays = [released_at[k] - appeared[k] for k in released_at]
    person_bytes = [len(encode(s)) for s in list(rel.persons.persons.values())[:2000]]
    return (
        rel,
        params,
        hist,
        {
            "budget": repr(budget),
            "threshold_first_last": [round(params.threshold_at(1), 1), round(params.threshold_at(periods), 1)],
            "keys_appeared": len(appeared),
            "keys_released": len(released_at),
            "share_of_live_count_in_released_keys": round(sum(truth.values()) / max(total_live, 1), 4),
            "delay_periods_median_mean": [
                float(np.median(delays)) if delays else None,
                float(np.mean(delays)) if delays else None,
            ],
            "mean_abs_error_released": float(np.mean(errs)) if errs else None,
            "candidates_held_max": max_cand,
            "bytes_per_candidate_state_mean": float(np.mean(cand_bytes)) if cand_bytes else None,
            "bytes_per_person_state_mean": float(np.mean(person_bytes)) if person_bytes else None,
            "seconds": round(elapsed, 1),
        },
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--keys", type=int, default=None)
    ap.add_argument("--updates", type=int, default=None)
    ap.add_argument("--periods", type=int, default=64)
    ap.add_argument("--zipf", type=float, default=1.0)
    ap.add_argument("--budget", choices=("pure", "approx", "both"), default="both")
    ap.add_argument("--test", choices=("auto", "tree", "svt"), default="auto")
    ap.add_argument("--calibration", choices=("contribution", "group"), default="contribution")
    a = ap.parse_args(argv)
    n_keys = a.keys or (10_000 if a.quick else 100_000)
    n_updates = a.updates or (100_000 if a.quick else 1_000_000)
    stream = generate(n_keys, n_updates, a.periods, a.zipf)
    n = sum(len(s) for s in stream)
    budgets = {"pure": [PureDP(1.0)], "approx": [ApproxDP(1.0, 1e-6)], "both": [PureDP(1.0), ApproxDP(1.0, 1e-6)]}
    for budget in budgets[a.budget]:
        if a.test == "svt" and not isinstance(budget, PureDP):
            continue
        _, params, hist, fig = run(budget, stream, a.periods, test=a.test, calibration=a.calibration)
        fig["test"], fig["calibration"] = params.selection_test, a.calibration
        fig["updates"], fig["universe"], fig["periods"] = n, n_keys, a.periods
        naive = naive_figures(hist, a.periods, budget, np.random.default_rng(3), ENTRIES)
        group = naive_figures(hist, a.periods, budget, np.random.default_rng(3), KeyLimit(K, ENTRIES, MUTATIONS).group)
        fig["naive"] = naive
        fig["naive_group_privacy_error"] = group["mean_abs_error"]
        if fig["mean_abs_error_released"]:
            fig["naive_over_ours_error"] = round(naive["mean_abs_error"] / fig["mean_abs_error_released"], 1)
            fig["naive_group_over_ours_error"] = round(group["mean_abs_error"] / fig["mean_abs_error_released"], 1)
        print(json.dumps(fig), flush=True)


if __name__ == "__main__":
    main()
