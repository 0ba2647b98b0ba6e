"""The dense stream (a) of ``bench_utility``, ``auto``, (1, 1e-6): mean tracked error of the run with
``time.end`` and of the run without it (``docs/accuracy.md``, "Counters at the limit").

``bench_utility.run``'s loop, except that the run without an end builds the core with ``end_tick=None``
(``auto`` then picks its counter for a run with no end) and steps the empty ticks after the last batch
itself. Same release identities (``bench-utility-<seed>``) and key as ``bench_utility``.

Every run measures six independent noise paths, not one: the count (``active``) and the five cells of
the histogram (``by_cell``). The additive part gives each query set the same share and sensitivity 1,
so the six counters have the same noise parameter (checked) and independent noise (their own
coordinates): six draws of the same law. One path's mean |error| over 43,200 ticks varies by 12%
(``scaled_sqrt``) to 18% (``anytime_sqrt``) from seed to seed (its noise is correlated over long
spans), so 16 count paths alone put the ratio without / with an end anywhere in about [1.00, 1.20]
(issue 31, round 9); the 96 paths of 16 seeds in about [1.05, 1.14]. Each run also prints the error
its counter states: the mean over the ticks of ``sqrt(2 var_t / pi)`` (the mean |error| of a Gaussian
of the stated variance ``var_t``), and checks that its six error paths are the noise its counters drew
through their decoders (to 1e-6 at every tick: no rounding, clamping, projection or loop effect).

Usage:
  python -m benchmarks.bench_anytime_dense end|noend|both SEED [SEED ...]
  python -m benchmarks.bench_anytime_dense draws FIRST_SEED END_SEED [VARIANT ...]
    (the six error paths of each seed without the stream: the counters' own draws, decoded; about
    1 s of CPU a seed against 11 s for a run. Variants: end, noend (default: both), noend_blt (no end,
    ``counter: blt``: what the entry and person units got without an end before stop 49))
  python -m benchmarks.bench_anytime_dense model PATHS [OBSERVED_RATIO]
    (the law of the ratio from the counters' stated noise alone: PATHS Gaussian paths per variant
    through each counter's decoder, no stream; the ratio of means over 16 and 96 paths)
"""

from __future__ import annotations

import math
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import bench_utility as bu  # noqa: E402
from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, QuerySet, ReleaseIdentity  # noqa: E402
from transforms.core.counters.factorization import LATTICE_BITS  # noqa: E402
from transforms.core.foundation.samplers import discrete_gaussian  # noqa: E402

DAYS = 30
LAST = DAYS * 1440


VARIANTS = {"end": (True, "auto"), "noend": (False, "auto"), "noend_blt": (False, "blt")}


def _core(end: bool, counter: str = "auto"):
    queries = (QuerySet("active", "count"), QuerySet("by_cell", "histogram", domain_size=bu.DENSE_CELLS))
    config = DynamicConfig(queries, bu.BUDGETS["(1,1e-6)"], profile="tuned")
    spec = MECHANISMS["auto"]
    end_tick = LAST if end else None
    return spec.core_cls(config, stream="bench", end_tick=end_tick, every_ticks=1, options=spec.options_cls(counter))


def _counters(core):
    """The additive part's counters (count, histogram): one noise parameter (checked)."""
    counters = core.parts[0].counters
    if len({c.noise_param for c in counters}) != 1 or len({c.name for c in counters}) != 1:
        raise AssertionError("the count and the histogram cells are not draws of one noise law")
    return counters


def _merged_tables(counter):
    """``anytime_sqrt``'s merged start (profile 3): phase 1's tables and the Toeplitz tables after the hand-over,
    long enough for LAST steps."""
    from transforms.core.counters.factorization.anytime import anytime_tables, merge_tables

    t1 = counter.merge_t1
    return t1, merge_tables(t1, counter.profile), anytime_tables(1 << (LAST - t1 + 1).bit_length(), counter.profile)


def _rows(counter) -> np.ndarray:
    """The counter's decoder row norms^2 in lattice units, t = 1..: ``scaled_sqrt``'s ``rowsq``, a
    Toeplitz counter's ``bsq`` (what its ``variance()`` reads at each step); with a merged start, phase 1's
    rows, then ``V0 b_tau^2 + sum_{j < tau} b_j^2``."""
    if getattr(counter, "merge_t1", 0):
        t1, p1, tab = _merged_tables(counter)
        tau = np.arange(1, LAST - t1 + 1)
        return np.concatenate([p1.bsq, tab.bsq[tau - 1] + float(p1.bsq[-1]) * tab.b[tau] ** 2])
    tab = counter._tab
    if counter.name == "blt" and len(tab.b) < LAST:  # past its table: the counter's own recurrence
        return np.cumsum(_blt_b(counter) ** 2)
    return np.asarray(tab.rowsq if hasattr(tab, "rowsq") else tab.bsq)


def _blt_b(counter) -> np.ndarray:
    """``blt``'s decoder weights b_0..b_(LAST-1): the table's, then ``b_k = 1 - sum_j K~_j b_(k-j)`` (the
    counter's ``_advance_weights`` past its table), as the prefix sums of the series inverse of K~."""
    from transforms.core.counters.factorization.lattice import series_inverse

    tab = counter._tab
    return np.cumsum(series_inverse(tab.cint.astype(np.float64) / float(1 << LATTICE_BITS), LAST))


def stated_variances(counter, steps: int) -> np.ndarray:
    """The variance the counter states for its answers at t = 1..steps (count units)."""
    g = counter.unit / float(1 << LATTICE_BITS)
    return float(counter.noise_param) * g * g * _rows(counter)[:steps]


def expected_error(var: np.ndarray) -> float:
    """Mean over the ticks of E|N(0, var_t)| = sqrt(2 var_t / pi)."""
    return float(np.sqrt(2.0 * var / math.pi).mean())


def _decoder(counter) -> tuple[np.ndarray, np.ndarray, float]:
    """(b, a, g): the counter's error at t is ``g sum_{k<t} b_{t-1-k} a_k z_k`` for its lattice draws z
    (``a_k = 2^shift / s_k`` for ``scaled_sqrt``, 1 for a Toeplitz counter), checked against the variance
    it states at every t. An unbounded counter's tables are doubled as its run doubles them. With a merged
    start: (("merged", t1, phase 1's b, the Toeplitz b), None, g), decoded by ``_decode``."""
    if getattr(counter, "merge_t1", 0):
        t1, p1, tab = _merged_tables(counter)
        g = counter.unit / float(1 << LATTICE_BITS)
        dec = (("merged", t1, np.asarray(p1.b, dtype=np.float64), np.asarray(tab.b, dtype=np.float64)), None, g)
        # each draw's weight in the error at t, whose squares the stated variance sums: bP_(t-1-k) before the
        # hand-over; after it b_tau bP_(t1-1-k) for a first-phase draw k, b_(t-1-k) for a later one
        ks = (0, t1 // 2, t1 - 1, t1, t1 + 5)
        unit = np.zeros((len(ks), LAST))
        unit[range(len(ks)), ks] = 1.0
        resp = _decode(dec, unit) / g
        t = np.arange(1, LAST + 1)
        for row, k in zip(resp, ks):
            want = np.zeros(LAST)
            early = (t > k) & (t <= t1)
            want[early] = p1.b[t[early] - 1 - k]
            late = t > max(k, t1)
            want[late] = tab.b[t[late] - t1] * p1.b[t1 - 1 - k] if k < t1 else tab.b[t[late] - 1 - k]
            if not np.allclose(row, want, rtol=1e-8, atol=1e-9):
                raise AssertionError("the merged decoder is not the counter's")
        return dec
    while len(counter._tab.b) < LAST and hasattr(counter, "_grow"):
        counter._grow()
    tab = counter._tab
    a = (float(1 << tab.shift) / tab.s_f[:LAST]) if hasattr(tab, "s_f") else np.ones(LAST)
    b = np.asarray(tab.b[:LAST], dtype=np.float64) if len(tab.b) >= LAST else _blt_b(counter)
    g = counter.unit / float(1 << LATTICE_BITS)
    nfft = 1 << (2 * LAST - 1).bit_length()
    check = g * g * float(counter.noise_param) * np.fft.irfft(np.fft.rfft(b * b, nfft) * np.fft.rfft(a * a, nfft), nfft)
    if not np.allclose(check[:LAST], stated_variances(counter, LAST), rtol=1e-8):
        raise AssertionError("the decoder is not the stated variance")
    return b, a, g


def _decode(dec, z: np.ndarray) -> np.ndarray:
    """The error paths of draws ``z`` (paths x LAST) through the decoder (one FFT convolution)."""
    b, a, g = dec
    nfft = 1 << (2 * LAST - 1).bit_length()
    if a is None:  # the merged start: phase 1's errors, then b_tau x phase 1's error at t1 plus the Toeplitz part
        _, t1, bp, bt = b
        z = np.asarray(z, dtype=np.float64)
        e1 = np.fft.irfft(np.fft.rfft(bp, nfft) * np.fft.rfft(z[..., :t1], nfft, axis=-1), nfft, axis=-1)[..., :t1]
        late = np.fft.irfft(np.fft.rfft(bt[: LAST - t1], nfft) * np.fft.rfft(z[..., t1:], nfft, axis=-1), nfft, axis=-1)
        late = late[..., : LAST - t1] + bt[1 : LAST - t1 + 1] * e1[..., -1:]
        return g * np.concatenate([e1, late], axis=-1)
    fz = np.fft.rfft(np.asarray(z, dtype=np.float64) * a, nfft, axis=-1)
    return g * np.fft.irfft(np.fft.rfft(b, nfft) * fz, nfft, axis=-1)[..., :LAST]


def _draws(core, noise) -> np.ndarray:
    """The lattice noise the additive part's counters draw over LAST steps (paths x LAST: the count, then
    the cells), drawn again from their coordinates (``_LatticeToeplitzCounter._draw``'s: the part's
    sub-key, the counter's coordinates and name, blocks of ``block`` steps): the same draws as the run's."""
    sub = core._noise(noise, 0)
    out = []
    for c in _counters(core):
        blocks = [
            discrete_gaussian(sub.stream(*c.coords, c.name, "noise", j), c.noise_param, c.block * c.m)
            for j in range(-(-LAST // c.block))
        ]
        out.append(np.concatenate([x.reshape(c.block, c.m) for x in blocks])[:LAST].T)
    return np.concatenate(out)


AT = (1 << 10, 1 << 13, 1 << 15, LAST)  # ticks where ``draws`` compares the empirical variance with the stated


def draws(variant: str, seeds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean |error| of the six paths of each seed without the stream: the counters' own draws for the
    seed's release identity, decoded (the run's error paths exactly, ``run`` checks it): a tenth of a
    run's CPU, so hundreds of seeds. Also the errors at the ticks ``AT`` and the variance stated there."""
    out, at, dec, var = [], [], None, None
    for s in seeds:
        core = _core(*VARIANTS[variant])
        if dec is None:  # the same counter configuration for every seed
            dec, var = _decoder(_counters(core)[0]), stated_variances(_counters(core)[0], LAST)
        noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-utility-{s}"))
        e = _decode(dec, _draws(core, noise))
        out.append(np.abs(e).mean(axis=1))
        at.append(e[:, [t - 1 for t in AT]])
    return np.array(out), np.concatenate(at), var[[t - 1 for t in AT]]


def run(seed: int, end: bool) -> dict:
    """Mean over the ticks of |estimate - true value| of the count and of each histogram cell, and the
    error the counter states (``expected``)."""
    core = _core(end)
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-utility-{seed}"))
    cells = bu.DENSE_CELLS
    est, truth = np.zeros(LAST + 1), np.zeros(LAST + 1)
    hest, htruth = np.zeros((LAST + 1, cells)), np.zeros((LAST + 1, cells))
    live: dict[str, int] = {}
    hist = np.zeros(cells)

    def collect(res):
        for a in res.answers:
            if a.query == "active":
                est[a.tick] = float(a.estimate[0])
            else:
                hest[a.tick] = np.asarray(a.estimate, dtype=float)

    prev = 0
    for tick, ups in bu.dense_stream(DAYS):
        truth[prev + 1 : tick], htruth[prev + 1 : tick] = len(live), hist
        for u in ups:
            old = live.pop(u.entry_id, None) if u.op != "insert" else None
            if old is not None:
                hist[old] -= 1
            if u.op == "insert" or (u.op == "upsert" and old is not None):
                live[u.entry_id] = u.item[1]
                hist[u.item[1]] += 1
        truth[tick], htruth[tick] = len(live), hist
        collect(core.process_tick(tick, ups, noise))
        prev = tick
    truth[prev + 1 :], htruth[prev + 1 :] = len(live), hist
    if end:
        for res in core.run_to_end(noise):
            collect(res)
    else:
        for tick in range(prev + 1, LAST + 1):
            collect(core.process_tick(tick, [], noise))
    counter = _counters(core)[0]
    var = stated_variances(counter, LAST)
    if not math.isclose(var[-1], counter.variance(), rel_tol=1e-12):
        raise AssertionError("stated_variances is not what the counter states")
    err = np.vstack([est[1:] - truth[1:], (hest[1:] - htruth[1:]).T])
    gap = float(np.abs(err - _decode(_decoder(counter), _draws(core, noise))).max())
    if gap > 1e-6:  # the error is the counter's noise through its decoder, nothing else (issue 31, round 9)
        raise AssertionError(f"the error paths are not the decoded noise (max gap {gap})")
    return {
        "counter": counter.name,
        "count": float(np.abs(est[1:] - truth[1:]).mean()),
        "cells": np.abs(hest[1:] - htruth[1:]).mean(axis=0),
        "expected": expected_error(var),
        "gap": gap,
    }


def _summary(rows: list[dict]) -> tuple[float, float, float, float]:
    """(mean of the count paths, mean of all paths, its standard error, expected)."""
    paths = np.concatenate([[r["count"]] + list(r["cells"]) for r in rows])
    return (
        float(np.mean([r["count"] for r in rows])),
        float(paths.mean()),
        float(paths.std(ddof=1) / math.sqrt(len(paths))),
        rows[0]["expected"],
    )


def _runs(variant: str, seeds: list[int]) -> list[dict]:
    rows = []
    for s in seeds:
        t0, r0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
        r = run(s, variant == "end")
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
        cells = " ".join(f"{v:.3f}" for v in r["cells"])
        print(
            f"{variant} {s} {r['counter']}: count {r['count']:.3f}, cells {cells}; stated {r['expected']:.3f} "
            f"(noise gap {r['gap']:.0e}; {time.time() - t0:.0f} s wall, {cpu:.0f} s CPU)",
            flush=True,
        )
        rows.append(r)
    c, m, se, ex = _summary(rows)
    print(
        f"{variant}: {len(rows)} seeds, count {c:.3f}; all {6 * len(rows)} paths {m:.3f} +- {se:.3f}; stated {ex:.3f}"
    )
    return rows


def model(paths: int, observed: float | None = None, seed: int = 0) -> None:
    """The law of the ratio of mean errors without / with an end from the counters' stated noise alone:
    ``paths`` paths per variant of independent Gaussian noise of the counter's variance through its
    decoder (no stream, no pipeline), the ratio of means over 16 and 96 random paths."""
    rng = np.random.default_rng(seed)
    means, expected = {}, {}
    for variant in ("end", "noend"):
        c = _counters(_core(variant == "end"))[0]
        dec = _decoder(c)
        expected[variant] = expected_error(stated_variances(c, LAST))
        out = []
        for i in range(0, paths, 100):
            z = rng.standard_normal((min(100, paths - i), LAST)) * math.sqrt(float(c.noise_param))
            out.append(np.abs(_decode(dec, z)).mean(axis=1))
        means[variant] = np.concatenate(out)
        m = means[variant]
        print(
            f"{variant} ({c.name}): stated {expected[variant]:.3f}; {paths} model paths {m.mean():.3f}, "
            f"one path's relative sd {m.std() / m.mean():.3f}"
        )
    print(f"expected ratio {expected['noend'] / expected['end']:.4f}")
    for k in (16, 96):
        r = np.array(
            [
                means["noend"][rng.integers(paths, size=k)].mean() / means["end"][rng.integers(paths, size=k)].mean()
                for _ in range(20000)
            ]
        )
        lo, hi = np.percentile(r, [5, 95])
        tail = f", P(>= {observed}) {np.mean(r >= observed):.3f}" if observed else ""
        print(f"ratio of {k}-path means: median {np.median(r):.3f}, 5-95% {lo:.3f} - {hi:.3f}{tail}")


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "model":
        model(int(argv[1]), float(argv[2]) if len(argv) > 2 else None)
        return
    if argv[0] == "draws":
        t0, got = time.time(), {}
        for variant in argv[3:] or ("end", "noend"):
            m, at, var = draws(variant, range(int(argv[1]), int(argv[2])))
            got[variant] = m
            se = m.std(ddof=1) / math.sqrt(m.size)
            print(f"{variant}: {m.size} paths {m.mean():.3f} +- {se:.3f} (count alone {m[:, 0].mean():.3f})")
            # empirical variance / stated at the ticks AT; a Gaussian's sample variance has sd sqrt(2 / n)
            ratios = ", ".join(f"t = {t}: {v:.3f}" for t, v in zip(AT, (at**2).mean(axis=0) / var))
            print(f"  empirical / stated variance ({len(at)} paths, sd {math.sqrt(2 / len(at)):.3f}): {ratios}")
        cpu = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
        for a, b in (("noend", "end"), ("noend_blt", "noend"), ("noend_blt", "end")):
            if a in got and b in got:  # the same seeds: the same release identities, independent counters
                r = got[a].mean() / got[b].mean()
                rel = math.hypot(*(got[v].std(ddof=1) / math.sqrt(got[v].size) / got[v].mean() for v in (a, b)))
                print(f"ratio {a} / {b} {r:.4f} +- {r * rel:.4f}")
        print(f"({time.time() - t0:.0f} s wall, {cpu:.0f} s CPU)")
        return
    seeds = [int(s) for s in argv[1:]]
    variants = ("end", "noend") if argv[0] == "both" else (argv[0],)
    got = {v: _runs(v, seeds) for v in variants}
    if len(got) == 2:
        (ce, me, se_e, xe), (cn, mn, se_n, xn) = _summary(got["end"]), _summary(got["noend"])
        se = mn / me * math.hypot(se_e / me, se_n / mn)
        ratio = f"count {cn / ce:.3f}; all paths {mn / me:.3f} +- {se:.3f}; stated {xn / xe:.4f}"
        print(f"ratio without / with an end: {ratio}")


if __name__ == "__main__":
    main()
