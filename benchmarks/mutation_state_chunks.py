"""Planted bugs in the chunked state (``transforms/core/foundation/state_chunks.py``) and its wiring in the
per-stream and open keys' steps: each must make ``tests/test_state_chunks.py`` or ``tests/test_open_keys_beam.py``
fail (stop 50: 16 of 16). Each bug is written into the file, the tests run, the file restored.

Usage: python -m benchmarks.mutation_state_chunks
"""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
F = ROOT / "transforms/core/foundation/state_chunks.py"
P = ROOT / "transforms/per_stream.py"
K = ROOT / "transforms/open_keys.py"
MUTANTS = [
    (
        F,
        "            if same.all():\n                digests = old_digests[:m]",
        "            if True:\n                digests = old_digests[:m]",
    ),
    (
        F,
        "[old_digests[j] if same[j] else self._hash(raw, j, new) for j in range(m)]",
        "[old_digests[j] for j in range(m)]",
    ),
    (
        F,
        "        fresh = [d for d in new if d not in self.held]",
        "        fresh = [d for d in new if d not in self.held][:1]",
    ),
    (F, "        clear = grown > 2 * live + self.floor", "        clear = grown > 20 * live + self.floor"),
    (F, "        clear = grown > 2 * live + self.floor", "        clear = False"),
    (F, "        self.held.update(fresh)", "        pass"),
    (F, '        if (size, count) != tuple(data["bag"][:2]):', "        if False:"),
    (F, "        store._last = arrays\n        return plain, store", "        return plain, store"),
    (
        F,
        "                    if d not in every:\n                        every[d] = raw[j * c : (j + 1) * c]",
        "                    if d not in every:\n                        every[d] = raw[j * c : (j + 2) * c]",
    ),
    (F, "        m = min(len(old), len(raw)) // c", "        m = max(len(old), len(raw)) // c"),
    (F, "            clear = bool(self.bag_count)", "            clear = False"),
    (
        F,
        "        digests += [self._hash(raw, j, new) for j in range(m, -(-len(raw) // c))]",
        "        digests += [self._hash(raw, j, new) for j in range(m, len(raw) // c)]",
    ),
    (
        P,
        "        if write.clear:\n            chunks.clear()\n        for entry in write.adds:",
        "        for entry in write.adds:",
    ),
    (P, "        if cached is not None and cached[0] == data:", "        if cached is not None:"),
    (
        K,
        "        if write.clear:\n            chunks.clear()\n        for entry in write.adds:",
        "        for entry in write.adds:",
    ),
    (
        K,
        "            cell.clear()  # evicted, or the release is over: the key leaves no state\n"
        "            chunks.clear()",
        "            cell.clear()  # evicted, or the release is over: the key leaves no state",
    ),
]
results = []

for path, old, new in MUTANTS:
    src = path.read_text()
    if old not in src:
        results.append(("MISSING", old[:60]))
        continue
    path.write_text(src.replace(old, new, 1))
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "-n",
                "0",
                "tests/test_state_chunks.py",
                "tests/test_open_keys_beam.py",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        killed = r.returncode != 0
    finally:
        path.write_text(src)
    results.append(("killed" if killed else "SURVIVED", f"{path.name}: {new[:70]!r}"))
    print(results[-1], flush=True)
print(sum(1 for r in results if r[0] == "killed"), "of", len(results))
