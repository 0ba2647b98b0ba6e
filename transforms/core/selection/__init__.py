"""Continual private key selection over open key domains (issue 33; ``docs/open_keys.md``).

* :mod:`.params`: the threshold, the per-key budget and the delta schedule from the budget;
* :mod:`.keys`: at most ``max_keys_per_person`` keys per person (first-come), key events;
* :mod:`.candidate`: a candidate key's plain-data state and its test;
* :mod:`.answers`: the selected keys' counters calibrated by contribution (person unit);
* :mod:`.release`: the in-memory release (what a Beam step keyed by candidate key will drive).

Nothing here imports Apache Beam.
"""

from transforms.core.selection.answers import AnswerCalibration, answer_budget, answer_calibration
from transforms.core.selection.candidate import CANDIDATE_STATE_VERSION, NodeNoise, apply_event, new_candidate_state
from transforms.core.selection.keys import KEYS_STATE_VERSION, KeyLimit, PersonKeys, key_of, new_keys_state
from transforms.core.selection.params import (
    NEED_DELTA,
    OpenKeysNeedDelta,
    SelectionParams,
    dyadic_nodes,
    selection_guarantee,
)
from transforms.core.selection.release import (
    KEY_STATE_VERSION,
    KeyContext,
    OpenKeyRelease,
    PeriodRelease,
    SelectedKey,
    advance_key,
    key_state_from_plain,
    key_state_to_plain,
)

__all__ = [
    "CANDIDATE_STATE_VERSION",
    "KEYS_STATE_VERSION",
    "KeyLimit",
    "NodeNoise",
    "OpenKeyRelease",
    "PeriodRelease",
    "PersonKeys",
    "SelectionParams",
    "apply_event",
    "dyadic_nodes",
    "key_of",
    "new_candidate_state",
    "new_keys_state",
    "KEY_STATE_VERSION",
    "KeyContext",
    "SelectedKey",
    "advance_key",
    "key_state_from_plain",
    "key_state_to_plain",
    "NEED_DELTA",
    "OpenKeysNeedDelta",
    "selection_guarantee",
    "AnswerCalibration",
    "answer_budget",
    "answer_calibration",
]
