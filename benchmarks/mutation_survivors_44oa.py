"""Judged open mutants of the mutation round of 2026-11-27 (session 44, group a, helper h44oa: the mutants the round
left open in ``transforms/core/foundation/``), to merge into ``benchmarks/mutation_core_survivors.py``: each is
equivalent (the reason in one line, measured where said), killed since by a test that asserts a property
(file::test, checked with ``python -m benchmarks.mutation_fast confirm --sync``: passes unmutated, fails on the
mutant), or left open with what was measured."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_26": (
        "the golden section's upper end log(1e7 / min(2, rho) + 10) for min(1, rho): it differs only at rho > 1, "
        "where the minimiser alpha* <= 1 + sqrt(log(1/delta) / rho) < 29 (log(1/delta) <= 745 for a float delta) "
        "lies deep inside both brackets; 200 steps shrink either to 1e-42 of its width, so both return "
        "min(cks at an alpha, classic), valid and never worse than classic, the minimum to rounding: measured on "
        "rho 1e-12 .. 1e25 x delta 1e-12 .. 0.9, 12 of 108 differ, by <= 2.0e-16 relative, either side"
    ),
    "transforms.core.foundation.accounting.units.x_zeta__mutmut_4": (
        "Euler-Maclaurin from n = 21 instead of 20: the remainder after three corrections is below "
        "s(s+1)..(s+6) n^(-s-7) / 1209600 (< 2e-13 relative at n = 20, smaller at 21), so both keep the stated "
        "|error| < 1e-12: against mpmath.zeta at 40 digits on 602 points s in (1 + 1e-12, 60], max relative error "
        "4.5e-14 (original) and 3.0e-14 (mutant); neither is rounded to a side (below the true value at 278 and 276 "
        "points), so no promised property separates them"
    ),
    "transforms.core.foundation.bounds.x__newton_rows__mutmut_69": (
        "the Gaussian start's variance c w^2 2q (1-q)^2 for c w^2 2q / (1-q)^2: only the start moves, clipped into "
        "the same bracket; the safeguarded Newton (bisection fallback: <= ~55 halvings of a log-width 30 < "
        "_MAX_NEWTON = 100) converges to the same root, and the bound is the least exponent over the iterates: "
        "measured on 17,520 random rows (2-5 terms, counts up to 3^11, beta 0.05 / 1e-9 / 1e-200) <= 5.2e-14 "
        "relative apart (the log-MGF's rounding at large counts), never non-finite"
    ),
    "transforms.core.foundation.bounds.x__newton_rows__mutmut_64": (
        "the bracket's upper end lam_max (2 - 1e-9) for lam_max (1 - 1e-9) (measured): phi -> +inf at the MGF's "
        "pole lam_max, so a start clipped at the mutant's hi / 2 = lam_max (1 - 5e-10) has phi > 0 (phi there "
        "~1e9 c > log(2/beta) <= 745) and every later iterate stays below it; from a start below the root, "
        "Newton's first step is <= 1.5 x0 (phi convex, x0 G' >= G); no iterate was measured past lam_max (a NaN "
        "bound): 17,520 random rows as for _69 and 13,920 rows of c = 2 .. 59 copies of one Laplace term "
        "(scale 0.5 .. 1e6, beta 1e-12 .. 0.99), <= 1.2e-14 relative apart, all finite"
    ),
}

_K = "tests/test_mutation_kills_sample44oa.py::"

KILLED_BY: dict[str, str] = {
    "transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_77": _K
    + "test_the_tight_conversion_is_never_worse_than_the_classic_one",
    "transforms.core.foundation.bounds.x__newton_rows__mutmut_185": _K
    + "test_a_bound_scales_with_the_weights_of_its_profile",
}

ASSERTED_BY: dict[str, str] = {}

# judged, neither equivalent nor killed by a property: left open (not merged), with what was measured
OPEN: dict[str, str] = {
    "transforms.core.foundation.bounds.x__newton_rows__mutmut_88": (
        "the start clipped below at lo / 2 for lo * 2: it differs only when the Gaussian start is below "
        "2 lam_max e^-30, i.e. a Gaussian part whose std exceeds ~e^30 times the Laplace part's scale * weight; "
        "there the true minimiser lies below the bracket's lower end lo, the original returns the exponent at "
        "~lo (Laplace(1) + Gaussian sigma2 = 1e30 at beta 0.05: 4.68e16, 17x the Gaussian term's own bound "
        "2.72e15; 1.7e6 x at 1e40), and the mutant the exponent at lo / 2, half of it, valid and tighter; a "
        "test would pin the original's looseness (the bracket) rather than a property"
    ),
}
