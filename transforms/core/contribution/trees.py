"""L1 sensitivity of the interval-release counters (k-ary tree, binary tree, Chan-Shi-Song) to
what one entry can do (proofs: ``docs/contribution.md``, "Laplace").

Every release of these counters is a noisy sum of the change stream ``d`` over an interval of
periods (a tree node, a range), calibrated so that one update costs the budget: one change of
L1 mass ``l1`` (the query set's largest column L1 norm) in one node per level. An entry's change
is ``D w`` (``w`` its state path), so a node's sum is ``w(end) - w(start - 1)``: it telescopes.
By the triangle inequality a node's L1 change is at most the L1 mass of the entry's changes
inside it, so each level (each release family) sees at most the entry's total *change mass*
``CM = sum_c ||v_c||_1`` and the privacy loss is at most ``CM / l1`` times the update level's.
Through the k-ary tree this is exact when the top level has at least as many released nodes as
the entry has changes (each change alone in its top-level node, hence in every level's).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["change_costs", "change_mass", "kary_top_nodes"]


def change_costs(columns: np.ndarray, norm: str = "l1") -> tuple[int, int]:
    """``(insert, move)``: the largest norm of one item's column (an insertion or a deletion)
    and of the difference of two items' columns (an upsert), in the columns' integer units.
    ``norm``: ``l1`` (int) or ``l2sq`` (the squared L2 norm, int)."""
    cols = np.asarray(columns, dtype=np.int64)
    if norm == "l1":
        ins = int(np.abs(cols).sum(axis=0).max())
    elif norm == "l2sq":
        ins = int((cols * cols).sum(axis=0).max())
    else:
        raise ValueError(f"norm must be l1 or l2sq, got {norm!r}")
    d = cols.shape[1]
    move = 0
    for x in range(d):
        diff = cols - cols[:, x : x + 1]
        v = np.abs(diff).sum(axis=0).max() if norm == "l1" else (diff * diff).sum(axis=0).max()
        move = max(move, int(v))
    return ins, move


@functools.lru_cache(maxsize=256)
def _mass(ins: int, move: int, k: int, lifetimes: int) -> tuple[int, int]:
    """(the largest change mass, the number of changes of a sequence attaining it) over every
    lifecycle of <= k mutations starting dead with <= ``lifetimes`` insertions."""
    best = {(False, 0): (0, 0)}  # (alive, insertions) -> (mass, -changes): the fewest changes on ties
    top = (0, 0)
    for _ in range(k):
        nxt: dict[tuple[bool, int], tuple[int, int]] = {}
        for (alive, used), (m, c) in best.items():
            steps = []
            if not alive and used < lifetimes:
                steps.append(((True, used + 1), ins))
            if alive:
                steps.append(((False, used), ins))  # delete
                if move > 0:
                    steps.append(((True, used), move))  # upsert
            for key, cost in steps:
                cand = (m + cost, c - 1)
                if cand > nxt.get(key, (-1, 0)):
                    nxt[key] = cand
        best = nxt
        for v in best.values():
            top = max(top, v)
    return top[0], -top[1]


def change_mass(columns: np.ndarray, max_mutations: int, lifetimes: int) -> tuple[int, int]:
    """(CM, changes): the largest L1 change mass of one entry (module docstring) and the number
    of changes of a lifecycle attaining it. Per-change costs are maximised independently, so CM
    is an upper bound; it is attained for counts, histograms and one-row sums containing 0."""
    ins, move = change_costs(columns, "l1")
    return _mass(ins, move, int(max_mutations), int(lifetimes))


def kary_top_nodes(horizon: int, radices: tuple[int, ...]) -> tuple[int, int]:
    """(released top-level nodes, periods per top-level node) of the k-ary tree."""
    size = math.prod(radices)
    return int(horizon) // size, size
