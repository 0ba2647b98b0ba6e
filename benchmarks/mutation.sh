#!/usr/bin/env bash
# Mutation benchmark of the privacy core (not in CI): mutmut 3 over one module.
#
#   benchmarks/mutation.sh transforms/core/continual/partition.py [SAMPLE] [SEED]
#
# SAMPLE: run only SAMPLE mutants drawn uniformly at random with SEED
#         (default: every mutant). SEED defaults to 20261123.
# Environment:
#   PYTHON              interpreter whose bin/ has mutmut (default .venv/bin/python)
#   MUTATION_SOURCE     "worktree" (default: tracked + untracked files as they are
#                       in the work tree) or "HEAD" (the last commit)
#   MUTATION_NAMES      a file of mutant names (one a line, e.g. the survivors of
#                       an earlier run): run exactly these instead of sampling
#   MUTATION_WORKDIR    where the copies go (default /tmp/mutwork)
#   MUTATION_NICE       nice level of the run (default 15)
#
# mutmut mutates a copy: the repository is copied to $MUTATION_WORKDIR/<module>
# and mutmut writes its mutants/ there; nothing in this work tree is changed
# except benchmarks/results/mutation/ (ignored by git), which gets the verdicts
# (<module>.json), the sampled names and the mutmut log. One worker process.
# Requires mutmut 3.x in the venv: .venv/bin/pip install 'mutmut>=3.8,<4'.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODULE=${1:?usage: benchmarks/mutation.sh transforms/core/<package>/<module>.py [SAMPLE] [SEED]}
SAMPLE=${2:-0}
SEED=${3:-20261123}
PY=${PYTHON:-$ROOT/.venv/bin/python}
MUTMUT=$(dirname "$PY")/mutmut
NICE=${MUTATION_NICE:-15}
NAME=$(echo "${MODULE#transforms/core/}" | sed 's/\.py$//; s#/#.#g')  # e.g. counters.factorization.lattice
if [ -n "${MUTATION_NAMES:-}" ]; then NAME=$NAME.rerun; MUTATION_NAMES=$(realpath "$MUTATION_NAMES"); fi
WORK=${MUTATION_WORKDIR:-/tmp/mutwork}/$NAME
OUT=$ROOT/benchmarks/results/mutation
SOURCE=${MUTATION_SOURCE:-worktree}

[ -x "$MUTMUT" ] || { echo "mutmut not found next to $PY: $(dirname "$PY")/pip install 'mutmut>=3.8,<4'" >&2; exit 2; }
[ -f "$ROOT/$MODULE" ] || { echo "no such module: $MODULE" >&2; exit 2; }

mkdir -p "$OUT"
case "$WORK" in /tmp/*|/var/tmp/*) ;; *) echo "MUTATION_WORKDIR must be under /tmp or /var/tmp" >&2; exit 2;; esac
rm -rf "$WORK"
mkdir -p "$WORK"

# 1. the copy
if [ "$SOURCE" = "HEAD" ]; then
  git -C "$ROOT" archive HEAD | tar -x -C "$WORK"
else
  (cd "$ROOT" && git ls-files -z -c -o --exclude-standard | tar --null --ignore-failed-read -T - -c) | tar -x -C "$WORK"
fi
cp "$ROOT/benchmarks/mutation_config.py" "$WORK/benchmarks/"

cd "$WORK"
# mutmut itself puts the copy's mutants/ first on sys.path (and takes the copy's
# root off it); an inherited PYTHONPATH must not add another copy of the package
# (with one, the unmutated run recorded no test for any function)
unset PYTHONPATH
# mutmut runs the tests in its own process (forked per mutant): no xdist workers
export PYTEST_ADDOPTS="-n 0"
"$PY" benchmarks/mutation_config.py prepare "$WORK" "$MODULE"

START=$(date +%s)
LOG=$OUT/$NAME.log
# 2. generate the mutants and record which test executes which function
#    (one unmutated run of the subset); the filter matches no mutant on purpose,
#    so this step ends after the stats with a (harmless) assertion
nice -n "$NICE" "$MUTMUT" run --max-children 1 "__generate_only__" >"$LOG" 2>&1 || true
if [ ! -f "mutants/$MODULE.meta" ] || [ ! -f mutants/mutmut-stats.json ]; then
  echo "mutant generation or the unmutated test run failed; see $LOG" >&2
  tail -40 "$LOG" >&2
  exit 1
fi

# 3. the mutants to run (all, or a uniform sample with a fixed seed)
if [ -n "${MUTATION_NAMES:-}" ]; then
  grep -v '^\s*$' "$MUTATION_NAMES" >"$WORK/names.txt"
  SAMPLE_FILE=$WORK/names.txt
  echo "$MODULE: $(wc -l <"$SAMPLE_FILE") mutants to run (from $MUTATION_NAMES)"
else
  SAMPLE_FILE=$OUT/$NAME.sample
  "$PY" benchmarks/mutation_config.py sample "$WORK" "$MODULE" "$SAMPLE" "$SEED" >"$SAMPLE_FILE"
  echo "$MODULE: $(wc -l <"$SAMPLE_FILE") mutants to run (sample=$SAMPLE, seed=$SEED)"
fi

# 4. run them (each in a forked worker, only the tests that execute the mutated
#    function, -x, CPU-time limit (test time + 1 s) * 5)
# shellcheck disable=SC2046
nice -n "$NICE" "$MUTMUT" run --max-children 1 $(cat "$SAMPLE_FILE") >>"$LOG" 2>&1 || {
  echo "mutmut run failed; see $LOG" >&2
  tail -40 "$LOG" >&2
  exit 1
}
END=$(date +%s)

# 5. verdicts
"$PY" benchmarks/mutation_config.py report "$WORK" "$MODULE" "$OUT/$NAME.json" "$SAMPLE_FILE"
# the diff of every mutant not killed, for the justification
"$PY" -c "import json, sys; print('\n'.join(json.load(open(sys.argv[1]))['survivors']))" "$OUT/$NAME.json" >"$OUT/$NAME.survivors"
: >"$OUT/$NAME.survivors.diff"
while read -r m; do
  [ -n "$m" ] && "$MUTMUT" show "$m" >>"$OUT/$NAME.survivors.diff" 2>&1
done <"$OUT/$NAME.survivors"
echo "wall time $((END - START)) s; mutmut $("$PY" -c "import importlib.metadata as m; print(m.version('mutmut'))"); survivors: (cd $WORK && $MUTMUT show <name>)"
