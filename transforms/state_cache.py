"""Beam's SDK state cache, without its per-write scan of every loaded module.

The Python SDK caches the user state it reads and writes (``apache_beam.runners.worker.statecache``: 100 MB in
the DirectRunner's embedded worker, ``--max_cache_memory_usage_mb`` in a portable or Dataflow worker) and weighs
every value it puts there with ``objsize.get_deep_size``. With objsize's default settings each call first walks
the namespace of **every module in** ``sys.modules`` (``exclude_modules_globals``; about 2,000 modules once the
release's pipeline is imported) to build the set of objects not to count: about 0.64 ms of each 0.75 ms a put
took here, on every state write of every stateful step. Profiled (stop 54, ``py-spy`` of a followed file of two
demo days on the DirectRunner): 72% of the run's samples were in that scan.

What the scan excludes cannot be reached anyway: Beam's own filter (``statecache._filter_func``) does not
traverse types, modules, functions or frames, the only ways to a module's namespace from a state value. So the
same measure without the scan (:func:`deep_size`) weighs every value the same (``tests/test_state_cache.py``
compares them on the values our steps store). The weight only decides which cached values the SDK evicts
first, never what a step reads or writes: no output, and no release, depends on it.

:func:`install` puts :func:`deep_size` in place of the SDK's helper. Every module that declares user state imports
this one (``tests/test_state_cache.py`` checks), so it runs in every worker that unpickles one of our stateful
steps, before its first bundle. It installs only over the helper it was written against (Beam's
``get_deep_size`` calling ``objsize.get_deep_size``, an objsize that takes ``exclude_modules_globals``); a Beam
that changed them keeps its own, which is correct, only slower.
"""

from __future__ import annotations

import inspect

import objsize
from apache_beam.runners.worker import statecache

__all__ = ["SDK_DEEP_SIZE", "deep_size", "install", "installed"]

_SDK_HELPERS = ("_size_func", "_get_referents_func", "_filter_func")
#: The SDK's own helper as this module found it (what :func:`install` replaces; the tests compare with it).
SDK_DEEP_SIZE = statecache.get_deep_size


def deep_size(*objs) -> int:
    """The SDK's measure of a cached value (``statecache.get_deep_size``) without the scan of every module's
    namespace (module docstring)."""
    return objsize.get_deep_size(
        *objs,
        get_size_func=statecache._size_func,
        get_referents_func=statecache._get_referents_func,
        filter_func=statecache._filter_func,
        exclude_modules_globals=False,
    )


def _recognised(helper) -> bool:
    """Whether ``helper`` is the SDK's ``get_deep_size`` this module replaces (it hands its arguments to
    ``objsize.get_deep_size`` with the three helpers above) and objsize takes the setting used here."""
    code = getattr(helper, "__code__", None)
    return (
        code is not None
        and getattr(helper, "__module__", None) == statecache.__name__
        and {"objsize", "get_deep_size"} <= set(code.co_names)
        and all(callable(getattr(statecache, name, None)) for name in _SDK_HELPERS)
        and "exclude_modules_globals" in inspect.signature(objsize.get_deep_size).parameters
    )


def installed() -> bool:
    """Whether the SDK's state cache weighs values with :func:`deep_size`."""
    return statecache.get_deep_size is deep_size


def install() -> bool:
    """Put :func:`deep_size` in place of the SDK's helper (idempotent). Returns whether it is in place; False, and
    nothing changed, when the SDK's helper is not the one this module was written against."""
    if installed():
        return True
    if not _recognised(statecache.get_deep_size):
        return False
    statecache.get_deep_size = deep_size
    return True


install()
