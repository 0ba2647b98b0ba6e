"""A candidate key's plain-data state and its continual selection test (issue 33;
``docs/open_keys.md``).

State (what a Beam step keyed by the candidate key stores), versioned plain data:
``{"v": 1, "live": live contributors, "entries": live entries}``. It exists while either number is
above zero and is evicted when both reach zero (:func:`apply_event` returns None): the key's test
reads nothing else, so a key that comes back starts from the same zeros. The noise is not state:
each node of the selection tree draws its noise from ``noise.stream("open_keys", "select", key,
level, index)``, so a restored or re-created candidate sees the same noise (a cache of it,
:class:`NodeNoise`, only saves the draws).

The tree test at period ``p`` (global periods ``1, 2, ...``): the binary-tree estimate of the key's live
contributors is the sum over the nodes decomposing ``[1, p]`` of (the node's true sum + its noise) =
``live + Z_p(key)``; the key is selected when it is strictly above ``T_p``
(:meth:`~.params.SelectionParams.threshold_at`). The sparse-vector test: ``live + nu_p - rho > T_p``,
``rho`` drawn once per key at ``svt_coords(key)``, ``nu_p`` at ``svt_coords(key, p)``. Why eviction
and the late start are private: the privacy argument of ``docs/open_keys.md`` covers the schedule of
tests (a key is tested at the periods it has state) with the same ``delta_event``.
"""

from __future__ import annotations

from transforms.core.foundation.bounds import LAPLACE
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.samplers import discrete_gaussian, discrete_laplace
from transforms.core.foundation.state import StateError
from transforms.core.selection.params import SelectionParams, dyadic_nodes

__all__ = [
    "CANDIDATE_STATE_VERSION",
    "new_candidate_state",
    "apply_event",
    "NodeNoise",
    "select_coords",
    "svt_coords",
    "key_coords",
]

CANDIDATE_STATE_VERSION = 1


def new_candidate_state() -> dict:
    return {"v": CANDIDATE_STATE_VERSION, "live": 0, "entries": 0}


def apply_event(state, d_live: int, d_entries: int) -> dict | None:
    """The state after a key event (None: a new key); None when the key is to be evicted."""
    if state is None:
        state = new_candidate_state()
    elif type(state) is not dict or state.get("v") != CANDIDATE_STATE_VERSION:
        raise StateError(f"not a candidate key state of version {CANDIDATE_STATE_VERSION}: a {type(state).__name__}")
    live, entries = state["live"] + int(d_live), state["entries"] + int(d_entries)
    if live < 0 or entries < 0:
        raise StateError("a candidate key's counts went below zero (events out of order)")
    if live == 0 and entries == 0:
        return None
    return {"v": CANDIDATE_STATE_VERSION, "live": live, "entries": entries}


def key_coords(key) -> tuple:
    """A key as noise coordinates: a stream key is one string; an open histogram's cell is the pair ``(stream,
    cell)`` (issue 33), two strings after the marker ``"cell"`` (coordinates are ints, strings or bytes; every key
    of one release has the same shape, so the coordinates of two keys never coincide)."""
    return ("cell", *key) if isinstance(key, tuple) else (key,)


def select_coords(key, level: int, index: int) -> tuple:
    """The noise coordinates of one node of a key's selection tree."""
    return ("open_keys", "select", *key_coords(key), int(level), int(index))


def svt_coords(key, p: int | None = None) -> tuple:
    """The noise coordinates of a key's sparse-vector test: its threshold noise (``p`` None) and its
    query noise at period ``p``."""
    k = key_coords(key)
    return ("open_keys", "svt", *k, "threshold") if p is None else ("open_keys", "svt", *k, "query", int(p))


class NodeNoise:
    """The noise of the selection trees' nodes, drawn from the coordinates and cached per key (the
    nodes still in use only: at most ``log2 p + 1`` per key)."""

    def __init__(self, params: SelectionParams, noise: NoiseSource):
        self.params, self.noise = params, noise
        self._cache: dict = {}
        self._sampler = discrete_laplace if params.selection_noise == LAPLACE else discrete_gaussian

    def node(self, key, level: int, index: int) -> int:
        return int(
            self._sampler(self.noise.stream(*select_coords(key, level, index)), self.params.node_param(level), 1)[0]
        )

    def at(self, key, p: int) -> int:
        """``Z_p(key)``: the noise of the key's tree estimate at period ``p`` (the sparse-vector test:
        ``nu_p - rho``)."""
        if self.noise.is_disabled:
            return 0
        if self.params.selection_test == "svt":
            thr, query = self.params.svt_scales
            rho = self._cache.get(key)
            if rho is None:
                rho = self._cache[key] = int(discrete_laplace(self.noise.stream(*svt_coords(key)), thr, 1)[0])
            return int(discrete_laplace(self.noise.stream(*svt_coords(key, p)), query, 1)[0]) - rho
        nodes = dyadic_nodes(p)
        old = self._cache.get(key, {})
        new = {n: old[n] if n in old else self.node(key, *n) for n in nodes}
        self._cache[key] = new
        return sum(new.values())

    def forget(self, key) -> None:
        self._cache.pop(key, None)

    def test(self, key, state: dict, p: int) -> bool:
        """Whether the candidate is selected at ``p``: ``live + Z_p > T_p``."""
        return state["live"] + self.at(key, p) > self.params.threshold_at(p)
