"""Versioned, plain-data state of the mechanisms, and its stable byte encoding.

A long-running job keeps each stream's mechanism in the runner's state for
months, and an upgrade of the library (a Dataflow ``--update``, a Flink job
restored from a savepoint) must read what the old version wrote. A pickled
object does not survive that: pickles name Python modules and classes, and
break on the first moved class or renamed attribute. So the mechanisms'
state is written as *plain data* and encoded by a format we own:

* :func:`to_plain` turns an object graph into plain data: ``None``, bools,
  ints, floats, strings, lists and string-keyed dicts, with tagged dicts for
  what JSON lacks (``{"$b": base64}`` bytes, ``{"$t": [...]}`` tuples,
  ``{"$d": [[k, v], ...]}`` dicts with other keys, ``{"$c": ...}`` Counters,
  ``{"$nd": [dtype, shape, base64]}`` numpy arrays, ``{"$o": name, "$i": id,
  "f": {...}}`` objects of registered classes, ``{"$r": id}`` a reference to
  an object seen before: shared objects, such as ledger scopes referenced by
  the counters that charge them, stay shared, and cycles are fine).
* Objects are named by a stable *state name* given at registration
  (:func:`state_class`), never by their Python module or class name, so code
  can move between modules without touching the format. Their fields are
  their attributes (``__dict__`` and ``__slots__``) minus the names in the
  class's ``_STATE_EXCLUDE`` (caches and values derived from configuration);
  after loading, ``_after_restore()`` rebuilds those.
* :func:`encode` / :func:`decode` turn plain data into bytes and back:
  compact JSON (keys sorted, floats by ``repr``, which round-trips exactly in
  Python) compressed with zlib. Both ends are Python's standard library only.

Versioning: :data:`SCHEMA` is written into every envelope
(:func:`envelope`). A change that renames, removes or re-types a stored
field, or changes a state name, must bump it and add a migration to
:data:`MIGRATIONS` (old plain data -> new plain data). The committed golden
state file (``tests/golden/``) fails its test when a change breaks old state
without a migration. What needs a new job (and a new budget) instead: a change
of the mechanism's maths or of its noise coordinates (the releases would no
longer continue the same mechanism), documented in ``docs/state.md``.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import Counter
from collections.abc import Callable

import numpy as np

__all__ = [
    "SCHEMA",
    "MIGRATIONS",
    "StateError",
    "state_class",
    "to_plain",
    "from_plain",
    "encode",
    "decode",
    "envelope",
    "open_envelope",
]

SCHEMA = 1
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}  # schema n -> function from plain data of n to n + 1

_CLASSES: dict[str, type] = {}
_NAMES: dict[type, str] = {}


class StateError(ValueError):
    """State that cannot be read: unknown schema or class, or a mismatch."""


def state_class(name: str):
    """Register a class whose instances may appear in mechanism state under the
    stable ``name`` (a decorator)."""

    def register(cls):
        if name in _CLASSES and _CLASSES[name] is not cls:
            raise ValueError(f"state name {name!r} is already registered for {_CLASSES[name].__qualname__}")
        _CLASSES[name] = cls
        _NAMES[cls] = name
        return cls

    return register


def _fields(obj) -> dict:
    out = {}
    exclude = set()
    for klass in type(obj).__mro__:
        exclude.update(getattr(klass, "_STATE_EXCLUDE", ()))
        for slot in getattr(klass, "__slots__", ()):
            if slot not in ("__dict__", "__weakref__") and hasattr(obj, slot):
                out[slot] = getattr(obj, slot)
    out.update(getattr(obj, "__dict__", {}))
    return {k: v for k, v in out.items() if k not in exclude}


def to_plain(obj, _memo: dict | None = None):
    """The plain-data form of ``obj`` (see the module docstring)."""
    memo = {} if _memo is None else _memo
    t = type(obj)
    if obj is None or t is bool or t is str:
        return obj
    if t is int:
        return obj
    if t is float:
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if t is list:
        return [to_plain(v, memo) for v in obj]
    if t is tuple:
        return {"$t": [to_plain(v, memo) for v in obj]}
    if t is bytes:
        return {"$b": base64.b64encode(obj).decode("ascii")}
    if t is Counter:
        return {"$c": [[to_plain(k, memo), to_plain(v, memo)] for k, v in obj.items()]}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in obj):
            return {k: to_plain(v, memo) for k, v in obj.items()}
        return {"$d": [[to_plain(k, memo), to_plain(v, memo)] for k, v in obj.items()]}
    if t is np.ndarray:
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"numpy arrays of dtype {obj.dtype} cannot be stored in state")
        arr = np.ascontiguousarray(obj)
        dtype = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        return {"$nd": [dtype.str, list(arr.shape), base64.b64encode(arr.astype(dtype).tobytes()).decode("ascii")]}
    name = _NAMES.get(t)
    if name is None:
        raise TypeError(
            f"{t.__module__}.{t.__qualname__} is not registered for state (use @state_class); "
            "only plain data and registered classes can be stored"
        )
    ref = memo.get(id(obj))
    if ref is not None:
        return {"$r": ref[0]}
    ident = len(memo)
    memo[id(obj)] = (ident, obj)  # keep obj alive so that its id is not reused
    return {"$o": name, "$i": ident, "f": {k: to_plain(v, memo) for k, v in _fields(obj).items()}}


def _instances(data, memo: dict) -> None:
    """Pre-pass: an empty instance for every object defined anywhere in ``data``
    (the encoding sorts keys, so a reference may come before its definition)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) is list:
            stack.extend(node)
        elif type(node) is dict:
            if "$o" in node:
                cls = _CLASSES.get(node["$o"])
                if cls is None:
                    raise StateError(f"unknown state class {node['$o']!r}")
                memo[node["$i"]] = cls.__new__(cls)
                stack.extend(node["f"].values())
            elif "$nd" in node or "$b" in node or "$r" in node:
                continue
            else:
                stack.extend(node.values())


def from_plain(data, _memo: dict | None = None):
    """Rebuild an object graph from :func:`to_plain`'s output."""
    if _memo is None:
        _memo = {}
        _instances(data, _memo)
    return _from_plain(data, _memo)


def _from_plain(data, memo: dict):
    t = type(data)
    if data is None or t in (bool, int, float, str):
        return data
    if t is list:
        return [_from_plain(v, memo) for v in data]
    if t is not dict:
        raise StateError(f"unexpected {t.__name__} in state")
    if "$t" in data:
        return tuple(_from_plain(v, memo) for v in data["$t"])
    if "$b" in data:
        return base64.b64decode(data["$b"])
    if "$c" in data:
        return Counter({_from_plain(k, memo): _from_plain(v, memo) for k, v in data["$c"]})
    if "$d" in data:
        return {_from_plain(k, memo): _from_plain(v, memo) for k, v in data["$d"]}
    if "$nd" in data:
        dtype, shape, raw = data["$nd"]
        return np.frombuffer(base64.b64decode(raw), dtype=np.dtype(dtype)).reshape(shape).copy()
    if "$r" in data:
        try:
            return memo[data["$r"]]
        except KeyError:
            raise StateError(f"state refers to an undefined object {data['$r']}") from None
    if "$o" in data:
        obj = memo[data["$i"]]
        for k, v in data["f"].items():
            object.__setattr__(obj, k, _from_plain(v, memo))
        return obj
    return {k: _from_plain(v, memo) for k, v in data.items()}


def _after_restore_all(obj, seen=None):
    """Call ``_after_restore`` on every registered object of a restored graph
    (children first)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    t = type(obj)
    if t in (list, tuple):
        for v in obj:
            _after_restore_all(v, seen)
        return
    if t is dict or t is Counter:
        for k, v in obj.items():
            _after_restore_all(k, seen)
            _after_restore_all(v, seen)
        return
    if t in _NAMES:
        for v in _fields(obj).values():
            _after_restore_all(v, seen)
        hook = getattr(obj, "_after_restore", None)
        if hook is not None:
            hook()


def restore(data):
    """:func:`from_plain` and then every object's ``_after_restore`` hook."""
    obj = from_plain(data)
    _after_restore_all(obj)
    return obj


def encode(plain) -> bytes:
    """Stable bytes of plain data (sorted-key compact JSON, zlib level 6)."""
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return zlib.compress(text.encode("utf-8"), 6)


def decode(data: bytes):
    try:
        return json.loads(zlib.decompress(data).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError) as e:
        raise StateError(f"state bytes cannot be decoded: {e}") from None


def envelope(mechanism: str, config_digest: str, body) -> dict:
    """The versioned envelope of one mechanism's state."""
    return {"schema": SCHEMA, "mechanism": mechanism, "config": config_digest, "body": body}


def open_envelope(state: dict, mechanism: str, config_digest: str):
    """The body of ``state``, migrated to :data:`SCHEMA`; refuses another
    mechanism or configuration (a different release must start afresh)."""
    if not isinstance(state, dict) or "schema" not in state or "body" not in state:
        raise StateError("not a mechanism state envelope")
    schema = state["schema"]
    if not isinstance(schema, int) or schema > SCHEMA:
        raise StateError(f"state schema {schema!r} is newer than this library's ({SCHEMA}); upgrade the library")
    while schema < SCHEMA:
        migrate = MIGRATIONS.get(schema)
        if migrate is None:
            raise StateError(f"no migration from state schema {schema}")
        state = migrate(state)
        schema = state["schema"]
    if state["mechanism"] != mechanism:
        raise StateError(f"state of mechanism {state['mechanism']!r} cannot restore {mechanism!r}")
    if state["config"] != config_digest:
        raise StateError(
            "state was written under another configuration; a changed configuration is a new release "
            "(start it afresh, with a new budget)"
        )
    return state["body"]
