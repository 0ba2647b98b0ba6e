"""State written by this version restores and continues exactly.

``tests/golden/state_v1.json`` holds, for every registered mechanism, the
versioned state taken mid-stream and the answers of the uninterrupted
continuation (``tests/golden/make_golden.py``). A change that breaks old state
(a renamed or removed field, a moved class without its state name, a changed
encoding) fails here: bump ``transforms.core.foundation.state.SCHEMA`` and add a
migration, or, if the change alters the maths or the noise, document that it
needs a new job and a new budget (``docs/state.md``) and regenerate.
"""

import base64
import json
import math
from pathlib import Path

import pytest
from golden.make_golden import golden_entries
from test_contract import KEY, MECHANISMS, REL, answers, config_for, options_for, workload

from transforms.core import NoiseSource
from transforms.core.foundation.state import SCHEMA, decode

GOLDEN = json.loads((Path(__file__).resolve().parent / "golden" / "state_v1.json").read_text())


def test_golden_file_covers_every_registered_mechanism():
    assert GOLDEN["schema"] <= SCHEMA
    updates = sorted(n for n, spec in MECHANISMS.items() if spec.input_kind == "updates")
    assert sorted({key.split("@")[0] for key in GOLDEN["mechanisms"]}) == updates
    # every golden state a registry entry asks for (ContractParams.golden) is there, at its budget
    for key, (_, budget) in golden_entries().items():
        assert GOLDEN["mechanisms"][key]["budget"] == budget, key
    # report collectors keep their golden state beside it (tests/test_local_dp.py)
    for name in sorted(set(MECHANISMS) - set(updates)):
        assert (Path(__file__).resolve().parent / "golden" / f"{name}_state_v1.json").is_file(), name


@pytest.mark.parametrize("key", sorted(GOLDEN["mechanisms"]))
def test_golden_state_restores_and_continues_identically(key):
    name = key.split("@")[0]  # "name@budget": a variant of a registered mechanism
    entry = GOLDEN["mechanisms"][key]
    config, options = config_for(entry["budget"]), options_for(name)
    state = decode(base64.b64decode(entry["state"]))  # the bytes a runner stored
    core = MECHANISMS[name].core_cls.from_state(config, state, options=options, end_tick=120)
    noise = NoiseSource(KEY).for_release(REL)
    batches = workload(name, ticks=60, seed=11)
    rest = [core.process_tick(t, ups, noise) for t, ups in batches[25:]] + core.run_to_end(noise)
    got = [[list(x) if isinstance(x, tuple) else x for x in a] for a in answers(rest)]
    assert got and _same(got, entry["continuation"])


def _same(a, b) -> bool:
    """Equal, floats to 1e-12 relative: the golden file was written on another processor, and numpy's SIMD
    transcendental functions (log, exp) round differently on AVX-512 and AVX2 (PMWG's bound differed in its
    16th digit on an AMD EPYC). A state that restores wrongly changes the noise drawn or the estimates by far
    more; integers, strings and the structure are compared exactly."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b
