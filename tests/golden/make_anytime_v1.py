"""Made ``tests/golden/anytime_sqrt_v1.json``: the state of an ``anytime_sqrt`` counter of main b046a8c (its
first coefficient profile) at t = 150 and its releases at t = 151..300 (across the doubling at 256), the
same noise key. Run from outside the repository with ``PYTHONPATH=<a checkout of main b046a8c>`` and the
arguments ``<that checkout> <output path>``."""

import base64
import json
import sys

import numpy as np


def main(checkout: str, out: str) -> None:
    import transforms

    assert transforms.__file__.startswith(checkout), transforms.__file__
    from transforms.core.counters import make_counter
    from transforms.core.foundation import state as S
    from transforms.core.foundation.accounting import ZCDP
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.static import HistogramMechanism

    noise = NoiseSource(b"anytime/golden".ljust(32, b"\0"))
    c = make_counter("anytime_sqrt", HistogramMechanism(2, "gaussian"), ZCDP(1.0), coords=("g",))
    for t in range(150):
        c.step(np.array([t % 3, 1]), noise)
    blob = S.encode(S.to_plain(c))
    outs = [c.step(np.array([1, t % 2]), noise).tolist() for t in range(150)]
    doc = {
        "source": "anytime_sqrt as on main b046a8c (its first coefficient profile): tests/golden/make_anytime_v1.py",
        "key": "anytime/golden",
        "state_b64": base64.b64encode(blob).decode(),
        "releases": outs,
        "variance": c.variance(),
        "cap": c.cap,
    }
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
