import numpy as np
import pytest

from transforms.core.noise import NoiseSource

TEST_KEY = bytes(range(32))


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
