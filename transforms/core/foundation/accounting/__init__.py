"""Privacy accounting in one place: budgets, conversions, calibration, composition,
series splits, privacy units, the guarantee a spend states, and the release ledger.

* :mod:`.budgets`: ``PureDP``, ``ApproxDP``, ``ZCDP`` (immutable values whose
  methods do everything that depends on their kind), composition, the
  conversions between the currencies;
* :mod:`.calibration`: the numbers behind the conversions (CKS, the largest
  rho within an (eps, delta), the tight discrete-Gaussian calibration);
* :mod:`.units`: privacy units (group privacy), series splits, and
  :func:`stated_spend` (a ledger's spend as the guarantee for the configured
  unit and currency);
* :mod:`.ledger`: the :class:`Ledger` that records every release and refuses
  the one that would exceed the budget, before any noise is drawn.

No code outside this package branches on the kind of a budget.
"""

from .budgets import (
    ZCDP,
    ApproxDP,
    Budget,
    BudgetExceededError,
    PureDP,
    TightGaussian,
    as_vector,
    compose_parallel,
    compose_sequential,
    rho_for_approx,
    stated_share,
    stream_share,
    to_approx,
    zcdp_delta_for_epsilon,
    zcdp_to_approx,
)
from .calibration import (
    DISCRETE_TAU2,
    analytic_gaussian_delta,
    cks_epsilon,
    gaussian_rho_for_approx_tight,
    rho_for_epsilon_delta,
    smallest_epsilon,
    tight_gaussian_delta,
    tight_gaussian_epsilon,
    zcdp_epsilon,
)
from .ledger import Ledger, Record, Scope
from .units import PrivacyUnit, SeriesSplit, stated_spend, zeta

__all__ = [
    "analytic_gaussian_delta",
    "ApproxDP",
    "as_vector",
    "Budget",
    "BudgetExceededError",
    "cks_epsilon",
    "compose_parallel",
    "compose_sequential",
    "DISCRETE_TAU2",
    "gaussian_rho_for_approx_tight",
    "smallest_epsilon",
    "Ledger",
    "PrivacyUnit",
    "PureDP",
    "Record",
    "rho_for_approx",
    "rho_for_epsilon_delta",
    "Scope",
    "SeriesSplit",
    "stated_share",
    "stream_share",
    "stated_spend",
    "tight_gaussian_delta",
    "tight_gaussian_epsilon",
    "TightGaussian",
    "to_approx",
    "ZCDP",
    "zcdp_delta_for_epsilon",
    "zcdp_epsilon",
    "zcdp_to_approx",
    "zeta",
]
