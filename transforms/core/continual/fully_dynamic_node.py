"""One node of Qiu-Yi's online interval tree (000 §4, Alg. 3): the
deletion-only mechanism with restarts over the node's items, and the Fenwick
layout helpers (``docs/fully_dynamic.md``). The mechanism that owns the nodes
is :class:`~transforms.core.continual.fully_dynamic.FullyDynamicRelease`."""

from __future__ import annotations

import math

import numpy as np

from transforms.core.counters import ContinualCounter
from transforms.core.foundation.accounting import Budget, Scope
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import state_class

__all__ = ["FullyDynamicNode", "lowbit", "node_level", "fenwick_chain", "reuse_round_weight", "REUSE_OMEGA"]


def lowbit(i: int) -> int:
    return i & -i


def node_level(i: int) -> int:
    """Level of Fenwick node i: 1 + number of trailing zeros (leaves are level 1)."""
    return lowbit(i).bit_length()


# The share of beta a reusing node's current round gets in the union bound over
# its possible rounds: 1 - OMEGA for round 1 (restarts are rare), OMEGA 6/(pi^2
# (r-1)^2) for round r >= 2; the weights sum to 1. A public constant.
REUSE_OMEGA = 0.05


def reuse_round_weight(r: int) -> float:
    """Weight of round ``r`` in the union bound of a node that reuses n_hat."""
    return 1.0 - REUSE_OMEGA if r == 1 else REUSE_OMEGA * 6.0 / (math.pi**2 * (r - 1) ** 2)


def fenwick_chain(j: int) -> list[int]:
    """Nodes queried after segment j closes: j, j - lowbit(j), ... (> 0)."""
    out = []
    while j > 0:
        out.append(j)
        j -= lowbit(j)
    return out


@state_class("fully_dynamic.node")
class FullyDynamicNode:
    """Alg. 3 at one node of the online interval tree."""

    def __init__(self, owner, index: int, content: list[np.ndarray], size: int):
        self.index = index
        self.level = node_level(index)
        self.tick_lo = 0  # node covers insertion ticks (tick_lo, tick_hi]
        self.tick_hi = 0
        self.horizon = lowbit(index) - 1  # later segments at which this node is queried
        self.content = content  # exact live items, one histogram per query set
        self.size = size
        self.steps = 0
        self.round = 0
        self.halted = False
        self.halt_nhat = 0.0
        self.halt_nhat_profile: NoiseProfile | None = None
        prof = owner.config.budget_profile
        self.budget = owner.tree_budget.part(prof.level_split.weight(self.level), prof.level_split.weight(self.level))
        self.scope = owner.tree_scope.child(f"level{self.level}", Scope.PARALLEL).child(f"node{index}")
        self.static_answers: list[np.ndarray] = []
        self.static_budgets: list[Budget] = []
        self.static_sizes: list[tuple[float, NoiseProfile]] = []  # (n_hat, law) from PMW releases
        self.static_params: list = []  # what a non-additive release's alpha needs (PMW: its T)
        self.n_hat = 0.0
        self.n_hat_profile: NoiseProfile | None = None
        self.del_counter: ContinualCounter | None = None
        self.q_counters: list[ContinualCounter] = []

    @property
    def coords(self) -> tuple:
        return ("tree", "node", self.index, "round", self.round)

    def _round_budgets(self, owner):
        prof = owner.config.budget_profile
        b_r = self.budget.part(prof.round_split.weight(self.round), prof.round_split.weight(self.round))
        k = len(owner.mechanisms)
        we, wd = prof.round_weights, prof.delta_weights
        if prof.leaf_static_only and self.horizon == 0:
            return None, b_r.part(1.0 / k, 1.0 / k), None, None
        # tight: the c count sets are answered from n_hat and the deletion-count
        # counter, which take the shares those sets would have had (a static
        # release and a query counter each); every other set keeps its share
        c = sum(owner.reuse)
        nhat = b_r.pure_part(we[0] + c * we[1] / k)
        static = b_r.part(we[1] / k, wd[1] / k)
        qins = b_r.part(we[2] / k, wd[2] / k)
        lapins = b_r.part(we[3] + c * we[2] / k, wd[3] + c * wd[2] / k)
        return nhat, static, qins, lapins

    def reuses(self, owner, k: int) -> bool:
        """Whether set ``k`` is answered from this round's n_hat (and deletion
        counter) rather than a release of its own: a count set, in the tight
        profile, at a node that releases n_hat (not a static-only leaf)."""
        return owner.reuse[k] and self.n_hat_profile is not None

    def start_round(self, owner, tick: int, noise: NoiseSource, gamma_end: float | None) -> None:
        """Lines 1-5 (round 1) or 19-26 (restart) of Alg. 3."""
        self.round += 1
        nhat_b, static_b, qins_b, lapins_b = self._round_budgets(owner)
        base = (owner.stream,) + self.coords
        if nhat_b is not None:
            mech = owner.control_mechanism
            self.scope.charge(nhat_b, base + ("n_hat",))
            rel = mech.release(np.array([self.size]), nhat_b, noise.stream(*base, "n_hat"))
            self.n_hat = float(rel.values[0])
            self.n_hat_profile = NoiseProfile.zero() if noise.is_disabled else rel.noise
            owner._log(tick, self.index, self.level, self.round, "n_hat", "", rel.values, nhat_b, base + ("n_hat",))
            if gamma_end is not None and self.n_hat < 2 * gamma_end:
                self.halted = True  # line 22-23: answer 0 from now on; content kept for merging
                self.halt_nhat = self.n_hat
                self.halt_nhat_profile = rel.noise
                self.del_counter = None
                self.q_counters = []
                return
        self.static_answers, self.static_budgets, self.static_sizes, self.static_params = [], [], [], []
        for k, mech in enumerate(owner.mechanisms):
            if self.reuses(owner, k):  # the count is this round's n_hat: nothing new is released
                self.static_answers.append(np.array([self.n_hat]))
                self.static_budgets.append(None)
                self.static_params.append(None)
                continue
            c = base + ("static", owner.config.queries[k].name)
            self.scope.charge(mech.cost(static_b), c)
            if not mech.additive and self.n_hat_profile is not None:
                # PMW reuses this round's n_hat (post-processing of a release)
                rel = mech.release(self.content[k], static_b, noise.stream(*c), self.n_hat, self.n_hat_profile)
            else:
                rel = mech.release(self.content[k], static_b, noise.stream(*c))
            ans = mech.answer(rel)
            self.static_answers.append(ans)
            self.static_budgets.append(static_b)
            if rel.n_hat is not None:
                self.static_sizes.append((rel.n_hat, rel.n_hat_noise))
            self.static_params.append(rel.alpha_params)
            owner._log(
                tick, self.index, self.level, self.round, "static", owner.config.queries[k].name, ans, static_b, c
            )
        remaining = self.horizon - self.steps
        if lapins_b is None or remaining <= 0:
            self.del_counter, self.q_counters = None, []
            return
        self.del_counter = owner._make_counter(
            owner.control_mechanism, lapins_b, remaining, base + ("del_count",), self.scope.child(f"r{self.round}-del")
        )
        self.q_counters = [
            None
            if self.reuses(owner, k)  # the deletion-count counter counts this set's deletions
            else owner._make_counter(
                owner.deletion_mechanisms[k],
                qins_b,
                remaining,
                base + ("del_query", owner.config.queries[k].name),
                self.scope.child(f"r{self.round}-q{k}"),
            )
            for k in range(len(owner.mechanisms))
        ]
        if owner.emit_nodes:
            for c in self._counters():
                c.release_log = []

    def _counters(self) -> list[ContinualCounter]:
        """The round's counters (the deletion-count counter first)."""
        return [c for c in [self.del_counter] + self.q_counters if c is not None]

    def _query_counter(self, k: int) -> ContinualCounter | None:
        """The counter of set k's deletions: its own, or the deletion-count
        counter for a set that reuses n_hat; None before any step."""
        c = (
            self.del_counter
            if (self.q_counters and self.q_counters[k] is None)
            else (self.q_counters[k] if self.q_counters else None)
        )
        return c if c is not None and c.t > 0 else None

    def step(self, owner, tick: int, del_hists, del_count: int, noise: NoiseSource) -> None:
        """Lines 6-31 for one later segment (deletions already applied to content)."""
        self.steps += 1
        if self.halted or self.del_counter is None:
            return
        beta_r = owner.config.beta / (math.pi**2 * self.round**2)
        est = float(self.del_counter.step(np.array([del_count]), noise)[0])
        gamma = self.del_counter.error_bound(beta_r)
        for k, c in enumerate(self.q_counters):
            if c is not None:
                c.step(del_hists[k], noise)
        self._flush_counter_logs(owner, tick)
        if est > self.n_hat / 2 + 2 * gamma:
            self.start_round(owner, tick, noise, gamma_end=gamma)

    def _flush_counter_logs(self, owner, tick):
        if not owner.emit_nodes:
            return
        for c in self._counters():
            for coords, cost, values in c.release_log or []:
                owner._log(tick, self.index, self.level, self.round, "deletion_counter", "", values, cost, coords)
            c.release_log.clear()

    # -- answers -----------------------------------------------------------------
    def answer(self, k: int) -> np.ndarray:
        if self.halted:
            return np.zeros_like(self.static_answers[k]) if self.static_answers else np.zeros(1)
        a = self.static_answers[k]
        c = self._query_counter(k)
        if c is not None:
            a = a - c.estimate
        return a

    def noise_profile(self, owner, k: int) -> NoiseProfile:
        if self.static_budgets[k] is None:  # reuses n_hat
            p = self.n_hat_profile
        else:
            p = owner.mechanisms[k].noise_profile(self.static_budgets[k])
        c = self._query_counter(k)
        if c is not None:
            p = p + c.noise_profile()
        return p

    def alpha(self, owner, k: int, beta: float) -> float:
        """Non-additive black boxes (PMW): union bound over the static release and
        the deletion counter. A histogram deletion counter's error on any query
        of the set is at most the error of a sum of d cells (weights in [0, 1])."""
        mech = owner.mechanisms[k]
        has_counter = bool(self.q_counters) and self.q_counters[k].t > 0
        b = beta / 2 if has_counter else beta  # the rest goes to the counter
        n = self.size_bound(b / 2)  # |D(v)| <= n with probability 1 - b/2
        reused = self.n_hat_profile if self.n_hat_profile is not None and not self.halted else None
        params = self.static_params[k] or (None,)
        a = mech.alpha(self.static_budgets[k], b / 2, n=n, n_hat_noise=reused, iterations=params[0])
        if has_counter:
            c = self.q_counters[k]
            if c.mechanism.additive:
                d = c.mechanism.domain_size
                a += c.noise_profile().times(d).tail_bound(b / getattr(mech, "query_count", d))
            else:
                a += c.error_bound(b, n=n)
        return a

    def size_bound(self, beta: float) -> float:
        """A public (1-beta) upper bound on this node's round-start size, from
        n_hat or from a PMW release's own noisy size."""
        if self.n_hat_profile is not None:
            return max(self.n_hat, 0.0) + self.n_hat_profile.tail_bound(beta)
        if self.static_sizes:
            n_hat, law = self.static_sizes[0]
            return max(n_hat, 0.0) + law.tail_bound(beta)
        return float("inf")

    def halted_bound(self, beta: float) -> float:
        """A halted node holds at most n_hat + noise bound items (content only shrinks).

        The n_hat that decided the halt is the one in the bound, so the bound
        is a union over the round r >= 2 at which a node can halt (that
        round's noise is independent of the round having started): round r
        gets ``beta 6 / (pi^2 (r - 1)^2)``, the shares summing to ``beta``."""
        share = 6.0 / (math.pi**2 * (self.round - 1) ** 2) if self.round > 1 else 1.0
        return max(self.halt_nhat, 0.0) + self.halt_nhat_profile.tail_bound(beta * share)
