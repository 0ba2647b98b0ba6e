import os
from pathlib import Path

import numpy as np
import pytest

from transforms.core.foundation.noise import NoiseSource

TEST_KEY = bytes(range(32))

# Beam's multi-process FnApiRunner starts SDK workers as subprocesses, which unpickle DoFns and lambdas that
# name a test module (apache-beam 2.62's dill does, for this module's globals); pytest puts tests/ on its own
# sys.path only, so the workers get it through PYTHONPATH.
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_TESTS, os.environ.get("PYTHONPATH")) if p)


@pytest.fixture
def noise():
    """A fixed-key noise source: tests are reproducible."""
    return NoiseSource(TEST_KEY)


@pytest.fixture
def no_noise():
    return NoiseSource.disabled()


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
