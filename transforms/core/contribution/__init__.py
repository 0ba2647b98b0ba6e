"""Protect people, not updates (issue 28): the pure-core mathematics of the entry and person units.

* :mod:`.units`: :class:`ContributionUnit`, what one update / entry / person can contribute.
* :mod:`.sensitivity`: sensitivity by contribution, the noise multiplier of a ``net_change``
  counter for a unit (instead of group privacy), and the budget to calibrate it with.
* :mod:`.toeplitz`, :mod:`.trees`: the L2 (lattice Toeplitz counters) and L1 (interval-release
  counters) bounds behind it.
* :mod:`.bounding`: contribution bounding, the rule that admits a person's entries whole.
* :mod:`.loss`, :mod:`.harness`: the exact privacy loss of a whole output between neighbours
  (the harness imports the mechanisms, so this ``__init__`` does not import it).

Proofs and the integration recipe: ``docs/contribution.md``. Nothing here imports Apache Beam.
"""

from transforms.core.contribution.bounding import (
    CONTRIBUTION_BOUNDED,
    PERSON_STATE_VERSION,
    PersonBounder,
    PersonLimit,
    PersonStreamsBounder,
    bound_person,
    bound_person_streams,
    new_person_state,
    new_streams_state,
    order_key,
)
from transforms.core.contribution.loss import Draw, PrivacyLoss, gaussian_epsilon, privacy_loss
from transforms.core.contribution.sensitivity import (
    GAUSSIAN_COUNTERS,
    INTERVAL_COUNTERS,
    Sensitivity,
    UnsupportedCounter,
    calibrated_budget,
    contribution_sensitivity,
    group_noise_multiplier,
    group_update_budget,
    noise_multiplier,
    query_columns,
)
from transforms.core.contribution.units import ContributionUnit

__all__ = [
    "ContributionUnit",
    "Sensitivity",
    "UnsupportedCounter",
    "GAUSSIAN_COUNTERS",
    "INTERVAL_COUNTERS",
    "contribution_sensitivity",
    "noise_multiplier",
    "calibrated_budget",
    "group_update_budget",
    "group_noise_multiplier",
    "query_columns",
    "PersonLimit",
    "PersonBounder",
    "PersonStreamsBounder",
    "bound_person",
    "bound_person_streams",
    "new_person_state",
    "new_streams_state",
    "order_key",
    "CONTRIBUTION_BOUNDED",
    "PERSON_STATE_VERSION",
    "Draw",
    "PrivacyLoss",
    "privacy_loss",
    "gaussian_epsilon",
]
