"""The third-party warnings a command line does not show (``python -m pipelines.release``, ``pipelines.plan``).

FutureWarnings and DeprecationWarnings from the libraries we run on (Beam, Google's clients, gRPC, ...) say
something to their maintainers, not to a user of ours, who can do nothing about them; warnings from
``pipelines/`` and ``transforms/`` are always shown. Each CLI module calls
:func:`quiet_third_party_warnings` before its other imports (some of those libraries warn when imported)."""

from __future__ import annotations

import warnings

__all__ = ["THIRD_PARTY", "quiet_third_party_warnings"]

#: the packages whose FutureWarnings and DeprecationWarnings the CLIs do not show
THIRD_PARTY = r"(apache_beam|google|grpc|proto|pydantic|pyarrow|pandas|numpy|matplotlib|fastavro|dill|pkg_resources)"


def quiet_third_party_warnings() -> None:
    for category in (FutureWarning, DeprecationWarning, PendingDeprecationWarning):
        warnings.filterwarnings("ignore", category=category, module=THIRD_PARTY)
