"""Write ``state_v1.json``: the versioned state of every registered mechanism,
taken mid-stream by this version of the library, and the answers of the
uninterrupted continuation.

``tests/test_state_golden.py`` restores each state and checks that it
continues exactly so. Regenerate ONLY when the state schema is bumped with a
migration, or when a change of the maths or the noise coordinates makes old
state unusable anyway (such a change needs a new job and a new budget; say so
in docs/state.md). Usage: ``python tests/golden/make_golden.py`` adds entries for
mechanisms registered since (existing entries stay: they are state written by
an earlier version); ``--regenerate`` rewrites them all.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

from test_contract import KEY, MECHANISMS, REL, answers, checks, config_for, options_for, workload  # noqa: E402

from transforms.core import NoiseSource  # noqa: E402
from transforms.core.foundation.state import SCHEMA, encode  # noqa: E402

HALF, END = 25, 120


def golden_entries() -> dict:
    """key -> (mechanism, budget): each registry entry's golden budgets
    (``ContractParams.golden``): the first under its name, the others as
    ``name@budget`` (variants whose state differs in kind). Report collectors:
    ``tests/test_local_dp.py`` writes their golden state."""
    out = {}
    for name, spec in MECHANISMS.items():
        if spec.input_kind != "updates":
            continue
        first, *more = checks(name).golden
        out[name] = (name, first)
        out.update({f"{name}@{b}": (name, b) for b in more})
    return out


def build(existing: dict | None = None):
    """Entries for every registered mechanism; those already in ``existing``
    are kept as they are (state written by an earlier version stays the test)."""
    out = {"schema": SCHEMA, "mechanisms": dict((existing or {}).get("mechanisms", {}))}
    noise = NoiseSource(KEY).for_release(REL)
    for key, (name, budget) in sorted(golden_entries().items()):
        if key in out["mechanisms"]:
            continue
        config, options = config_for(budget), options_for(name)
        core = MECHANISMS[name].core_cls(config, stream="golden", emit_nodes=True, options=options, end_tick=END)
        batches = workload(name, ticks=60, seed=11)
        for t, ups in batches[:HALF]:
            core.process_tick(t, ups, noise)
        core.drain_node_outputs()
        state = encode(core.to_state())  # the bytes a runner stores
        rest = [core.process_tick(t, ups, noise) for t, ups in batches[HALF:]] + core.run_to_end(noise)
        out["mechanisms"][key] = {
            "budget": budget,
            "state": base64.b64encode(state).decode("ascii"),
            "continuation": [list(map(_plain, a)) for a in answers(rest)],
        }
    return out


def _plain(x):
    return list(x) if isinstance(x, tuple) else x


if __name__ == "__main__":
    path = HERE / "state_v1.json"
    keep = path.exists() and "--regenerate" not in sys.argv
    existing = json.loads(path.read_text()) if keep else None
    path.write_text(json.dumps(build(existing), sort_keys=True, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size} bytes)")
