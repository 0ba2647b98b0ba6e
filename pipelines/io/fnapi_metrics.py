"""The DirectRunner's FnApiRunner (Beam 2.62) without its recursion over the bundles of a stage.

After each bundle the FnApiRunner keeps the stage's metrics as ``consolidate(chain(this bundle's, the stage's
so far))`` (``fn_runner.run_stages``), and ``consolidate`` is a generator: nothing is merged until the end, when
the stage's metrics are a generator nested once per bundle. Past about a thousand bundles in one stage (Python's
recursion limit) reading them raises ``RecursionError`` and the run fails after its outputs are written. A
followed file (``ReadFollowing``) is such a stage: each read is a bundle, and the FnApiRunner ignores the delay a
read asks for, so an idle file is read again at once (measured, stop 55: a followed run waiting 15 s for its
``#END`` failed so, exit 1, no summary).

:func:`install` puts a ``consolidate`` that returns a list, the same metrics merged the same way, in the
FnApiRunner's namespace, if its name there is still Beam's own generator (else it leaves it: a Beam that fixed
it, or another patch). Runner-side only: the metrics a run reports are the same values (one merge a bundle
instead of all at the end). Installed on import of :mod:`pipelines.io.follow`.
"""

from __future__ import annotations

from apache_beam.metrics import monitoring_infos
from apache_beam.runners.portability.fn_api_runner import fn_runner

__all__ = ["consolidate_now", "install", "installed"]

#: Beam's own (a generator), kept for the list below
_BEAM_CONSOLIDATE = monitoring_infos.consolidate


def consolidate_now(metrics, key=monitoring_infos.to_key) -> list:
    """Beam's ``consolidate``, merged at once into a list (no generator kept to nest the next bundle's in)."""
    return list(_BEAM_CONSOLIDATE(metrics, key))


def install() -> bool:
    """Replaces the FnApiRunner's ``consolidate_monitoring_infos`` if it is Beam's generator; whether ours is in."""
    if fn_runner.consolidate_monitoring_infos is _BEAM_CONSOLIDATE:
        fn_runner.consolidate_monitoring_infos = consolidate_now
    return installed()


def installed() -> bool:
    return fn_runner.consolidate_monitoring_infos is consolidate_now


install()
