"""Versioned, plain-data state of the mechanisms, and its stable byte encoding.

A long-running job keeps each stream's mechanism in the runner's state for
months, and an upgrade of the library (a Dataflow ``--update``, a Flink job
restored from a savepoint) must read what the old version wrote. A pickled
*object* does not survive that: such pickles name Python modules and classes,
and break on the first moved class or renamed attribute. So the mechanisms'
state is written as *plain data*, in a format we own:

* :func:`to_plain` turns an object graph into plain data: ``None``, bools,
  ints, floats, strings, bytes, tuples, lists and dicts (any plain keys), with
  three tagged forms: ``{"$nd": (dtype, shape, bytes)}`` a numpy array
  (numeric dtypes only), ``{"$o": name, "$i": id, "f": {field: value}}`` an
  object of a registered class and ``{"$r": id}`` a reference to an object
  seen before (shared objects, such as the ledger scopes that counters charge,
  stay shared; cycles are fine). A ``Counter`` is stored as ``{"$c": dict}``.
  A dict whose keys are data and include a tag (``$o``, ``$r``, ``$nd``,
  ``$c``, ``$d``: an entry id or a person id can be any string) is stored
  escaped, ``{"$d": [(key, value), ...]}``, so that it never reads back as a
  tagged form (schema 2; schema 1 stored it as it was).
* Objects are named by a stable *state name* given at registration
  (:func:`state_class`), never by their Python module or class name, so code
  can move between modules without touching the format. Their fields are
  their attributes (``__dict__`` and ``__slots__``) minus the class's
  ``_STATE_EXCLUDE`` (caches and values derived from configuration, rebuilt
  by ``_after_restore()``). Fields declared *plain* at registration (the
  data-proportional ones: pending updates, registry entries) hold builtins
  only (their containers' elements immutable) and are copied shallowly both
  ways, without a walk over their elements: :func:`to_plain` stores a copy of
  the list or dict (a ``Counter`` as ``{"$c": dict}``), and :func:`restore` /
  :func:`from_plain` give the object a fresh list, dict or ``Counter``, never
  the one in the plain data. The objects update these containers in place, so
  a state taken in memory does not follow its object, and two objects
  restored from one plain dict share nothing (the Beam steps decode fresh
  bytes at every wake; in-memory callers of ``to_state`` / ``from_state`` are
  the ones this protects).
* :func:`encode` / :func:`decode` turn plain data into bytes and back: the
  pickle protocol 4 stream of those builtins (a format CPython reads in every
  later version), which :func:`decode` reads with an unpickler that refuses
  every global: no class, no function, nothing but plain data can come back
  out of it. It is written and read in C, which matters because the streaming
  step reads and writes a stream's state at every wake.

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

import io
import pickle
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

__all__ = [
    "SCHEMA",
    "MIGRATIONS",
    "StateError",
    "state_class",
    "to_plain",
    "from_plain",
    "restore",
    "encode",
    "decode",
    "envelope",
    "open_envelope",
    "migrated",
    "arrays_made",
]

SCHEMA = 2
MIGRATIONS: dict[int, Callable[[dict], dict]] = {}  # schema n -> function from plain data of n to n + 1

_CLASSES: dict[str, type] = {}
_NAMES: dict[type, str] = {}
_PLAIN: dict[type, frozenset] = {}


class StateError(ValueError):
    """State that cannot be read: unknown schema or class, or a mismatch."""


def state_class(name: str, plain: tuple = ()):
    """Register a class whose instances may appear in mechanism state under the
    stable ``name`` (a decorator). ``plain``: fields that only ever hold
    builtins, their containers' elements immutable (scalars, tuples of
    scalars): copied as containers both ways (:func:`_plain_out`,
    :func:`_plain_in`), their elements not walked. A field whose elements
    are updated in place (a list of lists, a dict of lists) must not be
    plain: it would be shared between an object and the state taken from it."""

    def register(cls):
        if name in _CLASSES and _CLASSES[name] is not cls:
            raise ValueError(f"state name {name!r} is already registered for {_CLASSES[name].__qualname__}")
        _CLASSES[name] = cls
        _NAMES[cls] = name
        _PLAIN[cls] = frozenset(plain) | _PLAIN.get(cls, frozenset())
        _INFO.pop(cls, None)
        return cls

    return register


_INFO: dict[type, tuple[frozenset, tuple, frozenset]] = {}
_SCALARS = frozenset((type(None), bool, int, float, str, bytes))


def _class_info(cls) -> tuple[frozenset, tuple, frozenset]:
    """(excluded attribute names, slot names, plain fields) of a class, cached."""
    info = _INFO.get(cls)
    if info is None:
        exclude, slots = set(), []
        for klass in cls.__mro__:
            exclude.update(getattr(klass, "_STATE_EXCLUDE", ()))
            slots.extend(s for s in getattr(klass, "__slots__", ()) if s not in ("__dict__", "__weakref__"))
        info = _INFO[cls] = (frozenset(exclude), tuple(slots), _PLAIN.get(cls, frozenset()))
    return info


def _fields(obj) -> dict:
    exclude, slots, _ = _class_info(type(obj))
    out = {s: getattr(obj, s) for s in slots if hasattr(obj, s)} if slots else {}
    d = getattr(obj, "__dict__", None)
    if d:
        out.update(d)
    for k in exclude:
        out.pop(k, None)
    return out


_ARRAYS: ContextVar = ContextVar("state_arrays", default=None)  # (min bytes, list) while arrays_made is open


@contextmanager
def arrays_made(min_bytes: int) -> Iterator[list]:
    """Within the block, every ``{"$nd": ...}`` form :func:`to_plain` makes for an array of at least
    ``min_bytes`` bytes is also appended to the list this yields, in the order made (the chunked writer's
    way to its large arrays without a walk over the plain data: ``state_chunks``)."""
    found: list = []
    token = _ARRAYS.set((int(min_bytes), found))
    try:
        yield found
    finally:
        _ARRAYS.reset(token)


def to_plain(obj, _memo: dict | None = None):
    """The plain-data form of ``obj`` (see the module docstring)."""
    return _to_plain(obj, {} if _memo is None else _memo)


def _to_plain(obj, memo: dict):
    t = type(obj)
    if t in _SCALARS:
        return obj
    if t is list:
        return [v if type(v) in _SCALARS else _to_plain(v, memo) for v in obj]
    if t is tuple:
        return tuple(v if type(v) in _SCALARS else _to_plain(v, memo) for v in obj)
    if t is dict:
        if "$o" in obj or "$r" in obj or "$nd" in obj or "$c" in obj or "$d" in obj:  # data keys that look like tags
            return {"$d": [(_to_plain(k, memo), _to_plain(v, memo)) for k, v in obj.items()]}
        return {_to_plain(k, memo): v if type(v) in _SCALARS else _to_plain(v, memo) for k, v in obj.items()}
    if t is np.ndarray:
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"numpy arrays of dtype {obj.dtype} cannot be stored in state")
        dtype = obj.dtype.newbyteorder("<") if obj.dtype.byteorder == ">" else obj.dtype
        form = {"$nd": (dtype.str, obj.shape, obj.astype(dtype, copy=False).tobytes())}
        sink = _ARRAYS.get()
        if sink is not None and obj.nbytes >= sink[0]:
            sink[1].append(form)
        return form
    if isinstance(obj, np.generic):
        return obj.item()
    if t is Counter:
        return {"$c": {_to_plain(k, memo): _to_plain(v, memo) for k, v in obj.items()}}
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
    plain = _class_info(t)[2]
    fields = {}
    for k, v in _fields(obj).items():
        if k in plain:  # builtins only, by declaration: a shallow copy (the caller may go on mutating)
            fields[k] = _plain_out(v)
        elif type(v) in _SCALARS:
            fields[k] = v
        else:
            fields[k] = _to_plain(v, memo)
    return {"$o": name, "$i": ident, "f": fields}


def _plain_out(v):
    """The stored form of a plain field's value: a shallow copy of a list or
    dict, a ``Counter`` as ``{"$c": dict}`` (its elements immutable by
    declaration, so the copy is the value as it is now)."""
    t = type(v)
    if t is Counter:
        return {"$c": dict(v)}
    if t is dict and len(v) == 1 and ("$c" in v or "$d" in v):  # one data key that :func:`_plain_in` reads as a tag
        return {"$d": list(v.items())}
    return t(v) if t is dict or t is list else v


def _plain_in(v):
    """A plain field's value from its stored form, in a fresh container (the
    inverse of :func:`_plain_out`): the object will update it in place, and
    the plain data it came from stays the caller's (an in-memory caller may
    restore it twice). Same values, same order: the state taken again is the
    same plain data and the same bytes."""
    t = type(v)
    if t is dict:
        if len(v) == 1:
            if "$c" in v:
                return Counter(v["$c"])
            if "$d" in v:
                return dict(v["$d"])
        return dict(v)
    return list(v) if t is list else v


class _Restore:
    """One restore: objects by id, and the ``_after_restore`` hooks in the order
    their objects were completed (children before the objects holding them)."""

    __slots__ = ("memo", "hooks", "data", "indexed")

    def __init__(self, data):
        self.memo: dict = {}
        self.hooks: list = []
        self.data = data
        self.indexed = False

    def instance(self, ident: int, name: str | None = None):
        obj = self.memo.get(ident)
        if obj is not None:
            return obj
        if name is None:  # a reference before its definition: index every definition once
            if not self.indexed:
                _instances(self.data, self.memo)
                self.indexed = True
            obj = self.memo.get(ident)
            if obj is None:
                raise StateError(f"state refers to an undefined object {ident}")
            return obj
        cls = _CLASSES.get(name)
        if cls is None:
            raise StateError(f"unknown state class {name!r}")
        obj = self.memo[ident] = cls.__new__(cls)
        return obj


def _instances(data, memo: dict) -> None:
    """An empty instance for every object defined anywhere in ``data``."""
    stack = [data]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is list or t is tuple:
            stack.extend(node)
        elif t is dict:
            if "$o" in node:
                if node["$i"] not in memo:
                    cls = _CLASSES.get(node["$o"])
                    if cls is None:
                        raise StateError(f"unknown state class {node['$o']!r}")
                    memo[node["$i"]] = cls.__new__(cls)
                plain = _PLAIN.get(_CLASSES[node["$o"]], frozenset())
                stack.extend(v for k, v in node["f"].items() if k not in plain)
            elif "$c" in node:  # a Counter: its dict's keys and values are data (never tagged forms themselves)
                body = node["$c"]
                stack.extend(body.keys())
                stack.extend(body.values())
            elif "$nd" not in node and "$r" not in node:
                stack.extend(node.values())


def from_plain(data):
    """Rebuild an object graph from :func:`to_plain`'s output (hooks not run)."""
    return _from_plain(data, _Restore(data))


def _from_plain(data, r: _Restore):
    t = type(data)
    if t in _SCALARS:
        return data
    if t is list:
        return [v if type(v) in _SCALARS else _from_plain(v, r) for v in data]
    if t is tuple:
        return tuple(v if type(v) in _SCALARS else _from_plain(v, r) for v in data)
    if t is not dict:
        raise StateError(f"unexpected {t.__name__} in state")
    if "$d" in data:  # a dict of data keys that look like tags
        pairs = data["$d"]
        if type(pairs) is not list or any(type(p) is not tuple or len(p) != 2 for p in pairs):
            raise StateError("malformed escaped dict in state: not a list of (key, value) pairs")
        return {_from_plain(k, r): _from_plain(v, r) for k, v in pairs}
    if "$o" in data:
        obj = r.instance(data["$i"], data["$o"])
        plain = _class_info(type(obj))[2]
        setattr_ = object.__setattr__
        for k, v in data["f"].items():
            if k in plain:  # a fresh container: the object updates it in place, the plain data is the caller's
                setattr_(obj, k, _plain_in(v))
            else:
                setattr_(obj, k, v if type(v) in _SCALARS else _from_plain(v, r))
        if hasattr(obj, "_after_restore"):
            r.hooks.append(obj)
        return obj
    if "$r" in data:
        return r.instance(data["$r"])
    if "$nd" in data:
        dtype, shape, raw = data["$nd"]
        return np.frombuffer(raw, dtype=np.dtype(dtype)).reshape(shape).copy()
    if "$c" in data:
        return Counter({_from_plain(k, r): _from_plain(v, r) for k, v in data["$c"].items()})
    return {_from_plain(k, r): v if type(v) in _SCALARS else _from_plain(v, r) for k, v in data.items()}


#: Schema 1's plain fields per state name (as registered when schema 2 came: the migration reads schema 1's data
#: with schema 1's rules, whatever a later version renames or re-declares).
_PLAIN_V1 = {
    "mechanism.fully_dynamic": frozenset(("_chain", "_chain_his", "pending_del", "pending_ins")),
    "noise_profile": frozenset(("terms",)),
    "registry.entries": frozenset(("domain_sizes", "entries", "tombstones")),
}


def _escape_v1(node):
    """Schema 1 -> 2 for plain data: every walked dict of data with the key ``"$d"`` (never a tag in schema 1)
    escaped as :func:`_to_plain` now writes it, its values migrated too; a ``Counter``'s dict (the value of a
    ``"$c"`` form) is data under either schema: its values are migrated, the dict itself never read as a form;
    an object's plain fields (schema 1's, ``_PLAIN_V1``) are migrated as :func:`_plain_in` reads them
    (:func:`_escape_plain_v1`: their elements are not walked). Other dicts whose data keys were tags were misread
    by schema 1 already (an ambiguity of that format: nothing in their bytes tells them apart) and are left."""
    t = type(node)
    if t is list or t is tuple:
        return t(_escape_v1(v) for v in node)
    if t is not dict:
        return node
    if "$d" in node:
        return {"$d": [(_escape_v1(k), _escape_v1(v)) for k, v in node.items()]}
    if "$o" in node and type(node.get("f")) is dict:
        plain = _PLAIN_V1.get(node["$o"], frozenset())
        fields = {k: _escape_plain_v1(v) if k in plain else _escape_v1(v) for k, v in node["f"].items()}
        return {**node, "f": fields}
    if "$c" in node and type(node["$c"]) is dict:  # schema 1 read any dict holding "$c" as a Counter form
        return {**node, "$c": {k: _escape_v1(v) for k, v in node["$c"].items()}}
    return {k: _escape_v1(v) for k, v in node.items()}


def _escape_plain_v1(v):
    """A plain field's stored value, schema 1 -> 2: schema 1's :func:`_plain_in` read a lone ``"$d"`` key as data,
    which schema 2 stores escaped (:func:`_plain_out`); anything else is read the same by both, and nothing inside
    is walked (a plain field's elements never were)."""
    if type(v) is dict and len(v) == 1 and "$d" in v:
        return {"$d": list(v.items())}
    return v


def _migrate_v1(state: dict) -> dict:
    """Schema 1 -> 2 (the escaped form of dicts whose data keys look like tags): a schema 1 body holds no escaped
    dict, and a dict of data with the key ``"$d"`` is escaped (the only one schema 1 stored readably)."""
    return {**state, "schema": 2, "body": _escape_v1(state["body"])}


MIGRATIONS[1] = _migrate_v1


def restore(data):
    """Rebuild the object graph and run every object's ``_after_restore`` hook
    (children first)."""
    r = _Restore(data)
    obj = _from_plain(data, r)
    for o in r.hooks:
        o._after_restore()
    return obj


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise StateError(f"state bytes name a global ({module}.{name}): only plain data is allowed")


def encode(plain) -> bytes:
    """Stable bytes of plain data: the pickle protocol 4 stream of builtins
    (``decode`` refuses anything else)."""
    return pickle.dumps(plain, protocol=4)


def decode(data: bytes):
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except StateError:
        raise
    except Exception as e:  # noqa: BLE001 - any malformed stream
        raise StateError(f"state bytes cannot be decoded: {e}") from None


def envelope(mechanism: str, config_digest: str, body) -> dict:
    """The versioned envelope of one mechanism's state."""
    return {"schema": SCHEMA, "mechanism": mechanism, "config": config_digest, "body": body}


def migrated(body, schema: int, name: str):
    """``body`` (plain data written under state ``schema`` outside an envelope: a part stored on its own, such
    as an open key's counter) migrated to :data:`SCHEMA` by the envelope migrations; refuses a newer schema."""
    return open_envelope({"schema": schema, "mechanism": name, "config": "", "body": body}, name, "")


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
