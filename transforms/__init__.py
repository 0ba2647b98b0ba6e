"""dp-dynamic: differentially private continual release over dynamic data.

``transforms.core`` holds the pure DP algorithms and never imports Apache Beam.
This package exports the Beam PTransforms built on them; they are loaded on
first use (PEP 562), so ``import transforms.core`` stays free of Beam.
"""

import importlib

_EXPORTS = {
    "DeadLetter": "transforms.records",
    "NodeRecord": "transforms.records",
    "NoiseKey": "transforms.records",
    "ReleaseIdentity": "transforms.core.foundation.noise",
    "ReleaseRecord": "transforms.records",
    "UpdateRecord": "transforms.records",
    "ReleaseFullyDynamic": "transforms.releases",
    "ReleaseInsertionOnly": "transforms.releases",
    "ReleaseTwoStreamBaseline": "transforms.releases",
    "StreamSpec": "transforms.spec",
    "ReleaseContinually": "transforms.releases",
    "CountContinually": "transforms.releases",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'transforms' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return sorted(list(globals()) + __all__)
