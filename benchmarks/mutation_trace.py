"""The differential trace of mutants killed by a crash (issue 27: privacy and bound mutants killed by an assertion on
the property, not by a crash).

A mutant that a test kills only by a crash is harmless to a user when raising is all it ever does on the inputs the
tests give it: the release fails loudly. It is a silent error when, on some input, it returns a wrong value (or
leaves a wrong state) without raising, and the crash came later or elsewhere: the ledger refusing a doubled charge,
a shape mismatch three calls away. ``recheck`` (``mutation_fast``) asks whether an assertion also catches a mutant;
this asks the question that matters, for every call:

each crash-killed mutant runs against every test that executes its function (as ``recheck``: capped at ``--cap`` s
of their recorded CPU time, never stopping at a failure) with the mutated function wrapped. On each call (at most
``--per-test`` a test, ``--total`` a mutant) the arguments are deep-copied before the mutant runs; when the mutant
returns, the ORIGINAL function runs on the copy, and the two return values and the two argument lists after the call
(the object's whole state, for a method) are compared structurally (:func:`difference`: arrays element by element,
floats bit for bit except NaN, objects by their attributes). Verdicts, per mutant:

* ``differs``: on some traced call the mutant returned or left a value of the original's type that differs from
  the original's (or returned where the original raises): a wrong value reaches a caller. Read it; if it can
  reach a release, a guarantee or a bound, add a test that asserts the property (``ASSERTED_BY``).
* ``differs_type``: the only differences are of type (``None`` where the original returns an array, ...): a value
  that usually fails at its first use, but may also read as "no bound": read it.
* ``raises``: every traced call either raised or matched the original exactly: on the covered inputs the mutant's
  only effect is an exception.
* ``same``: traced calls, none raised and none differed (the crash came from an untraced call or a global effect):
  read it.
* ``untraced``: no call could be traced (never called through its module's trampoline, or its arguments cannot be
  deep-copied): read it.

``n_by_assertion`` counts the covering tests that failed by an assertion under the trace; ``--plain --names FILE``
runs the same mutants without the wrapper (as ``recheck`` does), the figure to rely on (verdict ``untraced`` there).

A spurious ``differs`` is possible (a function that reads the clock or ``os.urandom``, an identity check against a
module-level sentinel that the copy does not keep): each ``differs`` is read, never counted as a defect unread.

    MUTATION_WORKDIR=<a prepared copy> .venv/bin/python -m benchmarks.mutation_trace run --shard 0/2
        --results 'benchmarks/mutation_runs/s44/*/fast.json' --out /tmp/trace0.json  # and --shard 1/2 beside it
    .venv/bin/python -m benchmarks.mutation_trace report /tmp/trace*.json
"""

from __future__ import annotations

import argparse
import copy
import glob
import importlib
import inspect
import json
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from benchmarks.mutation_fast import ASSERTIONS, SELECTION, Runner, session

_MAX_DEPTH = 14


def _short(x) -> str:
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def difference(a, b, path: str = "", depth: int = 0, memo: set | None = None) -> str | None:
    """Where ``a`` (the mutant's) and ``b`` (the original's) first differ, as ``path: a != b``, or None when they are
    the same structurally: numbers by value (an int and a float of the same value are the same; NaN equals NaN),
    arrays by shape and elements, containers element by element, objects by type and attributes (cycles and depths
    past 14 are taken as the same), functions and classes by qualified name."""
    memo = set() if memo is None else memo
    if a is b or depth > _MAX_DEPTH:
        return None
    key = (id(a), id(b))
    if key in memo:
        return None
    if isinstance(a, bool) or isinstance(b, bool):
        return None if type(a) is type(b) and a == b else f"{path}: {_short(a)} != {_short(b)}"
    if isinstance(a, (int, float, np.integer, np.floating)) and isinstance(b, (int, float, np.integer, np.floating)):
        fa, fb = float(a), float(b)
        if a == b or (math.isnan(fa) and math.isnan(fb)):
            return None
        return f"{path}: {_short(a)} != {_short(b)}"
    if type(a) is not type(b):
        return f"{path}: type {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        if a.shape != b.shape or a.dtype != b.dtype:
            return f"{path}: array {a.shape} {a.dtype} != {b.shape} {b.dtype}"
        if a.dtype == object:
            for i, (x, y) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                if (d := difference(x, y, f"{path}[{i}]", depth + 1, memo)) is not None:
                    return d
            return None
        eq = np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        return None if eq else f"{path}: array differs ({int(np.sum(a != b))} of {a.size} elements)"
    if isinstance(a, (str, bytes, complex, type(None))):
        return None if a == b else f"{path}: {_short(a)} != {_short(b)}"
    memo.add(key)
    if isinstance(a, dict):
        if len(a) != len(b) or set(map(repr, a)) != set(map(repr, b)):
            return f"{path}: keys {_short(sorted(map(repr, a)))} != {_short(sorted(map(repr, b)))}"
        by_repr = {repr(k): v for k, v in b.items()}
        for k, v in a.items():
            if (d := difference(v, by_repr[repr(k)], f"{path}[{k!r}]", depth + 1, memo)) is not None:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if (d := difference(x, y, f"{path}[{i}]", depth + 1, memo)) is not None:
                return d
        return None
    if isinstance(a, (set, frozenset)):
        return None if sorted(map(repr, a)) == sorted(map(repr, b)) else f"{path}: {_short(a)} != {_short(b)}"
    if inspect.isroutine(a) or inspect.isclass(a) or inspect.ismodule(a):
        qa, qb = getattr(a, "__qualname__", repr(a)), getattr(b, "__qualname__", repr(b))
        if qa != qb:
            return f"{path}: {qa} != {qb}"
        return difference(
            getattr(a, "__self__", None), getattr(b, "__self__", None), path + ".__self__", depth + 1, memo
        )
    if isinstance(a, np.random.Generator):
        return None if a.bit_generator.state == b.bit_generator.state else f"{path}: generator state"
    if callable(getattr(a, "digest", None)) and callable(getattr(a, "copy", None)) and hasattr(a, "digest_size"):
        return None if a.digest() == b.digest() else f"{path}: hash state"  # hashlib objects: by their state
    if type(a).__getstate__ is not object.__getstate__:  # an object that says what its state is (caches left out)
        try:
            sa, sb = a.__getstate__(), b.__getstate__()
        except Exception:  # noqa: BLE001 (a state that cannot be taken now: compare the attributes)
            pass
        else:
            return difference(sa, sb, path + ".__getstate__()", depth + 1, memo)
    fields = _fields(a)
    if fields is None:
        try:
            return None if bool(a == b) else f"{path}: {_short(a)} != {_short(b)}"
        except Exception:  # noqa: BLE001 (an __eq__ that refuses: compare what repr shows)
            return None if repr(a) == repr(b) else f"{path}: {_short(a)} != {_short(b)}"
    other = _fields(b) or {}
    if set(fields) != set(other):
        return f"{path}: attributes {sorted(set(fields) ^ set(other))}"
    for k, v in fields.items():
        if (d := difference(v, other[k], f"{path}.{k}", depth + 1, memo)) is not None:
            return d
    return None


def _fields(x) -> dict | None:
    # the caches and derived values a class leaves out of its stored state (``_STATE_EXCLUDE``,
    # ``transforms/core/foundation/state.py``): a copy rebuilds them on use; its configuration is still compared
    skip = set(getattr(type(x), "_STATE_EXCLUDE", ())) - {"config", "options", "design"}
    out = {k: v for k, v in (getattr(x, "__dict__", None) or {}).items() if k not in skip}
    for cls in type(x).__mro__:
        for s in getattr(cls, "__slots__", ()) or ():
            if isinstance(s, str) and s not in ("__dict__", "__weakref__") and hasattr(x, s):
                out[s] = getattr(x, s)
    if not out and not hasattr(x, "__dict__") and not any(getattr(c, "__slots__", None) for c in type(x).__mro__):
        return None
    return out


class Tracer:
    """Wraps one mutant of a mutmut-mutated module: each call (up to ``per_test`` a test and ``total`` in all) is
    also run through the original on deep copies of its arguments and compared. Events go to ``fd`` as JSON lines:
    the first three ``differs`` with their test and path, and the counts (``stats``) before each test and at the end."""

    def __init__(self, name: str, fd: int | None, per_test: int = 40, total: int = 2000) -> None:
        self.name, self.fd, self.per_test, self.total = name, fd, per_test, total
        self.counts: Counter = Counter()
        self.test, self.in_test, self.shown = "", 0, 0

    def _emit(self, event: dict) -> None:
        if self.fd is not None:
            os.write(self.fd, (json.dumps(event)[:3000] + "\n").encode())

    def begin(self, test: str) -> None:
        self.flush()
        self.test, self.in_test = test, 0

    def flush(self) -> None:
        self._emit({"stats": dict(self.counts)})

    def install(self) -> None:
        module, _, mutant = self.name.rpartition(".")
        mod = sys.modules.get(module) or importlib.import_module(module)
        table = getattr(mod, "mutants_" + mutant.rsplit("_", 1)[0])
        fn, orig = table[mutant], table["_mutmut_orig"]
        if inspect.ismethod(fn) and inspect.isclass(fn.__self__):
            # a classmethod: the trampoline takes it from the class by name (``getattr(cls, name)``), so the
            # wrapper replaces the class's attribute; ``cls`` is the first argument of both functions
            setattr(fn.__self__, mutant, classmethod(self.wrap(fn.__func__, orig.__func__)))
        else:
            table[mutant] = self.wrap(fn, orig)

    def _traced(self) -> bool:
        if self.in_test >= self.per_test or self.counts["calls"] >= self.total:
            return False
        self.in_test += 1
        self.counts["calls"] += 1
        return True

    def _compare(self, got, args, kwargs, saved, run_orig) -> None:
        try:
            want = run_orig(*saved[0], **saved[1])
        except Exception as e:  # noqa: BLE001 (the original refuses the input the mutant took)
            self._differs(f"returns where the original raises {type(e).__name__}")
            return
        d = difference((got, args, kwargs), (want, saved[0], saved[1]), "call")
        if d is None:
            self.counts["equal"] += 1
        else:
            self._differs(d)

    def _differs(self, what: str) -> None:
        # a value where the original has another type (None for an array, ...) is a "type" difference: it usually
        # fails at its first use; a value of the same type that differs (or a return where the original raises) is
        # the silent kind
        kind = "differs_type" if ": type " in what or "NoneType" in what else "differs_value"
        self.counts["differs"] += 1
        self.counts[kind] += 1
        if self.shown < 3:
            self.shown += 1
            self._emit({"differs": what, "test": self.test})

    def _copy(self, args, kwargs):
        try:
            return copy.deepcopy((args, kwargs))
        except Exception:  # noqa: BLE001 (an argument that cannot be copied: this call is not compared)
            self.counts["uncopyable"] += 1
            return None

    def wrap(self, mutant, orig):
        if inspect.isgeneratorfunction(orig):

            def traced_gen(*args, **kwargs):
                if not self._traced() or (saved := self._copy(args, kwargs)) is None:
                    return (yield from mutant(*args, **kwargs))
                try:
                    got = list(mutant(*args, **kwargs))
                except BaseException:
                    self.counts["raised"] += 1
                    raise
                self._compare(got, args, kwargs, saved, lambda *a, **k: list(orig(*a, **k)))
                yield from got

            return traced_gen

        def traced(*args, **kwargs):
            if not self._traced():
                return mutant(*args, **kwargs)
            if init:  # ``self`` is not built yet: the original builds a fresh instance from copies of the rest
                saved = self._copy(args[1:], kwargs)
                if saved is not None:
                    saved = ((object.__new__(type(args[0])), *saved[0]), saved[1])
            else:
                saved = self._copy(args, kwargs)
            if saved is None:
                return mutant(*args, **kwargs)
            try:
                got = mutant(*args, **kwargs)
            except BaseException:
                self.counts["raised"] += 1
                raise
            self._compare(got, args, kwargs, saved, orig)
            return got

        init = mutant.__name__.rsplit("__mutmut_", 1)[0].endswith("ǁ__init__")

        return traced


def verdict(counts: dict) -> str:
    if counts.get("differs_value"):
        return "differs"
    if counts.get("differs"):
        return "differs_type"
    compared = counts.get("calls", 0) - counts.get("uncopyable", 0)
    if compared <= 0:
        return "untraced"
    return "raises" if counts.get("raised") else "same"


class TraceRunner(Runner):
    """``mutation_fast``'s warm runner, tracing each mutant's function in its child."""

    tracer: Tracer | None = None

    def child_setup(self, name: str, fd: int | None) -> None:
        if self.args.plain:  # the same run without the wrapper: which failures are the mutant's own
            return
        self.tracer = Tracer(name, fd, self.args.per_test, self.args.total)
        self.tracer.install()

    def before_test(self, item) -> None:
        if self.tracer is not None:
            self.tracer.begin(item.nodeid)

    def _protocol(self, items: list, stop_at_failure: bool) -> None:
        super()._protocol(items, stop_at_failure)
        if self.tracer is not None:
            self.tracer.flush()

    def pytest_runtestloop(self, session):
        items = {it.nodeid: it for it in session.items}
        tmap = self._test_map(session, list(items.values()))
        dur = tmap["duration"]
        out_path = Path(self.args.out)
        out = json.loads(out_path.read_text()) if out_path.exists() else {}
        for _r, _m, name in self.todo:
            if name in out:
                continue
            names = self._tests_for(name, tmap, self.args.cap)
            tests = [items[t] for t in names if t in items]
            # the recheck's CPU limit, x slack for the copies and the second call
            limit = int((sum(dur.get(t.nodeid, 0.0) for t in tests) + 1) * 5 * self.args.slack) + 5 + 2 * len(tests)
            res = self._one(name, tests, dur, limit=limit, every=True)
            events, fails = res.pop("events", []), res.pop("failures", [])
            stats = [e["stats"] for e in events if "stats" in e]
            counts = max(stats, key=lambda c: c.get("calls", 0)) if stats else {}
            res.update(
                {
                    "module": _m,
                    "failed": len(fails),
                    "n_by_assertion": sum(exc in ASSERTIONS for _t, exc in fails),
                    "by_assertion": [t for t, exc in fails if exc in ASSERTIONS][:20],
                    "crash_types": sorted({exc for _t, exc in fails if exc not in ASSERTIONS}),
                    "counts": counts,
                    "differs": [e for e in events if "differs" in e],
                    "verdict": verdict(counts),
                }
            )
            out[name] = res
            out_path.write_text(json.dumps(out, indent=0))
            print(f"{time.strftime('%H:%M:%S')} {name}: {res['verdict']} {counts} ({res['cpu']:.1f} s CPU)", flush=True)
        return True


def crash_kills(paths: list[str]) -> dict[str, dict]:
    """The mutants of these ``fast.json`` killed by a crash (not an assertion, not a timeout), later files winning."""
    done: dict[str, dict] = {}
    for p in paths:
        done.update(json.loads(Path(p).read_text()))
    return {k: v for k, v in done.items() if v["status"] == "killed" and v.get("exc") not in ASSERTIONS}


def run(args: argparse.Namespace) -> None:
    args.out = str(Path(args.out).resolve())
    paths = sorted(p for pat in args.results for p in glob.glob(pat))
    if args.names:  # the named mutants, whatever killed them (a golden file's assertion, say)
        done = {}
        for p in paths:
            done.update(json.loads(Path(p).read_text()))
        todo = sorted((v["module"], k) for k, v in done.items())
    else:
        todo = sorted((v["module"], k) for k, v in crash_kills(paths).items())
    if args.only:
        todo = [(m, k) for m, k in todo if m.startswith(tuple(args.only))]
    if args.names:
        wanted = set(Path(args.names).read_text().split())
        todo = [(m, k) for m, k in todo if k in wanted]
    i, n = (int(x) for x in args.shard.split("/"))
    todo = [(0, m, k) for j, (m, k) in enumerate(todo) if j % n == i]
    print(f"trace: {len(todo)} mutants (shard {args.shard}) of {len(paths)} result files", flush=True)
    args.again = True
    session(args, todo, SELECTION, TraceRunner)


def report(args: argparse.Namespace) -> None:
    out: dict[str, dict] = {}
    for p in args.files:
        out.update(json.loads(Path(p).read_text()))
    by = Counter(v["verdict"] for v in out.values())
    print(f"{len(out)} traced: " + ", ".join(f"{k} {n}" for k, n in sorted(by.items())))
    for name, v in sorted(out.items()):
        if v["verdict"] != "raises" or args.all:
            first = v["differs"][0] if v["differs"] else {}
            print(f"{v['verdict']:9} {name} {v['counts']} {first.get('differs', '')} [{first.get('test', '')}]")


def settle(traces: dict[str, dict], plain: dict[str, dict], read: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Each traced mutant's standing: ``raises`` (the trace saw nothing but exceptions and equal values), or the
    category a reader gave it (``READ`` of ``benchmarks/mutation_trace_45*.py``: asserted-existing, asserted, loud,
    spurious), ``asserted-existing`` where the plain run (no wrapper) has a test failing by an assertion, else
    ``unsettled``."""
    out = {}
    for name, v in traces.items():
        if v["verdict"] == "raises":
            out[name] = "raises"
        elif plain.get(name, {}).get("n_by_assertion"):
            out[name] = "asserted-existing"
        else:
            out[name] = read.get(name, ("unsettled", ""))[0]
    return out


def summary(args: argparse.Namespace) -> None:
    """The trace of every group (``benchmarks/mutation_runs/s45/*/``) with the readers' judgements, per module."""
    traces, plain, read, asserted = {}, {}, {}, {}
    for d in sorted(glob.glob(str(Path(args.runs) / "*"))):
        for name, into in (("trace.json", traces), ("plain.json", plain)):
            if (Path(d) / name).exists():
                into.update(json.loads((Path(d) / name).read_text()))
    for f in sorted(glob.glob("benchmarks/mutation_trace_45*.py")):
        mod = importlib.import_module("benchmarks." + Path(f).stem)
        read.update(getattr(mod, "READ", {}))
        asserted.update(getattr(mod, "ASSERTED_BY", {}))
    standing = settle(traces, plain, read)
    rows: dict[str, Counter] = {}
    for name, v in traces.items():
        c = rows.setdefault(v["module"], Counter())
        c["traced"] += 1
        c[v["verdict"]] += 1
        c["cpu"] += v.get("cpu", 0.0)
        c["s:" + standing[name]] += 1
    total = sum(rows.values(), Counter())
    cols = ["raises", "differs", "differs_type", "same", "untraced"]
    kinds = ["asserted-existing", "asserted", "loud", "spurious", "unsettled"]
    print("| module | crash kills traced | " + " | ".join(cols) + " | " + " | ".join(kinds) + " |")
    print("|---|" + "---:|" * (1 + len(cols) + len(kinds)))
    for m, c in sorted(rows.items()) + [("**all**", total)]:
        print(
            f"| `{m.removeprefix('transforms/core/')}` | {c['traced']} | "
            + " | ".join(str(c[k]) for k in cols)
            + " | "
            + " | ".join(str(c["s:" + k]) for k in kinds)
            + " |"
        )
    print(f"CPU {total['cpu']:.0f} s; asserted by new tests: {len(asserted)}")
    unsettled = sorted(n for n, s in standing.items() if s == "unsettled")
    if unsettled:
        print(f"unsettled ({len(unsettled)}): " + " ".join(unsettled))
    Path(args.json).write_text(json.dumps({"standing": standing, "asserted_by": asserted}, indent=0, sort_keys=True))


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--results", nargs="+", required=True, help="fast.json files (globs), later ones winning")
    r.add_argument("--out", required=True)
    r.add_argument("--shard", default="0/1", help="I/N: every N-th mutant from the I-th (parallel runs)")
    r.add_argument("--only", nargs="*", default=[], help="only the modules whose path starts with one of these")
    r.add_argument("--cap", type=float, default=6.0, help="seconds of covering tests per mutant (0: all)")
    r.add_argument("--slack", type=float, default=3.0, help="CPU limit: the recheck's times this")
    r.add_argument("--per-test", type=int, default=40, help="calls traced in each test")
    r.add_argument("--total", type=int, default=2000, help="calls traced per mutant")
    r.add_argument("--names", default="", help="a file of mutant names: only these, however killed")
    r.add_argument("--plain", action="store_true", help="no wrapper: every covering test, as recheck runs them")
    r.add_argument("--minutes", type=float, default=0.0)
    p = sub.add_parser("report")
    p.add_argument("files", nargs="+")
    p.add_argument("--all", action="store_true", help="list the mutants that only raise too")
    q = sub.add_parser("summary")
    q.add_argument("--runs", default="benchmarks/mutation_runs/s45")
    q.add_argument("--json", default="benchmarks/mutation_trace_summary.json")
    args = ap.parse_args()
    {"run": run, "report": report, "summary": summary}[args.cmd](args)


if __name__ == "__main__":
    main()
