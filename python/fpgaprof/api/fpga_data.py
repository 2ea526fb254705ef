"""The row imbalance of a function's scatters from the data it is called with (``estimate(fn,
*args)`` with arrays): the shapes cannot show how the rows of a sparse matrix are loaded, its
index arrays can (docs/fpga-model.md, "Row imbalance").

The function is traced to a jaxpr (not compiled as a whole); for each live scatter
(``scatter-add`` and the other ``scatter*`` primitives) and each product by a
``jax.experimental.sparse`` matrix (``bcoo_dot_general``, ``bcsr_dot_general``) in it, or in the
jitted functions and calls it makes, only the equations its indices depend on are evaluated,
one by one with the arguments' values (a call is followed into, never run whole; an equation
with side effects or a host callback is never run); the rows its output is updated at (a
scatter's coordinates of its operand's dimension 0, a BCOO matrix's indices of its first free
dimension, a BCSR matrix's index pointer) give the nonzeros of each row, and HiSpMV's delta
(``row_imbalance()``) follows from the rows dealt to the PEs. A
scatter inside a loop or a branch (other indices at each iteration), with fewer rows or updates
than PEs, or whose indices depend on an argument given as a shape or on a host callback,
yields none, and the result says why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from fpgaprof.base.errors import InvalidArgumentError

__all__ = [
    "DataImbalance",
    "as_jitted",
    "data_row_imbalance",
    "row_imbalance",
    "SAME_DELTA_TOLERANCE",
]

# Two scatters' ratios this close (relative) are one matrix's: one delta applies to every
# scatter of an estimate, so it is taken from the data only when they agree.
SAME_DELTA_TOLERANCE = 0.01

# The most processing elements a design is taken to deal rows to (the published designs have
# 64-192); more is a unit mistake, refused before anything is allocated.
MAX_PES = 1 << 20

# A note lists at most this many scatters by name (the rest counted).
_LISTED = 8

# Host callbacks: never run for the indices (side effects, or the user's Python code), even the
# ones JAX calls pure.
_CALLBACKS = frozenset({"pure_callback", "io_callback", "debug_callback", "callback"})

# Primitives whose sub-jaxprs run once per call with the caller's values: followed into. Loops
# (while, scan) and branches (cond) are not: a scatter in them sees other indices each time.
_CALLS = frozenset(
    {
        "pjit",
        "jit",
        "closed_call",
        "core_call",
        "custom_jvp_call",
        "custom_vjp_call",
        "remat2",
        "checkpoint",
    }
)


def _check_pes(pes: Any) -> int:
    import numpy as np

    if isinstance(pes, bool) or not isinstance(pes, (int, np.integer)) or not 1 <= pes <= MAX_PES:
        raise InvalidArgumentError(
            f"row_imbalance: pes must be a whole number from 1 to {MAX_PES:,} (the processing "
            f"elements a design deals rows to; 128 in the published designs), not {pes!r}"
        )
    return int(pes)


def _pe_loads(np: Any, lengths: Any, pes: int) -> Any:
    """The nonzeros each of ``pes`` PEs takes, row r (``lengths[r]`` nonzeros) dealt to PE
    r mod pes."""
    pad = (-lengths.size) % pes
    return np.concatenate([lengths, np.zeros(pad, lengths.dtype)]).reshape(-1, pes).sum(axis=0)


def _delta(loads: Any, total: float, pes: int) -> float:
    """HiSpMV's Eq. 2: the most loaded PE's nonzeros over NNZ / pes."""
    return float(loads.max() / (total / pes))


def row_imbalance(row_lengths: Any, pes: int = 128) -> float:
    """HiSpMV's row imbalance ratio delta of a sparse matrix (FPGA '24, Eq. 2): its rows dealt to
    ``pes`` processing elements cyclically (row r to PE r mod pes), the nonzeros of the most
    loaded PE over NNZ / pes. 1 is balanced; at most min(pes, 1 / density). ``row_lengths`` is
    the nonzeros of each row in row order (a CSR matrix's ``numpy.diff(indptr)``; for COO row
    indices, ``numpy.bincount(row, minlength=rows)``). 128 PEs is the published designs' count
    (HiSpMV-16, Serpens-16, HiSparse). Give the result to estimate(..., row_imbalance=delta)."""
    import numpy as np

    pes = _check_pes(pes)
    if isinstance(row_lengths, (str, bytes)):
        raise InvalidArgumentError(
            "row_imbalance takes the nonzeros of each row (numbers, e.g. numpy.diff(csr.indptr)), "
            f"not text ({row_lengths[:20]!r})"
        )
    try:
        lengths = np.asarray(row_lengths, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(
            "row_imbalance takes the nonzeros of each row (numbers, e.g. numpy.diff(csr.indptr)), "
            f"not {type(row_lengths).__name__}: {e}"
        ) from None
    if lengths.size == 0 or not np.all(np.isfinite(lengths)) or np.any(lengths < 0):
        raise InvalidArgumentError(
            "row_imbalance: row_lengths must be one or more finite counts >= 0 (the nonzeros of "
            "each row)"
        )
    with np.errstate(over="ignore"):
        total = float(lengths.sum())
    if total <= 0:
        raise InvalidArgumentError(
            "row_imbalance: the matrix has no nonzeros (no imbalance to give)"
        )
    if not np.isfinite(total):
        raise InvalidArgumentError(
            "row_imbalance: the row lengths sum beyond a float (1.8e308): give counts of nonzeros"
        )
    return _delta(_pe_loads(np, lengths, pes), total, pes)


@dataclass
class DataImbalance:
    """What the data said: ``delta`` (the ratio to apply, None when none could be taken),
    ``scatters`` (one dict per scatter found: primitive, where (file:line), rows, updates,
    delta or the reason it has none) and ``note`` (one line for the estimate's notes; "" when
    the function has no scatter)."""

    delta: float | None = None
    scatters: list[dict] = field(default_factory=list)
    note: str = ""


# A value the evaluation does not have: an argument given as a shape, or computed from one.
_MISSING = object()


def data_row_imbalance(fn: Any, args: Sequence, kwargs: dict, pes: int = 128) -> DataImbalance:
    """The row imbalance of ``fn``'s scatters called with ``args`` / ``kwargs`` (see the module
    doc). Never raises for the user's function: a function that cannot be traced, arguments that
    cannot be matched or indices that cannot be evaluated give no delta, and the note says why.
    Arguments given as shapes only (``jax.ShapeDtypeStruct``) give no delta and no note."""
    import jax

    leaves = jax.tree_util.tree_leaves((tuple(args), dict(kwargs)))
    if not any(_has_value(jax, leaf) for leaf in leaves):
        return DataImbalance()
    jitted = as_jitted(jax, fn)
    try:
        traced = jitted.trace(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the estimate reports a function that fails
        return DataImbalance(note=f"{_NOT_TAKEN}: tracing the function failed ({type(e).__name__})")
    closed = traced.jaxpr
    plan = _plan(closed.jaxpr)
    if not plan.all_scatters:
        return DataImbalance()
    try:
        dynamic = _dynamic_leaves(jax, traced.args_info, args, kwargs)
    except Exception:  # noqa: BLE001 - arguments JAX took but this cannot compare: no match
        dynamic = None
    if dynamic is not None and not any(_has_value(jax, leaf) for leaf in dynamic):
        return DataImbalance()  # the traced arguments are shapes only (the rest static)
    values = (
        None if dynamic is None else _match(jax, dynamic, closed.jaxpr.invars, plan.needed_inputs)
    )
    if values is None:
        return DataImbalance(
            note=f"{_NOT_TAKEN}: the arguments do not match the traced function's (static "
            "arguments?); give row_imbalance="
        )
    found: dict[tuple, Any] = {}
    try:
        _run(closed.jaxpr, list(closed.consts), values, plan, found)  # its outputs: unused
        rows = [
            _scatter_row(jax, eqn, in_loop, found.get(path, _MISSING), pes)
            for path, eqn, in_loop in plan.all_scatters
        ]
    except Exception as e:  # noqa: BLE001 - a failed evaluation leaves the estimate as it was
        return DataImbalance(
            note=f"{_NOT_TAKEN}: evaluating the scatters' indices failed ({type(e).__name__})"
        )
    return _decide(rows, pes)


_NOT_TAKEN = "row imbalance not taken from the arguments"


def as_jitted(jax: Any, fn: Any) -> Any:
    """``fn`` when it is a jitted function (it can be traced and lowered), else jax.jit(fn)."""
    return fn if hasattr(fn, "trace") and hasattr(fn, "lower") else jax.jit(fn)


def _has_value(jax: Any, leaf: Any) -> bool:
    return not isinstance(leaf, jax.ShapeDtypeStruct)


def _shape(leaf: Any) -> tuple:
    import numpy as np

    return tuple(leaf.shape) if hasattr(leaf, "shape") else np.shape(leaf)


def _kind(dtype: Any) -> str:
    """A dtype's kind with bool, unsigned and signed integers as one: a Python int, bool or a
    NumPy integer may become any integer type in a jaxpr."""
    import numpy as np

    try:
        kind = np.dtype(dtype).kind
    except TypeError:  # JAX's extended dtypes (a PRNG key's): compared by name
        return str(dtype)
    return "i" if kind in "biu" else kind


def _dynamic_leaves(jax: Any, args_info: Any, args: Sequence, kwargs: dict) -> list | None:
    """The leaves of the arguments the trace kept (a jitted function's static arguments are not
    in ``args_info``, JAX's description of the traced arguments), in the trace's order; None when
    the arguments cannot be told apart. Keyword arguments are kept by name; positional ones are
    the unique in-order choice whose structure, shapes and dtype kinds match ``args_info``."""
    import itertools

    tree = jax.tree_util
    pos_info, kw_info = args_info
    kw = {k: kwargs[k] for k in kw_info if k in kwargs}
    if len(kw) != len(kw_info):
        return None

    def fits(arg: Any, info: Any) -> bool:
        # An argument that cannot be compared (a string, a function, a key array's dtype, an
        # int beyond int32) does not fit: a static one JAX never turned into an array.
        try:
            if tree.tree_structure(arg) != tree.tree_structure(info):
                return False
            for leaf, i in zip(tree.tree_leaves(arg), tree.tree_leaves(info)):
                dtype = leaf.dtype if hasattr(leaf, "dtype") else jax.numpy.asarray(leaf).dtype
                if _shape(leaf) != tuple(i.shape) or _kind(dtype) != _kind(i.dtype):
                    return False
            return True
        except Exception:  # noqa: BLE001 - see above
            return False

    n = len(pos_info)
    if n == len(args):
        chosen: Sequence = args
    elif n > len(args) or len(args) > 16:
        return None
    else:
        choices = [
            c
            for c in itertools.combinations(range(len(args)), n)
            if all(fits(args[k], info) for k, info in zip(c, pos_info))
        ]
        if len(choices) != 1:
            return None
        chosen = [args[k] for k in choices[0]]
    return tree.tree_leaves((tuple(chosen), kw))


def _match(jax: Any, leaves: list, invars: Sequence, needed: set) -> list | None:
    """The traced function's arguments' values in its invars' order (_MISSING for a shape and for
    an argument no scatter's indices depend on: only those ``needed`` are converted), or None
    when their number or shapes differ from the invars'."""
    if len(leaves) != len(invars):
        return None
    if not all(_shape(leaf) == tuple(v.aval.shape) for leaf, v in zip(leaves, invars)):
        return None

    def value(leaf: Any, v: Any) -> Any:
        if isinstance(leaf, jax.Array) and leaf.dtype == v.aval.dtype:
            return leaf  # as traced (a PRNG key array among them)
        return jax.numpy.asarray(leaf, dtype=v.aval.dtype)

    return [
        value(leaf, v) if k in needed and _has_value(jax, leaf) else _MISSING
        for k, (leaf, v) in enumerate(zip(leaves, invars))
    ]


@dataclass
class _Plan:
    """What to do at one level of a jaxpr: ``actions[i]`` for equation i ("eval": its outputs
    are needed, it is run; "target": a scatter or sparse product; "descend": a call holding
    targets or computing needed values, followed into with its sub-plan ``subplans[i]``),
    ``targets`` (whether any target is reached from here), ``needed_inputs`` (the positions of
    the inputs the slice reads), ``all_scatters`` (every live target under this level as
    (path, equation, in a loop or branch): the path, the equations' indices from this level
    down, tells apart two calls of one jitted function, which share its jaxpr)."""

    actions: dict = field(default_factory=dict)
    subplans: dict = field(default_factory=dict)
    targets: bool = False
    needed_inputs: set = field(default_factory=set)
    all_scatters: list = field(default_factory=list)


# The sparse-matrix products of jax.experimental.sparse (lowered to gathers and scatters): the
# operand whose value gives the output's rows (BCOO: its indices; BCSR: its indptr).
_SPARSE_DOTS = {"bcoo_dot_general": 1, "bcsr_dot_general": 2}


def _rows_operand(eqn: Any) -> int | None:
    """The operand of ``eqn`` whose value gives the rows its output is updated at: a scatter's
    indices, a sparse product's indices (BCOO) or index pointer (BCSR); None for others."""
    name = eqn.primitive.name
    if name.startswith("scatter"):
        return 1
    return _SPARSE_DOTS.get(name)


def _sub_jaxprs(eqn: Any) -> list[tuple[Any, list]]:
    """Every jaxpr an equation's parameters hold (a branch's among a tuple), with its consts."""
    import jax.extend.core as jc

    out = []
    for value in eqn.params.values():
        for v in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(v, jc.ClosedJaxpr):
                out.append((v.jaxpr, list(v.consts)))
            elif isinstance(v, jc.Jaxpr):
                out.append((v, []))
    return out


def _call_jaxpr(eqn: Any) -> tuple[Any, list] | None:
    """A call's one sub-jaxpr and its consts, when its inputs are the call's, one for one."""
    if eqn.primitive.name not in _CALLS:
        return None
    subs = _sub_jaxprs(eqn)
    if len(subs) != 1:
        return None
    jaxpr, consts = subs[0]
    if len(jaxpr.invars) != len(eqn.invars) or len(jaxpr.constvars) != len(consts):
        return None
    return jaxpr, consts


def _scatters_within(eqn: Any) -> list:
    """The scatters inside an equation that is not followed into (a loop, a branch), as
    _Plan.all_scatters' entries without a path (none is evaluated)."""
    out = []
    for jaxpr, _ in _sub_jaxprs(eqn):
        for inner in jaxpr.eqns:
            if _rows_operand(inner) is not None:
                out.append((None, inner, True))
            out.extend(_scatters_within(inner))
    return out


def _plan(jaxpr: Any, live_out: set | None = None, need_out: frozenset = frozenset()) -> _Plan:
    """The backward slice of ``jaxpr`` from its live targets' indices (see _Plan): an equation
    whose outputs nothing uses (``live_out``: the outputs the caller uses, None for all) is
    dead and its targets are not counted; ``need_out``: the outputs whose values the caller's
    slice needs. A call is followed into with the outputs it must compute, never run whole."""
    import jax.extend.core as jc

    plan = _Plan()
    outs = [(k, v) for k, v in enumerate(jaxpr.outvars) if isinstance(v, jc.Var)]
    live: set = {v for k, v in outs if live_out is None or k in live_out}
    needed: set = {v for k, v in outs if k in need_out}
    for i in reversed(range(len(jaxpr.eqns))):
        eqn = jaxpr.eqns[i]
        outs = [o for o in eqn.outvars if not isinstance(o, jc.DropVar)]
        if not any(o in live for o in outs) and not eqn.effects:
            continue  # dead: what it computes is not used
        live.update(v for v in eqn.invars if isinstance(v, jc.Var))
        action: set = set()
        operand = _rows_operand(eqn)
        if operand is not None:
            action.add("target")
            plan.all_scatters.append(((i,), eqn, False))
            if isinstance(eqn.invars[operand], jc.Var):
                needed.add(eqn.invars[operand])
        call = _call_jaxpr(eqn)
        if call is not None:
            need = frozenset(k for k, o in enumerate(eqn.outvars) if o in needed)
            sub = _plan(call[0], {k for k, o in enumerate(eqn.outvars) if o in live}, need)
            plan.all_scatters.extend(
                ((i, *path) if path is not None else None, e, loop)
                for path, e, loop in reversed(sub.all_scatters)
            )
            if sub.targets or sub.actions or need:
                action.add("descend")
                plan.subplans[i] = sub
                needed.update(
                    eqn.invars[p] for p in sub.needed_inputs if isinstance(eqn.invars[p], jc.Var)
                )
        else:
            if operand is None:
                plan.all_scatters.extend(reversed(_scatters_within(eqn)))
            if any(o in needed for o in outs):
                action.add("eval")
                needed.update(v for v in eqn.invars if isinstance(v, jc.Var))
        if action:
            plan.actions[i] = action
            plan.targets = (
                plan.targets
                or bool(action & {"target"})
                or ("descend" in action and plan.subplans[i].targets)
            )
    plan.needed_inputs = {k for k, v in enumerate(jaxpr.invars) if v in needed}
    plan.all_scatters.reverse()
    return plan


# Values the evaluation does not have: an argument given as a shape (or computed from one), and
# the output of an equation with side effects (a host callback), which is never run.
_EFFECTFUL = object()


def _unknown(values: Sequence) -> Any:
    """The sentinel an equation's outputs get from its inputs: _EFFECTFUL before _MISSING;
    None when every input has a value."""
    if any(x is _EFFECTFUL for x in values):
        return _EFFECTFUL
    if any(x is _MISSING for x in values):
        return _MISSING
    return None


def _run(
    jaxpr: Any, consts: list, values: list, plan: _Plan, found: dict, prefix: tuple = ()
) -> list:
    """Evaluates the slice ``plan`` marks, recording each target's rows operand in ``found``
    under its path (``prefix`` and its equation's index); returns the jaxpr's outputs (those
    the slice did not compute: _MISSING)."""
    import jax.extend.core as jc

    env: dict = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, values))

    def read(a: Any) -> Any:
        return a.val if isinstance(a, jc.Literal) else env.get(a, _MISSING)

    for i, eqn in enumerate(jaxpr.eqns):
        action = plan.actions.get(i)
        if not action:
            continue
        invals = [read(a) for a in eqn.invars]
        if "target" in action:
            found[prefix + (i,)] = invals[_rows_operand(eqn)]  # type: ignore[index]
        if "descend" in action:
            sub_jaxpr, sub_consts = _call_jaxpr(eqn)  # type: ignore[misc]
            outs = _run(sub_jaxpr, sub_consts, invals, plan.subplans[i], found, prefix + (i,))
            env.update(zip(eqn.outvars, outs))
        if "eval" in action:
            callback = eqn.effects or eqn.primitive.name in _CALLBACKS
            unknown = _EFFECTFUL if callback else _unknown(invals)
            if unknown is not None:
                env.update((o, unknown) for o in eqn.outvars)
                continue
            # As jax.core.eval_jaxpr binds an equation: the parameters come back as a dict (a
            # call's sub-functions among them), or (older JAX) as (sub-functions, parameters).
            params = eqn.primitive.get_bind_params(eqn.params)
            subfuns, params = params if isinstance(params, tuple) else ((), params)
            with eqn.ctx.manager:
                got = eqn.primitive.bind(*subfuns, *invals, **params)
            got = got if eqn.primitive.multiple_results else [got]
            env.update((o, x) for o, x in zip(eqn.outvars, got) if not isinstance(o, jc.DropVar))
    return [read(v) for v in jaxpr.outvars]


def _where(jax: Any, eqn: Any) -> str:
    """The user's line of an equation (file:line), the innermost frame outside JAX."""
    import os

    root = os.path.dirname(jax.__file__)
    tb = getattr(eqn.source_info, "traceback", None)
    for frame in getattr(tb, "frames", None) or []:
        if not frame.file_name.startswith(root):
            return f"{os.path.basename(frame.file_name)}:{frame.line_num}"
    return "?"


def _scatter_row(jax: Any, eqn: Any, in_loop: bool, value: Any, pes: int) -> dict:
    """One scatter's (or sparse product's) rows and delta, or the reason it has none."""
    import numpy as np

    out = {"primitive": eqn.primitive.name, "where": _where(jax, eqn), "delta": None, "why": ""}
    if in_loop:
        out["why"] = (
            "inside a loop or a branch (other indices at each step), or a call not followed"
        )
        return out
    if value is _MISSING:
        out["why"] = "its indices depend on an argument given as a shape"
        return out
    if value is _EFFECTFUL:
        out["why"] = "its indices come from an op with side effects (a host callback), not run"
        return out
    got = _row_loads(eqn, value, np, pes)
    if isinstance(got, str):
        out["why"] = got
        return out
    n, u, loads = got
    out.update(rows=n, updates=u)
    if n < pes or u < pes:
        # Fewer rows or updates than the design has PEs: no sparse matrix product whose rows a
        # design deals (a histogram's bins, one dynamic update); HiSpMV's ratio would be huge.
        out["why"] = (
            f"{n:,} rows and {u:,} update{'' if u == 1 else 's'}: fewer than the "
            f"{pes} PEs a design deals rows to"
        )
    else:
        out["delta"] = _delta(loads, u, pes)
    return out


_NOT_BY_ROWS = "it does not update its output's rows one index at a time"


def _row_loads(eqn: Any, value: Any, np: Any, pes: int) -> tuple[int, int, Any] | str:
    """``eqn``'s output rows, its updates and the updates each of ``pes`` PEs takes when the rows
    are dealt cyclically (row r to PE r mod pes; memory in the updates and the PEs, not in the
    rows), from its rows operand's ``value``; or the reason (a str) they cannot be told."""

    def dealt(rows: Any, n: int) -> tuple[int, int, Any]:
        rows = rows[(rows >= 0) & (rows < n)]  # dropped (FILL_OR_DROP), padding, or in bounds
        return n, int(rows.size), np.bincount(rows % pes, minlength=pes)

    name = eqn.primitive.name
    if name.startswith("scatter"):
        dn = eqn.params.get("dimension_numbers")
        shape = tuple(eqn.invars[0].aval.shape)
        if (
            dn is None
            or not shape
            or 0 not in dn.scatter_dims_to_operand_dims
            or 0 not in dn.inserted_window_dims
        ):
            return _NOT_BY_ROWS
        n = shape[0]
        k = list(dn.scatter_dims_to_operand_dims).index(0)
        rows = np.asarray(value)[..., k].reshape(-1).astype(np.int64)
        if "CLIP" in str(eqn.params.get("mode")).upper():
            rows = np.clip(rows, 0, n - 1)
        return dealt(rows, n)
    # A sparse product: its output's first dimension is the sparse operand's first dimension
    # that is not contracted (A @ x: the rows; x @ A: the columns).
    (contract, _), (batch, _) = eqn.params["dimension_numbers"]
    shape = tuple(eqn.params["lhs_spinfo"].shape)
    free = [d for d in range(len(shape)) if d not in contract]
    if batch or len(shape) != 2 or not free:
        return _NOT_BY_ROWS
    d, n = free[0], shape[free[0]]
    if name == "bcsr_dot_general":  # the index pointer gives the rows (A @ x) only
        if d != 0:
            return _NOT_BY_ROWS
        lengths = np.diff(np.asarray(value).astype(np.int64))  # as long as the pointer given
        return n, int(lengths.sum()), _pe_loads(np, lengths, pes)
    indices = np.asarray(value)
    if d >= indices.shape[-1]:  # a dense dimension of the BCOO matrix: no indices for it
        return _NOT_BY_ROWS
    return dealt(indices[..., d].reshape(-1).astype(np.int64), n)


def _decide(scatters: list[dict], pes: int) -> DataImbalance:
    """One delta for the estimate when every scatter has one and they agree; else none, and why."""
    deltas = [s["delta"] for s in scatters if s["delta"] is not None]
    n = len(scatters)
    more = f", and {n - _LISTED} more" if n > _LISTED else ""
    what = ", ".join(f"{s['primitive']} ({s['where']})" for s in scatters[:_LISTED]) + more
    if len(deltas) == n and max(deltas) <= min(deltas) * (1 + SAME_DELTA_TOLERANCE):
        delta = max(deltas)
        updates = sum(s["updates"] for s in scatters)
        note = (
            f"row imbalance {delta:.3g} (HiSpMV's delta, {pes} PEs) computed from the arguments: "
            f"the rows of {what}, {updates:,} updates"
        )
        return DataImbalance(delta=delta, scatters=scatters, note=note)
    if deltas:
        why = (
            "its scatters' ratios differ ("
            + ", ".join(
                f"{s['primitive']} at {s['where']}: {s['delta']:.3g}"
                if s["delta"] is not None
                else f"{s['primitive']} at {s['where']}: {s['why']}"
                for s in scatters[:_LISTED]
            )
            + more
            + "), and one ratio applies to every scatter"
        )
    else:
        reasons = sorted({s["why"] for s in scatters})
        why = f"{what}: " + "; ".join(reasons)
    return DataImbalance(scatters=scatters, note=f"{_NOT_TAKEN}: {why}; give row_imbalance=")
