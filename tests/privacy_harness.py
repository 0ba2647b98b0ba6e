"""The registry-wide exact privacy-loss harness (issue 27, item 1): test support, public names only.

Every noise draw of a run is observed from outside the core, through what the core already
exposes:

* the injected noise source: :class:`RecordingNoise` (a :class:`NoiseSource`) hands out
  :class:`RecordingStream` s that carry their coordinates; a stream whose words are read outside
  the two exact samplers (a sparse-vector skip, a PMW sample) is recorded as a *raw* draw, and a
  draw from a stream that does not come from the injected source is an error (noise only from the
  injected source);
* the two samplers (``discrete_laplace``, ``discrete_gaussian``), wrapped in every module of
  ``transforms`` that holds them: each call records its stream's coordinates, its kind, its exact
  scale (the sampler's own rounding up, ``as_ratio_up``) and the noise it returned;
* the static black boxes (every subclass of :class:`StaticMechanism` that defines ``release``):
  each release records the pre-noise answers (``exact(hist)`` in the lattice units of its noise
  profile) and the released ones, and claims the sampler draws made inside it (the released values
  must be the pre-noise ones plus exactly those draws, at the drawn scale);
* the continual counters (every subclass of :class:`ContinualCounter`): their ``release_log`` is
  switched on at construction and the draws made inside their ``step`` are attributed to them; a
  counter that draws its noise directly (the lattice Toeplitz counters) releases ``y_t + z_t``,
  whose pre-noise ``y_t`` comes from a run with the noise switched off, and whose noise must be the
  next values of the counter's own draws.

A run is *exact* when every sampler draw is claimed by a release whose pre-noise value is known
(no raw draw, no unclaimed draw). Then the whole output is a post-processing of independent
``value + noise`` releases at a public set of coordinates, and the privacy loss between two inputs
is computed exactly from the pre-noise values (:func:`exact_loss`):

* discrete Laplace of scale ``b``: ``sum |Delta| / b`` (pure DP, attained);
* discrete Gaussian of ``sigma^2``: ``rho = sum Delta^2 / (2 sigma^2)`` (zCDP; CKS 2020), and the
  (eps, delta) profile of one Gaussian mechanism with ``mu = sqrt(2 rho)`` (Balle and Wang 2018).

Randomized response (a report collector: the clients randomize) is audited by
:func:`rr_entry_loss`: an entry's reports under two changelogs, with the randomness that keeps the
true symbol (the pre-noise value), and the exact log-ratio of the report probabilities.

Nothing here names a mechanism: the parameters come from the registry (``MechanismSpec.checks``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from transforms.core import MECHANISMS, ContinualCounter, DynamicConfig, NoiseSource, QuerySet, Update
from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ZCDP,
    ApproxDP,
    PrivacyUnit,
    PureDP,
    TightGaussian,
    as_vector,
    tight_gaussian_epsilon,
)
from transforms.core.foundation.noise import RandomStream, as_ratio_up, discrete_gaussian, discrete_laplace
from transforms.core.protocol import CONTRACT_BUDGETS
from transforms.core.static.linear import StaticMechanism

KEY = bytes(range(101, 133))
LAPLACE, GAUSSIAN = "laplace", "gaussian"
SAMPLERS = {LAPLACE: discrete_laplace, GAUSSIAN: discrete_gaussian}
TOL = 1e-9  # relative: float sums of exact ratios, and the budgets' own float arithmetic

# the query sets of the harness: a count, a histogram and a real-valued linear query set (a lattice)
QUERIES = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("lin", "linear", domain_size=3, matrix=((0.5, 0.25, 1.0), (1.0, 0.0, 0.75))),
)

# histograms only: every coordinate of an item moves on an upsert (a changelog node then sees the
# whole old -> new change, at the sensitivity ratio of a histogram)
HIST_QUERIES = (
    QuerySet("h0", "histogram", domain_size=2),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("h2", "histogram", domain_size=3),
)

# ---------------------------------------------------------------------------------------------
# recording
# ---------------------------------------------------------------------------------------------


class RecordingStream(RandomStream):
    """A random stream that knows its coordinates: its words are those of the stream the injected
    source made (``inner``); a read outside the two samplers is reported to the recorder (raw)."""

    __slots__ = ("coords", "recorder", "inner")

    def __init__(self, inner: RandomStream, coords: tuple, recorder):
        super().__init__(b"", disabled=inner.disabled)
        self.inner, self.coords, self.recorder = inner, tuple(coords), recorder

    def words(self, n: int) -> np.ndarray:
        rec = self.recorder
        if rec is not None and not rec.in_sampler:
            rec.raw.append(self.coords)
        return self.inner.words(n)


class RecordingNoise(NoiseSource):
    """The injected noise source of a recorded run: every stream it hands out is recorded."""

    recorder = None

    def for_release(self, release):
        out = super().for_release(release)
        sub = RecordingNoise.__new__(RecordingNoise)
        sub.__dict__.update(out.__dict__)  # the release's sub-key, as the plain source derives it
        sub.recorder = self.recorder
        return sub

    def stream(self, *coords):
        return RecordingStream(super().stream(*coords), coords, self.recorder)


@dataclass
class SamplerDraw:
    coords: tuple
    kind: str
    scale: Fraction
    noise: tuple
    counter: object = None  # the counter whose step drew it, if any
    claimed: bool = False


@dataclass
class Release:
    """One noisy release: pre-noise values and released values in integer lattice units, and the
    law of its noise (kind, scale in lattice units)."""

    coords: tuple
    kind: str
    scale: Fraction
    values: tuple
    noisy: tuple | None
    source: str  # "static" (a black box) or "counter" (a counter's own draws)


@dataclass
class Recorder:
    draws: list = field(default_factory=list)
    raw: list = field(default_factory=list)
    foreign: list = field(default_factory=list)  # draws from streams the injected source did not make
    static: dict = field(default_factory=dict)  # coords -> Release
    opaque: list = field(default_factory=list)  # non-additive static releases (no pre-noise value)
    mismatches: list = field(default_factory=list)  # stated noise law != drawn one, values != pre + noise
    counters: list = field(default_factory=list)
    context: list = field(default_factory=list)
    in_sampler: int = 0


_ACTIVE: list[Recorder] = []


def _active() -> Recorder | None:
    return _ACTIVE[-1] if _ACTIVE else None


def _sampler_wrapper(orig, kind):
    def sampler(stream, scale, size=1):
        rec = _active()
        if rec is None:
            return orig(stream, scale, size)
        if not isinstance(stream, RecordingStream) or stream.recorder is not rec:
            rec.foreign.append((kind, getattr(stream, "coords", None)))
            return orig(stream, scale, size)
        rec.in_sampler += 1
        try:
            z = orig(stream, scale, size)
        finally:
            rec.in_sampler -= 1
        counter = rec.context[-1] if rec.context else None
        rec.draws.append(SamplerDraw(stream.coords, kind, as_ratio_up(scale), tuple(int(v) for v in z), counter))
        return z

    sampler.__wrapped__ = orig
    sampler.harness_kind = kind
    return sampler


def _lattice(x, unit: float) -> tuple[int, ...]:
    arr = np.asarray(x, dtype=np.float64).ravel() / unit
    out = np.rint(arr)
    if np.any(out != arr):
        raise AssertionError(f"values {arr[:4]} are not on the lattice of {unit}")
    return tuple(int(v) for v in out)


def _static_wrapper(orig):
    def release(self, hist, budget, stream):
        rec = _active()
        if rec is None:
            return orig(self, hist, budget, stream)
        before = len(rec.draws)
        rel = orig(self, hist, budget, stream)
        if not isinstance(stream, RecordingStream) or rec.context and rec.context[-1] == "static":
            return rel
        coords = stream.coords
        mine = rec.draws[before:]
        if rel.noise is None:  # a non-additive black box: no pre-noise value
            rec.opaque.append(coords)
            return rel
        ((kind, param, unit),) = rel.noise.terms
        pre = _lattice(self.exact(hist), unit)
        noisy = _lattice(rel.values, unit) if not stream.disabled else pre
        drawn = tuple(v for d in mine for v in d.noise)
        for d in mine:
            d.claimed = True
        if not stream.disabled:
            if len(mine) != 1 or mine[0].kind != kind or mine[0].scale != Fraction(param):
                rec.mismatches.append((coords, "stated law", kind, param, [(d.kind, d.scale) for d in mine]))
            if tuple(a - b for a, b in zip(noisy, pre)) != drawn:
                rec.mismatches.append((coords, "released != exact + drawn noise"))
        scale = mine[0].scale if mine else Fraction(param)
        dkind = mine[0].kind if mine else kind
        if coords in rec.static:
            rec.mismatches.append((coords, "two releases at one coordinate"))
        rec.static[coords] = Release(coords, dkind, scale, pre, noisy, "static")
        return rel

    release.__wrapped__ = orig
    return release


def _counter_init_wrapper(orig):
    def __init__(self, *args, **kw):
        orig(self, *args, **kw)
        rec = _active()
        if rec is not None:
            if self.release_log is None:
                self.release_log = []
            rec.counters.append(self)

    __init__.__wrapped__ = orig
    return __init__


def _counter_step_wrapper(orig):
    def step(self, batch, noise):
        rec = _active()
        if rec is None:
            return orig(self, batch, noise)
        rec.context.append(self)
        try:
            return orig(self, batch, noise)
        finally:
            rec.context.pop()

    step.__wrapped__ = orig
    return step


def _subclasses(cls):
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo += c.__subclasses__()
    return out


@contextlib.contextmanager
def recording(rec: Recorder):
    """Patch the samplers, the black boxes and the counters for the duration (restored after)."""
    patches = []

    def patch(obj, name, value):
        patches.append((obj, name, obj.__dict__[name] if name in obj.__dict__ else None, name in obj.__dict__))
        setattr(obj, name, value)

    for mod_name, mod in list(sys.modules.items()):
        if not (mod_name == "transforms" or mod_name.startswith("transforms.")) or mod is None:
            continue
        for kind, fn in SAMPLERS.items():
            name = fn.__name__
            if getattr(mod, name, None) is fn:
                patch(mod, name, _sampler_wrapper(fn, kind))
    for cls in _subclasses(StaticMechanism):
        if "release" in cls.__dict__:
            patch(cls, "release", _static_wrapper(cls.__dict__["release"]))
    patch(ContinualCounter, "__init__", _counter_init_wrapper(ContinualCounter.__dict__["__init__"]))
    for cls in _subclasses(ContinualCounter):
        if "step" in cls.__dict__:
            patch(cls, "step", _counter_step_wrapper(cls.__dict__["step"]))
    _ACTIVE.append(rec)
    try:
        yield rec
    finally:
        _ACTIVE.pop()
        for obj, name, old, had in reversed(patches):
            if had:
                setattr(obj, name, old)
            else:
                delattr(obj, name)


# ---------------------------------------------------------------------------------------------
# one recorded run
# ---------------------------------------------------------------------------------------------


@dataclass
class Setting:
    """One registry entry under one budget and unit (what the harness runs)."""

    name: str
    budget: str
    unit: PrivacyUnit
    options: dict = field(default_factory=dict)
    end_tick: int = 24
    every_ticks: int | None = None
    queries: tuple = QUERIES

    @property
    def spec(self):
        return MECHANISMS[self.name]

    def config(self, budget=None) -> DynamicConfig:
        b, profile = CONTRACT_BUDGETS[self.budget]
        return DynamicConfig(self.queries, budget or b, profile=profile, unit=self.unit)

    def build(self, config=None):
        spec = self.spec
        opts = spec.options(**{**spec.checks.options, **self.options})
        return spec.core_cls(
            config or self.config(),
            stream="s",
            options=opts,
            end_tick=self.end_tick,
            every_ticks=self.every_ticks,
        )

    def check(self) -> None:
        """The entry's own settings check (a pipeline's): raises for a setting it refuses."""
        spec = self.spec
        opts = spec.options(**{**spec.checks.options, **self.options})
        spec.check(self.config(), opts, end_tick=self.end_tick, every_ticks=self.every_ticks or 1)


def _answers(results) -> list:
    out = []
    for r in results:
        for a in r.answers:
            out.append((a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate), a.error_bound))
    return out


def _public(answers) -> list:
    """What must not depend on the data under a public schedule: everything but the estimates."""
    return [(s, t, seg, q, len(e), bound) for s, t, seg, q, e, bound in answers]


@dataclass
class Run:
    """One input run with noise on and with noise off."""

    releases: dict  # coords -> Release (pre-noise from the run with noise off)
    schedule: tuple  # the sampler draws' (coords, kind, scale, size), in order, noise on
    schedule_off: tuple
    unexplained: list  # draws no release accounts for (sparse vector, growth tests, PMW, ...)
    raw: list
    foreign: list
    opaque: list
    mismatches: list
    answers: list
    rejections: int
    spent: tuple
    stated: dict  # stated_spend(config, spent)[0]: the guarantee the ledger's spend states
    charged: dict

    @property
    def exact(self) -> bool:
        return not (self.unexplained or self.raw or self.opaque or self.foreign)


PERSON = "the-person"  # the person whose entries (ids p*) two neighbouring inputs differ in; every background
# entry (ids b*) is a person of its own


def drive(setting: Setting, batches, noise, factory=None):
    """Run ``batches`` through a fresh core (``factory`` or the setting's) and to the end: (core, results, rejected)."""
    core = (factory or setting.build)()
    results, rejected = [], 0
    person = setting.unit.kind == "person"
    for tick, ups in batches:
        if person:  # the core's person path takes (person, Update): p* entries are the neighbouring person's
            ups = [(PERSON if u.entry_id.startswith("p") else u.entry_id, u) for u in ups]
        res = core.process_tick(tick, list(ups), noise)
        rejected += len(res.rejections)
        results.append(res)
    if setting.end_tick is not None:
        results += core.run_to_end(noise)
    return core, results, rejected


def _record(setting, batches, noise, factory=None):
    rec = Recorder()
    noise.recorder = rec
    with recording(rec):
        core, results, rejected = drive(setting, batches, noise, factory)
    return rec, core, results, rejected


def record_run(setting: Setting, batches, *, key: bytes = KEY, factory=None) -> Run:
    """Run ``batches`` (``[(tick, [Update])]``) with noise on (``key``), recorded; and with noise
    off when a counter draws its own noise (its pre-noise values come from that run)."""
    on, core, results, rejected = _record(setting, batches, RecordingNoise(key), factory)
    releases = dict(on.static)
    own_draws = [d for d in on.draws if d.counter is not None and not d.claimed]
    off = None
    if own_draws:
        off, _, _, _ = _record(setting, batches, RecordingNoise(b"\0" * 32, disabled=True), factory)
        for coords, r in off.static.items():  # noise off: the pre-noise values (the same as on's)
            if coords in releases and releases[coords].values != r.values:
                on.mismatches.append((coords, "pre-noise values differ with noise off"))
        if len(on.counters) != len(off.counters):
            raise AssertionError("noise on and off built different counters")
    logs_seen = set()
    for i, c_on in enumerate(on.counters if off is not None else ()):
        c_off = off.counters[i]
        if id(c_on.release_log) in logs_seen:
            continue
        logs_seen.add(id(c_on.release_log))
        own = [d for d in own_draws if d.counter is c_on]
        flat = [(v, d) for d in own for v in d.noise]
        pos = 0
        g = None
        off_log = {tuple(c): v for c, _, v in c_off.release_log}
        # the lattice unit from the first release with a nonzero draw (a counter with small
        # integer noise, kary_signed, may draw zeros first)
        scan = 0
        for coords, _, values in c_on.release_log:
            if g is not None or tuple(coords) in on.static:
                continue
            n = len(np.asarray(values))
            z = np.asarray([v for v, _ in flat[scan : scan + n]], dtype=np.float64)
            if len(z) == n and np.any(z):
                i = int(np.flatnonzero(z)[0])
                g = float((np.asarray(values, dtype=np.float64) - np.asarray(off_log[tuple(coords)]))[i] / z[i])
                if not (g > 0 and math.frexp(g)[0] == 0.5):
                    on.mismatches.append((tuple(coords), f"lattice unit {g} is not a power of two"))
            scan += n
        for coords, _, values in c_on.release_log:
            coords = tuple(coords)
            if coords in on.static:
                continue
            noisy = np.asarray(values, dtype=np.float64)
            pre = np.asarray(off_log[coords], dtype=np.float64)
            part = flat[pos : pos + len(noisy)]
            pos += len(noisy)
            if len(part) != len(noisy):
                on.mismatches.append((coords, "a counter release without its own draws"))
                continue
            z = np.asarray([v for v, _ in part], dtype=np.float64)
            nz = np.flatnonzero(z)
            if g is None and len(nz):
                g = float((noisy - pre)[nz[0]] / z[nz[0]])
                if not (g > 0 and math.frexp(g)[0] == 0.5):
                    on.mismatches.append((coords, f"lattice unit {g} is not a power of two"))
            if g is None:
                on.mismatches.append((coords, "no nonzero noise to fix the lattice unit"))
                continue
            if not np.array_equal(noisy - pre, z * g):
                on.mismatches.append((coords, "released != pre-noise + the counter's own draws"))
            kinds = {(d.kind, d.scale) for _, d in part}
            if len(kinds) != 1:
                on.mismatches.append((coords, "one release from draws of several laws"))
            ((kind, scale),) = kinds
            releases[coords] = Release(coords, kind, scale, _lattice(pre, g), _lattice(noisy, g), "counter")
            for _, d in part:
                d.claimed = True
        for _, d in flat[pos:]:  # the unused tail of the last block of draws: never released
            d.claimed = True
    unexplained = [d.coords for d in on.draws if not d.claimed]
    spent = as_vector(core.spent)
    stated, charged = setting.spec.stated_spend(setting.config(), spent)
    schedule = tuple((d.coords, d.kind, d.scale, len(d.noise)) for d in on.draws)
    return Run(
        releases=releases,
        schedule=schedule,
        schedule_off=schedule if off is None else tuple((d.coords, d.kind, d.scale, len(d.noise)) for d in off.draws),
        unexplained=unexplained,
        raw=sorted(set(on.raw), key=repr),
        foreign=on.foreign + (off.foreign if off else []),
        opaque=on.opaque,
        mismatches=on.mismatches + (off.mismatches if off else []),
        answers=_answers(results),
        rejections=rejected,
        spent=spent,
        stated=stated,
        charged=charged,
    )


# ---------------------------------------------------------------------------------------------
# the exact loss
# ---------------------------------------------------------------------------------------------


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def gaussian_profile_delta(epsilon: float, rho: float) -> float:
    """delta(eps) of one Gaussian mechanism with mu = sqrt(2 rho) (Balle and Wang 2018, Thm 8)."""
    if rho <= 0:
        return 0.0
    mu = math.sqrt(2 * rho)
    a = _phi(mu / 2 - epsilon / mu)
    tail = _phi(-mu / 2 - epsilon / mu)
    return max(a - (math.exp(epsilon + math.log(tail)) if tail > 0 else 0.0), 0.0)


def gaussian_profile_epsilon(rho: float, delta: float) -> float:
    """The least eps with :func:`gaussian_profile_delta` ``<= delta`` (bisection)."""
    if rho <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_profile_delta(hi, rho) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gaussian_profile_delta(mid, rho) > delta else (lo, mid)
    return hi


@dataclass
class Loss:
    """The exact loss of a whole output between two inputs."""

    epsilon: Fraction = Fraction(0)  # Laplace releases: sum |Delta| / b
    rho: Fraction = Fraction(0)  # Gaussian releases: sum Delta^2 / (2 sigma^2)
    releases: int = 0
    differing: int = 0
    # Gaussian releases as the lattice proof sees them (docs/accounting.md, the tight Gaussian account):
    # sum Delta^2 / (2 (sigma^2 - DISCRETE_TAU2)), i.e. mu_total^2 / 2 over every draw of the whole
    # release; None where a differing draw has sigma^2 <= DISCRETE_TAU2 (the proof says nothing)
    rho_lattice: Fraction | None = Fraction(0)
    # the release is accounted by the tight Gaussian account (its ledger is a TightGaussian): its
    # (eps, delta) is then checked by the lattice proof's own statement
    lattice: bool = False

    def approx_epsilon(self, delta: float) -> float:
        """eps at ``delta``: the Laplace part plus the Gaussian part's profile; for a tight Gaussian
        account by the lattice proof: the analytic curve at ``mu_total^2 = sum Delta_j^2 / (sigma_j^2
        - tau^2)`` over every draw, with the proof's slack (``tight_gaussian_epsilon``; inf where a
        differing draw has ``sigma^2 <= tau^2``)."""
        if not self.lattice:
            return float(self.epsilon) + gaussian_profile_epsilon(float(self.rho), delta)
        if not self.rho:
            return float(self.epsilon)
        if self.rho_lattice is None:
            return math.inf
        return float(self.epsilon) + tight_gaussian_epsilon(float(self.rho_lattice), delta)

    def as_dict(self) -> dict:
        lattice = None if self.rho_lattice is None else float(self.rho_lattice)
        return {
            "epsilon": float(self.epsilon),
            "rho": float(self.rho),
            "rho_lattice": lattice,
            "differing": self.differing,
        }


def exact_loss(a: Run, b: Run) -> Loss:
    """The loss between two recorded runs of one setting; raises unless the schedule (which
    coordinates are drawn, with which law) and everything but the estimates are identical."""
    for run in (a, b):
        if not run.exact:
            raise AssertionError(
                f"not an exact run: unexplained {run.unexplained[:3]}, raw {run.raw[:3]}, "
                f"opaque {run.opaque[:3]}, foreign {run.foreign[:3]}"
            )
        if run.mismatches:
            raise AssertionError(f"the recording does not add up: {run.mismatches[:3]}")
    if a.schedule != b.schedule or a.schedule_off != b.schedule_off or a.schedule_off != a.schedule:
        raise AssertionError("the schedule (coordinates and laws of the draws) depends on the input")
    if set(a.releases) != set(b.releases):
        raise AssertionError("the two inputs released at different coordinates")
    if _public(a.answers) != _public(b.answers):
        raise AssertionError("answers' ticks, queries or error bounds depend on the input")
    if a.spent != b.spent:
        raise AssertionError("the ledger's spend depends on the input")
    out = Loss()
    for coords in a.releases:
        ra, rb = a.releases[coords], b.releases[coords]
        if (ra.kind, ra.scale, len(ra.values)) != (rb.kind, rb.scale, len(rb.values)):
            raise AssertionError(f"the noise law at {coords} depends on the input")
        if ra.noisy is not None and rb.noisy is not None:
            za = [x - y for x, y in zip(ra.noisy, ra.values)]
            zb = [x - y for x, y in zip(rb.noisy, rb.values)]
            if za != zb:
                raise AssertionError(f"the noise at {coords} depends on the input")
        out.releases += 1
        diff = [x - y for x, y in zip(ra.values, rb.values)]
        if not any(diff):
            continue
        out.differing += 1
        if ra.kind == GAUSSIAN:
            out.rho += Fraction(sum(d * d for d in diff), 2) / ra.scale
            s2 = ra.scale - DISCRETE_TAU2
            out.rho_lattice = (
                None
                if out.rho_lattice is None or s2 <= 0
                else out.rho_lattice + Fraction(sum(d * d for d in diff), 2) / s2
            )
        else:
            out.epsilon += Fraction(sum(abs(d) for d in diff)) / ra.scale
    return out


def within(loss: Loss, figures: dict, *, tol: float = TOL) -> list[str]:
    """The ways ``loss`` exceeds a guarantee stated as ``figures`` (``{"epsilon"}``,
    ``{"epsilon", "delta"}``, ``{"rho"}``, or all three; empty: within)."""
    bad = []
    eps, delta, rho = figures.get("epsilon"), figures.get("delta"), figures.get("rho")
    if rho is not None:
        z = float(loss.rho) + float(loss.epsilon) ** 2 / 2
        if z > rho * (1 + tol):
            bad.append(f"rho {z:.6g} > {rho:.6g}")
    if eps is not None and not delta:
        if loss.rho:
            bad.append(f"Gaussian loss rho {float(loss.rho):.3g} under a pure guarantee")
        if float(loss.epsilon) > eps * (1 + tol):
            bad.append(f"epsilon {float(loss.epsilon):.6g} > {eps:.6g}")
    if eps is not None and delta:
        e = loss.approx_epsilon(delta)
        if e > eps * (1 + tol) + 1e-12:
            bad.append(f"epsilon at delta {delta:g}: {e:.6g} > {eps:.6g}")
    return bad


def configured_figures(config: DynamicConfig) -> dict:
    return dataclasses.asdict(config.budget)


def loss_ratio(loss: Loss, figures: dict) -> float:
    """The loss as a share of the guarantee (the tightness of the pair)."""
    if figures.get("rho") is not None and "epsilon" not in figures:
        return (float(loss.rho) + float(loss.epsilon) ** 2 / 2) / figures["rho"]
    if figures.get("delta"):
        return loss.approx_epsilon(figures["delta"]) / figures["epsilon"]
    return float(loss.epsilon) / figures["epsilon"]


# ---------------------------------------------------------------------------------------------
# neighbouring inputs, chosen adversarially
# ---------------------------------------------------------------------------------------------


def background(end_tick: int, *, deletions: bool, seed: int = 0) -> list[tuple[int, Update]]:
    """A stream of other entries (ids b*): an insertion every other tick, and when deletions are
    allowed some deleted 4 ticks after their insertion (within any unit's constraint)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(1, end_tick + 1, 2):
        out.append((t, Update("insert", f"b{t}", (0, int(rng.integers(4)), int(rng.integers(3))))))
        if deletions and t > 6 and rng.random() < 0.5:
            out.append((t, Update("delete", f"b{t - 4}")))
    return out


def merge(*streams) -> list[tuple[int, list[Update]]]:
    by_tick: dict[int, list[Update]] = {}
    for stream in streams:
        for t, u in stream:
            by_tick.setdefault(int(t), []).append(u)
    return [(t, by_tick[t]) for t in sorted(by_tick)]


def boundary_ticks(end_tick: int, every: int | None) -> list[int]:
    """Ticks where trees and periods turn over: 1, powers of two and their successors, period
    ends and their successors, the end."""
    p = every or 1
    ticks = {1, 2, end_tick, max(1, end_tick - 1)}
    j = 1
    while j <= end_tick:
        ticks |= {j, j + 1, j * p, j * p + 1}
        j *= 2
    return sorted(t for t in ticks if 1 <= t <= end_tick)


# the item of the one-update pairs: in the linear query set's column of the largest L1 and L2 norm
WORST_ITEM = (0, 1, 2)


def _item(i: int, queries=QUERIES) -> tuple:
    """The i-th item of a lifecycle: consecutive items differ in every coordinate of domain >= 2
    (an upsert moves every histogram's cell); a count's coordinate is 0."""
    out = []
    for j, q in enumerate(queries):
        d = q.domain_size or 1
        out.append((2 * i + 1) % d if j == 2 else i % d)
    return tuple(out)


def entry_lifecycle(
    eid: str, ticks, *, deletions: bool, first_item: int = 0, delete_last: bool = True, queries=QUERIES
) -> list[tuple[int, Update]]:
    """One entry mutated at ``ticks`` (sorted): inserted, then upserted to other cells, deleted at
    the last one when it has more than one, deletions are allowed and ``delete_last``."""
    out = []
    ticks = list(ticks)
    for i, t in enumerate(ticks):
        if i == 0:
            out.append((t, Update("insert", eid, _item(first_item, queries))))
        elif deletions and delete_last and i == len(ticks) - 1:
            out.append((t, Update("delete", eid)))
        elif deletions:
            out.append((t, Update("upsert", eid, _item(first_item + i, queries))))
    return out


def update_pairs(setting: Setting, *, deletions: bool) -> list[tuple[str, list, list]]:
    """Neighbours under the update unit: one insertion more (at each boundary tick), and one
    deletion more (of a background entry) where deletions are allowed."""
    T = setting.end_tick
    bg = background(T, deletions=deletions)
    base = merge(bg)
    pairs = []
    for t in boundary_ticks(T, setting.every_ticks):
        pairs.append((f"insert@{t}", merge(bg, [(t, Update("insert", "x", WORST_ITEM))]), base))
    if deletions:
        ins = [(t, u) for t, u in bg if u.op == "insert"]
        deleted = {u.entry_id for _, u in bg if u.op == "delete"}
        keep = [(t, u) for t, u in ins if u.entry_id not in deleted][:1]
        for t0, u in keep:
            for t in (t0 + 1, T):
                if t <= T:
                    pairs.append((f"delete@{t}", merge(bg, [(t, Update("delete", u.entry_id))]), base))
    return pairs


def entry_tick_sets(end_tick: int, k: int, every: int | None, window: int | None) -> list[tuple[str, list]]:
    """Where one entry's <= k mutations go: spread over tree boundaries, several in one period
    (one tick), at period ends, from tick 1; inside ``window`` ticks of the first when set."""
    p = every or 1
    bounds = boundary_ticks(end_tick, every)
    span = end_tick if window is None else window
    sets = [
        ("first", [1 + i for i in range(k)]),
        ("boundaries", sorted({min(b, 1 + span) for b in bounds})[:k]),
        ("period-ends", [min(end_tick, p * (i + 1)) for i in range(k)]),
        ("late", [max(1, end_tick - k + 1 + i) for i in range(k)]),
    ]
    out = []
    for name, ticks in sets:
        ticks = sorted(set(ticks))
        if window is not None:
            ticks = [t for t in ticks if t - ticks[0] <= window]
        if ticks:
            out.append((name, ticks))
    out.append(("one-tick", [bounds[len(bounds) // 2]]))  # several mutations of one tick: the last counts
    return out


def _tick_sets(setting: Setting, deletions: bool) -> list[tuple[str, list]]:
    unit = setting.unit
    k = unit.max_mutations or 3
    return entry_tick_sets(setting.end_tick, k if deletions else 1, setting.every_ticks, unit.mutation_window)


def entry_pairs(setting: Setting, *, deletions: bool) -> list[tuple[str, list, list]]:
    """Neighbours under entry(k): one whole entry (<= k mutations) more."""
    bg = background(setting.end_tick, deletions=deletions)
    base = merge(bg)
    q = setting.queries
    pairs = []
    for name, ticks in _tick_sets(setting, deletions):
        life = entry_lifecycle("x", ticks, deletions=deletions, queries=q)
        pairs.append((f"entry-{name}", merge(bg, life), base))
        if deletions and len(ticks) > 1:  # upserts to the end: every node it touches sees old -> new
            life = entry_lifecycle("x", ticks, deletions=deletions, delete_last=False, queries=q)
            pairs.append((f"entry-{name}-upserts", merge(bg, life), base))
    if deletions and (setting.unit.max_mutations or 3) >= 3:  # insert and upsert in one batch
        t = setting.end_tick // 2
        life = [(t, Update("insert", "x", _item(0, q))), (t, Update("upsert", "x", _item(1, q)))]
        life += [(t + 1, Update("delete", "x"))]
        pairs.append(("entry-same-tick", merge(bg, life), base))
    return pairs


def person_pairs(setting: Setting, *, deletions: bool) -> list[tuple[str, list, list]]:
    """Neighbours under person(L, k): all L entries of one person (distinct ids, each <= k
    mutations) more. The entries' lifecycles: all at the same adversarial ticks (the L x entry
    worst case: tree boundaries, period ends, late, several in one tick), upserts to the end, and
    staggered (entry e on the e-th tick set: different boundaries for different entries)."""
    L = setting.unit.max_entries
    bg = background(setting.end_tick, deletions=deletions)
    base = merge(bg)
    q = setting.queries
    sets = _tick_sets(setting, deletions)
    pairs = []
    for name, ticks in sets:
        lives = [u for e in range(L) for u in entry_lifecycle(f"p{e}", ticks, deletions=deletions, queries=q)]
        pairs.append((f"person-{name}", merge(bg, lives), base))
        if deletions and len(ticks) > 1:
            lives = [
                u
                for e in range(L)
                for u in entry_lifecycle(f"p{e}", ticks, deletions=deletions, delete_last=False, queries=q)
            ]
            pairs.append((f"person-{name}-upserts", merge(bg, lives), base))
    lives = []
    for e in range(L):
        _, ticks = sets[e % len(sets)]
        lives += entry_lifecycle(f"p{e}", ticks, deletions=deletions, first_item=e, queries=q)
    pairs.append(("person-staggered", merge(bg, lives), base))
    return pairs


def neighbour_pairs(setting: Setting) -> list[tuple[str, list, list]]:
    deletions = setting.spec.deletions_allowed
    kind = setting.unit.kind
    if kind == "update":
        return update_pairs(setting, deletions=deletions)
    if kind == "entry":
        return entry_pairs(setting, deletions=deletions)
    return person_pairs(setting, deletions=deletions)


# ---------------------------------------------------------------------------------------------
# settings: registry entry x budget kind x unit
# ---------------------------------------------------------------------------------------------

BUDGET_KINDS = {"pure": PureDP, "zcdp": ZCDP, "approx": ApproxDP}


def budget_kind(budget_name: str) -> str:
    b, _ = CONTRACT_BUDGETS[budget_name]
    return next(k for k, cls in BUDGET_KINDS.items() if type(b) is cls)


def unit_variants(spec) -> list[PrivacyUnit]:
    """The units the entry states a guarantee for (``spec.units``), as the harness runs them:
    entry(2), entry(3) and a time-bounded entry(None, B); person(2, 2)."""
    out = []
    for kind in spec.units:
        if kind == "update":
            out.append(PrivacyUnit.update())
        elif kind == "entry":
            out += [PrivacyUnit.entry(2), PrivacyUnit.entry(3), PrivacyUnit.entry(None, 6)]
        elif kind == "person":
            out.append(PrivacyUnit.person(2, 2))
        else:
            raise AssertionError(f"the harness knows no unit {kind!r}")
    return out


def unit_id(unit: PrivacyUnit) -> str:
    if unit.kind == "update":
        return "update"
    tail = f"{unit.max_mutations}" + (f",B={unit.mutation_window}" if unit.mutation_window is not None else "")
    if unit.kind == "person":
        return f"person({unit.max_entries},{tail})"
    return f"entry({tail})"


def budgets_by_kind(spec) -> dict[str, str]:
    """One contract budget per budget kind the entry runs (the first listed of each kind)."""
    out = {}
    for b in spec.checks.budgets:
        out.setdefault(budget_kind(b), b)
    return out


def settings(names, *, unit_kinds=None) -> list[Setting]:
    """Every (entry, budget kind, unit) the entry accepts (its own settings check decides: a
    unit the mechanism refuses, e.g. a time-bounded unit without group privacy, is left out)."""
    out = []
    for name in names:
        spec = MECHANISMS[name]
        for budget in budgets_by_kind(spec).values():
            for unit in unit_variants(spec):
                if unit_kinds is not None and unit.kind not in unit_kinds:
                    continue
                s = Setting(name, budget, unit)
                try:
                    s.check()
                except ValueError:
                    continue
                out.append(s)
    return out


@functools.cache
def classification(name: str) -> str:
    """``exact`` (every draw explained by a release at a public coordinate), ``noise-dependent`` (a
    draw the schedule depends on: a sparse-vector threshold, a growth test, a PMW sample) or
    ``unrecorded`` (noise outside the injected source, or a release without a pre-noise value)."""
    s = settings([name])[0]
    run = record_run(s, neighbour_pairs(s)[0][1])
    if run.exact:
        return "exact"
    if run.foreign or run.opaque:
        return "unrecorded"
    return "noise-dependent"


def setting_id(s: Setting) -> str:
    return f"{s.name}-{budget_kind(s.budget)}-{unit_id(s.unit)}"


# ---------------------------------------------------------------------------------------------
# the contract check of one setting
# ---------------------------------------------------------------------------------------------


@dataclass
class Verdict:
    setting: Setting
    worst: Loss
    worst_pair: str
    ratio: float  # the worst pair's loss as a share of the stated guarantee
    stated: dict
    configured: dict
    problems: list


def tight_account(setting: Setting) -> bool:
    """Whether the setting's release is accounted by the tight Gaussian account (its ledger's
    budget, ``MechanismSpec.ledger_budget``, is a ``TightGaussian``)."""
    return isinstance(MECHANISMS[setting.name].ledger_budget(setting.config()), TightGaussian)


def check_setting(setting: Setting, *, pairs=None, factory=None) -> Verdict:
    """Run every neighbouring pair of the setting; the exact loss of each within the guarantee
    the ledger's spend states (``stated_spend``) and within the configured budget."""
    configured = configured_figures(setting.config())
    lattice = tight_account(setting)
    problems, worst, worst_pair, ratio, stated = [], Loss(), "", -1.0, {}
    runs: dict[int, Run] = {}

    def run_of(batches):
        if id(batches) not in runs:
            runs[id(batches)] = record_run(setting, batches, factory=factory)
        return runs[id(batches)]

    for name, with_unit, without_unit in pairs or neighbour_pairs(setting):
        a, b = run_of(with_unit), run_of(without_unit)
        if a.rejections or b.rejections:
            raise AssertionError(f"{name}: the pair's updates were rejected ({a.rejections}, {b.rejections})")
        loss = exact_loss(a, b)
        loss.lattice = lattice
        stated = a.stated
        for what, figures in (("ledger", a.stated), ("configured", configured)):
            for p in within(loss, figures):
                problems.append(f"{name}: {p} ({what})")
        r = loss_ratio(loss, a.stated)
        if r > ratio:
            worst, worst_pair, ratio = loss, name, r
    return Verdict(setting, worst, worst_pair, ratio, stated, configured, problems)


# ---------------------------------------------------------------------------------------------
# randomized response: an entry's reports
# ---------------------------------------------------------------------------------------------


def rr_changelogs(design, periods: int) -> list[tuple[str, list, list]]:
    """Pairs of one entry's answers per period (None: not in the population), each within the
    design's constraint: the two most different changelogs at tree boundaries and period ends."""
    z = design.domain_size
    c = design.constraint
    k = getattr(c, "k", None)
    span = getattr(c, "span", None)
    limit = k if k is not None else 1 + span  # mutations the constraint allows (time-bounded: in span)
    out = []
    for name, start in (("first", 1), ("boundary", design.branching), ("late", periods - limit)):
        start = max(1, start)
        a, b = [None] * periods, [None] * periods
        changes = [start + i for i in range(limit)]
        if span is not None:
            changes = [t for t in changes if t - start <= span]
        cur_a = cur_b = None
        for i, t in enumerate(changes):
            if t > periods:
                break
            cur_a = i % z
            cur_b = (i + 1) % z if i % 2 == 0 else None
            for p in range(t - 1, periods):
                a[p], b[p] = cur_a, cur_b
        out.append((name, a, b))
    # present or absent: inserted in period 3, and deleted again when the constraint allows two mutations
    present = range(2, 2 + limit - 1) if limit >= 2 else range(2, periods)
    out.append(("absent", [0 if p in present else None for p in range(periods)], [None] * periods))
    return out


def rr_reports(design, answers, randbits):
    from transforms.core.families.rr_client import RRClient

    client = RRClient(design, randbits=randbits)
    reports = []
    for p, ans in enumerate(answers, start=1):
        reports += client.report(p, ans)
    return reports, client


def rr_entry_loss(design, a_answers, b_answers) -> tuple[list, Fraction, Fraction, int, object]:
    """The exact loss of one entry's whole report sequence between two changelogs: the reports'
    schedule must be the same; per report whose true symbols differ the log-ratio of the report
    probabilities is at most log(p / q) (the symmetric response: p for the true symbol, q for any
    other). Returns (schedule, p, q, the number of differing reports, client a)."""
    from transforms.core.families.rr_client import symbol_of

    keep = lambda bits: 0  # noqa: E731 (u = 0 < keep_weight: the true symbol, the pre-noise value)
    ra, ca = rr_reports(design, a_answers, keep)
    rb, _ = rr_reports(design, b_answers, keep)
    sched_a = [(r.period, r.layer) for r in ra]
    sched_b = [(r.period, r.layer) for r in rb]
    if sched_a != sched_b:
        raise AssertionError("the reports' schedule depends on the changelog")
    z = design.domain_size
    differing = sum(symbol_of(x.old, x.new, z) != symbol_of(y.old, y.new, z) for x, y in zip(ra, rb))
    return sched_a, design.p, design.q, differing, ca


def rr_profile_delta(m: int, p: Fraction, q: Fraction, num_symbols: int, epsilon: float) -> float:
    """delta(eps) of m independent reports whose true symbols differ: each report is the true
    symbol w.p. p, each other w.p. q; between the two inputs the output 'a' (A's symbol) has ratio
    p/q, 'b' ratio q/p, any other 1. delta = sum over outcomes max(0, P_A - e^eps P_B)."""
    p, q = float(p), float(q)
    r = 1 - p - q  # neither of the two symbols
    lr = math.log(p / q)
    total = 0.0
    for na in range(m + 1):
        for nb in range(m - na + 1):
            no = m - na - nb
            coef = math.comb(m, na) * math.comb(m - na, nb)
            pa = coef * p**na * q**nb * r**no
            loss = (na - nb) * lr
            if loss > epsilon:
                total += pa * (1 - math.exp(epsilon - loss))
    return total
