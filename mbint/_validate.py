"""Argument checks shared by :func:`mbint.solve_ivp`, :func:`mbint.solve_dae` and
:func:`mbint.simulate`.

Every check raises ``ValueError`` naming the argument before any C runs, and
returns the value in the form the C entry points take (``_core.solve``,
``_core.solve_dae``, ``_core.mech_simulate``; csrc/python/options.h), so the
three front ends accept the same options with the same messages.
"""
from __future__ import annotations

import ctypes
import math
import numbers
import warnings

import numpy as np

from . import _core

try:  # scipy is a dependency, but keep import errors readable
    from scipy import LowLevelCallable
except ImportError as exc:  # pragma: no cover
    raise ImportError("mbint needs SciPy") from exc


def as_capsule(fun):
    """PyCapsule of a LowLevelCallable or ctypes function, else None."""
    if isinstance(fun, LowLevelCallable):
        return tuple.__getitem__(fun, 0)
    if isinstance(fun, ctypes._CFuncPtr):
        return tuple.__getitem__(LowLevelCallable(fun), 0)
    return None


#: largest value of a C long (max_steps) and of a C int (event counts)
C_LONG_MAX = 2 ** 63 - 1
C_INT_MAX = 2 ** 31 - 1

#: step attempts of a run without max_steps (C: MB_DEFAULT_MAX_STEPS)
DEFAULT_MAX_STEPS = int(_core.MB_DEFAULT_MAX_STEPS)

#: step-size controllers by name (C: mb_controller_kind, controller.h)
CONTROLLERS = {"i": int(_core.MB_CONTROLLER_I), "pi": int(_core.MB_CONTROLLER_PI),
               "predictive": int(_core.MB_CONTROLLER_PREDICTIVE)}

#: rtol below this is raised to it, with a warning (as SciPy: 100 machine epsilons)
RTOL_FLOOR = 100 * np.finfo(float).eps

_EPS = float(np.finfo(float).eps)
_INF = math.inf

#: arrays up to this size are checked element by element in Python (a.tolist()),
#: larger ones by NumPy reductions: on a few numbers one reduction costs more than
#: the whole loop
_SMALL = 64


def all_finite(a):
    """True when every entry of the float array a is finite (no NaN or Inf)."""
    if a.size <= _SMALL:
        return all(map(math.isfinite, a.ravel().tolist()))
    return bool(np.isfinite(a).all())


def _nonneg_finite(a):
    """True when every entry of the float array a is finite and >= 0."""
    if a.size <= _SMALL:
        return all(0.0 <= x < _INF for x in a.ravel().tolist())
    return bool(((a >= 0) & (a < _INF)).all())


def _filled(n, value):
    """n copies of the float value (np.full, without its overhead)."""
    a = np.empty(n)
    a.fill(value)
    return a


def args_tuple(args):
    """Extra arguments as a tuple, unpacked from any sequence as SciPy does
    (``args=[a, b]`` passes two arguments); a single value that cannot be unpacked
    is a TypeError, as in SciPy."""
    if args is None:
        return ()
    try:
        return tuple(args)
    except TypeError:
        raise TypeError("Supplied 'args' cannot be unpacked. Please supply `args` as a tuple "
                        "or list (args=(value,) for a single extra argument).") from None


def callable_or_capsule(fun, args, message):
    """The capsule of a LowLevelCallable (which takes no ``args``) or the Python
    callable itself; otherwise ValueError(message)."""
    capsule = as_capsule(fun)
    if capsule is not None:
        if args:
            raise ValueError("args: extra arguments go to Python callables only; pass user_data "
                             "to the LowLevelCallable instead.")
        return capsule
    if callable(fun):
        return fun
    raise ValueError(message)


def t_span(span, allow_infinite_end=False):
    """``(t0, tf)`` as two floats: t0 finite, tf finite or (with
    ``allow_infinite_end``) +-inf, for a run that a terminal event ends."""
    try:
        span = tuple(map(_real_float, span))
    except (TypeError, ValueError):
        raise ValueError("t_span must be a sequence of two real numbers (t0, tf).") from None
    except OverflowError:  # an int beyond the range of floats
        span = (math.inf, math.inf)
    if len(span) != 2:
        raise ValueError(f"t_span must have length 2, got {len(span)}.")
    t0, tf = span
    if not math.isfinite(t0) or math.isnan(tf) or (math.isinf(tf) and not allow_infinite_end):
        raise ValueError("t_span must be finite" + (" (tf may be +-inf when a terminal event "
                                                     "ends the run)." if allow_infinite_end
                                                     else "."))
    return t0, tf


def _real_float(v):
    """float(v), refusing complex numbers (no silent truncation to the real part)."""
    if type(v) is float:
        return v
    if type(v) is int or type(v) is np.float64:
        return float(v)
    if isinstance(v, complex) or np.iscomplexobj(v):
        raise ValueError("complex")
    return float(v)


def real_array(name, v, dtype=float):
    """``np.asarray(v, dtype)``, refusing complex input with a ValueError naming it
    (NumPy would drop the imaginary part with only a warning)."""
    if np.iscomplexobj(v):
        raise ValueError(f"{name} must be real, got complex values.")
    try:
        return np.asarray(v, dtype=dtype)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers.") from None


def float_vector(name, v, n=None, allow_empty=False):
    """A finite 1-D float array: non-empty (unless allow_empty), or of size n when n is
    given."""
    try:
        a = np.asarray(v)
    except ValueError:  # a ragged nested sequence
        raise ValueError(f"{name} must be an array of numbers.") from None
    if a.dtype.kind == "c":
        raise ValueError(f"{name}: complex states are not supported; split into real and "
                         f"imaginary parts.")
    try:
        a = np.array(a, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers.") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {a.shape}.")
    if n is None and a.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty.")
    if n is not None and a.size != n:
        raise ValueError(f"{name} must have the size of y0 ({n}), got {a.size}.")
    if not all_finite(a):
        if name == "y0":  # SciPy's wording
            raise ValueError("All components of the initial state `y0` must be finite.")
        raise ValueError(f"{name} must be finite (no NaN or Inf).")
    return a


def positive(name, v, allow_inf=False):
    """v as a positive float (finite unless allow_inf)."""
    try:
        v = _real_float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive float.") from None
    if not v > 0 or (not allow_inf and not math.isfinite(v)):
        raise ValueError(f"{name} must be positive{'' if allow_inf else ' and finite'}, got {v}.")
    return v


def atol_vector(atol, n, entries=None):
    """atol as n non-negative finite floats; a scalar applies to every component (and
    is checked as given, also when n = 0).

    entries : str, optional
        How to name the n entries in the size error (simulate: ``"2 nq = 12
        entries"``); an array atol is then flattened first and may have one entry.
        Without it atol must have shape (n,).
    """
    if type(atol) is float or isinstance(atol, numbers.Real):
        x = float(atol)
        if not 0.0 <= x < _INF:  # also for n = 0: a scalar is checked as given
            raise ValueError("atol must be non-negative and finite.")
        return _filled(n, x)
    else:
        try:
            a = np.asarray(atol, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("atol must be a non-negative float or array.") from None
        if entries is not None:
            a = a.reshape(-1)
            if a.size == 1:
                a = _filled(n, float(a[0]))
            if a.shape != (n,):
                raise ValueError(f"atol must be a scalar or have {entries}, got {a.size}.")
        else:
            if a.ndim == 0:
                a = _filled(n, float(a))
            if a.shape != (n,):
                raise ValueError(f"atol must be a scalar or have shape ({n},), got shape "
                                 f"{a.shape}.")
    if not _nonneg_finite(a):
        raise ValueError("atol must be non-negative and finite.")
    return a


def relative_control_weights(atol, y0, names=None):
    """ValueError when an entry of atol is 0 where y0 is 0.

    Pure relative error control (atol_i = 0) weighs component i by rtol |y_i|
    (``sc_i = atol_i + rtol max(|y_i|, |y_new_i|)``), which is 0 while y_i is: the
    first step (its initial estimate divides by it) and every error test on that
    component are undefined, and every method fails at t0 (SUNDIALS refuses such a
    weight itself).  A component that is not zero at t0 may use atol_i = 0 as long as
    it does not become exactly zero.

    names : sequence of str, optional
        How to name the components (default ``y0[i]``).
    """
    a = np.asarray(atol, float).reshape(-1)
    y = np.asarray(y0, float).reshape(-1)
    if a.size != y.size:
        return
    if a.size <= _SMALL:
        al = a.tolist()
        if 0.0 not in al:  # the common case: no pure relative control
            return
        bad = [i for i, (ai, yi) in enumerate(zip(al, y.tolist())) if ai == 0 and yi == 0]
    else:
        bad = np.flatnonzero((a == 0) & (y == 0))
    if len(bad):
        i = int(bad[0])
        where = f"y0[{i}] = 0" if names is None else f"{names[i]} = 0 at t0"
        raise ValueError(f"atol: atol[{i}] = 0 where {where}: pure relative error control "
                         f"weighs a component by rtol |y|, which is 0 there, so neither the "
                         f"first step nor the error test can be formed; give atol > 0 for the "
                         f"components that are or may become zero ({len(bad)} of them).")


def tolerances(rtol, atol, n, y0=None, stacklevel=3):
    """``(rtol, atol)``: rtol a positive scalar or an array of shape (n,) (entries below
    100 machine epsilons raised to that floor with a warning, as SciPy does, pointing
    ``stacklevel`` frames up: the user's line), atol as
    :func:`atol_vector` (with y0: checked by :func:`relative_control_weights`).  rtol
    is returned as a float when all entries are equal (1e-3 when n = 0), else as an
    array of n floats.  A scalar is checked as given, also when n = 0."""
    r = rtol if type(rtol) is float else real_array("rtol", rtol)
    if type(r) is float or r.ndim == 0:
        r = float(r)
        ok, low = 0.0 < r < _INF, r < RTOL_FLOOR
    elif r.shape != (n,):
        raise ValueError(f"rtol must be a scalar or have shape ({n},), got shape {r.shape}.")
    elif n <= _SMALL:
        rl = r.tolist()
        ok = all(0.0 < x < _INF for x in rl)
        low = ok and any(x < RTOL_FLOOR for x in rl)
    else:
        ok = bool(((r > 0) & (r < _INF)).all())
        low = ok and bool((r < RTOL_FLOOR).any())
    if not ok:
        raise ValueError("rtol must be positive and finite.")
    if low:
        warnings.warn(f"At least one element of `rtol` is too small. Setting "
                      f"`rtol = np.maximum(rtol, {RTOL_FLOOR:.3g})` (100 machine epsilons).",
                      UserWarning, stacklevel=stacklevel)
        r = float(RTOL_FLOOR) if type(r) is float else np.maximum(r, RTOL_FLOOR)
    if type(atol) is float:  # the common case: one float
        if not 0.0 <= atol < _INF:
            raise ValueError("atol must be non-negative and finite.")
        a = _filled(n, atol)
        if atol == 0.0 and y0 is not None:
            relative_control_weights(a, y0)
    else:
        a = atol_vector(atol, n)
        if y0 is not None:
            relative_control_weights(a, y0)
    if n == 0:
        return 1e-3, a
    if type(r) is float:
        return r, a
    return (float(r[0]) if (r == r[0]).all() else np.ascontiguousarray(r)), a


def first_step_within(first_step, t0, tf):
    """ValueError when first_step (0: automatic) exceeds the span |tf - t0|."""
    if not first_step:
        return
    slack = 4 * _EPS * max(abs(t0), abs(tf))  # tf - t0 is rounded
    if first_step > abs(tf - t0) + slack:
        raise ValueError(f"first_step = {first_step:g} exceeds the span |tf - t0| = "
                         f"{abs(tf - t0):g} (`first_step` exceeds bounds).")


def square_matrix(name, m, n, finite=True):
    """An (n, n) float array from an array_like or a scipy.sparse matrix, refusing
    complex values and (with finite) NaN/Inf."""
    if hasattr(m, "toarray"):  # scipy.sparse
        m = m.toarray()
    a = real_array(name, m)
    if a.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}), got {a.shape}.")
    if finite and not all_finite(a):
        raise ValueError(f"{name} must be finite (no NaN or Inf).")
    return a


def step_bounds(first_step, max_step, min_step, max_steps):
    """The step-size bounds as keywords of the C entry points: first_step (0:
    automatic), max_step (0: none), min_step, max_steps (0: the default)."""
    fs = 0.0 if first_step is None else positive("first_step", first_step)
    ms = positive("max_step", max_step, allow_inf=True)
    try:
        min_step = float(min_step)
    except (TypeError, ValueError):
        raise ValueError("min_step must be a non-negative float.") from None
    if not min_step >= 0:
        raise ValueError("min_step must be non-negative.")
    msteps = 0
    if max_steps is not None:
        try:
            msteps = int(max_steps)
        except (TypeError, ValueError, OverflowError):
            msteps = 0
        if msteps <= 0 or msteps != max_steps:  # 1e6 is accepted, 2.5 is not
            raise ValueError("max_steps must be a positive integer.")
        if msteps > C_LONG_MAX:
            raise ValueError(f"max_steps must be at most {C_LONG_MAX}, got {max_steps}.")
    return dict(first_step=fs, max_step=ms if math.isfinite(ms) else 0.0, min_step=min_step,
                max_steps=msteps)


def step_control(info, mname, h, controller, error_per_unit_step, safety, fac_min, fac_max):
    """Fixed step h or step-size control of method ``mname`` (``info``: its
    :class:`mbint.methods.MethodInfo`) as keywords of the C entry points."""
    h_fixed = 0.0 if h is None else positive("h", h)
    if h is None and info.adaptive == "none":
        raise ValueError(f"h: method {mname!r} runs with a fixed step only; give h=.")
    if h is not None and info.adaptive == "variable order":
        raise ValueError(f"h: method {mname!r} chooses its own steps; a fixed step is not "
                         f"supported.")
    if controller is not None and controller not in CONTROLLERS:
        raise ValueError(f"controller must be one of {sorted(CONTROLLERS)} or None (the "
                         f"method's own: {info.controller!r} for {mname!r}), got {controller!r}.")
    sf = 0.0 if safety is None else positive("safety", safety)
    fmin = 0.0 if fac_min is None else positive("fac_min", fac_min)
    fmax = 0.0 if fac_max is None else positive("fac_max", fac_max, allow_inf=False)
    if safety is not None and not sf <= 1.0:
        raise ValueError(f"safety must satisfy 0 < safety <= 1, got {safety}.")
    if fac_min is not None and not fmin < 1.0:
        raise ValueError(f"fac_min must satisfy 0 < fac_min < 1 (the largest shrink factor of a "
                         f"step), got {fac_min}.")
    if fac_max is not None and not fmax > 1.0:
        raise ValueError(f"fac_max must satisfy fac_max > 1 (the largest growth factor of a "
                         f"step), got {fac_max}.")
    return dict(h=h_fixed, step_doubling=h is None and info.adaptive == "step doubling",
                controller=0 if controller is None else CONTROLLERS[controller],
                error_per_unit_step=bool(error_per_unit_step),
                safety=sf, fac_min=fmin, fac_max=fmax)


def method_options(info, options):
    """The method's own options (``**method_options`` of solve_ivp and simulate) as the
    dict the C entry points take, or None; ValueError naming the method and the
    options it takes for any other keyword."""
    if not options:
        return None
    allowed = tuple(info.options)
    bad = sorted(k for k in options if k not in allowed)
    if bad:
        takes = (f"its options are {', '.join(allowed)}" if allowed else "it takes no options")
        raise ValueError(f"{', '.join(bad)}: not an argument, nor an option of method "
                         f"{info.name!r} ({takes}).")
    return dict(options)


def fast_indices(fast, n):
    """The fast variables of ``singular_perturbation`` as an int array of indices into a
    state of n components (an index or a sequence of them); ValueError when empty,
    covering every component, out of range or repeated (the C converter checks the same
    for real states)."""
    items = [fast] if np.ndim(fast) == 0 else list(np.asarray(fast, dtype=object).reshape(-1))
    out = []
    for v in items:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"fast: every entry must be an integer index into y, got {v!r}.")
        if not 0 <= v < n:
            raise ValueError(f"fast: index {v} is out of range for a state of {n} components.")
        if int(v) in out:
            raise ValueError(f"fast: index {v} is given twice.")
        out.append(int(v))
    if not out:
        raise ValueError("fast: no fast variable given; the scheme needs at least one fast and "
                         "one slow variable.")
    if len(out) >= n:
        raise ValueError(f"fast: {len(out)} indices for a state of {n} components; at least one "
                         f"variable must be slow.")
    return np.array(out, dtype=np.intp)


def fixed_steps(h, t0, tf, max_steps):
    """ValueError when a fixed step h needs more than max_steps (default
    DEFAULT_MAX_STEPS) steps over [t0, tf], or cannot advance t0."""
    if not h:
        return
    span = abs(tf - t0)
    limit = max_steps if max_steps else DEFAULT_MAX_STEPS
    ratio = span / h  # inf when it overflows (a span near the largest float)
    steps = math.ceil(ratio - 1e-9) if math.isfinite(ratio) else math.inf
    if steps > limit:
        raise ValueError(f"h: the fixed step h = {h:g} needs {steps:.3g} steps over "
                         f"[{t0:g}, {tf:g}], more than max_steps = {limit}; give a larger h or "
                         f"a larger max_steps.")
    if span > 0 and t0 + math.copysign(h, tf - t0) == t0:
        raise ValueError(f"h: the fixed step h = {h:g} cannot advance t0 = {t0!r} (below the "
                         f"spacing of floating-point numbers there).")


def t_eval(times, t0, tf):
    """Output times as a contiguous 1-D array of finite reals inside [t0, tf],
    strictly monotone in the direction of integration, or None."""
    if times is None:
        return None
    te = real_array("t_eval", times)
    if te.ndim != 1:
        raise ValueError("t_eval must be 1-dimensional.")
    if not all_finite(te):
        raise ValueError("t_eval must be finite (no NaN or Inf).")
    lo, hi = min(t0, tf), max(t0, tf)
    if te.size <= _SMALL:
        tl = te.tolist()
        outside = bool(tl) and (min(tl) < lo or max(tl) > hi)
        pairs = zip(tl, tl[1:])
        monotone = (all(b > a for a, b in pairs) if tf >= t0 else all(b < a for a, b in pairs))
    else:
        outside = te.min() < lo or te.max() > hi
        d = np.diff(te)
        monotone = not (d <= 0).any() if tf >= t0 else not (d >= 0).any()
    if outside:
        raise ValueError("t_eval values must lie within t_span.")
    if not monotone:
        raise ValueError("t_eval must be strictly increasing (decreasing for tf < t0).")
    return np.ascontiguousarray(te)


def check_events(events):
    """``(events, terminal, direction)``: the event callables as a list, with
    SciPy's ``terminal`` (bool or count) and ``direction`` (its sign) attributes as
    int arrays; ``(None, None, None)`` without events."""
    if events is None:
        return None, None, None
    if callable(events):
        events = [events]
    events = list(events)
    if not events:
        return None, None, None
    terminal, direction = [], []
    for i, ev in enumerate(events):
        if not callable(ev):
            raise ValueError(f"events[{i}] must be callable g(t, y), got {type(ev).__name__}.")
        term = getattr(ev, "terminal", False)
        if term is None:  # as SciPy: not terminal
            term = 0
        elif isinstance(term, (bool, np.bool_)):
            term = 1 if term else 0
        elif isinstance(term, numbers.Integral) and 0 <= term <= C_INT_MAX:
            term = int(term)
        else:
            raise ValueError(f"The `terminal` attribute of each event must be a boolean or a "
                             f"non-negative integer below 2**31 (the number of occurrences that "
                             f"end the run); events[{i}].terminal = {term!r}.")
        d = getattr(ev, "direction", 0)
        if d not in (-1, 0, 1) and not (isinstance(d, numbers.Real) and np.isfinite(d)):
            raise ValueError(f"events[{i}].direction must be a number (its sign is used).")
        terminal.append(term)
        direction.append(int(np.sign(d)))
    return events, np.array(terminal, dtype=np.intc), np.array(direction, dtype=np.intc)


def switching_flags(events, info, mname):
    """The ``switching`` attribute of every event (checked by :func:`check_events`)
    as an int array, or None when no event is a switching event; switching events
    need mbint's driver (``info.backend == "mbint"``)."""
    if not events:
        return None
    flags = []
    for i, ev in enumerate(events):
        sw = getattr(ev, "switching", False)
        if not isinstance(sw, (bool, np.bool_)):
            raise ValueError(f"events[{i}].switching must be a bool.")
        flags.append(1 if sw else 0)
    if not any(flags):
        return None
    if info.backend == "sundials":
        raise ValueError(f"events: switching events restart the integration inside mbint's "
                         f"driver; method {mname!r} (SUNDIALS) runs its own step loop.")
    return np.array(flags, dtype=np.intc)
