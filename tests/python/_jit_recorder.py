"""Test helper: records the concrete arguments of calls to functions mbirjax jits, so that each
can be lowered and compiled on its own (tests/python/hlo_corpus.py).

This file registers itself with JAX's source-info filter: its wrapper frame sits between
mbirjax's callers and callees, and must not be taken as the user's source line.
"""
from __future__ import annotations

import functools
from typing import Any

import jax

try:  # private API; without it the attribution check would see this file's wrapper frame
    from jax._src import source_info_util as _siu

    _siu.register_exclusion(__file__)
except Exception:  # pragma: no cover
    pass


class JitRecorder:
    """Wraps jax.jit while mbirjax is imported, so every jitted function mbirjax defines records
    the concrete arguments of its top-level calls; each (function, argument signature) is then
    lowered and compiled again on its own to get its HLO and XLA's cost analysis."""

    def __init__(self):
        self.calls: list[tuple[Any, tuple, dict]] = []
        self.seen: set = set()

    def wrap_jit(self, real_jit):
        recorder = self

        def jit(fun=None, *jargs, **jkwargs):
            if fun is None:
                return functools.partial(jit, *jargs, **jkwargs)
            jitted = real_jit(fun, *jargs, **jkwargs)
            if not str(getattr(fun, "__module__", "")).startswith("mbirjax"):
                return jitted

            @functools.wraps(fun)
            def call(*args, **kwargs):
                leaves = jax.tree_util.tree_leaves((args, kwargs))
                if not any(isinstance(v, jax.core.Tracer) for v in leaves):
                    def sig(v):
                        return getattr(v, "shape", None), str(getattr(v, "dtype", type(v)))

                    key = (id(jitted), str(jax.tree_util.tree_map(sig, (args, kwargs))))
                    if key not in recorder.seen:
                        recorder.seen.add(key)
                        recorder.calls.append((jitted, args, kwargs))
                return jitted(*args, **kwargs)

            call.lower = jitted.lower
            return call

        return jit
