"""Qiu-Yi's fully-dynamic mechanism (000 §4): private partitioning, an online
interval tree whose nodes run the deletion-only mechanism with restarts
(Alg. 3), and any static black box.

Neighbouring relation: update-level (one stream has one more insertion or
deletion than the other; an upsert is a deletion plus an insertion), or the
entry-level unit of the configuration (group privacy, the mutation limit
enforced by the registry). Cost: the configured budget per stream, for ever:
the partitioning gets ``partition_fraction``; a node at level ``l`` gets
``w_level(l)`` of the rest (one node per level holds an update: parallel
composition across levels' nodes, sequential across levels); round ``r`` of a
node gets ``w_round(r)`` of the node's; a round splits four ways (``n_hat``,
the static release, the query counter over deletions, the deletion-count
counter). Every release is charged to the stream's ledger before its noise is
drawn. Proof and profiles: ``docs/fully_dynamic.md``.

Layout: the online interval tree is a Fenwick layout over segments: node
``i`` is built when segment ``i`` closes and covers insertion segments
``(i - lowbit(i), i]``; the answer after segment ``j`` sums the nodes of the
Fenwick chain ``j, j - lowbit(j), ...`` (these ranges partition (0, j], so
every live item is counted once: Lemma 9). Only the chain is kept.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from transforms.core.config import DynamicConfig
from transforms.core.continual.fully_dynamic_node import (
    FullyDynamicNode,
    fenwick_chain,
    lowbit,
    node_level,
    reuse_round_weight,
)
from transforms.core.continual.segmented import SegmentedRelease
from transforms.core.counters import COUNTERS, BinaryTreeCounter, ContinualCounter, InfiniteCounter
from transforms.core.counters.factorization import KaryTreeCounter, SqrtFactorizationCounter
from transforms.core.foundation.accounting import zeta
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import TickBatch
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.outputs import Answer, TickResult
from transforms.core.foundation.state import state_class
from transforms.core.static.linear import CountMechanism, HistogramMechanism

__all__ = ["FullyDynamicRelease", "FullyDynamicOptions", "lowbit", "fenwick_chain", "node_level"]


@state_class("options.fully_dynamic")
@dataclass(frozen=True)
class FullyDynamicOptions:
    """Options of the fully-dynamic mechanism.

    Attributes:
      horizon: a declared horizon on the number of segments (tuned or tight profile
        only; overrides ``DynamicConfig.max_segments``): levels are then
        budgeted uniformly over ``horizon.bit_length()`` levels, and the
        mechanism stops releasing after segment ``horizon``
        (``horizon_reached``). None: unbounded (levels 1/l^(1+eta)).
    """

    horizon: int | None = None

    def __post_init__(self):
        if self.horizon is not None and (isinstance(self.horizon, bool) or int(self.horizon) < 1):
            raise ValueError(f"horizon must be an integer >= 1 (segments) or None, got {self.horizon!r}")

    def configure(self, config: DynamicConfig) -> DynamicConfig:
        if self.horizon is None:
            return config
        return dataclasses.replace(config, max_segments=int(self.horizon))


# Plain fields (copied as containers both ways, their elements not walked: state.py): ``pending_ins`` a Counter of
# item tuples and ``pending_del`` a list of (node, item tuple), both updated in place by ``_absorb``; ``_chain`` (a
# list of int triples) and ``_chain_his`` (ints) replaced at every close, never updated. Their elements are immutable,
# so the shallow copies to_plain and restore make are whole copies (tests/test_state_plain_aliasing.py).
@state_class("mechanism.fully_dynamic", plain=("pending_ins", "pending_del", "_chain", "_chain_his"))
class FullyDynamicRelease(SegmentedRelease):
    """Qiu-Yi's fully-dynamic mechanism for one stream (see module docstring).

    Neighbours: update level (one insertion or deletion more; an upsert is a
    deletion plus an insertion), or one entry's mutations under an entry
    unit. Cost: ``config.budget`` for the unit, for ever, split between the
    partitioning and the tree as the module docstring and
    ``docs/fully_dynamic.md`` state; every release is charged before its
    noise is drawn.

    State is O(n_t + d log m_t): the live chain of O(log m_t) nodes with
    their exact contents, and the open segment's pending updates (plus, for
    :meth:`process_tick`, the in-memory registry of live entries).
    """

    name = "fully_dynamic"
    options_cls = FullyDynamicOptions
    _STATE_EXCLUDE = ("_locate_cache", "_reuse")

    def _start(self) -> None:
        super()._start()
        config = self.config
        self.tree_scope = self.ledger.root.child("tree")
        self.control_mechanism = CountMechanism(noise=config.noise_kind)
        # the insertion-only mechanism over a node's deletions, per query set: the
        # set's own black box (paper), or for non-additive sets (PMW) in the tuned
        # profile a histogram counter, which answers every linear query of the set
        # by linearity with an error that does not grow with the batch size
        self.deletion_mechanisms = [
            HistogramMechanism(m.domain_size, config.noise_kind) if (config.tuned_family and not m.additive) else m
            for m in self.mechanisms
        ]
        self.nodes: dict[int, FullyDynamicNode] = {}
        self._reset_pending()
        self.last_answers: list[Answer] = []

    def _after_restore(self):
        self._locate_cache = {}
        self.__dict__.pop("_reuse", None)

    @property
    def reuse(self) -> list[bool]:
        """Per query set: answered from each round's n_hat and deletion-count
        counter (count sets, tight profile). Derived from the configuration
        (once: the bounds read it at every period), so not part of the state."""
        reuse = self.__dict__.get("_reuse")
        if reuse is None:
            tight = self.config.budget_profile.reuse_count
            reuse = self._reuse = [bool(tight and isinstance(m, CountMechanism)) for m in self.mechanisms]
        return reuse

    @classmethod
    def _configure(cls, config: DynamicConfig, options: FullyDynamicOptions) -> DynamicConfig:
        return options.configure(config)

    # -- the planned allocation (docs/fully_dynamic.md) ---------------------------
    def _planned_cost(self, c: tuple, nodes):
        """Node ``i`` (level l) of the tree gets w_level(l) of the tree's budget,
        its round ``r`` w_round(r) of the node's; a round splits into n_hat, the
        static release, the query counter over deletions and the deletion-count
        counter (eps weights ``we``, delta weights ``wd``); a leaf releases its
        static answers only (tuned, tight); the counters get the allocation of
        their kind for the node's remaining lifetime. Tight: count sets reuse
        n_hat and the deletion-count counter (their shares go there)."""
        if c[:2] != ("tree", "node") or c[3] != "round":
            raise ValueError(f"no planned release at {c}")
        i, r, kind, rest = c[2], c[4], c[5], c[6:]
        paper, tight = self.config.profile == "paper", self.config.profile == "tight"
        level, horizon, k = (i & -i).bit_length(), (i & -i) - 1, len(self.config.queries)
        if paper:
            w_level, w_round = 6 / (math.pi**2 * level**2), 6 / (math.pi**2 * r * r)
        else:
            segments = self.config.max_segments
            w_level = 1 / segments.bit_length() if segments else 1 / (zeta(1.5) * level**1.5)
            w_round = 1 / (zeta(3.0) * r**3)
        b_r = self._tree_budget_planned().scale(w_level).scale(w_round)
        we = (0.25,) * 4 if paper else (0.1, 0.4, 0.4, 0.1)
        wd = (0.0, 1 / 3, 1 / 3, 1 / 3) if paper else (0.0, 0.4, 0.4, 0.2)
        if not paper and horizon == 0:
            if kind != "static":
                raise ValueError(f"a leaf releases its static answers only, not {c}")
            return b_r.scale(1 / k)
        counts = [q.name for q in self.config.queries if q.kind == "count"] if tight else []
        c_k = len(counts) / k
        if kind in ("static", "del_query") and rest[0] in counts:
            raise ValueError(f"a count set released on its own in the tight profile: {c}")
        if kind == "n_hat":
            return b_r.pure_part(we[0] + c_k * we[1])
        if kind == "static":
            return b_r.part(we[1] / k, wd[1] / k)
        starts = {(n.node, n.round): n.segment for n in nodes if n.kind == "n_hat"}
        for n in nodes:  # leaves release only their static answers
            if n.kind == "static":
                starts.setdefault((n.node, n.round), n.segment)
        remaining = horizon - (starts[(i, r)] - i)
        if kind == "del_query":
            budget, rest = b_r.part(we[2] / k, wd[2] / k), rest[1:]
        elif kind == "del_count":
            budget = b_r.part(we[3] + c_k * we[2], wd[3] + c_k * wd[2])
        else:
            raise ValueError(f"no planned release at {c}")
        nk = self.config.noise_kind
        if tight:  # the best counter over the node's lifetime rounded up to 2^k - 1
            best = "sqrt_factorization" if nk == "gaussian" else "kary_tree"
            lifetime = (1 << remaining.bit_length()) - 1
            return COUNTERS[best].planned_cost(budget, rest, horizon=lifetime, noise_kind=nk)
        return COUNTERS["infinite" if paper else "binary_tree"].planned_cost(
            budget, rest, horizon=remaining, noise_kind=nk
        )

    def _reset_pending(self):
        # open segment: items inserted in it (a multiset; an insert and a delete in
        # the same segment cancel) and deletions of older items as (node, item);
        # histograms are built once, at the close
        self.pending_ins: Counter = Counter()
        self.pending_del: list[tuple[int, tuple[int, ...]]] = []
        self._locate_cache: dict[int, int] = {}
        chain = sorted((n.tick_lo, n.tick_hi, i) for i, n in self.nodes.items()) if hasattr(self, "nodes") else []
        self._chain = chain
        self._chain_his = [hi for _, hi, _ in chain]

    def _make_counter(self, mech, budget, horizon, coords, scope) -> ContinualCounter:
        prof = self.config.budget_profile
        if prof.counter == "infinite":
            return InfiniteCounter(mech, budget, coords=coords, scope=scope)
        if prof.counter == "best" and mech.additive:
            # the node's remaining lifetime is public (it depends on the segment
            # index only); rounded up to 2^k - 1 so that few factorizations are
            # ever built. Past 2^20 steps (never in practice: a node's lifetime
            # is the number of later segments) the k-ary tree takes over.
            h = (1 << int(horizon).bit_length()) - 1
            if mech.noise_kind == "gaussian" and h <= 1 << 20:
                return SqrtFactorizationCounter(mech, budget, horizon=h, coords=coords, scope=scope)
            return KaryTreeCounter(mech, budget, horizon=h, coords=coords, scope=scope)
        return BinaryTreeCounter(mech, budget, horizon=horizon, honaker=mech.additive, coords=coords, scope=scope)

    @property
    def last_close_tick(self) -> int:
        return self.partitioner.prev_close if self.closed else 0

    def locate(self, ins_tick: int) -> int:
        """The live node whose tick range holds an insertion at ``ins_tick``
        (a tick of a closed segment)."""
        node = self._locate_cache.get(ins_tick)
        if node is not None:
            return node
        # the chain's tick ranges partition (0, last close]; bisect on their upper ends
        k = bisect.bisect_left(self._chain_his, ins_tick)
        if k == len(self._chain_his) or not self._chain[k][0] < ins_tick:
            raise AssertionError(f"insertion tick {ins_tick} is not covered by chain({self.closed})")
        i = self._chain[k][2]
        self._locate_cache[ins_tick] = i
        return i

    def _hists(self, items) -> list[np.ndarray]:
        """Per-query-set histograms of a list of items."""
        if not items:
            return [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        arr = np.asarray(items, dtype=np.int64).reshape(len(items), len(self.mechanisms))
        return [np.bincount(arr[:, k], minlength=m.domain_size).astype(np.int64) for k, m in enumerate(self.mechanisms)]

    def _counter_hists(self, counter: Counter) -> list[np.ndarray]:
        out = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        for item, c in counter.items():
            if c:
                for k, v in enumerate(item):
                    out[k][v] += c
        return out

    # -- updates -----------------------------------------------------------------
    def _absorb(self, batch: TickBatch) -> None:
        boundary = self.last_close_tick
        pend = self.pending_ins
        for item, ins_tick in batch.deletes:
            if ins_tick > boundary:  # inserted in the open segment: the pair cancels
                pend[item] -= 1
            else:
                self.pending_del.append((self.locate(ins_tick), item))
        for item in batch.inserts:
            pend[item] += 1

    # -- segment close -----------------------------------------------------------
    def _close(self, tick: int, noise: NoiseSource, res: TickResult) -> None:
        j = self.closed + 1
        survivors = set(fenwick_chain(j - lowbit(j)))
        # 1. group this segment's deletions by node; apply them to the exact contents
        by_node: dict[int, list] = {}
        for node_i, item in self.pending_del:
            by_node.setdefault(node_i, []).append(item)
        deletions = {i: (self._hists(items), len(items)) for i, items in by_node.items()}
        for i, (hists, cnt) in deletions.items():
            node = self.nodes[i]
            for k in range(len(self.mechanisms)):
                node.content[k] -= hists[k]
            node.size -= cnt
        # 2. merge the dying nodes (levels below l(j)) and the new insertions into node j
        content = self._counter_hists(self.pending_ins)
        size = sum(self.pending_ins.values())
        for i in list(self.nodes):
            if i not in survivors:
                dead = self.nodes.pop(i)
                for k in range(len(self.mechanisms)):
                    content[k] += dead.content[k]
                size += dead.size
                dead.scope.close()
        self.closed = j
        # 3. the surviving nodes see segment j's deletions (possibly none)
        empty = None
        for i in sorted(survivors, reverse=True):
            if i in deletions:
                hists, cnt = deletions[i]
            else:
                empty = empty or self._hists([])
                hists, cnt = empty, 0
            self.nodes[i].step(self, tick, hists, cnt, noise)
        # 4. build node j (Alg. 3, round 1); it covers ticks (t_{j - lowbit(j)}, t_j]
        node = FullyDynamicNode(self, j, content, size)
        left = j - lowbit(j)
        node.tick_lo = self.nodes[left].tick_hi if left else 0
        node.tick_hi = tick
        self.nodes[j] = node
        node.start_round(self, tick, noise, gamma_end=None)
        self._reset_pending()
        # 5. answers: sum over the chain
        answers = []
        chain = [self.nodes[i] for i in fenwick_chain(j)]
        for k in range(len(self.mechanisms)):
            est = np.sum([n.answer(k) for n in chain], axis=0)
            answers.append(self._answer(tick, k, est, self._error_bound(chain, k)))
            if self.emit_nodes:
                for n in chain:
                    self._log(
                        tick, n.index, n.level, n.round, "node_answer", self.config.queries[k].name, n.answer(k), None
                    )
        self.last_answers = answers
        res.answers.extend(answers)
        res.closes.append(tick)
        if self.config.max_segments is not None and self.closed >= self.config.max_segments:
            self._finish(tick, "horizon_reached", res)  # the declared horizon is used up: stop cleanly

    def _bound(self, k: int, beta: float) -> float:
        return self._error_bound([self.nodes[i] for i in fenwick_chain(self.closed)], k, beta)

    def _error_bound(self, chain: list[FullyDynamicNode], k: int, beta: float | None = None) -> float:
        if self.noiseless:
            return 0.0
        beta = self.config.beta if beta is None else beta
        halted = [n for n in chain if n.halted]
        live = [n for n in chain if not n.halted]
        b_noise = beta / 2 if halted else beta
        bound = 0.0
        if halted:
            bound += math.fsum(n.halted_bound(beta / (2 * len(halted))) for n in halted)
        mech = self.mechanisms[k]
        if live:
            if mech.additive:
                prof = NoiseProfile.sum(n.noise_profile(self, k) for n in live)
                b = b_noise / mech.num_queries
                # a reused n_hat also decided whether its round goes on: the
                # answer's noise is not independent of the structure, so the
                # bound is a union over the rounds each reusing node may be in
                # (weights summing to 1 per node; docs/fully_dynamic.md)
                for n in live:
                    if n.reuses(self, k):
                        b *= reuse_round_weight(n.round)
                bound += prof.tail_bound(b)
            else:
                bound += math.fsum(n.alpha(self, k, b_noise / len(live)) for n in live)
        return bound

    # -- introspection (tests) -------------------------------------------------------
    def check_invariants(self) -> None:
        """Lemma 9 (instrumented): between segments, every live entry inserted in a
        closed segment is in exactly one chain node, and every node's content is
        exactly the live entries of its range."""
        chain = fenwick_chain(self.closed)
        assert sorted(self.nodes) == sorted(chain), (sorted(self.nodes), chain)
        expect = {i: [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms] for i in chain}
        pend = [np.zeros(m.domain_size, dtype=np.int64) for m in self.mechanisms]
        boundary = self.last_close_tick
        for item, ins_tick, _ in self.registry.entries.values():
            if ins_tick > boundary:
                target = pend
            else:
                owners = [i for i in chain if self.nodes[i].tick_lo < ins_tick <= self.nodes[i].tick_hi]
                assert len(owners) == 1, (ins_tick, owners)
                target = expect[owners[0]]
            for k, v in enumerate(item):
                target[k][v] += 1
        pend_del: dict[int, list] = {}
        for node_i, item in self.pending_del:
            pend_del.setdefault(node_i, []).append(item)
        for i in chain:
            node = self.nodes[i]
            pd = self._hists(pend_del.get(i, []))
            for k in range(len(self.mechanisms)):
                assert np.array_equal(node.content[k] - pd[k], expect[i][k]), (i, k)
        have = self._counter_hists(self.pending_ins)
        for k in range(len(self.mechanisms)):
            assert np.array_equal(pend[k], have[k])

    def state_size(self) -> dict:
        """Sizes of the kept state (tests and benchmarks)."""
        return {
            "live_entries": len(self.registry),
            "nodes": len(self.nodes),
            "pending_insertions": sum(self.pending_ins.values()),
            "pending_deletions": len(self.pending_del),
        }
